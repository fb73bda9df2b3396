"""How kompakt was asked to start, and the session store that follows from it (no Textual here).

``kompakt`` starts a new session in the working directory (the file appears with the first entry),
``-c`` continues the newest kompakt or pi session there (pi's configured session directory included), ``open FILE`` opens any pi-format file (read-only
when another kompakt holds its lock), ``watch FILE`` follows a file another process writes, and
``--demo`` opens a fresh copy of the bundled demo session.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from tui.session.catalog import create_session, demo_dir, latest_session
from tui.session.errors import SessionError
from tui.session.prefetch import Prefetch
from tui.session.store import SessionStore

LaunchMode = Literal["new", "continue", "open", "watch", "demo"]


@dataclass
class Launch:
    mode: LaunchMode = "new"
    path: Path | None = None
    cwd: Path = field(default_factory=Path.cwd)
    session_dir: Path | None = None  # --session-dir: new sessions go there, and it is searched first
    resume_demo: bool = False  # -c --demo: the latest demo copy instead of a new one


@dataclass
class OpenedSession:
    store: SessionStore
    read_only: bool
    follow: bool
    notices: list[str] = field(default_factory=list)


# Demo copies kept besides the one being opened; older ones are deleted (they are the bundled demo, rebuilt).
DEMO_COPIES_KEPT = 5


def demo_path() -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-%f")
    return demo_dir() / f"demo-{stamp}.jsonl"


def demo_copies() -> list[Path]:
    """The demo copies, newest first (their names sort by the time they were made)."""
    folder = demo_dir()
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.glob("demo-*.jsonl") if p.is_file()), reverse=True)


def prune_demo_copies(pristine: Path, keep: int = DEMO_COPIES_KEPT) -> None:
    """Delete all but the newest ``keep`` demo copies (and what their stores left beside them), but never
    one that a kompakt has open (its lock is held) or that holds more than the bundled demo (the user wrote
    to it: a message, a /name, a navigation): that is the user's session now. ``pristine`` is a copy as
    built, to compare with."""
    lines = _line_count(pristine)
    for old in demo_copies()[keep:]:
        if old == pristine or _in_use(old) or _line_count(old) != lines:
            continue
        for leftover in (old, *old.parent.glob(old.name + ".*")):
            leftover.unlink(missing_ok=True)


def _line_count(path: Path) -> int:
    try:
        with path.open("rb") as file:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: file.read(1 << 16), b""))
    except OSError:
        return -1  # unreadable: not known to be untouched, so kept


def _in_use(path: Path) -> bool:
    """Whether another store holds the file's lock (a kompakt has it open to write)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing the descriptor drops the shared lock taken to test
    return False


def _demo_session(launch: Launch) -> OpenedSession:
    from tui.demo import build_demo

    copies = demo_copies() if launch.resume_demo else []
    if copies:
        path, what = copies[0], "the latest demo copy"
    else:
        path, what = build_demo(demo_path(), str(launch.cwd)), "a new copy"
        prune_demo_copies(path)
    store = SessionStore.open(path, on_locked="read_only")
    notices = [
        f"Demo session ({what}, at {path}): explore the tree (F2), the timeline (F4) and the settings (F5)."
    ]
    if store.read_only:
        notices.append(_read_only_notice(store))
    return OpenedSession(store, store.read_only, store.locked_elsewhere, notices)


def _read_only_notice(store: SessionStore) -> str:
    reason = store.read_only_reason or f"{store.path}: opened read-only."
    if store.locked_elsewhere:  # D27: the other kompakt writes it, so it is followed as `watch` does
        reason += " Its new entries appear as they are written."
    return reason


def prefetch_for(launch: Launch) -> Prefetch | None:
    """A read of the file ``open`` or ``watch`` names, started now on a thread (tui.session.prefetch)."""
    return Prefetch(launch.path) if launch.mode in ("open", "watch") and launch.path is not None else None


def open_session(launch: Launch, prefetch: Prefetch | None = None) -> OpenedSession:
    """The store for a launch; raises the session engine's documented errors for bad files."""
    notices: list[str] = []
    if launch.mode == "watch":
        assert launch.path is not None
        store = SessionStore.open(launch.path, read_only=True, prefetch=prefetch)
        return OpenedSession(
            store,
            read_only=True,
            follow=True,
            notices=[f"Watching {launch.path} (read-only): new entries appear as they are written."],
        )
    if launch.mode == "demo":
        return _demo_session(launch)
    path = launch.path
    if launch.mode == "continue":
        path = latest_session(str(launch.cwd), launch.session_dir)
        if path is None:
            notices.append("No earlier session here: starting a new one.")
    if path is None:
        store = create_session(str(launch.cwd), directory=launch.session_dir, defer=True)
        return OpenedSession(store, False, False, notices)
    store = SessionStore.open(path, on_locked="read_only", prefetch=prefetch)
    if store.read_only:
        notices.append(_read_only_notice(store))
    for problem in store.problems:
        notices.append(f"{path}: {problem} (skipped; the file is unchanged)")
    if store.recovered_torn_line:
        notices.append(f"{path}: {store.recovered_torn_line}")
    if store.migrated_from and store.migration_backup:
        notices.append(
            f"{path}: migrated from format v{store.migrated_from}; the original is kept as "
            f"{store.migration_backup.name}"
        )
    return OpenedSession(store, store.read_only, store.locked_elsewhere, notices)


class MissingSessionCwdError(SessionError):
    """The working directory stored in a session's header no longer exists (pi 0.73.1 refuses too)."""

    def __init__(self, store: SessionStore, missing: str, fallback: Path) -> None:
        super().__init__(
            f"the session's working directory does not exist: {missing} (session file: {store.path}; "
            f"current directory: {fallback})"
        )
        self.missing = missing
        self.fallback = fallback


def missing_session_cwd(store: SessionStore) -> str | None:
    """The header's ``cwd`` when it names a directory that is not there (any more); None otherwise."""
    cwd = store.header.get("cwd")
    if isinstance(cwd, str) and cwd and not os.path.isdir(cwd):
        return cwd
    return None


def other_session_cwd(store: SessionStore, here: Path) -> Path | None:
    """The header's ``cwd`` when it is an existing directory other than ``here``, else None.

    The TUI's tools work where kompakt was started; a session file (one sent to you, say) cannot move them
    to ``/`` or your home by naming it: the user is asked first.
    """
    cwd = store.header.get("cwd")
    if not isinstance(cwd, str) or not cwd or not os.path.isdir(cwd):
        return None
    stored = Path(cwd).resolve()
    return None if stored == here.resolve() else stored


def session_cwd(store: SessionStore, fallback: Path | None = None) -> Path:
    """Where the session works: its stored cwd; ``fallback`` (default: here) only when it has none.

    A stored cwd that no longer exists raises :class:`MissingSessionCwdError` unless ``fallback`` is
    given: the caller says so and asks (TUI) or stops (CLI); there is no silent fallback.
    """
    here = fallback or Path.cwd()
    missing = missing_session_cwd(store)
    if missing is not None:
        if fallback is None:
            raise MissingSessionCwdError(store, missing, here)
        return fallback
    cwd = store.header.get("cwd")
    return Path(cwd) if isinstance(cwd, str) and cwd else here
