"""What a past compaction did: the messages it summarised, its summary, the messages it kept, and its facts.

The compaction inspector (TUI) and ``kompakt inspect`` show this. Everything comes from the session path
and the stored entry: the summarised range runs from where that compaction's range started
(``compaction_boundary`` of the path before it: pi 0.73.1's rule) to its ``firstKeptEntryId``; the kept range runs from there to the
compaction. A head-tail compaction recorded its regions in ``details.kompakt`` and those are used: its
protected head (and a pinned request) is a part of its own, copied into the summary, neither summarised
nor kept.
The header facts (tokens before → after and whether each was measured, reason, model, duration, cost,
the budgets and strategy it ran with) come from ``details.kompakt``; an entry written by pi or by an
older kompakt lacks some of them, and those facts are None rather than guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tui.compaction.boundary import compaction_boundary
from tui.compaction.head_tail import protected_entry_ids
from tui.compaction.token_text import recorded_count
from tui.compaction.tokens import estimate_tokens, sum_tokens
from tui.session.context import context_from_path, entry_to_message
from tui.session.display import entry_text, tool_calls_by_id
from tui.session.entries import Entry


class NotACompaction(ValueError):
    """The id names no compaction entry on the path."""


@dataclass(frozen=True)
class InspectedMessage:
    """One message of a compaction's summarised or kept part, as a row (the tree's text) with its tokens."""

    entry_id: str
    role: str
    text: str
    tokens: int


@dataclass(frozen=True)
class CompactionFacts:
    """The inspector's header. None means the entry does not record it (pi, or an older kompakt)."""

    tokens_before: int
    tokens_before_measured: bool | None
    tokens_after: int
    tokens_after_measured: bool
    reason: str | None
    model: str | None
    summary_source: str | None
    duration_ms: int | None
    cost_usd: float | None
    keep_recent_tokens: int | None
    keep_recent_tokens_used: int | None
    reserve_tokens: int | None
    strategy: str | None


@dataclass(frozen=True)
class CompactionInspection:
    """A past compaction taken apart (see the module docstring)."""

    compaction_id: str
    first_kept_entry_id: str | None
    summary: str
    short_summary: str | None
    read_files: list[str]
    modified_files: list[str]
    previous_compaction_id: str | None
    previous_summary: str | None
    summarised: list[InspectedMessage]
    kept: list[InspectedMessage]
    facts: CompactionFacts
    # head-tail's protected head and pinned request, copied into the summary (empty for keep-recent).
    protected: list[InspectedMessage] = field(default_factory=list)

    @property
    def summarised_tokens(self) -> int:
        return sum(m.tokens for m in self.summarised)

    @property
    def kept_tokens(self) -> int:
        return sum(m.tokens for m in self.kept)

    @property
    def protected_tokens(self) -> int:
        return sum(m.tokens for m in self.protected)

    def to_json(self) -> dict[str, Any]:
        def rows(messages: list[InspectedMessage]) -> list[dict[str, Any]]:
            return [
                {"entryId": m.entry_id, "role": m.role, "text": m.text, "tokens": m.tokens} for m in messages
            ]

        facts = {_camel(key): value for key, value in asdict(self.facts).items()}
        return {
            "compactionId": self.compaction_id,
            "firstKeptEntryId": self.first_kept_entry_id,
            "summary": self.summary,
            "shortSummary": self.short_summary,
            "readFiles": self.read_files,
            "modifiedFiles": self.modified_files,
            "previousCompactionId": self.previous_compaction_id,
            "previousSummary": self.previous_summary,
            "summarised": rows(self.summarised),
            "summarisedTokens": self.summarised_tokens,
            "kept": rows(self.kept),
            "keptTokens": self.kept_tokens,
            "protected": rows(self.protected),
            "protectedTokens": self.protected_tokens,
            "facts": facts,
        }


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _index_of(path: Sequence[Entry], entry_id: str | None) -> int | None:
    if entry_id is None:
        return None
    return next((i for i, entry in enumerate(path) if entry.get("id") == entry_id), None)


def _rows(entries: Sequence[Entry], calls: dict[str, tuple[str, Any]]) -> list[InspectedMessage]:
    rows = []
    for entry in entries:
        if entry.get("type") == "compaction":
            continue  # an earlier compaction gives its summary as previousSummary, not as a message
        message = entry_to_message(entry)
        if message is None:
            continue
        rows.append(
            InspectedMessage(
                entry_id=str(entry.get("id")),
                role=str(message.get("role")),
                text=entry_text(entry, calls),
                tokens=estimate_tokens(message),
            )
        )
    return rows


