"""Where sessions live and what is in them: kompakt's own sessions and the user's pi sessions.

pi keeps sessions in ``~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl``; kompakt uses the same
layout under its own data directory (``KOMPAKT_HOME`` or ``~/.kompakt``) so both open in either tool.
Listing reads only each file's head (header, name, first user message), so it stays quick.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from tui.session.display import content_text, flat

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


def new_session_path(cwd: str | None = None, root: Path | None = None) -> Path:
    cwd = cwd or os.getcwd()
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    name = f"{stamp.replace(':', '-').replace('.', '-')}_{uuid.uuid4()}.jsonl"
    return (root or sessions_root()) / encode_cwd(cwd) / name


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
    name, first = None, ""
    for raw in lines[1:]:
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(entry, dict):
            continue
        if entry.get("type") == "session_info" and entry.get("name"):
            name = str(entry["name"])
        message = entry.get("message") if entry.get("type") == "message" else None
        if not first and isinstance(message, dict) and message.get("role") == "user":
            first = flat(content_text(message.get("content")), 120)
    return SessionSummary(
        path, source, header["id"], str(header.get("cwd", "")), name, first, stat.st_mtime, stat.st_size
    )


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
