"""Settings from ``KOMPAKT_…`` environment variables, nested with ``__``.

``KOMPAKT_COMPACTION__KEEPRECENTTOKENS=8000`` sets ``compaction.keepRecentTokens``. Names match the settings keys
case-insensitively (camelCase or snake_case). A table or a list takes JSON (``KOMPAKT_HOOKS__MODULES='["a"]'``,
``KOMPAKT_COMPACTION='{"enabled": false}'``); the segment after ``MODELS``, ``KEYMAP`` or ``TOOLS__APPROVAL`` is an
entry name and is kept as written. Variables that name no top-level setting (``KOMPAKT_CONFIG_DIR``) are not
settings and are skipped; an unknown key inside a known table is an error, as it is in a file. Empty variables
count as unset. A variable for a key that moved (``KOMPAKT_RETRY__MAXDELAYMS``) sets the new key, with a notice,
as the old key does in a file; a variable for the new key wins over it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tui.config.errors import SettingsError
from tui.config.keys import is_composite, join_key, resolve_key, set_nested
from tui.config.legacy import MOVED_KEYS, migrate_moved_keys
from tui.config.model import Settings

ENV_PREFIX = "KOMPAKT_"
NESTED_DELIMITER = "__"


def _env_name(segments: tuple[str, ...]) -> str:
    return ENV_PREFIX + NESTED_DELIMITER.join(segment.upper() for segment in segments)


def _spelled(var: str) -> tuple[str, ...]:
    """A variable's key path as compared: any case, with or without the underscores of snake_case."""
    return tuple(part.replace("_", "").lower() for part in var[len(ENV_PREFIX) :].split(NESTED_DELIMITER))


def _moved(parts: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The (old, new) key paths when ``parts`` spells a key that moved (any case, camelCase or snake_case)."""
    spelled = tuple(part.replace("_", "").lower() for part in parts)
    for old, new in MOVED_KEYS:
        if spelled == tuple(segment.lower() for segment in old):
            return old, new
    return None


def env_layer(env: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """The settings data the environment supplies, for each dotted key set the variable that set it, and a
    notice for each variable that still names a moved key."""
    found: list[tuple[tuple[str, ...], str, str]] = []
    notices: list[str] = []
    for var, raw in env.items():
        if not var.upper().startswith(ENV_PREFIX) or raw == "":
            continue
        parts = tuple(var[len(ENV_PREFIX) :].split(NESTED_DELIMITER))
        try:
            resolve_key(Settings, parts[:1], case_insensitive=True)
        except SettingsError:
            continue  # not a setting: another KOMPAKT_ variable
        if moved := _moved(parts):
            old, new = moved
            renamed = _env_name(new)
            if any(_spelled(k) == _spelled(renamed) and v != "" for k, v in env.items()):
                notices.append(f"environment variable {var} is obsolete and ignored: {renamed} is set")
                continue
            notices.append(
                f"environment variable {var}: {'.'.join(old)} is now {'.'.join(new)} (read as {raw!r}; "
                f"rename the variable to {renamed} to silence this)"
            )
            parts = new
        found.append((parts, var, raw))

    data: dict[str, Any] = {}
    sources: dict[str, str] = {}
    # Whole tables first, so that a deeper variable refines a JSON table instead of being replaced by it.
    for path, var, raw in sorted(found, key=lambda item: (len(item[0]), item[1])):
        try:
            segments, annotation = resolve_key(Settings, path, case_insensitive=True)
        except SettingsError as exc:
            raise SettingsError(exc.reason, key=exc.key, env_var=var) from None
        value: Any = raw
        if is_composite(annotation):
            try:
                value = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise SettingsError(
                    f"expected JSON for a table or list ({exc.msg} at column {exc.colno})",
                    key=join_key(segments),
                    env_var=var,
                ) from None
        set_nested(data, segments, value)
        sources[join_key(segments)] = var
    # A JSON table may still hold a moved key (KOMPAKT_RETRY='{"maxDelayMs": 5}').
    data, table_notices = migrate_moved_keys(data)
    notices += [f"environment: {notice}" for notice in table_notices]
    return data, sources, notices
