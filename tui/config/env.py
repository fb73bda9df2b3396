"""Settings from ``KOMPAKT_…`` environment variables, nested with ``__``.

``KOMPAKT_COMPACTION__KEEPRECENTTOKENS=8000`` sets ``compaction.keepRecentTokens``. Names match the settings keys
case-insensitively (camelCase or snake_case). A table or a list takes JSON (``KOMPAKT_HOOKS__MODULES='["a"]'``,
``KOMPAKT_COMPACTION='{"enabled": false}'``); the segment after ``MODELS``, ``KEYMAP`` or ``TOOLS__APPROVAL`` is an
entry name and is kept as written. Variables that name no top-level setting (``KOMPAKT_CONFIG_DIR``) are not
settings and are skipped; an unknown key inside a known table is an error, as it is in a file. Empty variables
count as unset.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tui.config.errors import SettingsError
from tui.config.keys import is_composite, join_key, resolve_key, set_nested
from tui.config.model import Settings

ENV_PREFIX = "KOMPAKT_"
NESTED_DELIMITER = "__"


def env_layer(env: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The settings data the environment supplies, and for each dotted key set, the variable that set it."""
    found: list[tuple[tuple[str, ...], str, str]] = []
    for var, raw in env.items():
        if not var.upper().startswith(ENV_PREFIX) or raw == "":
            continue
        parts = var[len(ENV_PREFIX) :].split(NESTED_DELIMITER)
        try:
            resolve_key(Settings, parts[:1], case_insensitive=True)
        except SettingsError:
            continue  # not a setting: another KOMPAKT_ variable
        found.append((tuple(parts), var, raw))

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
    return data, sources
