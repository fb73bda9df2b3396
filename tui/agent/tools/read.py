"""The ``read`` tool: a text file's lines from an offset, or an image as an image block.

Output stops at 2,000 lines or 50 KB, whichever comes first, and then says which offset continues the
file. Binary files and files that are not UTF-8 are refused with a message that says so; PNG, JPEG, GIF
and WebP images are sent as base64 image blocks instead.
"""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

from tui.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from tui.agent.tools.files import SNIFF_BYTES, image_mime_type, looks_binary, open_approved
from tui.agent.tools.truncate import MAX_BYTES, MAX_LINES, cut_utf8
from tui.agent.tools.worker import in_thread
from tui.agent.tools.workspace import display_path


def _image(f: BinaryIO, shown: str, mime: str) -> ToolOutput:
    data = f.read()
    return ToolOutput(
        [
            {"type": "text", "text": f"Image {shown} ({mime}, {len(data)} bytes)"},
            {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime},
        ],
        {"path": shown, "mimeType": mime, "bytes": len(data)},
    )


def _read_text(f: BinaryIO, shown: str, offset: int, limit: int | None) -> ToolOutput:
    kept: list[str] = []
    size = 0
    total = 0
    capped = False  # stopped by the 2,000-line / 50 KB cap rather than by `limit`
    partial = False
    done = False
    try:
        with io.TextIOWrapper(f, encoding="utf-8") as lines:
            # The loop runs to the end even after the cap, to count the lines for the "continue" hint.
            for total, line in enumerate(lines, 1):
                if total < offset or done:
                    continue
                text = line.removesuffix("\n")
                cost = len(text.encode("utf-8")) + 1
                if limit is not None and len(kept) >= limit:
                    done = True
                elif len(kept) >= MAX_LINES or size + cost > MAX_BYTES:
                    done = capped = True
                    if not kept:
                        kept.append(cut_utf8(text, MAX_BYTES))
                        partial = True
                else:
                    kept.append(text)
                    size += cost
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown} is not UTF-8 text (undecodable byte near offset {exc.start})") from None
    if offset > max(total, 1):
        raise ToolError(f"offset {offset} is past the end of {shown}, which has {total} lines")
    details: dict[str, Any] = {
        "path": shown,
        "offset": offset,
        "lines": len(kept),
        "totalLines": total,
        "truncated": capped,
    }
    if total == 0:
        return ToolOutput.text(f"({shown} is empty)", details)
    last = offset + len(kept) - 1
    notes = []
    if partial:
        notes.append(
            f"[Line {offset} is longer than {MAX_BYTES // 1024} KB and was cut; use bash to see all of it.]"
        )
    if last < total:
        notes.append(f"[Lines {offset}-{last} of {total} shown. Continue with offset={last + 1}.]")
    text = "\n".join(kept)
    if notes:
        text += "\n\n" + "\n".join(notes)
    return ToolOutput.text(text, details)


def _read(path: Path, shown: str, offset: int, limit: int | None) -> ToolOutput:
    # One open of the approved path; everything below reads that file, not the path again.
    with os.fdopen(open_approved(path, shown), "rb") as f:
        head = f.read(SNIFF_BYTES)
        f.seek(0)
        mime = image_mime_type(head)
        if mime:
            return _image(f, shown, mime)
        if looks_binary(head):
            raise ToolError(
                f"{shown} is a binary file; read shows only text files and PNG, JPEG, GIF or WebP images"
            )
        return _read_text(f, shown, offset, limit)


class ReadTool(Tool):
    name: ClassVar[str] = "read"
    path_params: ClassVar[dict[str, str | None]] = {"path": None}
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to read, relative to the workspace or absolute."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": "Largest number of lines to show."},
        },
        "required": ["path"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(args["path"])
        shown = display_path(ctx.workspace, path)
        return await in_thread(_read, path, shown, args.get("offset", 1), args.get("limit"))
