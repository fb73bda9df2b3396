"""The append-only JSONL session store: pi's file format with kompakt's durability guarantees.

Each append is one ``write`` of one whole line, then (by default) an fsync. A torn last line left by a
crash is moved to ``FILE.corrupt`` with its byte offset and the rest loads; a corrupt line in the middle
is skipped and reported, and the file is left as it is. An exclusive ``flock`` keeps a second writer
out. Old formats are migrated on load after the original is kept as ``FILE.vN.bak``. Read-only stores
can :meth:`SessionStore.refresh` to follow a file that another process appends to (watch mode). Every
change (an append, a leaf move, a reload) bumps :attr:`SessionStore.revision` and calls the callbacks
given to :meth:`SessionStore.on_change`, so that a UI redraws from one place; :attr:`SessionStore.path_revision`
moves only when the shown path changes as a whole (a leaf move, a compaction, a reload). The context of
the active path is kept with the path it was built from (:meth:`SessionStore.branch_context`) and grown
by an append at the leaf, so a turn that asks for it several times builds it once.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import gc
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn

import orjson

from tui import fileio
from tui.session.context import (
    PathPrunes,
    SessionContext,
    build_session_context,
    context_and_pruned,
    context_from_path,
    copy_context,
    extended_context,
)
from tui.session.entries import (
    CURRENT_SESSION_VERSION,
    LEAF_CUSTOM_TYPE,
    Entry,
    EntryError,
    Message,
    generate_id,
    is_custom,
    now_iso,
    session_info_name,
    uuid7,
    validate_entry,
)
from tui.session.errors import (
    EntryNotFoundError,
    ReadOnlySessionError,
    SessionAccessError,
    SessionError,
    SessionFormatError,
    SessionLockedError,
    SessionReplacedError,
    SessionVersionError,
    SessionWriteError,
)
from tui.session.jsonl import (
    LoadProblem,
    check_line,
    decode_line,
    open_regular,
    parse_lines,
    read_fd,
)
from tui.session.migrate import header_version, migrate_entries
from tui.session.prefetch import Prefetch, Snapshot, same_file
from tui.session.shape import header_problem
from tui.session.tree import PathSnapshot, TreeIndex, path_ids

FsyncMode = Literal["always", "batch"]
BATCH_FSYNC_SECONDS = 0.5
HEAD_BYTES = 4096
# The most entries the kept context of the active path grows by before it is built from the whole path again.
MEMO_GROWTH = 64


@dataclass
class RefreshResult:
    """What :meth:`SessionStore.refresh` found: new entries, or a full reload after truncation/rotation."""

    new_entries: list[Entry] = field(default_factory=list)
    reloaded: bool = False
    problems: list[LoadProblem] = field(default_factory=list)  # lines skipped in what was read
    problem: str | None = None  # why the file could not be read this time (it is retried)


@dataclass
class _Parsed:
    header: Entry
    version: int
    header_offset: int
    entries: list[Entry]
    problems: list[LoadProblem]
    consumed: int  # bytes of complete lines parsed
    torn: tuple[int, bytes] | None  # offset and bytes of an unparseable unterminated last line
    needs_newline: bool  # the last line parsed but has no trailing newline
    lines: int  # newlines in the first ``consumed`` bytes (counted while parsing, not by a second scan)


def _first_line(data: bytes) -> tuple[int, int]:
    """Start and end (exclusive, before its newline) of the first non-blank line."""
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            return start, len(data)
        if data[start:end].strip():
            return start, end
        start = end + 1


def _parse_file(data: bytes, path: Path) -> _Parsed:
    """The header (the first non-blank line), then every other line checked against its version."""
    header_start, header_end = _first_line(data)
    line = data.count(b"\n", 0, header_start) + 1
    try:
        header = decode_line(data[header_start:header_end])
    except ValueError as exc:
        raise SessionFormatError(
            f"{path}:{line}: not a pi session file: the first line is not a session header (invalid JSON: {exc})"
        ) from None
    if (
        not isinstance(header, dict)
        or header.get("type") != "session"
        or not isinstance(header.get("id"), str)
    ):
        raise SessionFormatError(
            f"{path}:{line}: not a pi session file: the first line is not a session header"
        )
    if reason := header_problem(header):
        raise SessionFormatError(f"{path}:{line}: {reason}")
    try:
        version = header_version(header)
    except SessionVersionError as exc:
        raise SessionVersionError(f"{path}:{line}: {exc}") from None
    needs_id = version >= 2
    body_start = min(header_end + 1, len(data))
    body_line = line + 1
    parsed = parse_lines(data, start=body_start, start_line=body_line, needs_id=needs_id)
    entries, problems = parsed.entries, parsed.problems
    consumed = body_start + parsed.consumed
    lines = line + parsed.lines  # the header's own newline, and the lines before it
    torn = None
    needs_newline = False
    if header_end == len(data):
        consumed, needs_newline = len(data), True  # a header alone, without its newline
        lines = line - 1
    elif parsed.tail.strip():
        tail = parsed.tail
        try:
            value = decode_line(tail)
        except ValueError:
            value = None
        if isinstance(value, dict):
            # A complete entry without its newline: kept, and checked like any other line.
            if reason := check_line(tail, entries, needs_id=needs_id):
                tail_line = body_line + data.count(b"\n", body_start, consumed)
                problems.append(LoadProblem(tail_line, consumed, reason))
            consumed = len(data)
            needs_newline = True
        else:
            torn = (consumed, tail)
    return _Parsed(header, version, header_start, entries, problems, consumed, torn, needs_newline, lines)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _write_fresh_backup(path: Path, data: bytes, version: int) -> Path:
    """Write ``data`` to ``FILE.vN.bak``, or ``FILE.vN.2.bak`` ... when that exists: never overwrite."""
    for attempt in range(1, 10_000):
        suffix = f".v{version}.bak" if attempt == 1 else f".v{version}.{attempt}.bak"
        backup = path.with_name(path.name + suffix)
        try:
            fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            continue
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except OSError:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(backup)
            raise
        os.close(fd)
        _fsync_dir(path.parent)
        return backup
    raise FileExistsError(errno.EEXIST, "no free backup name", str(path))


def _migrated_body(original: bytes, parsed: _Parsed, header: Entry, entries: list[Entry]) -> bytes:
    """The migrated file: each loaded line re-encoded in place, each skipped line kept as it was."""
    skipped = {p.offset for p in parsed.problems}
    migrated = iter(entries)
    out: list[bytes] = []
    offset = 0
    end = len(original)
    while offset < end:
        newline = original.find(b"\n", offset)
        stop = end if newline < 0 else newline
        raw = original[offset:stop]
        if offset == parsed.header_offset:
            out.append(encode_entry(header))
        elif offset in skipped:
            out.append(raw + b"\n")
        elif raw.strip():
            out.append(encode_entry(next(migrated)))
        offset = stop + 1
    return b"".join(out)


def encode_entry(entry: Entry) -> bytes:
    try:
        return orjson.dumps(entry) + b"\n"
    except TypeError as exc:  # orjson.JSONEncodeError: e.g. an int beyond 64 bits, a non-str key
        raise EntryError(f"{entry.get('type', 'entry')}: not representable as JSON: {exc}") from None


class SessionStore:
    """One session file: its header, its entries in file order, the tree index and the current leaf."""

    def __init__(self, path: Path, *, read_only: bool, fsync: FsyncMode, persist_leaf: bool) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.fsync_mode: FsyncMode = fsync
        self.persist_leaf = persist_leaf
        self.header: Entry = {}
        self.entries: list[Entry] = []
        # The tree index, or None until first use: opening a session leaves it for after the first frame
        # (20-30 ms of a 10k-entry session's); the chat's path and the name need only the entries.
        self._tree: TreeIndex | None = TreeIndex()
        self.revision = 0  # bumped by every append, leaf move and reload
        self.path_revision = 0  # bumped when the active path changes other than by growing at the leaf
        self._listeners: list[Callable[[], None]] = []
        self._leaf_id: str | None = None
        self.problems: list[LoadProblem] = []
        self.recovered_torn_line: LoadProblem | None = None
        self.migrated_from: int | None = None
        self._fd: int | None = None
        self._offset = 0
        self._lines = 0
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the file that was loaded
        self._head = b""  # its first bytes (the header line, mostly)
        self._prefetched: Snapshot | None = None  # bytes read ahead (tui.session.prefetch), used once
        self.read_only_reason: str | None = None
        self.locked_elsewhere = False  # read-only because another kompakt holds the lock (and writes)
        self.migration_backup: Path | None = None
        # Set when the file may no longer match what was reported: appends are refused until reopened.
        self.write_failure: str | None = None
        self._needs_newline = False
        self._last_fsync = 0.0
        self._dirty = False
        # (offset, entries, leaf, needs_newline) when the file was last known to be on disk.
        self._durable: tuple[int, int, str | None, bool] = (0, 0, None, False)
        self._deferred = False
        # The active path's context: (index, path, context, pruned outputs), replaced whole (threads read it).
        self._context_memo: tuple[TreeIndex, PathSnapshot, SessionContext, PathPrunes] | None = None

    # --- announcing changes -----------------------------------------------------------------
    @property
    def leaf_id(self) -> str | None:
        return self._leaf_id

    @leaf_id.setter
    def leaf_id(self, entry_id: str | None) -> None:
        """Moving the leaf changes the shown path (appends move it through :meth:`append`, which grows it)."""
        if entry_id != self._leaf_id:
            self._leaf_id = entry_id
            self._changed(path=True)

    def on_change(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` after every change; returns the function that stops it."""
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback) if callback in self._listeners else None

    def _changed(self, *, path: bool) -> None:
        self.revision += 1
        if path:
            self.path_revision += 1
        for callback in list(self._listeners):
            callback()

    # --- opening ----------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | Path,
        *,
        cwd: str | None = None,
        session_id: str | None = None,
        timestamp: str | None = None,
        parent_session: str | None = None,
        fsync: FsyncMode = "always",
        persist_leaf: bool = True,
        defer: bool = False,
    ) -> SessionStore:
        """Create a new session (fails if the file exists).

        With ``defer=True`` nothing touches the disk until the first append, so starting kompakt and
        quitting without a word leaves no empty session file behind.
        """
        store = cls(Path(path), read_only=False, fsync=fsync, persist_leaf=persist_leaf)
        store.header = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": session_id or uuid7(),
            "timestamp": timestamp or now_iso(),
            "cwd": cwd if cwd is not None else os.getcwd(),
        }
        if parent_session:
            store.header["parentSession"] = parent_session
        if defer:
            if store.path.exists():
                raise FileExistsError(f"{store.path}: already exists")
            store._deferred = True
        else:
            store._materialize()
        return store

    def _materialize(self) -> None:
        """Create the file with its header (exclusive create, locked, fsynced with its directory)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            raise SessionWriteError(f"{self.path}: already exists; kompakt did not write to it") from None
        except OSError as exc:
            raise SessionAccessError(f"{self.path}: cannot create the session file: {exc.strerror}") from None
        self._take_lock(fd)
        try:
            _write_all(fd, encode_entry(self.header))
            os.fsync(fd)
            _fsync_dir(self.path.parent)
        except OSError as exc:
            # Nothing of this session was saved: leave no half-written header behind.
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            os.close(fd)
            self._fd = None
            raise SessionWriteError(f"{self.path}: cannot write the session file: {exc.strerror}") from None
        info = os.fstat(fd)
        self._offset = info.st_size
        self._identity = (info.st_dev, info.st_ino)
        self._deferred = False

    @property
    def exists_on_disk(self) -> bool:
        return not self._deferred

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        read_only: bool = False,
        on_locked: Literal["error", "read_only"] = "error",
        fsync: FsyncMode = "always",
        persist_leaf: bool = True,
        prefetch: Prefetch | None = None,
    ) -> SessionStore:
        """Open a session file. A second writer gets :class:`SessionLockedError`, or a read-only store.

        With ``on_locked="read_only"`` a file kompakt may read but not write (mode 444, a read-only
        directory for a migration) opens read-only too; :attr:`read_only_reason` says why. A
        ``prefetch`` of the same path gives the bytes it read, if the file has not changed since.
        """
        store = cls(Path(path), read_only=read_only, fsync=fsync, persist_leaf=persist_leaf)
        if prefetch is not None and prefetch.path == store.path:
            store._prefetched = prefetch.take()
        if read_only:
            store._load()
            return store
        try:
            fd = open_regular(store.path, os.O_RDWR | os.O_APPEND)
        except SessionAccessError as exc:
            if on_locked == "error" or not os.access(store.path, os.R_OK):
                raise
            store.read_only, store.read_only_reason = True, f"{exc}: opened read-only"
            store._load()
            return store
        try:
            store._take_lock(fd)
        except SessionLockedError:
            if on_locked == "error":
                raise
            store.read_only, store.locked_elsewhere = True, True
            store.read_only_reason = f"{store.path} is open in another kompakt: opened read-only."
            store._load()
            return store
        try:
            store._load()
        except SessionAccessError as exc:  # the migration could not write its backup or the new file
            store.close()
            if on_locked == "error":
                raise
            store = cls(Path(path), read_only=True, fsync=fsync, persist_leaf=persist_leaf)
            store.read_only_reason = f"{exc}: opened read-only"
            store._load()
        except BaseException:
            store.close()
            raise
        return store

    def _take_lock(self, fd: int) -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionLockedError(
                f"{self.path}: another kompakt process is writing this session; open it read-only "
                "(kompakt watch) or close the other one"
            ) from None
        self._fd = fd

    def _load(self) -> None:
        # Parsing creates hundreds of thousands of containers and no cycles: the cyclic collector's
        # passes over them are wasted work (about 15 % of opening a 10k-entry session).
        enabled = gc.isenabled()
        gc.disable()
        try:
            self._load_file()
        finally:
            if enabled:
                gc.enable()

    def _read(self) -> tuple[bytes, os.stat_result]:
        """The file's bytes and identity, through the locked fd (the writer) or a fresh safe open; the
        prefetched bytes when the file is still the one they were read from, unchanged."""
        prefetched, self._prefetched = self._prefetched, None
        if self._fd is not None:
            return self._read_fd(self._fd, prefetched)
        fd = open_regular(self.path, os.O_RDONLY)
        try:
            return self._read_fd(fd, prefetched)
        finally:
            os.close(fd)

    def _read_fd(self, fd: int, prefetched: Snapshot | None) -> tuple[bytes, os.stat_result]:
        if prefetched is not None:
            # The stat before the prefetch's read: equal now, the bytes it read are the file's bytes.
            info = os.fstat(fd)
            if same_file(prefetched[1], info):
                return prefetched[0], info
        return read_fd(fd, self.path), os.fstat(fd)

    def _load_file(self) -> None:
        data, info = self._read()
        self._identity = (info.st_dev, info.st_ino)
        self._head = data[:HEAD_BYTES]
        if not data or data.isspace():  # not strip(): that would copy the whole file
            if self.read_only:
                raise SessionFormatError(f"{self.path}:1: empty file, not a pi session")
            # As pi does: an empty file opened explicitly gets a fresh header (nothing to lose).
            assert self._fd is not None
            self.header = {
                "type": "session",
                "version": CURRENT_SESSION_VERSION,
                "id": uuid7(),
                "timestamp": now_iso(),
                "cwd": os.getcwd(),
            }
            try:
                os.ftruncate(self._fd, 0)
                _write_all(self._fd, encode_entry(self.header))
                os.fsync(self._fd)
            except OSError as exc:
                raise SessionAccessError(
                    f"{self.path}: cannot write a session header: {exc.strerror}"
                ) from None
            self._offset = os.fstat(self._fd).st_size
            return
        parsed = _parse_file(data, self.path)
        self._offset = parsed.consumed
        self._lines = parsed.lines
        self._needs_newline = parsed.needs_newline
        self.problems = parsed.problems
        if parsed.torn is not None:
            line = data.count(b"\n") + 1
            if self.read_only:  # left in place for the writer to move aside, but said
                reason = f"unterminated last line ({len(parsed.torn[1])} bytes, a write cut short?) ignored"
                self.problems.append(LoadProblem(line, parsed.torn[0], reason))
            else:
                self._quarantine_torn_line(*parsed.torn, line=line)
        self.header = parsed.header
        self.entries = parsed.entries
        old_version = parsed.version
        if migrate_entries(self.header, self.entries):
            self.migrated_from = old_version
            if not self.read_only:
                self._rewrite_migrated(data[: parsed.consumed], parsed, old_version)
        self._tree = None
        self.leaf_id = self._leaf_from_file_order()

    def _quarantine_torn_line(self, offset: int, raw: bytes, *, line: int) -> None:
        """Move an unterminated, unparseable last line (a crash mid-write) to FILE.corrupt."""
        assert self._fd is not None
        corrupt = self.path.with_name(self.path.name + ".corrupt")
        record = orjson.dumps(
            {
                "offset": offset,
                "line": line,
                "bytes": len(raw),
                "at": now_iso(),
                "data": raw.decode("utf-8", errors="backslashreplace"),
            }
        )
        try:
            # Never blocks: FILE.corrupt may be a FIFO or a symlink someone left there.
            fd = fileio.open_regular(corrupt, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW)
            try:
                _write_all(fd, record + b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            # The torn bytes stay in the session file (kompakt appends after a newline, so they
            # remain one reported line) rather than being dropped without a copy.
            self._needs_newline = True
            self._offset = offset + len(raw)
            # A FIFO with no reader refuses a non-blocking open for writing with ENXIO.
            why = "is a FIFO or a socket" if exc.errno == errno.ENXIO else exc.strerror
            reason = f"torn last line ({len(raw)} bytes) left in place: cannot write {corrupt}: {why}"
            self.recovered_torn_line = LoadProblem(line, offset, reason)
            return
        os.ftruncate(self._fd, offset)
        os.fsync(self._fd)
        reason = f"torn last line ({len(raw)} bytes) moved to {corrupt}"
        self.recovered_torn_line = LoadProblem(line, offset, reason)

    def _rewrite_migrated(self, original: bytes, parsed: _Parsed, old_version: int) -> None:
        """Keep the original under a fresh backup name, then replace the file with the migrated one.

        Lines that were skipped at load (corrupt, or of the wrong shape) are written back verbatim at
        their place: the migrated file is the only copy most users look at.
        """
        try:
            backup = _write_fresh_backup(self.path, original, old_version)
            body = _migrated_body(original, parsed, self.header, self.entries)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.migrating")
            with open(tmp, "wb") as handle:
                handle.write(body)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
            _fsync_dir(self.path.parent)
        except OSError as exc:
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(tmp)
            raise SessionAccessError(
                f"{self.path}: cannot migrate from format v{old_version}: {exc.strerror} ({exc.filename})"
            ) from None
        self.migration_backup = backup
        old_fd = self._fd
        self._fd = None
        self._take_lock(os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC))
        if old_fd is not None:
            os.close(old_fd)
        assert self._fd is not None
        info = os.fstat(self._fd)
        self._offset = info.st_size
        self._identity = (info.st_dev, info.st_ino)
        self._lines = body.count(b"\n")
        self._needs_newline = False

    def _leaf_from_file_order(self) -> str | None:
        """pi's rule (the last entry is the leaf), except that a kompakt leaf marker names the leaf."""
        if not self.entries:
            return None
        last = self.entries[-1]
        if is_custom(last, LEAF_CUSTOM_TYPE):
            data = last.get("data") or {}
            named = data.get("leafId", last.get("parentId"))
            target = self.tree.through_markers(named)
            if target is None and named is not None and self.tree.is_marker(named):
                # A marker pointing at itself (or a ring of markers): the last real entry leads.
                return next(
                    (e["id"] for e in reversed(self.entries) if not self.tree.is_marker(e["id"])), None
                )
            return target if target in self.tree else None
        return last.get("id")

    # --- reading ----------------------------------------------------------------------------
    @property
    def session_id(self) -> str:
        return str(self.header.get("id", ""))

    @property
    def tree(self) -> TreeIndex:
        """The tree index over :attr:`entries`, built on first use (call it on the event loop first:
        :meth:`index_tree`)."""
        if self._tree is None:
            self._tree = TreeIndex(self.entries)
        return self._tree

    @tree.setter
    def tree(self, tree: TreeIndex) -> None:
        self._tree = tree

    def index_tree(self) -> None:
        """Build the tree index now if it is not built yet (start-up calls it after the first frame)."""
        _ = self.tree

    @property
    def tree_built(self) -> bool:
        return self._tree is not None

    @property
    def name(self) -> str | None:
        if self._tree is not None:
            return self._tree.name
        # As the index has it: the latest session_info in file order (of the entries it takes, with ids).
        for entry in reversed(self.entries):
            if entry.get("type") == "session_info" and isinstance(entry.get("id"), str):
                return session_info_name(entry)
        return None

    def snapshot(self) -> SessionStore:
        """A read-only copy of what is loaded now, for a reader (an export) on another thread.

        Safe to call from that thread while this store appends on the event loop: the leaf is read first
        and the entry list is then copied in one step, and a stored entry never changes, so the copy is a
        whole prefix of the session that holds its leaf. The copy's own index is built from it.
        """
        leaf, header, entries = self._leaf_id, dict(self.header), list(self.entries)
        copy = SessionStore(self.path, read_only=True, fsync=self.fsync_mode, persist_leaf=False)
        copy.header, copy.entries, copy._leaf_id = header, entries, leaf
        copy.tree = TreeIndex(entries)
        copy.read_only_reason = f"{self.path}: a snapshot for reading"
        return copy

    def get(self, entry_id: str) -> Entry:
        try:
            return self.tree.by_id[entry_id]
        except KeyError:
            raise EntryNotFoundError(entry_id) from None

    def get_branch(self, from_id: str | None = None) -> list[Entry]:
        """The path from the root to ``from_id`` (default: the leaf)."""
        target = from_id if from_id is not None else self.leaf_id
        if self._tree is not None:
            return self._tree.path(target)
        by_id = {e["id"]: e for e in self.entries if isinstance(e.get("id"), str)}  # the last line wins
        return [by_id[i] for i in path_ids(by_id, target)]

    def build_context(self, leaf_id: Any = ...) -> SessionContext:
        leaf = self.leaf_id if leaf_id is ... else leaf_id
        if leaf is None:
            return SessionContext()
        if leaf == self.leaf_id and leaf in self.tree:
            return self.branch_context()
        return build_session_context(self.entries, leaf, self.tree.by_id)

    def branch_context(self) -> SessionContext:
        """``context_from_path(self.get_branch())``, kept for the path it was built from: the same path
        gives it again, and a path a few entries longer gets those entries added (see
        :func:`~tui.session.context.extended_context`). Each call returns its own copy."""
        kept = self._branch_memo()
        if kept is None:
            return context_from_path([])
        return copy_context(kept[2])

    def branch_prunes(self) -> PathPrunes:
        """``path_prunes(self.get_branch())``: the prune entries of the active path, kept with its context
        (read-only)."""
        kept = self._branch_memo()
        return PathPrunes() if kept is None else kept[3]

    def _branch_memo(self) -> tuple[TreeIndex, PathSnapshot, SessionContext, PathPrunes] | None:
        tree = self.tree
        snapshot = tree.path_snapshot(self.leaf_id)
        if snapshot is None:
            return None
        memo = self._context_memo
        if memo is not None and memo[0] is tree:
            _, kept, context, prunes = memo
            if kept is snapshot:
                return memo
            start, end = len(kept.ids), len(snapshot.ids)
            # The path grew at its leaf (a turn appends a few entries; a compaction a prune entry and itself).
            if 0 < end - start <= MEMO_GROWTH and snapshot.ids[start - 1] == kept.leaf and tree.is_current(kept):
                for index in range(start, end):
                    grown = extended_context(context, prunes, snapshot.entries[index], index)
                    if grown is None:
                        break
                    context, prunes = grown
                else:
                    memo = (tree, snapshot, context, prunes)
                    self._context_memo = memo
                    return memo
        built, prunes = context_and_pruned(snapshot.entries)
        memo = (tree, snapshot, built, prunes)
        self._context_memo = memo
        return memo

    def label_of(self, entry_id: str) -> str | None:
        return self.tree.label(entry_id)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    # --- writing ----------------------------------------------------------------------------
    def append(self, fields: dict[str, Any]) -> Entry:
        """Append a new entry as a child of the leaf; it becomes the leaf. Returns the stored entry."""
        entry: Entry = {
            "type": fields["type"],
            "id": generate_id(self.tree.by_id),
            "parentId": self.leaf_id,
            "timestamp": now_iso(),
        }
        entry.update({k: v for k, v in fields.items() if k != "type"})
        validate_entry(entry)
        self._write_entry(entry)
        self._leaf_id = entry["id"]
        # A compaction replaces what the path shows before it; anything else extends it.
        self._changed(path=entry["type"] == "compaction")
        return entry

    def _write_entry(self, entry: Entry) -> None:
        """Write one line; on any failure the file is cut back to where it was, or appends stop.

        A returned append is in the file at :attr:`path` and loads: a write that stored part of the
        line (a full disk) is truncated away, and a file replaced under the writer (an editor's save,
        a sync tool) is detected before and after the write instead of being appended to unseen.
        """
        data = encode_entry(entry)
        if self._deferred:
            self._materialize()
        if self.read_only or self._fd is None:
            raise ReadOnlySessionError(self.read_only_reason or f"{self.path}: opened read-only")
        if self.write_failure:
            raise SessionWriteError(self.write_failure)
        fd = self._fd
        start = self._check_same_file(fd)
        if not self._dirty:  # everything before this write is on disk: a failed fsync goes back to here
            self._durable = (start, len(self.entries), self._leaf_id, self._needs_newline)
        if self._needs_newline:
            data = b"\n" + data
        try:
            _write_all(fd, data)
        except OSError as exc:
            self._cut_back(fd, start, exc)
            raise SessionWriteError(
                f"{self.path}: the entry was not saved ({exc.strerror}); the file is as it was before"
            ) from None
        now = time.monotonic()
        if self.fsync_mode == "always" or now - self._last_fsync >= BATCH_FSYNC_SECONDS:
            try:
                os.fsync(fd)
            except OSError as exc:
                self._lose_unsynced(fd, exc, unsaved=1)
            self._last_fsync = now
            self._dirty = False
        else:
            self._dirty = True
        self._check_same_file(fd, written=True)
        self._needs_newline = False
        self._offset = start + len(data)
        self.entries.append(entry)
        if self._tree is not None:  # else it is built from the entries when first used
            self._tree.add(entry)

    def _check_same_file(self, fd: int, *, written: bool = False) -> int:
        """The file's size; raises :class:`SessionReplacedError` when the path names another file now."""
        info = os.fstat(fd)
        try:
            at_path = os.stat(self.path)
        except OSError:
            at_path = None
        identity = (info.st_dev, info.st_ino)
        if at_path is not None and (at_path.st_dev, at_path.st_ino) == identity == self._identity:
            return info.st_size
        what = "was deleted or moved" if at_path is None else "was replaced by another file"
        self.write_failure = (
            f"{self.path} {what} while kompakt was writing it; kompakt stopped writing to it "
            f"(the last {'entry' if written else 'change'} was not saved there). Reopen the session."
        )
        raise SessionReplacedError(self.write_failure)

    def _cut_back(self, fd: int, size: int, exc: OSError) -> None:
        """Undo a failed write: truncate to ``size`` or, if even that fails, refuse further appends."""
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        except OSError as again:
            self.write_failure = (
                f"{self.path}: a write failed ({exc.strerror}) and the partial line could not be removed "
                f"({again.strerror}); kompakt stopped writing. Reopen the session to repair it."
            )

    def _lose_unsynced(self, fd: int, exc: OSError, *, unsaved: int = 0) -> NoReturn:
        """A failed fsync: what was written since the last good one may not be on disk, so it is cut from
        the file and from memory (the caller is never left believing those entries are stored), and
        appends stop. ``unsaved`` counts the entry being written, not yet in :attr:`entries`."""
        offset, count, leaf, needs_newline = self._durable
        lost = len(self.entries) - count + unsaved
        del self.entries[count:]
        if self._tree is not None:
            self._tree.reset(self.entries)  # in place: the tree pane holds this index
        self._leaf_id, self._needs_newline, self._offset, self._dirty = leaf, needs_newline, offset, False
        try:
            os.ftruncate(fd, offset)
            os.fsync(fd)
            where = "they were removed from the file"
        except OSError:
            where = "they could not be removed from the file either"
        self.write_failure = (
            f"{self.path}: saving to disk failed ({exc.strerror}): the last {lost} "
            f"{'entry' if lost == 1 else 'entries'} may not be on disk, so {where} and from the session; "
            "kompakt stopped writing. Reopen the session."
        )
        self._changed(path=True)
        raise SessionWriteError(self.write_failure) from None

    def sync(self) -> None:
        """fsync pending appends (in ``batch`` mode the app calls this every half second, and close does)."""
        if self._fd is not None and self._dirty:
            try:
                os.fsync(self._fd)
            except OSError as exc:
                self._lose_unsynced(self._fd, exc)
            self._dirty = False
            self._last_fsync = time.monotonic()

    def append_message(self, message: Message) -> Entry:
        return self.append({"type": "message", "message": message})

    def append_thinking_level_change(self, level: str) -> Entry:
        return self.append({"type": "thinking_level_change", "thinkingLevel": level})

    def append_model_change(self, provider: str, model_id: str) -> Entry:
        return self.append({"type": "model_change", "provider": provider, "modelId": model_id})

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: dict[str, Any] | None = None,
        from_hook: bool = False,
        **extra: Any,
    ) -> Entry:
        fields: dict[str, Any] = {
            "type": "compaction",
            "summary": summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
        if details is not None:
            fields["details"] = details
        if from_hook:
            fields["fromHook"] = True
        fields.update(extra)
        return self.append(fields)

    def append_custom(self, custom_type: str, data: Any = None) -> Entry:
        fields: dict[str, Any] = {"type": "custom", "customType": custom_type}
        if data is not None:
            fields["data"] = data
        return self.append(fields)

    def append_custom_message(
        self, custom_type: str, content: Any, display: bool = True, details: Any = None
    ) -> Entry:
        fields: dict[str, Any] = {
            "type": "custom_message",
            "customType": custom_type,
            "content": content,
            "display": display,
        }
        if details is not None:
            fields["details"] = details
        return self.append(fields)

    def append_label(self, target_id: str, label: str | None) -> Entry:
        self.get(target_id)
        fields: dict[str, Any] = {"type": "label", "targetId": target_id}
        if label:
            fields["label"] = label
        return self.append(fields)

    def append_session_info(self, name: str) -> Entry:
        """Name the session (trimmed, as pi writes it); an empty name clears it."""
        return self.append({"type": "session_info", "name": name.strip()})

    # --- moving the leaf --------------------------------------------------------------------
    def append_marker(self, data: dict[str, Any]) -> Entry:
        """Append kompakt's own bookkeeping as a leaf marker that names the current leaf: a ``custom``
        entry pi ignores, which neither moves the leaf nor shows in the tree (``data`` sits beside
        ``leafId``; the compaction breaker's state is kept this way)."""
        marker = self._leaf_marker(self.leaf_id, data)
        validate_entry(marker)
        self._write_entry(marker)
        return marker

    def _leaf_marker(self, leaf: str | None, data: dict[str, Any]) -> Entry:
        """A ``custom`` entry that names ``leaf`` as the leaf (child of it, so pi's last-entry rule agrees)."""
        return {
            "type": "custom",
            "customType": LEAF_CUSTOM_TYPE,
            "id": generate_id(self.tree.by_id),
            "parentId": leaf,
            "timestamp": now_iso(),
            "data": {**data, "leafId": leaf},
        }

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id``; the next append branches from there."""
        self.get(entry_id)
        self._move_leaf(entry_id)

    def reset_leaf(self) -> None:
        """Clear the leaf: the next append starts a new root."""
        self._move_leaf(None)

    def branch_with_summary(
        self,
        entry_id: str | None,
        summary: str,
        details: dict[str, Any] | None = None,
        from_hook: bool = False,
    ) -> Entry:
        """Move the leaf to ``entry_id`` (None: the root) and attach a ``branch_summary`` there."""
        if entry_id is not None:
            self.get(entry_id)
        previous, self.leaf_id = self.leaf_id, entry_id
        fields: dict[str, Any] = {"type": "branch_summary", "fromId": entry_id or "root", "summary": summary}
        if details is not None:
            fields["details"] = details
        if from_hook:
            fields["fromHook"] = True
        try:
            return self.append(fields)
        except BaseException:
            self.leaf_id = previous  # nothing was saved: the navigation did not happen
            raise

    def _move_leaf(self, entry_id: str | None) -> None:
        if entry_id == self.leaf_id:
            return
        if self.persist_leaf and not self.read_only:
            # DESIGN.md deviation 1: persist the navigation so that a reload (kompakt or pi) resumes here.
            self._write_entry(self._leaf_marker(entry_id, {}))  # first: a failed write leaves the leaf where it was
        self.leaf_id = entry_id

    # --- following another writer -----------------------------------------------------------
    def refresh(self) -> RefreshResult:
        """Pick up lines appended by another process; reload after truncation or rotation.

        The path is opened without blocking and only when it is a regular file; while it is anything
        else (a FIFO, a directory, missing) nothing changes and :attr:`RefreshResult.problem` says why.
        """
        try:
            fd = open_regular(self.path, os.O_RDONLY)
        except SessionFormatError as exc:
            return RefreshResult(problem=str(exc))
        except SessionAccessError as exc:
            return RefreshResult(problem=str(exc))
        try:
            info = os.fstat(fd)
            if info.st_size == self._offset and (info.st_dev, info.st_ino) == self._identity:
                return RefreshResult()
            # A new file can reuse the old one's inode number: its first bytes tell them apart.
            replaced = (
                (info.st_dev, info.st_ino) != self._identity
                or info.st_size < self._offset
                or os.pread(fd, len(self._head), 0) != self._head
            )
            if replaced:
                os.close(fd)
                fd = -1
                return self._reload()
            data = read_fd(fd, self.path, self._offset)
        except OSError as exc:
            return RefreshResult(problem=f"{self.path}: cannot read: {exc.strerror}")
        finally:
            if fd >= 0:
                os.close(fd)
        parsed = parse_lines(data, start_line=self._lines + 1, base_offset=self._offset)
        self._lines += parsed.lines
        self._offset += parsed.consumed
        self.problems.extend(parsed.problems)
        for entry in parsed.entries:
            self.entries.append(entry)
            if self._tree is not None:
                self._tree.add(entry)
        if parsed.entries:
            old, self._leaf_id = self._leaf_id, self._leaf_from_file_order()
            grown = old is None or old in self.tree.path_ids(self._leaf_id)
            compacted = any(e.get("type") == "compaction" for e in parsed.entries)
            self._changed(path=compacted or not grown)
        return RefreshResult(parsed.entries, problems=parsed.problems)

    def _reload(self) -> RefreshResult:
        # Everything a load sets, the file's identity and head included: a failed reload that kept
        # the new file's identity would read that file from the old offset next time.
        kept = ("header", "entries", "problems", "_tree", "leaf_id", "_offset", "_lines", "_identity", "_head",
                "_needs_newline")
        old = {name: getattr(self, name) for name in kept}
        self.header, self.entries, self.problems = {}, [], []
        try:
            self._load()
        except SessionError as exc:
            # The new file is not a session (yet): keep showing the last good one.
            for name, value in old.items():
                setattr(self, name, value)
            return RefreshResult(problem=str(exc))
        self._changed(path=True)
        return RefreshResult(list(self.entries), reloaded=True, problems=list(self.problems))

    # --- closing ----------------------------------------------------------------------------
    def close(self) -> None:
        if self._fd is not None:
            # A failed last fsync is recorded in write_failure (and what it lost is removed); the file
            # is closed all the same.
            with contextlib.suppress(OSError, SessionWriteError):
                self.sync()
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
