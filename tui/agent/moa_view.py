"""The advisory view: the conversation as a Mixture-of-Agents reference model is shown it (Hermes §6.2).

A reference advises; it cannot run tools, so it gets no tool schemas, and a provider that is sent tool calls
without schemas may reject the request. :func:`render_view` therefore turns the context (``convert_to_llm``
output) into plain alternating user / assistant text turns: each tool call becomes a line naming the tool
and its arguments (cut like a result), each tool result is folded into the assistant turn as a head-and-tail preview of at most
``tool_result_chars`` characters, images become a placeholder, and the view always ends on a user turn (a
trailing assistant turn would read as a prefill). :func:`fit_view` then trims the view to one reference's
own window (the oldest turns go first, with a note saying how many; the latest user turn always stays, cut
in its middle if it alone is too long), so that a reference with a small window answers instead of failing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import prompts
from tui.compaction.tokens import json_compact
from tui.session.entries import Message

TOOL_RESULT_CHARS = 4_000
# A reference's answer is advice: a bounded reply, and the reserve its window keeps for it.
REFERENCE_MAX_TOKENS = 8_192
# The chars/4 estimate is rough: a tenth of the window stays free (Hermes keeps the same margin).
WINDOW_MARGIN = 0.10
CHARS_PER_TOKEN = 4

Turn = tuple[str, str]  # (role, text)


def render_view(messages: Sequence[Message], *, tool_result_chars: int = TOOL_RESULT_CHARS) -> list[Turn]:
    """The context as text turns, user first and last, consecutive turns of one role joined."""
    turns: list[Turn] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            _add(turns, "user", _user_text(message.get("content")))
        elif role == "assistant":
            if message.get("stopReason") in ("error", "aborted"):
                continue  # as in every request: a failed reply's calls may be half written
            _add(turns, "assistant", _assistant_text(message.get("content"), tool_result_chars))
        elif role == "toolResult":
            _add(turns, "assistant", _tool_result_text(message, tool_result_chars))
    while turns and turns[0][0] != "user":
        turns.pop(0)
    if turns and turns[-1][0] != "user":
        turns.append(("user", prompts.render("moa_view_your_turn")))
    return turns


def view_budget(context_window: int, max_output_tokens: int, system_prompt: str) -> int:
    """The tokens a reference's conversation may take: its window less the margin, its reply and the prompt."""
    return int(context_window * (1 - WINDOW_MARGIN)) - max_output_tokens - turn_tokens(system_prompt)


def fit_view(turns: Sequence[Turn], budget_tokens: int) -> list[Message]:
    """The newest turns that fit ``budget_tokens`` (estimated), as pi-format text messages."""
    if not turns:
        return []
    kept: list[Turn] = []
    used = 0
    for role, text in reversed(turns):
        cost = turn_tokens(text)
        if kept and used + cost > budget_tokens:
            break
        kept.insert(0, (role, text))
        used += cost
    while kept[0][0] != "user":  # the last turn is a user turn, so this ends
        kept.pop(0)
    left_out = len(turns) - len(kept)
    if left_out:
        note = prompts.render("moa_view_left_out", count=str(left_out))
        kept[0] = ("user", f"{note}\n\n{kept[0][1]}")
    if len(kept) == 1 and turn_tokens(kept[0][1]) > budget_tokens:
        kept[0] = ("user", head_and_tail(kept[0][1], max(0, budget_tokens) * CHARS_PER_TOKEN))
    return [_message(role, text) for role, text in kept]


def turn_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def head_and_tail(text: str, chars: int) -> str:
    """``text`` cut to about ``chars`` characters: its start and its end, with a note of what is left out."""
    if len(text) <= chars:
        return text
    note = prompts.render("moa_view_cut", count=f"{len(text) - chars:,}")
    room = max(0, chars - len(note) - 2)
    head = room * 2 // 3
    tail = room - head
    return f"{text[:head]}\n{note}\n{text[len(text) - tail :] if tail else ''}"


def _add(turns: list[Turn], role: str, text: str) -> None:
    if not text:
        return
    if turns and turns[-1][0] == role:
        turns[-1] = (role, f"{turns[-1][1]}\n\n{text}")
    else:
        turns.append((role, text))


def _blocks(content: Any) -> list[dict[str, Any]]:
    """The content's blocks; a bare string is one text block, anything that is not a block is skipped."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict)]


def _text(block: Mapping[str, Any]) -> str:
    text = block.get("text")
    return text if isinstance(text, str) else ""


def _user_text(content: Any) -> str:
    parts = []
    for block in _blocks(content):
        if block.get("type") == "text":
            parts.append(_text(block))
        elif block.get("type") == "image":
            parts.append(prompts.render("moa_view_image"))
    return "\n".join(part for part in parts if part)


def _assistant_text(content: Any, chars: int) -> str:
    parts = []
    for block in _blocks(content):
        kind = block.get("type")
        if kind == "text":
            parts.append(_text(block))
        elif kind == "toolCall":
            arguments = block.get("arguments")
            shown = arguments if isinstance(arguments, str) else json_compact(arguments or {})
            shown = head_and_tail(shown, chars)  # a write's arguments can be a whole file
            parts.append(
                prompts.render("moa_view_tool_call", tool=str(block.get("name") or "tool"), arguments=shown)
            )
        # Thinking stays out, as in every request.
    return "\n".join(part for part in parts if part)


def _tool_result_text(message: Mapping[str, Any], chars: int) -> str:
    text = "\n".join(
        _text(block) if block.get("type") == "text" else prompts.render("moa_view_image")
        for block in _blocks(message.get("content"))
        if block.get("type") in ("text", "image")
    )
    return prompts.render(
        "moa_view_tool_result",
        tool=str(message.get("toolName") or "tool"),
        failed=" an error" if message.get("isError") else "",
        text=head_and_tail(text, chars),
    )


def _message(role: str, text: str) -> Message:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        message["stopReason"] = "stop"
    return message
