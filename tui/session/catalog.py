"""Where sessions live and what is in them: kompakt's own sessions and the user's pi sessions.

pi keeps sessions in ``~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl``; kompakt uses the same
layout under its own data directory (``KOMPAKT_HOME`` or ``~/.kompakt``) so both open in either tool.
Listing reads only each file's head (header, name, first user message), so it stays quick.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

from tui.session.display import content_text, flat
from tui.session.entries import now_iso, session_info_name, uuid7
from tui.session.store import FsyncMode, SessionStore

HEAD_BYTES = 64 * 1024


def kompakt_home() -> Path:
    return Path(os.environ.get("KOMPAKT_HOME") or Path.home() / ".kompakt")


def pi_sessions_root() -> Path:
    return Path(os.environ.get("KOMPAKT_PI_SESSIONS") or Path.home() / ".pi" / "agent" / "sessions")


def sessions_root() -> Path:
    return kompakt_home() / "sessions"


def encode_cwd(cwd: str) -> str:
    """pi's directory name for a working directory: ``/home/a/b`` → ``--home-a-b--``."""
    stripped = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + stripped.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def new_session_path(
    cwd: str | None = None,
    root: Path | None = None,
    *,
    session_id: str | None = None,
    timestamp: str | None = None,
) -> Path:
    """``<root>/--<cwd>--/<timestamp>_<session id>.jsonl``; pass the header's id and timestamp (B.4)."""
    cwd = cwd or os.getcwd()
    stamp = timestamp or now_iso()
    name = f"{stamp.replace(':', '-').replace('.', '-')}_{session_id or uuid7()}.jsonl"
    return (root or sessions_root()) / encode_cwd(cwd) / name


def create_session(
    cwd: str,
    *,
    root: Path | None = None,
    parent_session: str | None = None,
    defer: bool = False,
    fsync: FsyncMode = "always",
) -> SessionStore:
    """A new session whose file name carries the header's own UUIDv7 and timestamp."""
    session_id, timestamp = uuid7(), now_iso()
    path = new_session_path(cwd, root, session_id=session_id, timestamp=timestamp)
    return SessionStore.create(
        path,
        cwd=cwd,
        session_id=session_id,
        timestamp=timestamp,
        parent_session=parent_session,
        defer=defer,
        fsync=fsync,
    )


@dataclass(frozen=True)
class SessionSummary:
    """What the session picker shows for one file."""

    path: Path
    source: str  # "kompakt" | "pi"
    session_id: str
    cwd: str
    name: str | None
    first_message: str
    modified: float
    size: int


def read_summary(path: Path, source: str) -> SessionSummary | None:
    """The summary of a session file, or None when it is not a valid session."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
        stat = path.stat()
    except OSError:
        return None
    lines = head.split(b"\n")
    try:
        header = orjson.loads(lines[0])
    except orjson.JSONDecodeError:
        return None
    if (
        not isinstance(header, dict)
        or header.get("type") != "session"
        or not isinstance(header.get("id"), str)
    ):
        return None
    first = ""
    for raw in lines[1:]:
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(entry, dict):
            continue
        message = entry.get("message") if entry.get("type") == "message" else None
        if not first and isinstance(message, dict) and message.get("role") == "user":
            first = flat(content_text(message.get("content")), 120)
    name = latest_session_name(path, head)
    return SessionSummary(
        path, source, header["id"], str(header.get("cwd", "")), name, first, stat.st_mtime, stat.st_size
    )


_SESSION_INFO = b'"session_info"'


def latest_session_name(path: Path, head: bytes = b"") -> str | None:
    """The name set by the file's last ``session_info`` line (pi 0.73.1: latest wins, empty clears).

    The whole file is searched backwards for the type's bytes, so a rename deep in a long session
    counts without parsing every line; a match inside message text is checked and passed over.
    """
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size <= len(head) or size == 0:
                return _last_name_in(head or handle.read())
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _last_name_in(data)
    except (OSError, ValueError):
        return None


def _last_name_in(data: bytes | mmap.mmap) -> str | None:
    end = len(data)
    while True:
        hit = data.rfind(_SESSION_INFO, 0, end)
        if hit < 0:
            return None
        start = data.rfind(b"\n", 0, hit) + 1
        stop = data.find(b"\n", hit)
        try:
            entry = orjson.loads(data[start : stop if stop >= 0 else len(data)])
        except orjson.JSONDecodeError:
            entry = None
        if isinstance(entry, dict) and entry.get("type") == "session_info" and start > 0:
            return session_info_name(entry)
        end = start
        if end <= 0:
            return None


def _files(root: Path) -> Iterable[Path]:
    if root.is_dir():
        yield from root.glob("*/*.jsonl")
        yield from root.glob("*.jsonl")


def list_sessions(
    roots: Iterable[tuple[Path, str]] | None = None, cwd: str | None = None
) -> list[SessionSummary]:
    """Valid sessions under the roots, newest first; only those of ``cwd`` when it is given."""
    if roots is None:
        roots = [(sessions_root(), "kompakt"), (pi_sessions_root(), "pi")]
    found = []
    for root, source in roots:
        for path in _files(root):
            if cwd is not None and path.parent.name != encode_cwd(cwd):
                continue
            summary = read_summary(path, source)
            if summary is not None:
                found.append(summary)
    return sorted(found, key=lambda s: s.modified, reverse=True)


def latest_session(cwd: str | None = None) -> Path | None:
    """The most recently modified valid session for ``cwd`` (kompakt's or pi's), or None."""
    sessions = list_sessions(cwd=cwd or os.getcwd())
    return sessions[0].path if sessions else None
