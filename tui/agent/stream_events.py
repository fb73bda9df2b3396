"""The events a provider stream yields, in the order a UI renders them.

A stream yields deltas (text, thinking, tool-call pieces), usage once the server reports it, retry
notices while a transient failure is being retried, and always ends with :class:`Done`, which carries the
finished pi-format assistant message (``stopReason`` ``error`` plus a classified error when it failed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tui.agent.errors import ProviderError


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    index: int
    id: str
    arguments: str  # the next piece of the JSON argument string


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    index: int
    tool_call: dict[str, Any]  # the finished pi toolCall block: {type, id, name, arguments}


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    usage: dict[str, Any]  # pi usage: input, output, cacheRead, cacheWrite, totalTokens, cost{...}


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """A transient failure; the request runs again after ``delay_ms`` (pi's auto_retry_start).

    ``partial`` is the failed attempt's reply (``stopReason: "error"``) when part of it had streamed: the
    deltas already sent belong to it, and the retry starts a new reply. None when nothing had arrived.
    """

    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    partial: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RetryFinished:
    """The retries are over: the last attempt succeeded, or it failed with ``final_error``."""

    success: bool
    attempt: int
    final_error: str | None = None


@dataclass(frozen=True, slots=True)
class Done:
    message: dict[str, Any]
    error: ProviderError | None = None


StreamEvent = (
    TextDelta
    | ThinkingDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | UsageUpdate
    | RetryScheduled
    | RetryFinished
    | Done
)
