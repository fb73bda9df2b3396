"""File helpers shared by the tools: binary sniffing, image detection, text loading and atomic writes.

A file counts as binary when its first block holds a NUL byte; a file that is not valid UTF-8 is refused
as well rather than shown garbled. Writes go to a temporary file in the same directory that is then
renamed over the target, so a reader never sees a half-written file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path

from tui import fileio
from tui.agent.tools.base import ToolError

SNIFF_BYTES = 8192

# Magic numbers of the image formats that models accept as image blocks.
_IMAGE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_mime_type(head: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP file from its first bytes, else None."""
    for magic, mime in _IMAGE_MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head


def _opened_path(fd: int) -> str | None:
    """Where an open fd really is (Linux's /proc), or None where the system cannot say."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def open_approved(path: Path, shown: str) -> int:
    """A read-only fd of ``path``, the resolved path that was approved, and of nothing else.

    The path was resolved once, before approval; here it is opened without following a final symlink
    (``O_NOFOLLOW``), without blocking (a FIFO or device is refused, never waited on), and the opened
    file's real path must be ``path``: a file or directory swapped for a symlink since is refused.
    """
    try:
        fd = fileio.open_regular(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise ToolError(f"File not found: {shown}") from None
    except fileio.NotRegularFileError as exc:
        raise ToolError(f"{shown} is {exc.kind}, not a regular file; it was not read") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ToolError(f"{shown} changed into a symbolic link after it was resolved; not read") from None
        raise ToolError(f"cannot open {shown}: {exc.strerror}") from None
    real = _opened_path(fd)
    if real is not None and real != str(path):
        os.close(fd)
        raise ToolError(f"{shown} changed after it was resolved (it now leads to {real}); not read")
    return fd


def read_approved(path: Path, shown: str) -> bytes:
    """The whole of the approved regular file ``path`` (see :func:`open_approved`)."""
    with os.fdopen(open_approved(path, shown), "rb") as f:
        return f.read()


def read_text(path: Path, shown: str) -> str:
    """The whole file as text; binary and non-UTF-8 files raise :class:`ToolError`."""
    data = read_approved(path, shown)
    if looks_binary(data[:SNIFF_BYTES]):
        raise ToolError(f"{shown} is a binary file; only text files can be used here")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown} is not UTF-8 text (undecodable byte at offset {exc.start})") from None


def _open_approved_dir(directory: Path, shown: str) -> int:
    """A directory fd of ``directory`` (resolved and approved), refused when it is not that directory now."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ToolError(f"the directory of {shown} changed after it was resolved; not written") from None
        raise ToolError(f"cannot open the directory of {shown}: {exc.strerror}") from None
    real = _opened_path(fd)
    if real is not None and real != str(directory):
        os.close(fd)
        raise ToolError(f"the directory of {shown} changed after it was resolved (now {real}); not written")
    return fd


def atomic_write(path: Path, data: bytes, shown: str | None = None) -> None:
    """Replace the approved ``path`` with ``data`` in one rename; an existing file keeps its permission bits.

    Everything happens relative to one fd of the approved directory, checked to be that directory: a
    directory on the way swapped for a symlink after approval cannot redirect the write.
    """
    shown = shown or str(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    directory = _open_approved_dir(path.parent, shown)
    name = path.name
    temp = f".{name}.{secrets.token_hex(4)}.tmp"
    try:
        try:
            mode: int | None = os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode & 0o7777
        except FileNotFoundError:
            mode = None
        # 0o666 lets the umask decide the mode of a new file, as a plain open() would.
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666, dir_fd=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
                if mode is not None:
                    os.fchmod(f.fileno(), mode)
            os.replace(temp, name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=directory)
            raise
    finally:
        os.close(directory)
