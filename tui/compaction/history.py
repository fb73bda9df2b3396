"""The chat's history view of a path: every entry in order, with each compaction's summarised part as a fold.

The context view shows what the model sees (``build_session_context``); the history view shows the whole
active branch and marks what compaction did to it. Each compaction on the path summarised a contiguous
run of entries, from where its range started (``compaction_boundary`` of the path before it, pi 0.73.1's
rule) up to its ``firstKeptEntryId``; a head-tail compaction summarised the middle it recorded in
``details.kompakt``. :func:`history_layout` finds those runs (disjoint, in path order) and the facts a
divider states: how many messages, tokens before → after, reason, duration. The latest compaction's
``firstKeptEntryId`` is where the kept region starts, the boundary line of the chat.

Everything is read from entries as loaded: ``details.kompakt`` may come from any writer, so each fact is
type-checked here and left out (None) when it is missing or of the wrong type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tui.compaction.boundary import compaction_boundary
from tui.compaction.token_text import format_tokens, recorded_count
from tui.compaction.tokens import estimate_tokens
from tui.session.context import compaction_summary_message, entry_to_message
from tui.session.display import flat
from tui.session.entries import Entry


@dataclass(frozen=True)
class CompactionFold:
    """One compaction as the history view shows it.

    ``start``/``end``: the path indices ``[start, end)`` folded behind its divider (what it summarised);
    ``index``: the compaction entry's own index; ``kept_from``: its ``firstKeptEntryId``'s index, if on the path.
    """

    compaction: Entry
    index: int
    start: int
    end: int
    kept_from: int | None
    messages: int
    tokens_before: int
    tokens_after: int
    tokens_after_measured: bool
    reason: str | None
    duration_ms: int | None
    # A head-tail compaction's middle (what it summarised); pinned entries inside the run were kept.
    middle: frozenset[str] | None = None

    @property
    def compaction_id(self) -> str:
        return str(self.compaction.get("id"))

    def summarises(self, entry: Entry) -> bool:
        """Whether this compaction summarised ``entry`` (one of the folded run)."""
        return self.middle is None or str(entry.get("id")) in self.middle


@dataclass(frozen=True)
class HistoryLayout:
    """The folds of a path, oldest first; ``latest`` is the one whose boundary the chat draws."""

    folds: list[CompactionFold]

    @property
    def latest(self) -> CompactionFold | None:
        return self.folds[-1] if self.folds else None


def _kompakt_details(entry: Entry) -> dict[str, Any]:
    details = entry.get("details")
    kompakt = details.get("kompakt") if isinstance(details, dict) else None
    return kompakt if isinstance(kompakt, dict) else {}


def _shown(entry: Entry) -> bool:
    """Whether an entry is a message the chat draws (compaction entries are drawn as their divider)."""
    return entry.get("type") != "compaction" and entry_to_message(entry) is not None


def history_layout(path: Sequence[Entry]) -> HistoryLayout:
    """The compactions on ``path`` with the runs they summarised (see the module docstring)."""
    index_of = {str(entry.get("id")): i for i, entry in enumerate(path)}
    first_index: dict[str, int] = {}
    for i, entry in enumerate(path):
        if isinstance(entry_id := entry.get("id"), str):
            first_index.setdefault(entry_id, i)
    folds: list[CompactionFold] = []
    floor = 0  # runs never overlap: a later one starts where the previous one ended, at the earliest
    for index, entry in enumerate(path):
        if entry.get("type") != "compaction":
            continue
        kompakt = _kompakt_details(entry)
        start = compaction_boundary(path, index, first_index).start
        kept_from = index_of.get(str(entry.get("firstKeptEntryId")))
        middle = kompakt.get("middleEntryIds")
        ids: frozenset[str] | None = None
        if kompakt.get("strategy") == "head-tail" and isinstance(middle, list):
            ids = frozenset(str(m) for m in middle)
            inside = [i for i in range(start, index) if str(path[i].get("id")) in ids]
            start, end = (inside[0], inside[-1] + 1) if inside else (index, index)
        else:
            end = kept_from if kept_from is not None and start <= kept_from <= index else index
        start = min(max(start, floor), end) if end >= floor else end
        if kept_from is not None and kept_from > index:
            kept_from = None  # pi allows the id anywhere on the path; a kept region after it is not one
        after = recorded_count(kompakt.get("tokensAfter"))
        measured = after is not None and kompakt.get("tokensAfterMeasured") is True
        if after is None:  # pi's entries: the context right after it, the summary and what it kept
            kept = path[kept_from:index] if kept_from is not None else ()
            after = estimate_tokens(compaction_summary_message(entry)) + sum(
                estimate_tokens(m) for m in (entry_to_message(e) for e in kept) if m is not None
            )
        reason = kompakt.get("reason")
        folds.append(
            CompactionFold(
                compaction=entry,
                index=index,
                start=start,
                end=end,
                kept_from=kept_from,
                messages=sum(
                    1 for e in path[start:end] if _shown(e) and (ids is None or str(e.get("id")) in ids)
                ),
                tokens_before=recorded_count(entry.get("tokensBefore")) or 0,
                tokens_after=after,
                tokens_after_measured=measured,
                reason=reason if isinstance(reason, str) and reason else None,
                duration_ms=recorded_count(kompakt.get("durationMs")),
                middle=ids,
            )
        )
        floor = max(floor, end)
    return HistoryLayout(folds)


def tokens_short(tokens: int) -> str:
    """``90.3k`` / ``1.2M`` / ``812``: the divider's token figures."""
    return format_tokens(tokens, trim=False)


REASON_CHARS = 40


def divider_text(fold: CompactionFold) -> str:
    """``compacted 312 messages · 90.3k → 1.8k tokens · threshold · 8.4 s`` (unknown facts are left out)."""
    noun = "message" if fold.messages == 1 else "messages"
    parts = [
        f"compacted {fold.messages:,} {noun}",
        f"{tokens_short(fold.tokens_before)} → {tokens_short(fold.tokens_after)} tokens",
    ]
    if fold.reason and flat(fold.reason):
        parts.append(flat(fold.reason, REASON_CHARS))  # any writer's text: one short line
    if fold.duration_ms is not None:
        parts.append(f"{fold.duration_ms / 1000:.1f} s")
    return " · ".join(parts)
