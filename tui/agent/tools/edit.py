"""The ``edit`` tool: replace one exact, unique occurrence of a text in a file.

The old text must occur exactly once; otherwise the call fails and says whether it was missing or how
many times it occurs, so the model can add context. A file with CRLF line endings is matched as if it had
LF endings and keeps its CRLF endings. A unified diff of the change goes into the result's details.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, ClassVar

from tui.agent.tools.base import Policy, Tool, ToolContext, ToolError, ToolOutput
from tui.agent.tools.files import atomic_write, read_text
from tui.agent.tools.worker import in_thread
from tui.agent.tools.workspace import display_path

DIFF_CONTEXT_LINES = 3


def unified_diff(before: str, after: str, shown: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        f"a/{shown}",
        f"b/{shown}",
        n=DIFF_CONTEXT_LINES,
    )
    # A last line without a newline would run into the next diff line.
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _edit(path: Path, shown: str, old: str, new: str) -> ToolOutput:
    original = read_text(path, shown)
    crlf = "\r\n" in original
    text = original.replace("\r\n", "\n") if crlf else original
    old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"old_text was not found in {shown}. It must match the file exactly, including whitespace "
            "and indentation; read the file again to copy the current text."
        )
    if count > 1:
        raise ToolError(
            f"old_text occurs {count} times in {shown}; it must be unique. "
            "Include more surrounding lines so that it matches only one place."
        )
    start = text.index(old)
    updated = text[:start] + new + text[start + len(old) :]
    first_line = text.count("\n", 0, start) + 1
    diff = unified_diff(text, updated, shown)
    atomic_write(path, (updated.replace("\n", "\r\n") if crlf else updated).encode("utf-8"), shown)
    return ToolOutput.text(
        f"Edited {shown} at line {first_line}.", {"path": shown, "diff": diff, "firstChangedLine": first_line}
    )


class EditTool(Tool):
    name: ClassVar[str] = "edit"
    default_policy: ClassVar[Policy] = "ask"
    path_params: ClassVar[dict[str, str | None]] = {"path": None}
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to edit, relative to the workspace or absolute."},
            "old_text": {"type": "string", "description": "Exact text to replace; must occur exactly once."},
            "new_text": {"type": "string", "description": "Text to put in its place."},
        },
        "required": ["path", "old_text", "new_text"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        old, new = args["old_text"], args["new_text"]
        if not old:
            raise ToolError("old_text is empty; give the exact text to replace")
        if old == new:
            raise ToolError("old_text and new_text are the same; nothing would change")
        path = ctx.resolve(args["path"])
        return await in_thread(_edit, path, display_path(ctx.workspace, path), old, new)
