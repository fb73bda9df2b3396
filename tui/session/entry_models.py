"""pydantic models of the pi session format v3: the header and every known entry type.

Extra fields are allowed everywhere, so entries written by newer pi versions validate. Used by
:func:`tui.session.entries.validate_entry` for the entries kompakt writes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class SessionHeader(_Loose):
    type: Literal["session"]
    version: int | None = None
    id: str
    timestamp: str
    cwd: str = ""
    parentSession: str | None = None


class EntryBase(_Loose):
    id: str = Field(min_length=1)
    parentId: str | None
    timestamp: str


class MessageEntry(EntryBase):
    type: Literal["message"]
    message: dict[str, Any]


class CompactionEntry(EntryBase):
    type: Literal["compaction"]
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: dict[str, Any] | None = None
    fromHook: bool | None = None


class BranchSummaryEntry(EntryBase):
    type: Literal["branch_summary"]
    fromId: str
    summary: str
    details: dict[str, Any] | None = None
    fromHook: bool | None = None


class CustomEntry(EntryBase):
    type: Literal["custom"]
    customType: str
    data: Any = None


class CustomMessageEntry(EntryBase):
    type: Literal["custom_message"]
    customType: str
    content: str | list[dict[str, Any]]
    display: bool
    details: Any = None


class LabelEntry(EntryBase):
    type: Literal["label"]
    targetId: str
    label: str | None = None


class ModelChangeEntry(EntryBase):
    type: Literal["model_change"]
    provider: str
    modelId: str


class ThinkingLevelChangeEntry(EntryBase):
    type: Literal["thinking_level_change"]
    thinkingLevel: str


class SessionInfoEntry(EntryBase):
    type: Literal["session_info"]
    name: str | None = None


ENTRY_MODELS: dict[str, type[EntryBase]] = {
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
