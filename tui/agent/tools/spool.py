"""Collects a command's output as it streams: whole while small, else the tail in memory and all of it on disk.

Only the last 2,000 lines / 50 KB go to the model. As soon as the output could exceed that, everything so
far and everything after goes to a file in the artifacts directory, whose path is reported so the model
(or the user) can read the rest. A file that turns out not to be needed is removed at the end.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import BinaryIO

from tui.agent.tools.truncate import MAX_BYTES, MAX_LINES, Truncation, truncate_tail

# The tail kept in memory; more than the byte cap so that the cut falls on a line boundary.
_TAIL_BYTES = 2 * MAX_BYTES


class OutputSpool:
    def __init__(self, artifacts_dir: Path, prefix: str = "bash") -> None:
        self._dir = artifacts_dir
        self._prefix = prefix
        self._tail = bytearray()
        self._size = 0
        self._newlines = 0
        self._file: BinaryIO | None = None
        self._path: Path | None = None

    def feed(self, chunk: bytes) -> None:
        self._size += len(chunk)
        self._newlines += chunk.count(b"\n")
        if self._file is None and (self._size > MAX_BYTES or self._newlines >= MAX_LINES):
            self._open_file()
        if self._file is not None:
            self._file.write(chunk)
        self._tail += chunk
        if self._file is not None and len(self._tail) > _TAIL_BYTES:
            del self._tail[: len(self._tail) - _TAIL_BYTES]

    def _open_file(self) -> None:
        self._dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self._path = self._dir / f"{self._prefix}-{stamp}-{secrets.token_hex(4)}.log"
        self._file = self._path.open("wb")
        self._file.write(self._tail)

    @property
    def total_lines(self) -> int:
        unterminated = 1 if self._size and not self._tail.endswith(b"\n") else 0
        return self._newlines + unterminated

    def finish(self) -> tuple[Truncation, Path | None]:
        """The tail as text (bytes decoded safely) and the full-output file, if the tail is not everything."""
        self.close()
        result = truncate_tail(self._tail.decode("utf-8", errors="replace"))
        if self._path is not None and not result.truncated:
            self._path.unlink(missing_ok=True)
            self._path = None
        return result, self._path

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
