"""Head-tail's protected messages written out in full, for the block in front of a head-tail summary.

pi 0.73.1 builds a compacted context as one summary message, then the kept range (``firstKeptEntryId``
up to the compaction), then what followed, so a second context message can only sit after the tail
(see DESIGN.md, "Head-tail's protected head"). The protected head (and a pinned request) therefore
rides in the summary message, but as its own block and reproduced, not summarised: every text part,
every thinking part and every tool call with its whole JSON arguments, every tool output up to
:data:`PART_MAX_CHARS` characters, the whole block up to :data:`BLOCK_MAX_CHARS`. Where a cap cuts, the
copy says so with the figures, and an image is a placeholder that says it was not reproduced. The text
goes through the exports' redaction, as the summarizer input does. A tag of the block's own name inside
the copied text is neutralised (its ``<`` written ``&lt;``), so copied content cannot end the block early.
"""

from __future__ import annotations

import re
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
# The tag around the copy in prompts/head_tail_protected.md.
BLOCK_TAG = "protected-messages"
# Opening or closing, any case, with the spaces a model would still read as the tag.
_TAG_IN_TEXT = re.compile(rf"<(\s*/?\s*{BLOCK_TAG})", re.IGNORECASE)


def neutralise_tags(text: str) -> str:
    """``text`` with every ``<protected-messages`` / ``</protected-messages`` made inert (``&lt;...``)."""
    return _TAG_IN_TEXT.sub(r"&lt;\1", text)


def _cut(text: str, room: int, parts_after: int) -> tuple[str, int]:
    """``text`` limited to ``min(room, PART_MAX_CHARS)`` characters, with a note naming what was left out;
    when the whole copy's limit cuts it, the note also counts the ``parts_after`` it in the message."""
    limit = min(room, PART_MAX_CHARS)
    if len(text) <= limit:
        return text, len(text)
    by_block = limit < PART_MAX_CHARS
    note = prompts.render(
        "head_copy_cut",
        total=f"{len(text):,}",
        kept=f"{limit:,}",
        left=f"{len(text) - limit:,}",
        cap=f"{BLOCK_MAX_CHARS:,} for the whole copy" if by_block else f"{PART_MAX_CHARS:,}",
        rest=_rest(parts_after) if by_block else "",
    )
    return f"{text[:limit]}\n{note}", limit


def _rest(parts_after: int) -> str:
    if parts_after == 0:
        return ""
    if parts_after == 1:
        return " The part after it in this message is not in the copy either."
    return f" The {parts_after} parts after it in this message are not in the copy either."


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
        # Empty text and thinking parts are left out, so they are not counted as parts left out either.
        parts = [(kind, value) for kind, value in _parts(message) if value or kind in ("toolCall", "image")]
        for part_index, (kind, value) in enumerate(parts):
            if room == 0:
                # The limit fell exactly at the end of the previous part: one note for the rest of this message.
                lines.append(prompts.render("head_copy_rest", left=str(len(parts) - part_index)))
                break
            if kind == "image":
                lines.append(prompts.render("head_copy_image", mime=str(value)))
                continue
            if kind == "toolCall":
                arguments = json_compact(value.get("arguments") or {})
                text = f"tool call {value.get('name') or '?'}, call {value.get('id') or '?'}, arguments:\n{arguments}"
            else:
                text = value if kind == "text" else f"(thinking)\n{value}"
            parts_after = len(parts) - part_index - 1
            copied, used = _cut(text, room, parts_after)
            room = max(0, room - used)
            lines.append(copied)
            if room == 0 and used < len(text):
                break  # the cut note counted the parts after this one
        lines.append("")
    return neutralise_tags(scrubber()("\n".join(lines).rstrip("\n")))
