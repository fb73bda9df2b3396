"""The current context by category, like Claude Code's ``/context`` but from the session file.

Each context message's chars/4 estimate (pi's :func:`estimate_tokens`) is split over the categories of
its parts: user text, assistant text, thinking, tool calls, tool results, shell commands, compaction
and branch summaries, custom messages. A message's parts get whole tokens that add up to its estimate,
so the categories add up to the messages' estimate exactly. The system prompt and the tool definitions
are estimated the same way from what kompakt would send.

The total is the context size the rest of kompakt shows (:func:`context_size`). When a reply reported
usage, that size is the usage plus the estimate of what followed, and the usage also covers the system
prompt, the tool definitions and whatever the provider adds: the part of the usage that the estimates
do not explain is its own row, "provider overhead" (labelled "usage below the estimates", negative, when
the estimates overshoot: a negative figure is never called "above"). Without any
usage the size is the messages' estimate alone, as in pi: the system prompt and tool definitions are
then shown but marked as not counted (``counted`` false), so the total stays the same figure.
Free space is what is left below the threshold (window − reserve); the reserve is its own row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tui.compaction.context_size import path_context
from tui.compaction.tokens import IMAGE_CHARS, estimate_tokens, json_compact, utf16_len
from tui.session.entries import Entry, Message

SYSTEM_PROMPT = "system prompt"
TOOL_DEFINITIONS = "tool definitions"
USER_TEXT = "user text"
ASSISTANT_TEXT = "assistant text"
THINKING = "thinking"
TOOL_CALLS = "tool calls"
TOOL_RESULTS = "tool results"
SHELL_COMMANDS = "shell commands"
COMPACTION_SUMMARIES = "compaction summaries"
BRANCH_SUMMARIES = "branch summaries"
CUSTOM_MESSAGES = "custom messages"
PROVIDER_OVERHEAD = "provider overhead"
# The overhead row when the estimates exceed the usage; its figure is negative, so the words say "below".
ESTIMATE_OVERSHOOT = "usage below the estimates"
FREE_SPACE = "free space"
RESERVE = "reserve"

MESSAGE_CATEGORIES = (
    USER_TEXT,
    ASSISTANT_TEXT,
    THINKING,
    TOOL_CALLS,
    TOOL_RESULTS,
    SHELL_COMMANDS,
    COMPACTION_SUMMARIES,
    BRANCH_SUMMARIES,
    CUSTOM_MESSAGES,
)


@dataclass(frozen=True)
class Category:
    """One row: its tokens, and whether they are part of the context total (see the module docstring)."""

    name: str
    tokens: int
    counted: bool = True

    @property
    def label(self) -> str:
        """The row's words: a negative overhead is the estimates' overshoot, not the provider's."""
        if self.name == PROVIDER_OVERHEAD and self.tokens < 0:
            return ESTIMATE_OVERSHOOT
        return self.name


@dataclass(frozen=True)
class ContextBreakdown:
    """The categories (their counted tokens add up to ``total``), then free space and the reserve."""

    categories: list[Category]
    total: int
    measured: bool
    context_window: int
    reserve_tokens: int
    usage_estimated: bool = False  # the usage behind it is the offline model's own estimate

    @property
    def threshold(self) -> int:
        return self.context_window - self.reserve_tokens

    @property
    def free_tokens(self) -> int:
        return max(0, self.threshold - self.total)

    def rows(self) -> list[Category]:
        """The categories with tokens, then free space and the reserve (for drawing)."""
        shown = [c for c in self.categories if c.tokens or c.name == PROVIDER_OVERHEAD]
        return [
            *shown,
            Category(FREE_SPACE, self.free_tokens, False),
            Category(RESERVE, self.reserve_tokens, False),
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "categories": [
                {"name": c.name, "tokens": c.tokens, "counted": c.counted} for c in self.categories
            ],
            "total": self.total,
            "measured": self.measured,
            "usageEstimated": self.usage_estimated,
            "contextWindow": self.context_window,
            "reserveTokens": self.reserve_tokens,
            "threshold": self.threshold,
            "freeTokens": self.free_tokens,
        }


def _len(text: Any) -> int:
    return utf16_len(text) if isinstance(text, str) else 0


