"""pi-shaped hook payloads: what a hook ported from pi (or oh-my-pi) reads, with pi's camelCase keys.

``session_before_compact`` gets the preparation as pi's ``CompactionPreparation`` mapping (delta B.3), and
``compaction_end`` gets pi's ``CompactionResult`` (``summary``, ``firstKeptEntryId``, ``tokensBefore``,
``details``). kompakt's own plan object travels beside them as ``plan`` for hooks written for kompakt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui.session.entries import Entry

if TYPE_CHECKING:
    from tui.config.model import Settings


def preparation_payload(plan: Any, settings: Settings, path: list[Entry]) -> dict[str, Any]:
    """pi's ``CompactionPreparation`` for a keep-recent or head-tail plan, plus omp's two extras.

    ``fileOps`` holds sets, as pi's does; ``settings`` are the values this compaction uses (after a
    what-if override or calibration), in pi's ``CompactionSettings`` shape.
    """
    config = settings.compaction
    ops = plan.file_ops
    payload: dict[str, Any] = {
        "firstKeptEntryId": plan.first_kept_entry_id,
        "messagesToSummarize": list(plan.messages_to_summarize),
        "turnPrefixMessages": list(plan.turn_prefix_messages),
        "isSplitTurn": bool(plan.is_split_turn),
        "tokensBefore": plan.tokens_before,
        "fileOps": {"read": set(ops.read), "written": set(ops.written), "edited": set(ops.edited)},
        "settings": {
            "enabled": config.enabled,
            "reserveTokens": getattr(plan, "reserve_tokens", config.reserve_tokens),
            "keepRecentTokens": getattr(plan, "keep_recent_tokens", config.keep_recent_tokens),
        },
        "recentMessages": list(plan.recent_messages),
    }
    if plan.previous_summary is not None:
        payload["previousSummary"] = plan.previous_summary
    previous = next((e for e in reversed(path) if e.get("type") == "compaction"), None)
    if previous is not None and previous.get("preserveData") is not None:
        payload["previousPreserveData"] = previous["preserveData"]
    return payload


def compaction_result_payload(entry: Entry) -> dict[str, Any]:
    """pi's ``CompactionResult`` of a stored compaction entry."""
    result: dict[str, Any] = {
        "summary": entry.get("summary"),
        "firstKeptEntryId": entry.get("firstKeptEntryId"),
        "tokensBefore": entry.get("tokensBefore"),
    }
    if entry.get("details") is not None:
        result["details"] = entry["details"]
    return result
