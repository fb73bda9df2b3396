"""Token estimates and context-size arithmetic, exactly as pi's chars/4 heuristic.

pi measures text with JavaScript's ``string.length`` (UTF-16 code units) and divides by four,
rounding up, per message. The usage-based context size adds that estimate for the messages after
the last assistant reply that reported real usage. Everything here is pure and cheap enough to run
on every keystroke of the UI.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from tui.session.entries import Entry, Message

# pi counts every image block of a custom or tool-result message as 4800 chars (1200 tokens).
IMAGE_CHARS = 4800


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, like JavaScript's ``string.length``."""
    if text.isascii():
        return len(text)
    # Encoding runs in C and beats scanning for characters beyond the BMP (two code units each).
    return len(text.encode("utf-16-le", "surrogatepass")) >> 1


# The fallback for what orjson refuses (integers beyond 64 bits, lone surrogates).
_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def json_compact(value: Any) -> str:
    """``JSON.stringify`` for parsed JSON values: no spaces, non-ASCII kept as is."""
    try:
        # orjson writes what JSON.stringify writes for parsed JSON, ten times faster than json.
        return orjson.dumps(value).decode()
    except TypeError:
        return _COMPACT_JSON.encode(value)


def _json_len(value: Any) -> int:
    """``JSON.stringify(value).length`` without decoding ASCII output."""
    try:
        raw = orjson.dumps(value)
    except TypeError:
        return utf16_len(_COMPACT_JSON.encode(value))
    return len(raw) if raw.isascii() else utf16_len(raw.decode())


# The helpers below inline utf16_len: they run once per message on every estimate.


def _text_blocks_chars(content: Any, image_chars: int) -> int:
    if isinstance(content, str):
        return len(content) if content.isascii() else utf16_len(content)
    chars = 0
    for block in content or ():
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if text:
                chars += len(text) if text.isascii() else utf16_len(text)
        elif kind == "image":
            chars += image_chars
    return chars


def _assistant_chars(content: Any) -> int:
    chars = 0
    for block in content or ():
        kind = block.get("type")
        if kind == "text":
            text = block.get("text") or ""
        elif kind == "thinking":
            text = block.get("thinking") or ""
        elif kind == "toolCall":
            text = block.get("name") or ""
            chars += _json_len(block.get("arguments"))
        else:
            continue
        chars += len(text) if text.isascii() else utf16_len(text)
    return chars


def estimate_tokens(message: Message) -> int:
    """pi's ``estimateTokens``: ceil(chars / 4) with the per-role rules; unknown roles count 0."""
    role = message.get("role")
    if role == "toolResult" or role == "custom":
        chars = _text_blocks_chars(message.get("content"), IMAGE_CHARS)
    elif role == "assistant":
        chars = _assistant_chars(message.get("content"))
    elif role == "user":
        # Images in user messages count nothing (pi's rule, unlike tool results).
        chars = _text_blocks_chars(message.get("content"), 0)
    elif role == "bashExecution":
        chars = utf16_len(message.get("command") or "") + utf16_len(message.get("output") or "")
    elif role == "branchSummary" or role == "compactionSummary":
        chars = utf16_len(message.get("summary") or "")
    else:
        return 0
    return (chars + 3) >> 2  # ceil(chars / 4)


def calculate_context_tokens(usage: Mapping[str, Any]) -> int:
    """The context size a usage record reports: ``totalTokens`` if set, else the sum of its parts."""
    total = usage.get("totalTokens")
    if total:
        return int(total)
    return int(
        (usage.get("input") or 0)
        + (usage.get("output") or 0)
        + (usage.get("cacheRead") or 0)
        + (usage.get("cacheWrite") or 0)
    )


def assistant_usage(message: Message) -> dict[str, Any] | None:
    """The usage of an assistant reply that completed (not aborted, not an error), else None."""
    if message.get("role") != "assistant" or message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message.get("usage")
    # Any usage object counts, even an empty one (a JavaScript object is always truthy).
    return usage if isinstance(usage, dict) else None


# The built-in offline model (tui/agent/offline.py) reports usage it estimated from the text length
# (chars/4 of the request): a figure built on it is an estimate, not a provider's count.
ESTIMATING_PROVIDERS = frozenset({"kompakt-offline"})


def usage_is_estimate(message: Message) -> bool:
    """Whether an assistant reply's usage is a guess from the text (the offline model's), not a count."""
    return message.get("provider") in ESTIMATING_PROVIDERS


def last_usage_index(entries: Sequence[Entry]) -> int | None:
    """Index of the last completed assistant ``message`` entry with usage (pi's ``getLastAssistantUsage``)."""
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        if entry.get("type") == "message" and assistant_usage(entry.get("message") or {}) is not None:
            return index
    return None


@dataclass(frozen=True)
class ContextEstimate:
    """The context size: real usage of the last completed reply plus an estimate of what followed,
    less ``pruned_tokens``, what a prune after that reply took out of the outputs the reply counted."""

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None
    pruned_tokens: int = 0
    usage_estimated: bool = False  # the usage behind it is itself an estimate (:func:`usage_is_estimate`)

    @property
    def measured(self) -> bool:
        """Whether a provider's count is behind the figure (else it is an estimate throughout)."""
        return self.last_usage_index is not None and not self.usage_estimated


def estimate_context_tokens(messages: Sequence[Message], usage_from: int = 0) -> ContextEstimate:
    """pi's ``estimateContextTokens``: the last usage plus the chars/4 estimate of later messages.

    Usage reported by messages before index ``usage_from`` is stale (pi's rule after a compaction:
    such a reply measured the context before it) and is ignored; those messages are estimated.
    """
    for index in range(len(messages) - 1, usage_from - 1, -1):
        usage = assistant_usage(messages[index])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = sum_tokens(messages[index + 1 :])
            estimated = usage_is_estimate(messages[index])
            return ContextEstimate(usage_tokens + trailing, usage_tokens, trailing, index, 0, estimated)
    total = sum_tokens(messages)
    return ContextEstimate(total, 0, total, None)


def sum_tokens(messages: Iterable[Message]) -> int:
    return sum(estimate_tokens(m) for m in messages)


def should_compact(
    context_tokens: int, context_window: int, reserve_tokens: int, enabled: bool = True
) -> bool:
    """pi's threshold rule: compact once the context exceeds the window minus the reserve."""
    return enabled and context_tokens > context_window - reserve_tokens
