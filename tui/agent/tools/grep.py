"""The ``grep`` tool: lines that match a regular expression, in a file or under a directory.

It is pure Python (``re``), so it needs no ripgrep. Binary files and version-control directories are
skipped; an optional glob narrows the files searched. Each match is shown as ``path:line:text`` with
long lines shortened, and the search stops at a match limit (100 by default) and at 50 KB.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from tui.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from tui.agent.tools.files import SNIFF_BYTES, looks_binary, open_approved, read_approved
from tui.agent.tools.truncate import capped_listing
from tui.agent.tools.walk import glob_matcher, walk
from tui.agent.tools.worker import in_thread
from tui.agent.tools.workspace import display_path, is_inside

DEFAULT_LIMIT = 100
MAX_LINE_CHARS = 500


def _candidates(
    root: Path, workspace: Path, glob: str | None, cancel: asyncio.Event, outside: list[str]
) -> Iterator[tuple[Path, Path]]:
    """``(shown path, path to open)`` of each file to search. A symlink is searched only when its target
    is in the workspace (else it is named in ``outside``): the search root was approved, not its links."""
    matches = glob_matcher(glob) if glob else None
    for path, is_dir in walk(root, cancel):
        if is_dir or (matches is not None and not matches(path.relative_to(root).as_posix())):
            continue
        if cancel.is_set():
            raise ToolError("cancelled")
        if not path.is_symlink():
            yield path, path
            continue
        target = path.resolve()
        if is_inside(workspace, target):
            yield path, target
        else:
            outside.append(display_path(workspace, path))


def _matching_lines(path: Path, regex: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    try:
        data = read_approved(path, str(path))
    except ToolError:
        return  # gone, unreadable, not regular or swapped since: skipped like a binary file
    if looks_binary(data[:SNIFF_BYTES]):
        return
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if regex.search(line):
            yield number, line


def _grep(
    root: Path, workspace: Path, regex: re.Pattern[str], glob: str | None, limit: int, cancel: asyncio.Event
) -> ToolOutput:
    shown_root = display_path(workspace, root)
    if not root.exists():
        raise ToolError(f"Path not found: {shown_root}")
    outside: list[str] = []
    if root.is_dir():
        files: Iterator[tuple[Path, Path]] = _candidates(root, workspace, glob, cancel, outside)
    else:
        os.close(open_approved(root, shown_root))  # a FIFO or device is refused, not searched
        files = iter([(root, root)])
    hits: list[str] = []
    more = False
    for path, source in files:
        for number, line in _matching_lines(source, regex):
            if len(hits) == limit:
                more = True
                break
            short = line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "..."
            hits.append(f"{display_path(workspace, path)}:{number}:{short}")
        if more:
            break
    text, count, truncated = capped_listing(hits, more)
    details = {"pattern": regex.pattern, "path": shown_root, "matches": count, "truncated": truncated}
    skipped = ""
    if outside:
        details["outsideLinks"] = outside
        skipped = (
            f"\n\n[Not searched: {len(outside)} symlink(s) to files outside the workspace "
            f"({', '.join(outside[:5])}{', …' if len(outside) > 5 else ''}); read them by path to be asked.]"
        )
    if not hits:
        return ToolOutput.text(f"No matches for /{regex.pattern}/ in {shown_root}{skipped}", details)
    if truncated:
        text += f"\n\n[Stopped after {count} matches; narrow the pattern, path or glob to see others.]"
    return ToolOutput.text(text + skipped, details)


class GrepTool(Tool):
    name: ClassVar[str] = "grep"
    path_params: ClassVar[dict[str, str | None]] = {"path": "."}
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression (Python syntax)."},
            "path": {
                "type": "string",
                "description": "File or directory to search (default: the workspace).",
            },
            "glob": {"type": "string", "description": "Only search files matching this glob, e.g. '*.py'."},
            "ignore_case": {"type": "boolean", "description": "Match without regard to case."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Most matches (default {DEFAULT_LIMIT}).",
            },
        },
        "required": ["pattern"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        flags = re.IGNORECASE if args.get("ignore_case") else 0
        try:
            regex = re.compile(args["pattern"], flags)
        except re.error as exc:
            raise ToolError(f"invalid regular expression {args['pattern']!r}: {exc}") from None
        root = ctx.resolve(args.get("path", "."))
        limit = args.get("limit", DEFAULT_LIMIT)
        return await in_thread(_grep, root, ctx.workspace, regex, args.get("glob"), limit, ctx.cancel)
