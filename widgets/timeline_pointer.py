"""What the timeline says about the thing under the mouse or the keyboard cursor: one line of plain text.

The tooltip of a bar segment, a point of the context chart or a past compaction, and the row the
timeline shows for the selected segment, all come from here, so the mouse and the keys say the same
thing. A segment's line names its entry (id, kind, the tool's name, the label), its region and its
tokens, measured (scaled by the provider's usage) or estimated (chars/4). Text from the session is
sanitised; the caller shows it literally (never as markup).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tui.compaction.timeline_names import (
    REGION_AFTER,
    REGION_HEAD,
    REGION_KEPT,
    REGION_SUMMARISED,
    REGION_SUMMARY,
    SOURCE_USAGE,
)
from tui.compaction.token_text import format_tokens
from tui.session.sanitize import sanitize

if TYPE_CHECKING:
    from tui.compaction.timeline import PastCompaction, Segment
    from tui.export.chart import Sample

NO_THRESHOLD = "reserveTokens exceeds the context window"
NO_THRESHOLD_SHORT = "reserve > window"


def threshold_text(threshold: int, *, short: bool = False) -> str:
    """``threshold 24k`` (``┃24k`` when short); a reserveTokens as large as the window leaves no threshold,
    and the words say so rather than show ``threshold -72k``."""
    if threshold <= 0:
        return NO_THRESHOLD_SHORT if short else NO_THRESHOLD
    return f"┃{format_tokens(threshold)}" if short else f"threshold {format_tokens(threshold)}"


REGION_WORDS = {
    REGION_HEAD: "protected head (copied into the summary)",
    REGION_SUMMARISED: "summarised",
    REGION_SUMMARY: "the summary in the context",
    REGION_KEPT: "kept from ▼",
    REGION_AFTER: "after the compaction",
}


def entry_kind(entry: Mapping[str, Any] | None, fallback: str) -> str:
    """``user message``, ``assistant reply``, ``tool result (read)``, ``compaction``, …"""
    if entry is None:
        return fallback
    kind = entry.get("type")
    if kind == "compaction":
        return "compaction summary"
    if kind == "branch_summary":
        return "branch summary"
    if kind == "custom_message":
        return f"custom message ({sanitize(str(entry.get('customType') or '?'))[:30]})"
    message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
    role = message.get("role")
    if role == "user":
        return "user message"
    if role == "assistant":
        content = message.get("content")
        calls = (
            [b for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]
            if isinstance(content, list)
            else []
        )
        if calls:
            names = ", ".join(sanitize(str(c.get("name") or "?"))[:20] for c in calls[:3])
            return f"assistant tool call ({names})"
        return "assistant reply"
    if role == "toolResult":
        return f"tool result ({sanitize(str(message.get('toolName') or '?'))[:30]})"
    if role == "bashExecution":
        return "shell command"
    return sanitize(str(role or kind or fallback))


def segment_text(segment: Segment, entry: Mapping[str, Any] | None, label: str | None) -> str:
    """One segment of the bar in words (its tooltip and the selected-segment row)."""
    how = "measured" if segment.source == SOURCE_USAGE else "estimated"
    parts = [
        sanitize(segment.entry_id)[:12],
        entry_kind(entry, segment.kind),
        f"{format_tokens(segment.tokens)} tokens ({how})",
        REGION_WORDS.get(segment.region, segment.region),
    ]
    if segment.saved:
        parts.append(f"pruned, {format_tokens(segment.saved)} saved")
    if label:
        parts.append(f"[{sanitize(label)[:40]}]")
    return " · ".join(parts)


def sample_text(sample: Sample, turn: int) -> str:
    """A point of the context chart: a reply's context size, or a compaction's drop."""
    entry_id = sanitize(sample.entry_id)[:12]
    if sample.kind == "compaction":
        after = format_tokens(sample.after) if sample.after is not None else "?"
        return f"compaction {entry_id} · {format_tokens(sample.tokens)} → {after} tokens"
    how = "measured" if sample.measured else "estimated"
    return f"reply {turn} · {entry_id} · context {format_tokens(sample.tokens)} tokens ({how})"


def compaction_text(compaction: PastCompaction) -> str:
    """A past compaction's row as a tooltip."""
    after = ("" if compaction.tokens_after_measured else "≈") + format_tokens(compaction.tokens_after)
    before = ("≈" if compaction.tokens_before_measured is False else "") + format_tokens(
        compaction.tokens_before
    )
    return (
        f"compaction {sanitize(compaction.entry_id)[:12]} · {before} → "
        f"{after} tokens · {sanitize(compaction.reason)} · enter or click again: inspect it"
    )
