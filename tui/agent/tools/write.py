"""The ``write`` tool: create or overwrite a file with the given text, making parent directories.

The write is atomic (temporary file, then rename), so an interrupted call never leaves half a file.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tui.agent.tools.base import Policy, Tool, ToolContext, ToolError, ToolOutput
from tui.agent.tools.files import atomic_write
from tui.agent.tools.worker import in_thread
from tui.agent.tools.workspace import display_path


class WriteTool(Tool):
    name: ClassVar[str] = "write"
    default_policy: ClassVar[Policy] = "ask"
    path_params: ClassVar[dict[str, str | None]] = {"path": None}
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to write, relative to the workspace or absolute.",
            },
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path", "content"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(args["path"])
        shown = display_path(ctx.workspace, path)
        if path.is_dir():
            raise ToolError(f"{shown} is a directory")
        created = not path.exists()
        data = args["content"].encode("utf-8")
        await in_thread(atomic_write, path, data, shown)
        verb = "Created" if created else "Overwrote"
        return ToolOutput.text(
            f"{verb} {shown} ({len(data)} bytes)", {"path": shown, "bytes": len(data), "created": created}
        )
