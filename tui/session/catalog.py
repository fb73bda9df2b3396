"""Where sessions live and what is in them: kompakt's own sessions and the user's pi sessions.

pi keeps sessions in ``~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl``; kompakt uses the same
layout under its own data directory (``KOMPAKT_HOME`` or ``~/.kompakt``) so both open in either tool.
pi can also be told to keep them in one flat directory of its own: ``--session-dir``, else
``PI_CODING_AGENT_SESSION_DIR``, else ``sessionDir`` in pi's settings.json (``~`` expanded, the project's
``.pi/settings.json`` over the user's); that directory is searched too, and like pi without a per-directory
filter. Listing reads only each file's head (header, first user message) and finds the name with a byte
search, so it stays quick.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import orjson

from tui.session.content import content_text
from tui.session.display import flat
from tui.session.entries import now_iso, session_info_name, uuid7
from tui.session.store import FsyncMode, SessionStore

HEAD_BYTES = 64 * 1024


def kompakt_home() -> Path:
    return Path(os.environ.get("KOMPAKT_HOME") or Path.home() / ".kompakt")


def expand_home(path: str) -> str:
    """pi's ``~`` expansion: ``~`` alone and a leading ``~/`` only (not ``~user``)."""
    if path == "~":
        return str(Path.home())
    if path.startswith("~/"):
        return str(Path.home() / path[2:])
    return path


def pi_agent_dir(env: Mapping[str, str] | None = None) -> Path:
    """pi's agent directory: ``PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    env = os.environ if env is None else env
    configured = env.get("PI_CODING_AGENT_DIR")
    return Path(expand_home(configured)) if configured else Path.home() / ".pi" / "agent"


def pi_sessions_root(env: Mapping[str, str] | None = None) -> Path:
    """pi's default sessions tree (one ``--<cwd>--`` folder per working directory)."""
    env = os.environ if env is None else env
    override = env.get("KOMPAKT_PI_SESSIONS")
    return Path(override) if override else pi_agent_dir(env) / "sessions"


def _setting_session_dir(settings_file: Path) -> str | None:
    try:
        data = orjson.loads(settings_file.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None  # pi reports a broken settings.json itself; here it only means "not set"
    value = data.get("sessionDir") if isinstance(data, dict) else None
    return value if isinstance(value, str) and value else None


def pi_session_dir(
    cwd: str | None = None, override: str | Path | None = None, env: Mapping[str, str] | None = None
) -> Path | None:
    """pi's own session directory when one is configured: ``--session-dir`` (``override``), else
    ``PI_CODING_AGENT_SESSION_DIR``, else ``sessionDir`` from pi's settings.json; None for the default."""
    env = os.environ if env is None else env
    if override:
        return Path(expand_home(str(override)))
    if configured := env.get("PI_CODING_AGENT_SESSION_DIR"):
        return Path(expand_home(configured))
    project = Path(cwd or os.getcwd()) / ".pi" / "settings.json"
    setting = _setting_session_dir(project) or _setting_session_dir(pi_agent_dir(env) / "settings.json")
    return Path(expand_home(setting)) if setting else None


class SessionRoot(NamedTuple):
    """A place sessions are searched: a per-directory tree (``--<cwd>--`` folders) or one flat folder."""

    path: Path
    source: str  # "kompakt" | "pi"
    flat: bool = False


def session_roots(
    cwd: str | None = None, session_dir: str | Path | None = None, *, demos: bool = False
) -> list[SessionRoot]:
    """kompakt's tree, pi's default tree and pi's configured directory (if any), without repeats.

    ``demos`` adds the demo copies (for the session list, not for ``-c``, which continues real work).
    """
    roots = [SessionRoot(sessions_root(), "kompakt"), SessionRoot(pi_sessions_root(), "pi")]
    if demos:
        roots.append(SessionRoot(demo_dir(), "demo", flat=True))
    custom = pi_session_dir(cwd, session_dir)
    if custom is not None:
        roots.insert(0, SessionRoot(custom, "pi", flat=True))
    seen: set[Path] = set()
    unique = []
    for root in roots:
        key = root.path.expanduser().absolute()
        if key not in seen:
            seen.add(key)
            unique.append(root)
    return unique


def sessions_root() -> Path:
    return kompakt_home() / "sessions"


def demo_dir() -> Path:
    """Where ``--demo`` copies the bundled demo session (listed by F7, resumed by ``-c --demo``)."""
    return kompakt_home() / "demo"


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
    directory: Path | None = None,
    parent_session: str | None = None,
    defer: bool = False,
    fsync: FsyncMode = "always",
) -> SessionStore:
    """A new session whose file name carries the header's own UUIDv7 and timestamp.

    It goes to ``root``'s folder for ``cwd`` (default: kompakt's tree), or straight into ``directory``
    (a flat session directory such as ``--session-dir``).
    """
    session_id, timestamp = uuid7(), now_iso()
    path = new_session_path(cwd, root, session_id=session_id, timestamp=timestamp)
    if directory is not None:
        path = directory / path.name
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


def _files(root: Path, flat: bool) -> Iterable[Path]:
    if root.is_dir():
        if not flat:
            yield from root.glob("*/*.jsonl")
        yield from root.glob("*.jsonl")


def list_sessions(
    roots: Iterable[tuple[Path, str] | SessionRoot] | None = None,
    cwd: str | None = None,
    *,
    session_dir: str | Path | None = None,
) -> list[SessionSummary]:
    """Valid sessions under the roots, newest first; only those of ``cwd`` when it is given.

    A flat root (pi's configured directory) is not filtered by ``cwd``: pi continues and lists
    whatever that directory holds.
    """
    if roots is None:
        roots = session_roots(cwd, session_dir)
    found = []
    seen: set[Path] = set()
    for root in roots:
        path_root, source, flat = (*root, False)[:3]
        for path in _files(Path(path_root), bool(flat)):
            if not flat and cwd is not None and path.parent.name != encode_cwd(cwd):
                continue
            if path in seen:
                continue
            seen.add(path)
            summary = read_summary(path, source)
            if summary is not None:
                found.append(summary)
    return sorted(found, key=lambda s: s.modified, reverse=True)


def latest_session(cwd: str | None = None, session_dir: str | Path | None = None) -> Path | None:
    """The most recently modified valid session for ``cwd`` (kompakt's or pi's), or None."""
    sessions = list_sessions(cwd=cwd or os.getcwd(), session_dir=session_dir)
    return sessions[0].path if sessions else None
