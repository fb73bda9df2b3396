"""The append-only JSONL session store: pi's file format with kompakt's durability guarantees.

Each append is one ``write`` of one whole line, then (by default) an fsync. A torn last line left by a
crash is moved to ``FILE.corrupt`` with its byte offset and the rest loads; a corrupt line in the middle
is skipped and reported, and the file is left as it is. An exclusive ``flock`` keeps a second writer
out. Old formats are migrated on load after the original is kept as ``FILE.vN.bak``. Read-only stores
can :meth:`SessionStore.refresh` to follow a file that another process appends to (watch mode).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from tui.session.context import SessionContext, build_session_context
from tui.session.entries import (
    CURRENT_SESSION_VERSION,
    LEAF_CUSTOM_TYPE,
    Entry,
    EntryError,
    Message,
    generate_id,
    is_custom,
    now_iso,
    uuid7,
    validate_entry,
)
from tui.session.errors import (
    EntryNotFoundError,
    ReadOnlySessionError,
    SessionFormatError,
    SessionLockedError,
)
from tui.session.migrate import header_version, migrate_entries
from tui.session.tree import TreeIndex

FsyncMode = Literal["always", "batch"]
BATCH_FSYNC_SECONDS = 0.5


@dataclass(frozen=True)
class LoadProblem:
    """A line that could not be loaded: where it is and why."""

    line: int
    offset: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line} (byte {self.offset}): {self.reason}"


@dataclass
class RefreshResult:
    """What :meth:`SessionStore.refresh` found: new entries, or a full reload after truncation/rotation."""

    new_entries: list[Entry] = field(default_factory=list)
    reloaded: bool = False


@dataclass
class _Parsed:
    header: Entry
    entries: list[Entry]
    problems: list[LoadProblem]
    consumed: int  # bytes of complete lines parsed
    torn: tuple[int, bytes] | None  # offset and bytes of an unparseable unterminated last line
    needs_newline: bool  # the last line parsed but has no trailing newline


def _parse(data: bytes, path: Path, start_line: int = 1, base_offset: int = 0) -> tuple[list, list, int, Any]:
    """Parse complete lines of ``data``; returns (entries, problems, consumed, tail)."""
    entries: list[Entry] = []
    problems: list[LoadProblem] = []
    offset = 0
    line_no = start_line
    end = len(data)
    loads = orjson.loads
    while offset < end:
        newline = data.find(b"\n", offset)
        if newline < 0:
            break
        raw = data[offset:newline]
        if raw.strip():
            try:
                value = loads(raw)
            except orjson.JSONDecodeError as exc:
                problems.append(LoadProblem(line_no, base_offset + offset, f"invalid JSON: {exc}"))
            else:
                if isinstance(value, dict):
                    entries.append(value)
                else:
                    problems.append(LoadProblem(line_no, base_offset + offset, "not a JSON object"))
        offset = newline + 1
        line_no += 1
    tail = data[offset:] if offset < end else b""
    return entries, problems, offset, tail


def _parse_file(data: bytes, path: Path) -> _Parsed:
    entries, problems, consumed, tail = _parse(data, path)
    torn = None
    needs_newline = False
    if tail.strip():
        try:
            value = orjson.loads(tail)
        except orjson.JSONDecodeError:
            torn = (consumed, tail)
        else:
            if isinstance(value, dict):
                entries.append(value)
                consumed = len(data)
                needs_newline = True
            else:
                torn = (consumed, tail)
    if not entries or entries[0].get("type") != "session" or not isinstance(entries[0].get("id"), str):
        first = problems[0] if problems and problems[0].line == 1 else None
        reason = f" ({first.reason})" if first else ""
        raise SessionFormatError(
            f"{path}:1: not a pi session file: the first line is not a session header{reason}"
        )
    header = entries.pop(0)
    for entry in entries:
        if not isinstance(entry.get("id"), str) and header_version(header) >= 2:
            problems.append(LoadProblem(0, 0, f"entry without an id skipped (type {entry.get('type')!r})"))
    if header_version(header) >= 2:
        entries = [e for e in entries if isinstance(e.get("id"), str)]
    return _Parsed(header, entries, problems, consumed, torn, needs_newline)


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
        self.tree = TreeIndex()
        self.leaf_id: str | None = None
        self.problems: list[LoadProblem] = []
        self.recovered_torn_line: LoadProblem | None = None
        self.migrated_from: int | None = None
        self._fd: int | None = None
        self._offset = 0
        self._lines = 0
        self._inode: int | None = None
        self._needs_newline = False
        self._last_fsync = 0.0
        self._dirty = False
        self._deferred = False

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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        self._take_lock(fd)
        _write_all(fd, encode_entry(self.header))
        os.fsync(fd)
        _fsync_dir(self.path.parent)
        self._offset = os.fstat(fd).st_size
        self._inode = os.fstat(fd).st_ino
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
    ) -> SessionStore:
        """Open a session file. A second writer gets :class:`SessionLockedError`, or a read-only store."""
        store = cls(Path(path), read_only=read_only, fsync=fsync, persist_leaf=persist_leaf)
        if not store.path.exists():
            raise SessionFormatError(f"{store.path}: no such session file")
        if store.path.is_dir():
            raise SessionFormatError(f"{store.path}: is a directory, not a session file")
        if not read_only:
            fd = os.open(store.path, os.O_RDWR | os.O_APPEND)
            try:
                store._take_lock(fd)
            except SessionLockedError:
                if on_locked == "error":
                    raise
                store.read_only = True
        store._load()
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

    def _load_file(self) -> None:
        data = self.path.read_bytes()
        if not data.strip():
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
            os.ftruncate(self._fd, 0)
            _write_all(self._fd, encode_entry(self.header))
            os.fsync(self._fd)
            self._offset = os.fstat(self._fd).st_size
            self._inode = os.fstat(self._fd).st_ino
            return
        parsed = _parse_file(data, self.path)
        self._offset = parsed.consumed
        self._lines = data.count(b"\n", 0, parsed.consumed)
        self._needs_newline = parsed.needs_newline
        self._inode = os.stat(self.path).st_ino
        if parsed.torn is not None and not self.read_only:
            self._quarantine_torn_line(*parsed.torn, line=data.count(b"\n") + 1)
        self.header = parsed.header
        self.problems = parsed.problems
        self.entries = parsed.entries
        old_version = header_version(self.header)
        if migrate_entries(self.header, self.entries):
            self.migrated_from = old_version
            if not self.read_only:
                self._rewrite_migrated(data, old_version)
        self.tree = TreeIndex(self.entries)
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
        with open(corrupt, "ab") as handle:
            handle.write(record + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.ftruncate(self._fd, offset)
        os.fsync(self._fd)
        reason = f"torn last line ({len(raw)} bytes) moved to {corrupt}"
        self.recovered_torn_line = LoadProblem(line, offset, reason)

    def _rewrite_migrated(self, original: bytes, old_version: int) -> None:
        backup = self.path.with_name(f"{self.path.name}.v{old_version}.bak")
        if not backup.exists():
            backup.write_bytes(original)
            with open(backup, "rb") as handle:
                os.fsync(handle.fileno())
        tmp = self.path.with_name(self.path.name + ".tmp")
        body = b"".join(encode_entry(e) for e in (self.header, *self.entries))
        with open(tmp, "wb") as handle:
            handle.write(body)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)
        _fsync_dir(self.path.parent)
        old_fd = self._fd
        self._fd = None
        self._take_lock(os.open(self.path, os.O_RDWR | os.O_APPEND))
        if old_fd is not None:
            os.close(old_fd)
        self._offset = len(body)
        self._inode = os.stat(self.path).st_ino
        self._needs_newline = False

    def _leaf_from_file_order(self) -> str | None:
        """pi's rule (the last entry is the leaf), except that a kompakt leaf marker names the leaf."""
        if not self.entries:
            return None
        last = self.entries[-1]
        if is_custom(last, LEAF_CUSTOM_TYPE):
            data = last.get("data") or {}
            target = data.get("leafId", last.get("parentId"))
            return target if target in self.tree else None
        return last.get("id")

    # --- reading ----------------------------------------------------------------------------
    @property
    def session_id(self) -> str:
        return str(self.header.get("id", ""))

    @property
    def name(self) -> str | None:
        return self.tree.name

    def get(self, entry_id: str) -> Entry:
        try:
            return self.tree.by_id[entry_id]
        except KeyError:
            raise EntryNotFoundError(entry_id) from None

    def get_branch(self, from_id: str | None = None) -> list[Entry]:
        """The path from the root to ``from_id`` (default: the leaf)."""
        return self.tree.path(from_id if from_id is not None else self.leaf_id)

    def build_context(self, leaf_id: Any = ...) -> SessionContext:
        leaf = self.leaf_id if leaf_id is ... else leaf_id
        if leaf is None:
            return SessionContext()
        return build_session_context(self.entries, leaf, self.tree.by_id)

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
        self.leaf_id = entry["id"]
        return entry

    def _write_entry(self, entry: Entry) -> None:
        data = encode_entry(entry)
        if self._deferred:
            self._materialize()
        if self.read_only or self._fd is None:
            raise ReadOnlySessionError(f"{self.path}: opened read-only")
        if self._needs_newline:
            data = b"\n" + data
            self._needs_newline = False
        _write_all(self._fd, data)
        self._offset += len(data)
        self._dirty = True
        now = time.monotonic()
        if self.fsync_mode == "always" or now - self._last_fsync >= BATCH_FSYNC_SECONDS:
            self.sync()
        self.entries.append(entry)
        self.tree.add(entry)

    def sync(self) -> None:
        """fsync pending appends (the ``batch`` mode does this at most every half second, and on close)."""
        if self._fd is not None and self._dirty:
            os.fsync(self._fd)
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
        self.leaf_id = entry_id
        fields: dict[str, Any] = {"type": "branch_summary", "fromId": entry_id or "root", "summary": summary}
        if details is not None:
            fields["details"] = details
        if from_hook:
            fields["fromHook"] = True
        return self.append(fields)

    def _move_leaf(self, entry_id: str | None) -> None:
        if entry_id == self.leaf_id:
            return
        self.leaf_id = entry_id
        if self.persist_leaf and not self.read_only:
            # DESIGN.md deviation 1: persist the navigation so that a reload (kompakt or pi) resumes here.
            marker: Entry = {
                "type": "custom",
                "customType": LEAF_CUSTOM_TYPE,
                "id": generate_id(self.tree.by_id),
                "parentId": entry_id,
                "timestamp": now_iso(),
                "data": {"leafId": entry_id},
            }
            self._write_entry(marker)

    # --- following another writer -----------------------------------------------------------
    def refresh(self) -> RefreshResult:
        """Pick up lines appended by another process; reload after truncation or rotation."""
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return RefreshResult()
        if stat.st_ino != self._inode or stat.st_size < self._offset:
            self.header, self.entries, self.problems = {}, [], []
            self._load()
            return RefreshResult(list(self.entries), reloaded=True)
        if stat.st_size == self._offset:
            return RefreshResult()
        with open(self.path, "rb") as handle:
            handle.seek(self._offset)
            data = handle.read()
        new, problems, consumed, _tail = _parse(data, self.path, self._lines + 1, self._offset)
        self._lines += data.count(b"\n", 0, consumed)
        self._offset += consumed
        self.problems.extend(problems)
        added = [e for e in new if isinstance(e.get("id"), str)]
        for entry in added:
            self.entries.append(entry)
            self.tree.add(entry)
        if added:
            self.leaf_id = self._leaf_from_file_order()
        return RefreshResult(added)

    # --- closing ----------------------------------------------------------------------------
    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
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
