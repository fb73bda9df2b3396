"""The conversation as plain text for the summarizer (pi's ``serializeConversation``).

Plain ``[User]:`` / ``[Assistant]:`` blocks stop the summarizing model from carrying on the
conversation. Input is the provider-level message list, after ``context.convert_to_llm``, so bash
runs and summaries already read as user messages. Tool results are cut to keep the request small.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui.compaction.tokens import json_compact, utf16_len
from tui.session.content import content_text
from tui.session.entries import Message

TOOL_RESULT_MAX_CHARS = 2000


def _utf16_prefix(text: str, units: int) -> str:
    """The longest prefix of at most ``units`` UTF-16 code units (a surrogate pair is never split)."""
    if text.isascii():
        return text[:units]
    # A half surrogate pair at the end cannot be decoded and is dropped.
    return text.encode("utf-16-le")[: 2 * units].decode("utf-16-le", "ignore")


def truncate_for_summary(text: str, max_chars: int) -> str:
    """Keep the first ``max_chars`` characters (JavaScript lengths) and note how many were dropped."""
    length = utf16_len(text)
    if length <= max_chars:
        return text
    return f"{_utf16_prefix(text, max_chars)}\n\n[... {length - max_chars} more characters truncated]"


def _tool_call(block: dict[str, Any]) -> str:
    arguments = block.get("arguments") or {}
    pairs = ", ".join(f"{key}={json_compact(value)}" for key, value in arguments.items())
    return f"{block.get('name', '')}({pairs})"


def _assistant_blocks(content: Any) -> list[str]:
    thinking: list[str] = []
    text: list[str] = []
    calls: list[str] = []
    for block in content or ():
        kind = block.get("type")
        if kind == "text":
            text.append(block.get("text", ""))
        elif kind == "thinking":
            thinking.append(block.get("thinking", ""))
        elif kind == "toolCall":
            calls.append(_tool_call(block))
    # Always in this order, whatever the order of the blocks.
    blocks = []
    if thinking:
        blocks.append("[Assistant thinking]: " + "\n".join(thinking))
    if text:
        blocks.append("[Assistant]: " + "\n".join(text))
    if calls:
        blocks.append("[Assistant tool calls]: " + "; ".join(calls))
    return blocks


def serialize_conversation(
    llm_messages: Sequence[Message], truncate_tool_results: int | None = TOOL_RESULT_MAX_CHARS
) -> str:
    """One block per message joined by blank lines; ``truncate_tool_results=None`` keeps results whole."""
    parts: list[str] = []
    for message in llm_messages:
        role = message.get("role")
        if role == "user":
            text = content_text(message.get("content"))
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            parts.extend(_assistant_blocks(message.get("content")))
        elif role == "toolResult":
            text = content_text(message.get("content"))
            if text:
                if truncate_tool_results is not None:
                    text = truncate_for_summary(text, truncate_tool_results)
                parts.append(f"[Tool result]: {text}")
    return "\n\n".join(parts)
