"""Saving settings changes into a TOML file without disturbing the rest of it.

Edits go through tomlkit, so comments, key order and blank lines elsewhere in the file stay byte for byte; missing
tables are created; a None value deletes the key (TOML has no null, and an absent key means "default"). The edited
document is validated as a whole before anything is written, and an invalid value is refused with the same
one-line SettingsError the loader gives, leaving the file untouched. The write is atomic (a temp file in the same
directory, fsync, ``os.replace``), and the new content hash is returned — and optionally added to the watcher's
ignore set before the file appears — so the watcher does not report kompakt's own save as an external edit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomlkit
from pydantic import BaseModel
from tomlkit.container import Container
from tomlkit.items import Table

from tui.config.errors import SettingsError
from tui.config.keys import join_key, resolve_key, split_key
from tui.config.legacy import migrate_moved_keys
from tui.config.loader import MAX_SETTINGS_BYTES, content_hash, parse_settings_text
from tui.config.model import Settings
from tui.config.validation import validate_layer
from tui.fileio import read_regular

_NEW_FILE_MODE = 0o644


def set_value(path: Path, dotted_key: str, value: Any, *, ignore_hashes: set[str] | None = None) -> str:
    """Set one key (None deletes it) and save; returns the new content hash."""
    return save_changes(path, {dotted_key: value}, ignore_hashes=ignore_hashes)


def save_changes(path: Path, changes: Mapping[str, Any], *, ignore_hashes: set[str] | None = None) -> str:
    """Apply ``{dotted key: value}`` to the TOML file at ``path`` (created if missing) and save it atomically.

    Raises SettingsError, leaving the file as it was, when the file cannot be parsed, a key is unknown, or the
    result does not validate. Returns the content hash of the saved file; when ``ignore_hashes`` is given the
    hash is added to it before the file is replaced.
    """
    path = _real_path(Path(path))
    try:
        original = read_regular(path, MAX_SETTINGS_BYTES).decode("utf-8-sig")
    except FileNotFoundError:
        original = ""
    except UnicodeDecodeError as exc:
        raise SettingsError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except OSError as exc:
        raise SettingsError(f"cannot read: {exc.strerror}", path=path) from None
    parse_settings_text(original, path)  # a clear error with the line, before tomlkit sees a broken file
    document = tomlkit.parse(original)
    for dotted_key, value in changes.items():
        try:
            segments, _ = resolve_key(Settings, split_key(dotted_key))
            _apply(document, segments, value)
        except SettingsError as exc:
            raise dataclasses.replace(exc, path=path) from None
    text = document.as_string()
    # A moved key still in the file (tui.config.legacy) is read as its new name, as the loader does.
    validate_layer(migrate_moved_keys(parse_settings_text(text, path))[0], path=path, text=text)
    data = text.encode("utf-8")
    digest = content_hash(data)
    if text == original and path.exists():
        return digest
    if ignore_hashes is not None:
        ignore_hashes.add(digest)
    atomic_write(path, data)
    return digest


def _real_path(path: Path) -> Path:
    """Write through a symlink (dotfile managers link settings files) instead of replacing the link."""
    return path.resolve() if path.is_symlink() else path


def _apply(document: Container, segments: tuple[str, ...], value: Any) -> None:
    """Set (or, for None, delete) the key at ``segments`` in a tomlkit document, creating tables on the way."""
    container: Any = document
    for depth, segment in enumerate(segments[:-1]):
        key = _existing_key(container, segments[:depth], segment)
        if key is None:
            if value is None:
                return  # nothing to delete
            # A table that only holds other tables gets no header of its own: [models."x"], not [models].
            key, container[segment] = segment, tomlkit.table(is_super_table=depth < len(segments) - 2)
        container = container[key]
        if not isinstance(container, (Table, dict)):
            raise SettingsError("is a single value, not a table", key=join_key(segments[: depth + 1]))
    key = _existing_key(container, segments[:-1], segments[-1])
    if value is None:
        if key is not None:
            del container[key]
    else:
        container[key or segments[-1]] = _plain(value)


def _existing_key(container: Any, parent: tuple[str, ...], segment: str) -> str | None:
    """The key already in ``container`` that means ``segment`` (it may be spelt snake_case in the file)."""
    if segment in container:
        return segment
    for key in container:
        with contextlib.suppress(SettingsError):
            if resolve_key(Settings, (*parent, key))[0][-1] == segment:
                return str(key)
    return None


def _plain(value: Any) -> Any:
    """A value tomlkit can write: models become tables, None entries are dropped, sequences become arrays."""
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, exclude_none=True)
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never a half-written one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = _NEW_FILE_MODE
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    # Make the rename itself durable; not every platform lets a directory be opened for this.
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
