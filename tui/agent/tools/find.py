"""The ``find`` tool: paths under a directory that match a glob pattern.

Results are workspace-relative, sorted, directories marked with a trailing slash, and stop at a limit
(1,000 by default) and at 50 KB. Version-control directories are skipped.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

from tui.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from tui.agent.tools.truncate import capped_listing
from tui.agent.tools.walk import glob_matcher, walk
from tui.agent.tools.worker import in_thread
from tui.agent.tools.workspace import display_path

DEFAULT_LIMIT = 1000


def _find(root: Path, workspace: Path, pattern: str, limit: int, cancel: asyncio.Event) -> ToolOutput:
    shown_root = display_path(workspace, root)
    if not root.is_dir():
        raise ToolError(f"Directory not found: {shown_root}")
    matches = glob_matcher(pattern)
    found: list[str] = []
    more = False
    for path, is_dir in walk(root, cancel):
        if matches(path.relative_to(root).as_posix()):
            if len(found) == limit:
                more = True
                break
            found.append(display_path(workspace, path) + ("/" if is_dir else ""))
    text, count, truncated = capped_listing(found, more)
    details = {"pattern": pattern, "path": shown_root, "count": count, "truncated": truncated}
    if not found:
        return ToolOutput.text(f"No paths match {pattern} under {shown_root}", details)
    if truncated:
        text += f"\n\n[Stopped after {count} results; use a narrower pattern or path.]"
    return ToolOutput.text(text, details)


class FindTool(Tool):
    name: ClassVar[str] = "find"
    path_params: ClassVar[dict[str, str | None]] = {"path": "."}
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob, e.g. '*.py' or 'src/**/test_*.py'."},
            "path": {"type": "string", "description": "Directory to search (default: the workspace)."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Most results (default {DEFAULT_LIMIT}).",
            },
        },
        "required": ["pattern"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        root = ctx.resolve(args.get("path", "."))
        limit = args.get("limit", DEFAULT_LIMIT)
        return await in_thread(_find, root, ctx.workspace, args["pattern"], limit, ctx.cancel)
