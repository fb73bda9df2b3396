"""The pi session format v3: entry types, ids, timestamps and pydantic models for validation.

In memory an entry is the plain ``dict`` decoded from its JSONL line, so unknown entry types and
unknown fields round-trip unchanged and loading stays fast. The pydantic models below describe the
format; :func:`validate_entry` checks entries that kompakt creates before they are written.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Container
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Entry = dict[str, Any]
Message = dict[str, Any]

CURRENT_SESSION_VERSION = 3

KNOWN_ENTRY_TYPES = frozenset(
    {
        "message",
        "compaction",
        "branch_summary",
        "custom_message",
        "custom",
        "label",
        "model_change",
        "thinking_level_change",
        "session_info",
    }
)

# kompakt's own extras live in `custom` entries, which pi ignores (DESIGN.md deviations 1 and 6).
LEAF_CUSTOM_TYPE = "kompakt.leaf"
PRUNE_CUSTOM_TYPE = "kompakt.prune"


class EntryError(ValueError):
    """An entry does not follow the pi v3 format."""


def now_iso() -> str:
    """An ISO-8601 UTC timestamp with milliseconds and a trailing Z, as JavaScript writes it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_ms() -> int:
    return int(datetime.now(UTC).timestamp() * 1000)


def iso_to_ms(value: str | None) -> int:
    """Parse an ISO timestamp to Unix milliseconds; 0 when it is missing or unreadable."""
    if not value:
        return 0
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0


def generate_id(existing: Container[str]) -> str:
    """An 8-hex id not in ``existing``; after 100 collisions a full UUID, as pi does."""
    for _ in range(100):
        candidate = secrets.token_hex(4)
        if candidate not in existing:
            return candidate
    return str(uuid.uuid4())


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class SessionHeader(_Loose):
    type: Literal["session"]
    version: int | None = None
    id: str
    timestamp: str
    cwd: str = ""
    parentSession: str | None = None


class _EntryBase(_Loose):
    id: str = Field(min_length=1)
    parentId: str | None
    timestamp: str


class MessageEntry(_EntryBase):
    type: Literal["message"]
    message: dict[str, Any]


class CompactionEntry(_EntryBase):
    type: Literal["compaction"]
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: dict[str, Any] | None = None
    fromHook: bool | None = None


class BranchSummaryEntry(_EntryBase):
    type: Literal["branch_summary"]
    fromId: str
    summary: str
    details: dict[str, Any] | None = None
    fromHook: bool | None = None


class CustomEntry(_EntryBase):
    type: Literal["custom"]
    customType: str
    data: Any = None


class CustomMessageEntry(_EntryBase):
    type: Literal["custom_message"]
    customType: str
    content: str | list[dict[str, Any]]
    display: bool
    details: Any = None


class LabelEntry(_EntryBase):
    type: Literal["label"]
    targetId: str
    label: str | None = None


class ModelChangeEntry(_EntryBase):
    type: Literal["model_change"]
    provider: str
    modelId: str


class ThinkingLevelChangeEntry(_EntryBase):
    type: Literal["thinking_level_change"]
    thinkingLevel: str


class SessionInfoEntry(_EntryBase):
    type: Literal["session_info"]
    name: str | None = None


ENTRY_MODELS: dict[str, type[_EntryBase]] = {
    "message": MessageEntry,
    "compaction": CompactionEntry,
    "branch_summary": BranchSummaryEntry,
    "custom": CustomEntry,
    "custom_message": CustomMessageEntry,
    "label": LabelEntry,
    "model_change": ModelChangeEntry,
    "thinking_level_change": ThinkingLevelChangeEntry,
    "session_info": SessionInfoEntry,
}

MESSAGE_ROLES = frozenset({"user", "assistant", "toolResult", "bashExecution", "custom"})


def validate_entry(entry: Entry) -> None:
    """Raise :class:`EntryError` when a known entry type lacks a required field.

    Unknown entry types only need the common fields, so that newer formats pass through.
    """
    kind = entry.get("type")
    model = ENTRY_MODELS.get(kind) if isinstance(kind, str) else None
    try:
        (model or _EntryBase).model_validate(entry)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "entry"
        raise EntryError(f"{kind or 'entry'}: {where}: {first['msg']}") from None
    if kind == "message":
        role = entry["message"].get("role")
        if role not in MESSAGE_ROLES:
            raise EntryError(f"message: unknown role {role!r}")


def is_custom(entry: Entry, custom_type: str) -> bool:
    return entry.get("type") == "custom" and entry.get("customType") == custom_type
