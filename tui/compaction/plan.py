"""Plan a compaction of a root→leaf path without calling any model: pi 0.73.1's ``prepareCompaction``.

The plan says where the kept region starts (``firstKeptEntryId``), which messages the summarizer
gets (the history, plus the prefix of a split turn), the previous summary to update, the files
touched and ``tokensBefore``; it also carries the per-entry estimates the CLI and the timeline show.
On top of pi: oh-my-pi's usage-ratio calibration of ``keep_recent_tokens`` (measured against the
whole context the reply was part of, summary and kept messages included), pruned tool outputs
counted at their pruned size, "nothing to compact" returned as a :class:`PlanSkip` rather than an
error (DESIGN.md deviation 4), and ``history_empty`` so a split turn with no earlier history keeps
the previous summary (deviation 3). The cut itself, with deviation 2, lives in ``cut_point``; where
the range starts after a previous compaction (its first kept entry, so nothing it kept is lost) and
``tokensBefore`` come from ``boundary``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tui.compaction.boundary import compaction_boundary, compaction_input_message, tokens_before
from tui.compaction.cut_point import find_cut_point
from tui.compaction.file_ops import FileOps, compute_file_lists, extract_from_messages, seed_from_details
from tui.compaction.tokens import (
    calculate_context_tokens,
    estimate_tokens,
    last_usage_index,
    sum_tokens,
)
from tui.session.context import context_from_path, pruned_outputs, pruned_tool_result
from tui.session.entries import Entry, Message

KEEP_RECENT_TOKENS = 20_000
RESERVE_TOKENS = 16_384

SKIP_ALREADY_COMPACTED = "already_compacted"
SKIP_TOO_SMALL = "too_small"
SKIP_NOTHING_TO_SUMMARIZE = "nothing_to_summarize"

_SKIP_MESSAGES = {
    SKIP_ALREADY_COMPACTED: "Nothing to compact: the last entry is already a compaction.",
    SKIP_TOO_SMALL: "Nothing to compact: the session is too small.",
    SKIP_NOTHING_TO_SUMMARIZE: "Nothing to compact: everything fits in the recent budget.",
}


def threshold(context_window: int, reserve_tokens: int = RESERVE_TOKENS) -> int:
    """The context size above which pi compacts: the window minus the reserve."""
    return context_window - reserve_tokens


@dataclass(frozen=True)
class PlanSkip:
    """Why there is nothing to compact; a normal outcome to report, not an error."""

    reason: str
    tokens_before: int = 0

    @property
    def message(self) -> str:
        return _SKIP_MESSAGES[self.reason]

    def to_json(self) -> dict[str, Any]:
        return {
            "skip": True,
            "reason": self.reason,
            "message": self.message,
            "tokensBefore": self.tokens_before,
        }


@dataclass(frozen=True)
class CompactionPlan:
    """Everything needed to summarise and to show the boundary; indices are into the path.

    The path splits into consecutive ranges: ``[boundary_start, history_end)`` is summarised,
    ``[turn_start_index, first_kept_index)`` is the prefix of a split turn (empty otherwise) and
    ``[first_kept_index, boundary_end)`` is kept verbatim. When ``history_empty`` is true the
    summarizer has no history to summarise and must carry ``previous_summary`` forward as it is.
    """

    first_kept_entry_id: str
    first_kept_index: int
    is_split_turn: bool
    turn_start_index: int
    turn_start_id: str | None
    tokens_before: int
    boundary_start: int
    boundary_end: int
    history_end: int
    previous_compaction_id: str | None
    previous_summary: str | None
    messages_to_summarize: list[Message]
    turn_prefix_messages: list[Message]
    recent_messages: list[Message]
    summarize_entry_ids: list[str]
    turn_prefix_entry_ids: list[str]
    kept_entry_ids: list[str]
    entry_tokens: dict[str, int]
    keep_recent_tokens: int
    requested_keep_recent_tokens: int
    calibration_ratio: float | None
    reserve_tokens: int
    summarized_tokens: int
    turn_prefix_tokens: int
    kept_tokens: int
    file_ops: FileOps = field(default_factory=FileOps)
    history_empty: bool = False
    tail_over_budget: bool = False

    def to_json(self) -> dict[str, Any]:
        read_files, modified_files = compute_file_lists(self.file_ops)
        return {
            "skip": False,
            "firstKeptEntryId": self.first_kept_entry_id,
            "firstKeptIndex": self.first_kept_index,
            "isSplitTurn": self.is_split_turn,
            "turnStartId": self.turn_start_id,
            "turnStartIndex": self.turn_start_index,
            "tokensBefore": self.tokens_before,
            "boundaryStart": self.boundary_start,
            "boundaryEnd": self.boundary_end,
            "historyEnd": self.history_end,
            "previousCompactionId": self.previous_compaction_id,
            "previousSummary": self.previous_summary,
            "summarizeEntryIds": self.summarize_entry_ids,
            "turnPrefixEntryIds": self.turn_prefix_entry_ids,
            "keptEntryIds": self.kept_entry_ids,
            "entryTokens": self.entry_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
            "requestedKeepRecentTokens": self.requested_keep_recent_tokens,
            "calibrationRatio": self.calibration_ratio,
            "reserveTokens": self.reserve_tokens,
            "summarizedTokens": self.summarized_tokens,
            "turnPrefixTokens": self.turn_prefix_tokens,
            "keptTokens": self.kept_tokens,
            "historyEmpty": self.history_empty,
            "tailOverBudget": self.tail_over_budget,
            "fileOps": {
                "read": sorted(self.file_ops.read),
                "written": sorted(self.file_ops.written),
                "edited": sorted(self.file_ops.edited),
            },
            "readFiles": read_files,
            "modifiedFiles": modified_files,
        }


def effective_path(path: Sequence[Entry]) -> list[Entry]:
    """The path as the model sees it: tool results listed by a prune entry carry only the notice."""
    pruned = pruned_outputs(path)
    if not pruned:
        return list(path)
    out = []
    for entry in path:
        message = entry.get("message") or {}
        if (
            entry.get("id") in pruned
            and entry.get("type") == "message"
            and message.get("role") == "toolResult"
        ):
            entry = {**entry, "message": pruned_tool_result(message, pruned[entry["id"]])}
        out.append(entry)
    return out


def usage_ratio(path_entries: Sequence[Entry]) -> float | None:
    """oh-my-pi's measured ratio of real prompt tokens to the chars/4 estimate, or None without usage.

    The last completed reply's prompt tokens (``input + cacheRead + cacheWrite``, else its context
    total) are divided by the estimate of the context that reply was part of, built from the path up
    to and including it: the previous summary, the kept messages and everything up to the reply. omp
    divides by the entries after the previous compaction only, which leaves the summary and the kept
    messages out of the estimate but not out of the usage, and inflates the ratio after a compaction.
    Pass the path as stored: a prune appended after the reply did not shrink what that request sent.
    """
    index = last_usage_index(path_entries)
    if index is None:
        return None
    usage = path_entries[index]["message"]["usage"]
    prompt = (usage.get("input") or 0) + (usage.get("cacheRead") or 0) + (usage.get("cacheWrite") or 0)
    if not prompt:
        prompt = calculate_context_tokens(usage)
    estimated = sum_tokens(context_from_path(path_entries[: index + 1]).messages)
    return prompt / estimated if estimated else 0.0


def calibrated_keep(keep_recent_tokens: int, ratio: float | None) -> int:
    """The keep budget divided by ``ratio`` when real tokens exceed the estimate (pi #2562)."""
    if ratio is not None and math.isfinite(ratio) and ratio > 1:
        return max(1, math.floor(keep_recent_tokens / ratio))
    return keep_recent_tokens


def calibrate_keep_recent_tokens(
    path_entries: Sequence[Entry], keep_recent_tokens: int
) -> tuple[int, float | None]:
    """oh-my-pi's correction of ``keep_recent_tokens`` by :func:`usage_ratio`; returns it and the ratio."""
    ratio = usage_ratio(path_entries)
    return calibrated_keep(keep_recent_tokens, ratio), ratio


def _messages(entries: Sequence[Entry]) -> tuple[list[Message], list[str]]:
    messages: list[Message] = []
    ids: list[str] = []
    for entry in entries:
        message = compaction_input_message(entry)
        if message is not None:
            messages.append(message)
            ids.append(entry.get("id", ""))
    return messages, ids


def prepare_compaction(
    path_entries: Sequence[Entry],
    keep_recent_tokens: int = KEEP_RECENT_TOKENS,
    reserve_tokens: int = RESERVE_TOKENS,
    calibrate: bool = True,
) -> CompactionPlan | PlanSkip:
    """Plan the compaction of a root→leaf path, or say why there is nothing to compact."""
    if path_entries and path_entries[-1].get("type") == "compaction":
        return PlanSkip(SKIP_ALREADY_COMPACTED)
    path = effective_path(path_entries)
    end = len(path)
    # pi 0.73.1: the range starts at the previous compaction's first kept entry (pi #2608).
    boundary = compaction_boundary(path)
    previous, start = boundary.previous, boundary.start
    before = tokens_before(path)

    per_entry = [_entry_estimate(entry) for entry in path[start:]]
    keep = keep_recent_tokens
    ratio = None
    if calibrate:
        keep, ratio = calibrate_keep_recent_tokens(path_entries, keep_recent_tokens)

    cut = find_cut_point(path, start, end, keep)
    first_kept = cut.first_kept_index
    if first_kept >= end or not path[first_kept].get("id"):
        return PlanSkip(SKIP_TOO_SMALL, before)
    history_end = cut.turn_start_index if cut.is_split_turn else first_kept
    turn_start = cut.turn_start_index if cut.is_split_turn else first_kept

    to_summarize, summarize_ids = _messages(path[start:history_end])
    prefix, prefix_ids = _messages(path[turn_start:first_kept])
    if not to_summarize and not prefix:
        return PlanSkip(SKIP_NOTHING_TO_SUMMARIZE, before)
    recent, kept_ids = _messages(path[first_kept:end])

    file_ops = FileOps()
    previous_summary = None
    previous_id = None
    if previous >= 0:
        previous_summary = path[previous].get("summary")
        previous_id = path[previous].get("id")
        seed_from_details(path[previous], file_ops)
    extract_from_messages(to_summarize, file_ops)
    extract_from_messages(prefix, file_ops)

    def tokens_in(lo: int, hi: int) -> int:
        return sum(per_entry[lo - start : hi - start])

    return CompactionPlan(
        first_kept_entry_id=path[first_kept]["id"],
        first_kept_index=first_kept,
        is_split_turn=cut.is_split_turn,
        turn_start_index=cut.turn_start_index,
        turn_start_id=path[cut.turn_start_index].get("id") if cut.is_split_turn else None,
        tokens_before=before,
        boundary_start=start,
        boundary_end=end,
        history_end=history_end,
        previous_compaction_id=previous_id,
        previous_summary=previous_summary,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        recent_messages=recent,
        summarize_entry_ids=summarize_ids,
        turn_prefix_entry_ids=prefix_ids,
        kept_entry_ids=kept_ids,
        entry_tokens={e["id"]: n for e, n in zip(path[start:], per_entry, strict=True) if e.get("id")},
        keep_recent_tokens=keep,
        requested_keep_recent_tokens=keep_recent_tokens,
        calibration_ratio=ratio,
        reserve_tokens=reserve_tokens,
        summarized_tokens=tokens_in(start, history_end),
        turn_prefix_tokens=tokens_in(turn_start, first_kept),
        kept_tokens=tokens_in(first_kept, end),
        file_ops=file_ops,
        history_empty=cut.is_split_turn and not to_summarize,
        tail_over_budget=cut.tail_over_budget,
    )


def _entry_estimate(entry: Entry) -> int:
    message = compaction_input_message(entry)
    return estimate_tokens(message) if message is not None else 0
