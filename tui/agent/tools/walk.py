"""Walking a directory tree for ``grep`` and ``find``, and matching paths against glob patterns.

Version-control directories (``.git`` and friends) are never entered and symlinked directories are not
followed, so a walk cannot loop; FIFOs, sockets and devices are not listed, so no tool blocks on one. A glob without a slash matches file names at any depth (``*.py``); a
glob with a slash matches the path relative to the search root, where ``**`` spans directories
(``src/**/test_*.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from tui.agent.tools.base import ToolError

SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})


def _listed(entry: os.DirEntry[str]) -> bool:
    """Regular files and symlinks are listed; a FIFO, socket or device is left out (reading one blocks)."""
    try:
        return entry.is_symlink() or entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def walk(root: Path, cancel: asyncio.Event) -> Iterator[tuple[Path, bool]]:
    """Every path under ``root`` (not ``root`` itself) as ``(path, is_dir)``, in sorted order.

    FIFOs, sockets and devices are skipped; symlinks are listed but never followed into.
    """
    for current, dirs, files in os.walk(root):
        if cancel.is_set():
            raise ToolError("cancelled")
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        base = Path(current)
        for name in dirs:
            yield base / name, True
        listed: set[str] = set()  # a directory that cannot be scanned lists no files
        with contextlib.suppress(OSError), os.scandir(current) as entries:
            listed = {e.name for e in entries if e.name in files and _listed(e)}
        for name in sorted(listed):
            yield base / name, False


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        char = pattern[i]
        close = pattern.find("]", i + 2) if char == "[" else -1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif close != -1:
            body = pattern[i + 1 : close]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = close
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out) + r"\Z")


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """A test for POSIX paths relative to the search root."""
    pattern = pattern.removeprefix("./")
    if "/" not in pattern:
        return lambda rel: fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], pattern)
    regex = _glob_regex(pattern)
    return lambda rel: regex.match(rel) is not None