def _facts(entry: Entry, kompakt: dict[str, Any], tokens_after: int) -> CompactionFacts:
    measured = kompakt.get("tokensBeforeMeasured")
    cost = kompakt.get("costUsd")
    return CompactionFacts(
        tokens_before=recorded_count(entry.get("tokensBefore")) or 0,
        tokens_before_measured=measured if isinstance(measured, bool) else None,
        tokens_after=tokens_after,
        tokens_after_measured=kompakt.get("tokensAfterMeasured") is True,
        reason=kompakt.get("reason"),
        model=kompakt.get("model"),
        summary_source=kompakt.get("summarySource") or ("hook" if entry.get("fromHook") else None),
        duration_ms=recorded_count(kompakt.get("durationMs")),
        cost_usd=cost if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
        keep_recent_tokens=recorded_count(kompakt.get("keepRecentTokens")),
        keep_recent_tokens_used=recorded_count(kompakt.get("keepRecentTokensUsed")),
        reserve_tokens=recorded_count(kompakt.get("reserveTokens")),
        strategy=kompakt.get("strategy"),
    )


def inspect_draft(path: Sequence[Entry], draft: Any) -> CompactionInspection:
    """A compaction not written yet (a :class:`~tui.compaction.engine.CompactionDraft` for ``path``),
    shaped like a stored one: the preview shows it in the inspector before Enter writes it."""
    plan = draft.plan
    summarised_ids = {*plan.summarize_entry_ids, *plan.turn_prefix_entry_ids}
    kept_ids = set(plan.kept_entry_ids)
    # A head-tail plan's head and pinned request (a keep-recent plan has neither).
    protected_ids = {*getattr(plan, "head_entry_ids", ()), *getattr(plan, "pinned_entry_ids", ())}
    calls = tool_calls_by_id(path)
    summarised = _rows([e for e in path if e.get("id") in summarised_ids], calls)
    kept = _rows([e for e in path if e.get("id") in kept_ids - protected_ids], calls)
    protected = _rows([e for e in path if e.get("id") in protected_ids], calls)
    pending = {"type": "compaction", "tokensBefore": draft.tokens_before}
    details = draft.details
    return CompactionInspection(
        compaction_id="(preview)",
        first_kept_entry_id=draft.first_kept_entry_id,
        summary=draft.summary,
        short_summary=draft.short_summary,
        read_files=[str(p) for p in details.get("readFiles") or ()],
        modified_files=[str(p) for p in details.get("modifiedFiles") or ()],
        previous_compaction_id=plan.previous_compaction_id,
        previous_summary=plan.previous_summary,
        summarised=summarised,
        kept=kept,
        facts=_facts(pending, details.get("kompakt") or {}, draft.tokens_after),
        protected=protected,
    )


def inspect_compaction(path: Sequence[Entry], compaction_id: str) -> CompactionInspection:
    """Take apart the compaction ``compaction_id`` on ``path`` (any root→leaf path through it)."""
    index = _index_of(path, compaction_id)
    if index is None or path[index].get("type") != "compaction":
        raise NotACompaction(f"{compaction_id} is not a compaction on this path")
    entry = path[index]
    raw_details = entry.get("details")
    details: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}
    raw_kompakt = details.get("kompakt")
    kompakt: dict[str, Any] = raw_kompakt if isinstance(raw_kompakt, dict) else {}
    before = path[:index]
    calls = tool_calls_by_id(before)
    boundary = compaction_boundary(before)  # the range this compaction planned on (pi 0.73.1)
    start, previous = boundary.start, (boundary.previous if boundary.previous >= 0 else None)
    first_kept = entry.get("firstKeptEntryId")
    kept_from = _index_of(before, first_kept)

    middle_ids = kompakt.get("middleEntryIds")
    protected: list[InspectedMessage] = []
    if kompakt.get("strategy") == "head-tail" and isinstance(middle_ids, list):
        middle = {str(i) for i in middle_ids}
        copied = set(protected_entry_ids(entry))
        region = before[start:]
        summarised = _rows([e for e in region if e.get("id") in middle], calls)
        protected = _rows([e for e in region if e.get("id") in copied and e.get("id") not in middle], calls)
        kept = _rows([e for e in region if e.get("id") not in middle | copied], calls)
    else:
        cut = kept_from if kept_from is not None and kept_from >= start else len(before)
        summarised = _rows(before[start:cut], calls)
        kept = _rows(before[cut:], calls)

    tokens_after = recorded_count(kompakt.get("tokensAfter"))
    if tokens_after is None:
        tokens_after = sum_tokens(context_from_path(path[: index + 1]).messages)
    facts = _facts(entry, kompakt, tokens_after)
    previous_entry = path[previous] if previous is not None else None
    return CompactionInspection(
        compaction_id=compaction_id,
        first_kept_entry_id=first_kept,
        summary=str(entry.get("summary") or ""),
        short_summary=entry.get("shortSummary") if isinstance(entry.get("shortSummary"), str) else None,
        read_files=[str(p) for p in details.get("readFiles") or ()],
        modified_files=[str(p) for p in details.get("modifiedFiles") or ()],
        previous_compaction_id=previous_entry.get("id") if previous_entry else None,
        previous_summary=str(previous_entry.get("summary") or "") if previous_entry else None,
        summarised=summarised,
        kept=kept,
        facts=facts,
        protected=protected,
    )


def compactions_on(path: Sequence[Entry]) -> list[str]:
    """Ids of the compactions on a path, oldest first."""
    return [str(e.get("id")) for e in path if e.get("type") == "compaction"]
