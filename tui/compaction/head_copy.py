"""Head-tail's protected messages written out in full, for the block in front of a head-tail summary.

pi 0.73.1 builds a compacted context as one summary message, then the kept range (``firstKeptEntryId``
up to the compaction), then what followed, so a second context message can only sit after the tail
(see DESIGN.md, "Head-tail's protected head"). The protected head (and a pinned request) therefore
rides in the summary message, but as its own block and reproduced, not summarised: every text part,
every thinking part and every tool call with its whole JSON arguments, every tool output up to
:data:`PART_MAX_CHARS` characters, the whole block up to :data:`BLOCK_MAX_CHARS`. Where a cap cuts, the
copy says so with the figures, and an image is a placeholder that says it was not reproduced. The text
goes through the exports' redaction, as the summarizer input does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import prompts
from tui.compaction.tokens import json_compact
from tui.session.context import convert_to_llm
from tui.session.entries import Message
from tui.session.redact import scrubber

# Far above the summarizer transcript's 2,000 characters: a config file or a long request stays whole.
PART_MAX_CHARS = 50_000
# About 25k tokens: the head is a few messages, so this only stops a pathological one from filling the window.
BLOCK_MAX_CHARS = 100_000


def _cut(text: str, room: int) -> tuple[str, int]:
    """``text`` limited to ``min(room, PART_MAX_CHARS)`` characters, with a note naming what was left out."""
    limit = min(room, PART_MAX_CHARS)
    if len(text) <= limit:
        return text, len(text)
    note = prompts.render(
        "head_copy_cut",
        total=f"{len(text):,}",
        kept=f"{limit:,}",
        left=f"{len(text) - limit:,}",
        cap=f"{PART_MAX_CHARS:,}" if limit == PART_MAX_CHARS else f"{BLOCK_MAX_CHARS:,} for the whole copy",
    )
    return f"{text[:limit]}\n{note}", limit


def _parts(message: Message) -> list[tuple[str, Any]]:
    """``(kind, value)`` for each block of a provider-level message, string content as one text block."""
    content = message.get("content")
    if isinstance(content, str):
        return [("text", content)]
    out: list[tuple[str, Any]] = []
    for block in content or ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            out.append(("text", block.get("text") or ""))
        elif kind == "thinking":
            out.append(("thinking", block.get("thinking") or ""))
        elif kind == "toolCall":
            out.append(("toolCall", block))
        elif kind == "image":
            out.append(("image", block.get("mimeType") or "image"))
    return out


def _heading(message: Message) -> str:
    role = message.get("role")
    if role == "toolResult":
        error = " (error)" if message.get("isError") else ""
        return f"### tool result{error}: {message.get('toolName') or '?'}, call {message.get('toolCallId') or '?'}"
    return f"### {role}"


def head_copy(messages: Sequence[Message]) -> str:
    """The protected messages (context roles) as the text of the copy, redacted; empty for none."""
    lines: list[str] = []
    room = BLOCK_MAX_CHARS
    wire = convert_to_llm(messages)
    for index, message in enumerate(wire):
        if room == 0:
            # One note for everything after the limit, not one per part.
            lines.append(
                prompts.render("head_copy_full", cap=f"{BLOCK_MAX_CHARS:,}", left=str(len(wire) - index))
            )
            break
        lines.append(_heading(message))
        for kind, value in _parts(message):
            if kind == "image":
                lines.append(prompts.render("head_copy_image", mime=str(value)))
                continue
            if kind == "toolCall":
                arguments = json_compact(value.get("arguments") or {})
                text = f"tool call {value.get('name') or '?'}, call {value.get('id') or '?'}, arguments:\n{arguments}"
            elif not value:
                continue  # an empty text or thinking part
            else:
                text = value if kind == "text" else f"(thinking)\n{value}"
            copied, used = _cut(text, room)
            room = max(0, room - used)
            lines.append(copied)
        lines.append("")
    return scrubber()("\n".join(lines).rstrip("\n"))
