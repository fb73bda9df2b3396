"""Reading a session file on a thread while the app starts, for the store to take when it opens it.

Copying tens of megabytes out of the page cache (and faulting in the memory for them) takes 20-40 ms of
a 10k-entry session's first frame; ``os.pread`` releases the GIL, so on a thread it overlaps Textual's
own start-up (the stylesheet, the driver, the first compose) instead of delaying the chat. The bytes
are only a hint: the store takes them when, after its lock, the file is still the same one with the
same size and times (a session file only grows), and reads it itself otherwise.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from tui.session.errors import SessionError
from tui.session.jsonl import open_regular, read_fd

Snapshot = tuple[bytes, os.stat_result]


def same_file(a: os.stat_result, b: os.stat_result) -> bool:
    """Whether two stats are of one file with the same bytes, as far as an append-only file can tell."""
    keys = ("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")
    return all(getattr(a, key) == getattr(b, key) for key in keys)


class Prefetch:
    """The bytes and stat of ``path``, read on a daemon thread started at once."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._result: Snapshot | None = None
        self._thread = threading.Thread(target=self._read, name="kompakt-prefetch", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:  # never blocks on a FIFO; any problem is the store's to report when it opens the file
            fd = open_regular(self.path, os.O_RDONLY)
        except (SessionError, OSError):
            return
        try:
            info = os.fstat(fd)
            self._result = (read_fd(fd, self.path), info)
        except (SessionError, OSError):
            return
        finally:
            os.close(fd)

    def take(self) -> Snapshot | None:
        """The bytes and the stat taken before reading them (waits for the thread), once; None if unread."""
        self._thread.join()
        result, self._result = self._result, None
        return result
