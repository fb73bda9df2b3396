"""The events an :class:`~tui.agent.session.AgentSession` sends to its subscribers (the TUI, the CLI, tests).

A *turn* is one ``prompt`` or ``continue_`` run: from the user's message until the agent stops (it may make
many model calls). Inside it every message has a start and an end, the provider's stream events (text,
thinking and tool-call deltas, usage, retries) are forwarded unchanged, and each tool call has an execution
start and end. Mixture of Agents (:mod:`tui.agent.moa_events`), compaction, branch summaries, the iteration
budget, notices for the user and the streaming/compacting state have their own events. All are frozen
dataclasses; payload messages are pi-format dicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from tui.agent.moa_events import MoaEnd, MoaReferenceEnd, MoaStart
from tui.agent.stream_events import (
    RetryFinished,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageUpdate,
)

if TYPE_CHECKING:
    from tui.agent.navigation import NavigateResult
    from tui.compaction.engine import CompactionResult, CompactionSkip

CompactionReason = Literal["manual", "threshold", "overflow"]
CompactionOutcome = Literal["result", "skip", "error", "aborted"]
NoticeLevel = Literal["info", "warning", "error"]


@dataclass(frozen=True, slots=True)
class TurnStart:
    """A run begins; ``prompt`` is the user's text, None for a continue."""

    prompt: str | None


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """The run is over. ``reason``: the last assistant's stopReason, ``"budget"`` or ``"aborted"``."""

    reason: str
    message: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class MessageStart:
    """A message begins: an assistant reply starts streaming, or a user/tool/bash message is about to be stored."""

    role: str


@dataclass(frozen=True, slots=True)
class MessageEnd:
    """A message was appended to the session as entry ``entry_id``."""

    message: dict[str, Any]
    entry_id: str


@dataclass(frozen=True, slots=True)
class ToolExecutionStart:
    tool_call_id: str
    name: str
    arguments: Any


@dataclass(frozen=True, slots=True)
class ToolExecutionEnd:
    """A tool call finished (also when it was refused, failed or aborted); ``result`` is the toolResult."""

    tool_call_id: str
    name: str
    result: dict[str, Any]
    is_error: bool


@dataclass(frozen=True, slots=True)
class CompactionStart:
    reason: CompactionReason


@dataclass(frozen=True, slots=True)
class CompactionProgress:
    """A step of a running compaction (the engine names the phases: prune, plan, summarize, …)."""

    reason: CompactionReason
    phase: str


@dataclass(frozen=True, slots=True)
class CompactionEnd:
    """How a compaction ended.

    ``result`` holds the engine's CompactionResult (outcome ``"result"``), ``skip`` its CompactionSkip
    (``"skip"``); ``error_message`` explains ``"error"`` and ``"aborted"``. ``will_retry`` is true when an
    overflowed request is sent again now. Token counts are None when unknown. When an overflow comes back
    after its one compact-and-retry, an ``"error"`` end arrives alone (no start): nothing more is tried.
    """

    reason: CompactionReason
    outcome: CompactionOutcome
    tokens_before: int | None = None
    tokens_after: int | None = None
    duration_ms: float = 0.0
    will_retry: bool = False
    result: CompactionResult | None = None
    skip: CompactionSkip | None = None
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class BudgetUpdate:
    """One more model call of the turn's iteration budget was taken (or given back)."""

    used: int
    max: int


@dataclass(frozen=True, slots=True)
class Notice:
    """Something to tell the user in words (offline mode, budget spent, nothing to compact, …)."""

    level: NoticeLevel
    text: str


@dataclass(frozen=True, slots=True)
class BranchSummaryStart:
    target_id: str | None


@dataclass(frozen=True, slots=True)
class BranchSummaryEnd:
    """A tree navigation ended: ``"done"`` (``result`` holds navigate_tree's result), ``"error"`` or ``"aborted"``."""

    target_id: str | None
    outcome: Literal["done", "error", "aborted"]
    result: NavigateResult | None = None
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class StateChange:
    is_streaming: bool
    is_compacting: bool


AgentEvent = (
    TurnStart
    | TurnEnd
    | MessageStart
    | MessageEnd
    | TextDelta
    | ThinkingDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | UsageUpdate
    | RetryScheduled
    | RetryFinished
    | ToolExecutionStart
    | ToolExecutionEnd
    | CompactionStart
    | CompactionProgress
    | CompactionEnd
    | BudgetUpdate
    | Notice
    | BranchSummaryStart
    | BranchSummaryEnd
    | StateChange
    | MoaStart
    | MoaReferenceEnd
    | MoaEnd
)

__all__ = [
    "AgentEvent",
    "BranchSummaryEnd",
    "BranchSummaryStart",
    "BudgetUpdate",
    "CompactionEnd",
    "CompactionOutcome",
    "CompactionProgress",
    "CompactionReason",
    "CompactionStart",
    "MessageEnd",
    "MessageStart",
    "MoaEnd",
    "MoaReferenceEnd",
    "MoaStart",
    "Notice",
    "NoticeLevel",
    "RetryFinished",
    "RetryScheduled",
    "StateChange",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "TurnEnd",
    "TurnStart",
    "UsageUpdate",
]
