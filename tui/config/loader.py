"""Loading settings in layers: defaults ← user file ← project file ← ``KOMPAKT_`` environment.

Each source is read and validated on its own, so an error names the file (with the TOML line) or the variable
that holds the bad value; then the sources are deep-merged per key and validated together. The result remembers
which source supplied each key (:func:`value_sources`, shown by the settings screen) and the content hash of every
file it read (the watcher compares them to notice real changes and to skip kompakt's own writes).
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import tui
from tui.config.env import env_layer
from tui.config.errors import SettingsError
from tui.config.keys import deep_merge, find_by_prefix, flatten, split_key, unflatten
from tui.config.legacy import migrate_moved_keys
from tui.config.model import Settings, flatten_settings
from tui.config.trust import is_trusted, sensitive_keys, trust, withheld_notice
from tui.config.validation import validate_layer
from tui.fileio import NotRegularFileError, read_regular

SETTINGS_FILE_NAME = "settings.toml"
CONFIG_DIR_ENV = "KOMPAKT_CONFIG_DIR"
PROJECT_DIR_NAME = ".kompakt"

LayerKind = Literal["user", "project", "env"]
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_TOML_AT_END = " (at end of document)"


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """kompakt's config directory: ``$KOMPAKT_CONFIG_DIR``, else the platform's (``~/.config/kompakt``)."""
    env = os.environ if env is None else env
    if env.get(CONFIG_DIR_ENV):
        return Path(env[CONFIG_DIR_ENV]).expanduser()
    # platformdirs comes with textual; imported here so that the core's import stays light.
    import platformdirs

    return Path(platformdirs.user_config_dir("kompakt", appauthor=False))


def user_settings_path(env: Mapping[str, str] | None = None) -> Path:
    """The user's settings file (it need not exist)."""
    return user_config_dir(env) / SETTINGS_FILE_NAME


def project_settings_path(cwd: Path | None = None) -> Path:
    """The project's settings file, ``./.kompakt/settings.toml`` (it need not exist)."""
    return (cwd or Path.cwd()) / PROJECT_DIR_NAME / SETTINGS_FILE_NAME


def default_settings_path() -> Path:
    """The commented reference settings.toml: the copy packed into a wheel, else the one at the repo root."""
    packaged = Path(__file__).with_name("default_settings.toml")
    return packaged if packaged.is_file() else Path(tui.__file__).parents[1] / SETTINGS_FILE_NAME


def content_hash(data: bytes) -> str:
    """The hash the watcher uses to recognise a file's content."""
    return hashlib.sha256(data).hexdigest()


# A settings file is a few kilobytes; a bigger one is refused rather than held in memory.
MAX_SETTINGS_BYTES = 4 << 20


