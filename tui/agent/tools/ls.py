"""The ``ls`` tool: the entries of one directory, sorted, directories marked with a trailing slash.

Hidden entries are listed too. The listing stops at a limit (500 by default) and at 50 KB.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from tui.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from tui.agent.tools.truncate import head_within_bytes
from tui.agent.tools.worker import in_thread
from tui.agent.tools.workspace import display_path

DEFAULT_LIMIT = 500


def _ls(path: Path, shown: str, limit: int) -> ToolOutput:
    if not path.exists():
        raise ToolError(f"Directory not found: {shown}")
    if not path.is_dir():
        raise ToolError(f"{shown} is a file, not a directory")
    entries = sorted(path.iterdir(), key=lambda p: (p.name.lower(), p.name))
    names = [p.name + "/" if p.is_dir() else p.name for p in entries]
    shown_names, cut = head_within_bytes(names[:limit])
    details = {"path": shown, "entries": len(names), "truncated": cut or len(names) > limit}
    if not names:
        return ToolOutput.text(f"({shown} is empty)", details)
    text = "\n".join(shown_names)
    if details["truncated"]:
        text += f"\n\n[{len(shown_names)} of {len(names)} entries shown.]"
    return ToolOutput.text(text, details)


class LsTool(Tool):
    name: ClassVar[str] = "ls"
    path_params: ClassVar[dict[str, str | None]] = {"path": "."}
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory to list (default: the workspace)."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Most entries to list (default {DEFAULT_LIMIT}).",
            },
        },
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(args.get("path", "."))
        shown = display_path(ctx.workspace, path)
        return await in_thread(_ls, path, shown, args.get("limit", DEFAULT_LIMIT))
