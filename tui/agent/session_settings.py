"""Compaction settings for one session only, stored in the session file instead of a settings file.

"Apply to this session" in the timeline's what-if appends a ``custom`` entry (customType
``kompakt.settings``, which pi ignores) whose data is ``{"compaction": {"keepRecentTokens": …,
"reserveTokens": …, "strategy": …}}``. The latest such entry in the file, on any branch, is in force
while the session is open: the agent's threshold, automatic compaction, the timeline and the status
bar read the settings with it applied, and the settings screen names "session" as those keys'
source. An entry with an empty ``compaction`` clears them. Values are validated like the settings
file's; an entry that does not validate (a hand edit) is reported and ignored as a whole, so a bad
value never reaches the threshold maths.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from tui.config.model import CompactionSettings, Settings
from tui.session.entries import Entry

SESSION_SETTINGS_TYPE = "kompakt.settings"
# The camelCase keys the entry holds, and the CompactionSettings fields they set.
KEYS = {"keepRecentTokens": "keep_recent_tokens", "reserveTokens": "reserve_tokens", "strategy": "strategy"}


@dataclass(frozen=True)
class SessionOverrides:
    """The compaction keys set for this session (camelCase, as stored), and why an entry was ignored."""

    values: dict[str, Any] = field(default_factory=dict)
    entry_id: str | None = None
    problem: str | None = None

    def __bool__(self) -> bool:
        return bool(self.values)

    def dotted(self) -> dict[str, Any]:
        """``compaction.keepRecentTokens``-style keys, as the settings screen names them."""
        return {f"compaction.{key}": value for key, value in self.values.items()}


def entry_data(values: Mapping[str, Any]) -> dict[str, Any]:
    """The ``data`` of a ``kompakt.settings`` entry for these camelCase values ({} clears)."""
    return {"compaction": {key: values[key] for key in KEYS if values.get(key) is not None}}


def _validated(settings_compaction: CompactionSettings, values: Mapping[str, Any]) -> CompactionSettings:
    merged = {**settings_compaction.model_dump(), **{KEYS[k]: v for k, v in values.items()}}
    return CompactionSettings.model_validate(merged)


def read_overrides(entries: Iterable[Entry]) -> SessionOverrides:
    """The overrides of the latest ``kompakt.settings`` entry (file order), validated."""
    latest = None
    for entry in entries:
        if entry.get("type") == "custom" and entry.get("customType") == SESSION_SETTINGS_TYPE:
            latest = entry
    if latest is None:
        return SessionOverrides()
    entry_id = latest.get("id")
    data = latest.get("data")
    section = data.get("compaction") if isinstance(data, dict) else None
    if not isinstance(section, dict):
        return SessionOverrides(entry_id=entry_id, problem="its data has no compaction table")
    unknown = sorted(set(section) - set(KEYS))
    if unknown:
        return SessionOverrides(entry_id=entry_id, problem=f"unknown keys: {', '.join(unknown)}")
    values = {key: section[key] for key in KEYS if key in section}
    try:
        _validated(CompactionSettings(), values)
    except ValidationError as exc:
        first = exc.errors()[0]
        names = {field: key for key, field in KEYS.items()}
        key = names.get(str(first["loc"][0]), str(first["loc"][0]))
        return SessionOverrides(entry_id=entry_id, problem=f"{key}: {first['msg']}")
    return SessionOverrides(values, entry_id)


def apply_overrides(settings: Settings, overrides: SessionOverrides) -> Settings:
    """``settings`` with the session's compaction values in place."""
    if not overrides:
        return settings
    return settings.model_copy(update={"compaction": _validated(settings.compaction, overrides.values)})