def _read(path: Path) -> bytes | None:
    """The bytes of a settings file, or None when it does not exist; never blocks on a FIFO or device."""
    try:
        return read_regular(path, MAX_SETTINGS_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except NotRegularFileError as exc:
        raise SettingsError(f"{exc.strerror}, not a settings file", path=path) from None
    except OSError as exc:
        raise SettingsError(f"cannot read: {exc.strerror}", path=path) from None


def file_hash(path: Path) -> str | None:
    """Content hash of a file, or None when it does not exist; an unreadable path gets a hash of its error,
    so that the watcher sees a change (and reports it) when a file turns into a directory or a loop."""
    try:
        data = _read(path)
    except SettingsError as exc:
        return "unreadable:" + exc.reason
    return None if data is None else content_hash(data)


@dataclass(frozen=True)
class SettingsLayer:
    """One source's settings: canonical nested data, the dotted keys it sets, and (for env) the variables."""

    kind: LayerKind
    path: Path | None
    data: dict[str, Any]
    keys: frozenset[str]
    env_vars: Mapping[str, str] = field(default_factory=dict)
    # One line per moved key this source still uses (tui.config.legacy): shown once, never written back.
    notices: tuple[str, ...] = ()


@dataclass(frozen=True)
class ValueSource:
    """Where a setting's effective value comes from."""

    kind: Literal["default", "user", "project", "env", "session"]
    path: Path | None = None
    env_var: str | None = None
    # "session": the value the open session sets for itself (kompakt.settings), shown beside the file's.
    session_value: Any = None

    def __str__(self) -> str:
        if self.kind == "session":
            return f"session (this session sets {self.session_value})"
        if self.kind == "env":
            return f"env {self.env_var}"
        if self.path is not None:
            return f"{self.kind} file {self.path}"
        return self.kind


@dataclass(frozen=True)
class LoadResult:
    """Validated settings plus what the settings screen and the watcher need to know about their origin."""

    settings: Settings
    user_file: Path | None
    project_file: Path | None
    layers: tuple[SettingsLayer, ...]
    hashes: Mapping[Path, str | None]
    # Keys of the project file held back until the user trusts it (tui.config.trust).
    withheld: tuple[str, ...] = ()

    @property
    def notices(self) -> tuple[str, ...]:
        """What the user should know about their files (moved keys, untrusted project keys), in layer order."""
        moved = tuple(notice for layer in self.layers for notice in layer.notices)
        if self.withheld and self.project_file is not None:
            return (*moved, withheld_notice(self.project_file, self.withheld))
        return moved

    def trust_project(self) -> None:
        """Record that the user trusts the project file as it was loaded (the next load applies it whole)."""
        digest = self.project_hash
        if self.project_file is not None and digest is not None:
            trust(trust_dir(self.user_file), self.project_file, digest)

    @property
    def project_hash(self) -> str | None:
        """The content hash of the project file as loaded (what trusting it records)."""
        return self.hashes.get(self.project_file) if self.project_file is not None else None


def parse_settings_text(text: str, path: Path | None = None) -> dict[str, Any]:
    """Parse TOML text; a syntax error becomes a SettingsError with the file and line."""
    try:
        return tomllib.loads(text)
    except RecursionError:  # thousands of nested inline tables
        raise SettingsError("invalid TOML: tables nested too deeply", path=path) from None
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        if message.endswith(_TOML_AT_END):
            # The document ended inside a value: the problem starts on the last line.
            reason = f"invalid TOML at the end of the file: {message.removesuffix(_TOML_AT_END)}"
            raise SettingsError(reason, path=path, line=max(1, len(text.splitlines()))) from None
        position = _TOML_POSITION.search(message)
        if position is None:
            raise SettingsError(f"invalid TOML: {message}", path=path) from None
        line, column = int(position.group(1)), int(position.group(2))
        reason = f"invalid TOML at column {column}: {message[: position.start()]}"
        raise SettingsError(reason, path=path, line=line) from None


def read_settings_file(path: Path, kind: LayerKind) -> tuple[SettingsLayer | None, str | None]:
    """Read and validate one settings file: its layer (None when missing) and its content hash."""
    raw = _read(path)
    if raw is None:
        return None, None
    try:
        text = raw.decode("utf-8-sig")  # editors on Windows start a UTF-8 file with a BOM
    except UnicodeDecodeError as exc:
        raise SettingsError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    data, notices = migrate_moved_keys(parse_settings_text(text, path), path)
    try:
        validate_layer(data, path=path, text=text)
    except RecursionError:
        raise SettingsError("tables nested too deeply", path=path) from None
    return _layer(kind, path, data, notices=notices), content_hash(raw)


def _layer(
    kind: LayerKind,
    path: Path | None,
    data: dict[str, Any],
    env_vars: Mapping[str, str] | None = None,
    notices: list[str] | None = None,
) -> SettingsLayer:
    flat = flatten(data, Settings)
    # Canonical key names, so that `keep_recent_tokens` in one file and `keepRecentTokens` in another merge.
    return SettingsLayer(
        kind, path, unflatten(flat), frozenset(flat), dict(env_vars or {}), tuple(notices or ())
    )


def load_settings(
    user_file: Path | None, project_file: Path | None, env: Mapping[str, str] | None = None
) -> LoadResult:
    """Load settings: defaults ← ``user_file`` ← ``project_file`` ← ``KOMPAKT_`` variables of ``env``.

    A file that is None or missing is skipped; ``env`` defaults to ``os.environ``. Raises SettingsError for the
    first source that cannot be used.
    """
    env = os.environ if env is None else env
    layers: list[SettingsLayer] = []
    hashes: dict[Path, str | None] = {}
    withheld: list[str] = []
    files: tuple[tuple[LayerKind, Path | None], ...] = (("user", user_file), ("project", project_file))
    for kind, path in files:
        if path is None:
            continue
        layer, digest = read_settings_file(path, kind)
        hashes[path] = digest
        if layer is not None and kind == "project":
            layer, withheld = _trusted_part(layer, path, digest, trust_dir(user_file, env))
        if layer is not None:
            layers.append(layer)
    env_data, env_vars, env_notices = env_layer(env)
    if env_data:
        validate_layer(env_data, env_vars=env_vars)
        layers.append(_layer("env", None, env_data, env_vars, notices=env_notices))
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = deep_merge(merged, layer.data)
    return LoadResult(validate_layer(merged), user_file, project_file, tuple(layers), hashes, tuple(withheld))


def trust_dir(user_file: Path | None, env: Mapping[str, str] | None = None) -> Path:
    """Where trust in project files is recorded: beside the user's settings file."""
    return user_file.parent if user_file is not None else user_config_dir(env)


def _trusted_part(
    layer: SettingsLayer, path: Path, digest: str | None, directory: Path
) -> tuple[SettingsLayer, list[str]]:
    """The project layer without the keys that need trust, unless the user trusts this file; and those keys."""
    flat = flatten(layer.data, Settings)
    held = sensitive_keys(flat)
    if not held or is_trusted(directory, path, digest):
        return layer, []
    kept = {key: value for key, value in flat.items() if key not in held}
    return replace(layer, data=unflatten(kept), keys=frozenset(kept)), held


def load_default_settings(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> LoadResult:
    """Load from the standard places: the user config dir, ``./.kompakt`` under ``cwd``, and the environment."""
    return load_settings(user_settings_path(env), project_settings_path(cwd), env)


def value_sources(result: LoadResult) -> dict[str, ValueSource]:
    """For every dotted key of the effective settings: the default, the file, or the variable it comes from."""
    sources: dict[str, ValueSource] = {}
    for key in flatten_settings(result.settings):
        sources[key] = ValueSource("default")
        for layer in reversed(result.layers):
            if key in layer.keys:
                sources[key] = ValueSource(
                    layer.kind, layer.path, find_by_prefix(split_key(key), layer.env_vars)
                )
                break
    return sources
