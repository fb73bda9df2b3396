"""Reading a session file's bytes: safe opening, line decoding and the per-line load checks.

A session path may name a FIFO, a device or a directory, or a file kompakt may not read: it is opened
with ``O_NONBLOCK`` and checked to be a regular file before a byte is read, and reads are capped. Each
line is decoded with orjson; a line orjson refuses only because of a lone UTF-16 surrogate (pi, in
JavaScript, writes a cut emoji as ``"\\ud83d"``) is decoded leniently, with U+FFFD in memory, and never
rewritten. Every decoded entry passes :func:`tui.session.shape.entry_problem`; what fails is reported
with its line and byte offset and skipped.
"""

from __future__ import annotations

import errno
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from tui import fileio
from tui.session.errors import SessionAccessError, SessionFormatError
from tui.session.shape import entry_problem, message_passes, too_deep

# A session larger than this is not read (it would be held in memory whole).
MAX_SESSION_BYTES = 2 << 30


@dataclass(frozen=True)
class LoadProblem:
    """A line that could not be loaded: where it is and why."""

    line: int
    offset: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line} (byte {self.offset}): {self.reason}"


def open_regular(path: Path, flags: int, what: str = "session file") -> int:
    """Open ``path`` without blocking on a FIFO, and only when it is a regular file; returns the fd."""
    try:
        return fileio.open_regular(path, flags, limit=MAX_SESSION_BYTES)
    except FileNotFoundError:
        raise SessionFormatError(f"{path}: no such {what}") from None
    except fileio.NotRegularFileError as exc:
        raise SessionFormatError(f"{path}: is {exc.kind}, not a {what}") from None
    except fileio.TooLargeError as exc:
        raise SessionFormatError(f"{path}: {exc.strerror}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SessionAccessError(f"{path}: too many levels of symbolic links") from None
        raise SessionAccessError(f"{path}: cannot open: {exc.strerror}") from None


def read_fd(fd: int, path: Path, start: int = 0) -> bytes:
    """The bytes of ``fd`` from ``start`` to its end (capped at :data:`MAX_SESSION_BYTES`)."""
    try:
        return fileio.read_fd(fd, path, MAX_SESSION_BYTES, start)
    except fileio.TooLargeError as exc:
        raise SessionFormatError(f"{path}: {exc.strerror}") from None
    except OSError as exc:
        raise SessionAccessError(f"{path}: cannot read: {exc.strerror}") from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(value: Any) -> Any:
    """Replace lone surrogates (which no UTF-8 encoder accepts) by U+FFFD, in keys and strings."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    return value


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_line(raw: bytes) -> Any:
    """One JSON value; raises ``ValueError`` (orjson's message) when the line is not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if b"\\u" not in raw or "surrogate" not in str(exc):
            raise
        try:
            return _clean(json.loads(raw.decode("utf-8"), parse_constant=_no_constants))
        except (ValueError, RecursionError):
            raise exc from None


@dataclass
class ParsedLines:
    entries: list[dict[str, Any]]
    problems: list[LoadProblem]
    consumed: int  # bytes of the complete lines parsed
    tail: bytes  # the bytes after the last newline
    lines: int = 0  # the complete lines parsed (newlines consumed), blank ones included


def parse_lines(
    data: bytes, *, start: int = 0, start_line: int = 1, base_offset: int = 0, needs_id: bool = True
) -> ParsedLines:
    """Decode and check every complete line of ``data`` from ``start``; the unterminated rest is returned
    as ``tail``. ``consumed`` counts from ``start``; a problem's offset is ``base_offset`` plus its index
    in ``data``. (A start index, not a slice: a session body is tens of megabytes, and copying it took
    about as long as a fifth of its parse.)"""
    entries: list[dict[str, Any]] = []
    problems: list[LoadProblem] = []
    offset = start
    line_no = start_line
    end = len(data)
    find = data.find
    while offset < end:
        newline = find(b"\n", offset)
        if newline < 0:
            break
        raw = data[offset:newline]
        if raw.strip():
            reason = check_line(raw, entries, needs_id=needs_id)
            if reason:
                problems.append(LoadProblem(line_no, base_offset + offset, reason))
        offset = newline + 1
        line_no += 1
    return ParsedLines(entries, problems, offset - start, data[offset:], line_no - start_line)


def check_line(raw: bytes, entries: list[dict[str, Any]], *, needs_id: bool = True) -> str | None:
    """Decode ``raw`` and append it to ``entries``; returns why it was skipped instead, if it was."""
    try:
        value = decode_line(raw)
    except ValueError as exc:
        return f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return "not a JSON object"
    if needs_id and message_passes(value):  # most lines: the same verdict, told in one cheap pass
        entries.append(value)
        return None
    if too_deep(raw, value):
        return "nested too deeply"
    reason = entry_problem(value, needs_id=needs_id)
    if reason:
        return reason
    entries.append(value)
    return None
