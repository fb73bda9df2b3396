"""Opening files kompakt is told about without hanging on them: regular files only, reads capped.

A session or settings path may name a FIFO (``open`` blocks until a writer appears), ``/dev/zero`` (a read
never ends), a directory or a symlink loop. :func:`open_regular` opens with ``O_NONBLOCK`` and checks the
opened file is a regular one before anything is read; :func:`read_regular` reads it whole up to a cap.
Errors are ``OSError``\\ s with a readable ``strerror``, for the callers to word.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


class NotRegularFileError(OSError):
    """The path names a directory, FIFO, device or socket; ``kind`` says which."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(errno.EINVAL, f"is {kind}", str(path))
        self.kind = kind


class TooLargeError(OSError):
    def __init__(self, path: Path, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than the {limit:,} bytes kompakt reads", str(path))


def open_regular(path: Path, flags: int, *, limit: int | None = None, mode: int = 0o644) -> int:
    """An fd of ``path`` opened with ``flags`` (``mode`` if it creates it); raises unless it is a regular
    file (of at most ``limit``)."""
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except IsADirectoryError:
        raise NotRegularFileError(path, "a directory") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(path, _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file"))
        if limit is not None and info.st_size > limit:
            raise TooLargeError(path, limit)
        os.set_blocking(fd, True)  # a regular file never blocks; later writes behave as usual
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_fd(fd: int, path: Path, limit: int, start: int = 0) -> bytes:
    """The bytes of ``fd`` from ``start`` to its end; more than ``limit`` raises :class:`TooLargeError`."""
    size = os.fstat(fd).st_size
    # One read of the known size (no copies), then whatever a concurrent writer added meanwhile.
    data = os.pread(fd, size - start + 1, start) if size > start else b""
    chunks = [data]
    total = len(data)
    while data:
        data = os.pread(fd, 1 << 20, start + total)
        chunks.append(data)
        total += len(data)
        if total > limit:
            raise TooLargeError(path, limit)
    return chunks[0] if len(chunks) <= 2 else b"".join(chunks)


def read_regular(path: Path, limit: int) -> bytes:
    """The whole of a regular file (never blocks on a FIFO or a device)."""
    fd = open_regular(path, os.O_RDONLY, limit=limit)
    try:
        return read_fd(fd, path, limit)
    finally:
        os.close(fd)