def _text_chars(content: Any, image_chars: int) -> int:
    if isinstance(content, str):
        return _len(content)
    chars = 0
    for block in content or ():
        if isinstance(block, dict):
            if block.get("type") == "text":
                chars += _len(block.get("text"))
            elif block.get("type") == "image":
                chars += image_chars
    return chars


def message_parts(message: Message) -> dict[str, int]:
    """Chars of each category in one message, by the same rules as :func:`estimate_tokens`."""
    role = message.get("role")
    if role == "assistant":
        parts = {ASSISTANT_TEXT: 0, THINKING: 0, TOOL_CALLS: 0}
        for block in message.get("content") or ():
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                parts[ASSISTANT_TEXT] += _len(block.get("text"))
            elif kind == "thinking":
                parts[THINKING] += _len(block.get("thinking"))
            elif kind == "toolCall":
                parts[TOOL_CALLS] += _len(block.get("name")) + utf16_len(json_compact(block.get("arguments")))
        return parts
    if role == "user":
        return {USER_TEXT: _text_chars(message.get("content"), 0)}
    if role == "toolResult":
        return {TOOL_RESULTS: _text_chars(message.get("content"), IMAGE_CHARS)}
    if role == "custom":
        return {CUSTOM_MESSAGES: _text_chars(message.get("content"), IMAGE_CHARS)}
    if role == "bashExecution":
        return {SHELL_COMMANDS: _len(message.get("command")) + _len(message.get("output"))}
    if role == "compactionSummary":
        return {COMPACTION_SUMMARIES: _len(message.get("summary"))}
    if role == "branchSummary":
        return {BRANCH_SUMMARIES: _len(message.get("summary"))}
    return {}


def _split(tokens: int, parts: Mapping[str, int]) -> dict[str, int]:
    """Whole tokens per part, proportional to its chars and adding up to ``tokens`` (largest remainder)."""
    chars = sum(parts.values())
    if not tokens or not chars:
        return {}
    shares = {name: tokens * n // chars for name, n in parts.items()}
    left = tokens - sum(shares.values())
    by_remainder = sorted(parts, key=lambda name: (tokens * parts[name]) % chars, reverse=True)
    for name in by_remainder[:left]:
        shares[name] += 1
    return shares


def message_categories(messages: Iterable[Message]) -> dict[str, int]:
    """Tokens per message category; they add up to the messages' :func:`estimate_tokens`."""
    totals = dict.fromkeys(MESSAGE_CATEGORIES, 0)
    for message in messages:
        tokens = estimate_tokens(message)
        parts = message_parts(message)
        shares = _split(tokens, parts)
        if tokens and not shares:  # a shape the estimator counts but no part names: keep the tokens
            shares = {next(iter(parts), CUSTOM_MESSAGES): tokens}
        for name, share in shares.items():
            totals[name] += share
    return totals


def text_tokens(text: str) -> int:
    return (utf16_len(text) + 3) >> 2


def context_breakdown(
    path: Sequence[Entry],
    *,
    context_window: int,
    reserve_tokens: int,
    system_prompt: str = "",
    tool_definitions: Sequence[Mapping[str, Any]] = (),
) -> ContextBreakdown:
    """The breakdown of the context ``path`` builds; ``total`` is :func:`context_size` of the path."""
    sized = path_context(path)
    messages, estimate = sized.context.messages, sized.estimate
    by_category = message_categories(messages)
    system = text_tokens(system_prompt) if system_prompt else 0
    tools = text_tokens(json_compact(list(tool_definitions))) if tool_definitions else 0
    measured = estimate.last_usage_index is not None
    categories = [Category(SYSTEM_PROMPT, system, measured), Category(TOOL_DEFINITIONS, tools, measured)]
    categories += [Category(name, by_category[name]) for name in MESSAGE_CATEGORIES]
    if measured:
        # The usage covers the system prompt, the tools and everything up to its reply; what the
        # estimates leave unexplained is the provider's (its template, tokenizer, hidden parts).
        explained = sum(c.tokens for c in categories) - estimate.trailing_tokens
        categories.append(Category(PROVIDER_OVERHEAD, estimate.usage_tokens - explained))
    total = sum(c.tokens for c in categories if c.counted)  # == estimate.tokens, by construction
    return ContextBreakdown(
        categories, total, measured, context_window, reserve_tokens, estimate.usage_estimated
    )
