"""The compaction timeline of a root→leaf path, headless: what the timeline widget draws.

The path becomes one segment per context-relevant entry, each as wide as its tokens and tagged with
its region: summarised (behind the latest compaction's ``firstKeptEntryId``), kept (from that entry
to the compaction), the summary (the compaction entry) and after (everything since). When the
provider reported usage, widths are the chars/4 estimates scaled by the ratio between that usage and
the estimate of the same messages, so the in-context part adds up to the real context size; the
share of usage no entry explains (system prompt, tool schemas) is ``overhead_tokens``. Bar
positions are in *context coordinates*: 0 is where the context starts, the overhead comes first,
the summarised region lies at negative positions. The what-if is ``prepare_compaction`` itself, the
planner ``kompakt plan`` runs, for the current or a proposed keepRecentTokens/reserveTokens, and for
either strategy: with ``head-tail`` it is ``plan_head_tail`` (the threshold and the keep span are then
Hermes's trigger and tail budget). When the latest compaction is a head-tail one, the messages it
protected (its ``headEntryIds`` and ``pinnedEntryIds``, copied into the summary) form the head region.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from tui.compaction.boundary import compaction_boundary
from tui.compaction.context_size import path_context
from tui.compaction.head_tail import (
    HeadTailConfig,
    HeadTailPlan,
    kompakt_record,
    plan_head_tail,
    protected_entry_ids,
)
from tui.compaction.plan import (
    CompactionPlan,
    PlanSkip,
    calibrated_keep,
    effective_path,
    prepare_compaction,
    threshold,
    usage_ratio,
)
from tui.compaction.timeline_names import (
    DEFAULT_STRATEGY,
    REGION_AFTER,
    REGION_HEAD,
    REGION_KEPT,
    REGION_SUMMARISED,
    REGION_SUMMARY,
    SOURCE_ESTIMATE,
    SOURCE_USAGE,
    STRATEGY_HEAD_TAIL,
    STRATEGY_KEEP_RECENT,
)
from tui.compaction.token_text import recorded_count
from tui.compaction.tokens import estimate_tokens
from tui.session.context import entry_to_message, pruned_outputs
from tui.session.entries import Entry

REASONS = frozenset({"manual", "threshold", "overflow"})

# A usage/estimate ratio outside these bounds says more about the system prompt than about the
# entries (a two-line session with a 3k-token system prompt); the rest becomes overhead.
MIN_RATIO = 0.25
MAX_RATIO = 8.0

_ROLE_KINDS = {
    "user": "user",
    "assistant": "assistant",
    "toolResult": "tool",
    "bashExecution": "tool",
    "branchSummary": "summary",
    "compactionSummary": "compaction",
}


class Segment(NamedTuple):
    """One context-relevant entry on the bar; ``start`` is in context coordinates."""

    entry_id: str
    index: int  # type: ignore[assignment]  # the field hides tuple.index, which nothing here calls
    kind: str
    region: str
    tokens: int
    estimate: int
    source: str
    start: int
    # Tokens a prune on the path took out of this tool result (its width is the pruned size).
    saved: int = 0

    @property
    def end(self) -> int:
        return self.start + self.tokens


@dataclass(frozen=True, slots=True)
class KeepSpan:
    """The keepRecentTokens budget measured back from the end of the path, in context coordinates.

    ``keep_tokens`` is the budget the planner compares with estimates (after calibration);
    ``clipped`` is true when the entries after the latest compaction do not fill it.
    """

    start: int
    end: int
    keep_tokens: int
    clipped: bool


@dataclass(frozen=True, slots=True)
class PastCompaction:
    """A compaction entry on the path, oldest first in :attr:`Timeline.compactions`."""

    entry_id: str
    index: int
    timestamp: str
    first_kept_entry_id: str
    tokens_before: int
    tokens_after: int
    tokens_after_recorded: bool
    reason: str
    duration_ms: int | None
    summary_tokens: int
    method: str | None = None  # oh-my-pi 18 records how it compacted …
    warning: str | None = None  # … and what went wrong, on the entry itself
    # kompakt records whether tokensBefore was the provider's usage (None: not recorded, pi's entries).
    tokens_before_measured: bool | None = None
    # tokensAfter is an estimate (no reply has measured the new context yet) unless recorded measured.
    tokens_after_measured: bool = False


@dataclass(frozen=True)
class WhatIf:
    """Where a compaction with these settings would cut, from ``prepare_compaction`` itself.

    Token figures are bar tokens (usage-scaled like the segments); ``plan`` holds the planner's
    own estimates. ``tokens_after`` is the kept tail plus the overhead plus the previous summary's
    size, since the new summary's length is unknown until it is written (plus the head it would copy,
    for ``head-tail``, whose ``keep_span`` is the tail from the cut, labelled with the tail budget).
    """

    keep_recent_tokens: int
    reserve_tokens: int
    threshold: int
    plan: CompactionPlan | HeadTailPlan | PlanSkip
    position: int | None
    keep_span: KeepSpan
    summarise_tokens: int
    turn_prefix_tokens: int
    kept_tokens: int
    tokens_after: int
    strategy: str = STRATEGY_KEEP_RECENT
    head_tokens: int = 0

    @property
    def skipped(self) -> bool:
        return isinstance(self.plan, PlanSkip)

    @property
    def skip_message(self) -> str | None:
        return self.plan.message if isinstance(self.plan, PlanSkip) else None

    @property
    def first_kept_entry_id(self) -> str | None:
        return None if isinstance(self.plan, PlanSkip) else self.plan.first_kept_entry_id

    @property
    def first_kept_index(self) -> int | None:
        return None if isinstance(self.plan, PlanSkip) else self.plan.first_kept_index

    @property
    def is_split_turn(self) -> bool:
        return not isinstance(self.plan, PlanSkip) and self.plan.is_split_turn

    @property
    def turn_start_index(self) -> int | None:
        if isinstance(self.plan, PlanSkip) or not self.plan.is_split_turn:
            return None
        return self.plan.turn_start_index


@dataclass(frozen=True)
class Timeline:
    """The whole picture: segments, boundary, budgets, context size, history and the what-if.

    ``positions[i]`` is the context coordinate where path entry ``i`` starts (entries that carry
    no context share the position of their successor); ``positions[-1]`` is the end of the path.
    """

    segments: tuple[Segment, ...]
    positions: tuple[int, ...]
    estimates: tuple[int, ...]
    path_length: int
    compaction_id: str | None
    compaction_index: int | None
    boundary_id: str | None
    boundary_index: int | None
    context_window: int
    reserve_tokens: int
    threshold: int
    keep_recent_tokens: int
    calibrate: bool
    keep_span: KeepSpan
    context_tokens: int
    usage_tokens: int
    percent: float
    overhead_tokens: int
    ratio: float | None
    region_tokens: dict[str, int]
    previous_summary_tokens: int
    compactions: tuple[PastCompaction, ...]
    what_if: WhatIf
    strategy: str = DEFAULT_STRATEGY
    head_tail: HeadTailConfig = field(default_factory=HeadTailConfig)
    # No reply since the latest compaction reported usage: ``context_tokens`` is the chars/4 estimate.
    context_estimated: bool = False

    @property
    def pruned(self) -> tuple[Segment, ...]:
        """The pruned tool results on the bar."""
        return tuple(s for s in self.segments if s.saved)

    @property
    def context_end(self) -> int:
        """Where the context ends on the bar (equals ``context_tokens`` when usage explains it)."""
        return self.positions[-1]

    @property
    def summarised_start(self) -> int:
        """The (negative) position of the oldest summarised entry, 0 when nothing is summarised."""
        return self.positions[0] if self.path_length else 0

    def with_what_if(
        self, path_entries: Sequence[Entry], keep: int, reserve: int, strategy: str | None = None
    ) -> Timeline:
        """The same timeline with the what-if re-planned for other settings or the other strategy
        (``None``: the timeline's own); no other work is redone."""
        bar = _Bar(
            self.positions,
            self.estimates,
            compaction_boundary(path_entries).start,
            self.calibrate,
            usage_ratio(path_entries) if self.calibrate else None,
            self.context_window,
            self.context_tokens,
            self.overhead_tokens,
            self.previous_summary_tokens,
        )
        span = self.keep_span if keep == self.keep_recent_tokens else None
        planned = _plan_what_if(
            bar, path_entries, keep, reserve, span, strategy or self.strategy, self.head_tail
        )
        return replace(self, what_if=planned)


def build_timeline(
    path_entries: Sequence[Entry],
    *,
    context_window: int,
    reserve_tokens: int,
    keep_recent_tokens: int,
    calibrate: bool = True,
    what_if: tuple[int, int] | None = None,
    strategy: str = DEFAULT_STRATEGY,
    head_tail: HeadTailConfig | None = None,
    what_if_strategy: str | None = None,
) -> Timeline:
    """Lay out ``path_entries`` (root→leaf) for the timeline; ``what_if`` is ``(keep, reserve)``.

    ``strategy`` is the configured one (it sets the threshold); ``what_if_strategy`` previews the other.
    """
    head_tail = head_tail or HeadTailConfig()
    path = effective_path(path_entries)
    n = len(path)
    messages: list[dict[str, Any] | None] = []
    estimates: list[int] = []
    index_of: dict[Any, int] = {}
    compaction_index = None
    # One pass over a long path: every per-entry figure at once.
    for i, entry in enumerate(path):
        kind = entry.get("type")
        message = entry.get("message") if kind == "message" else entry_to_message(entry)
        messages.append(message)
        estimates.append(estimate_tokens(message) if message is not None else 0)
        index_of[entry.get("id")] = i
        if kind == "compaction":
            compaction_index = i

    boundary_id = path[compaction_index].get("firstKeptEntryId") if compaction_index is not None else None
    boundary_index = index_of.get(boundary_id) if boundary_id is not None else None
    if boundary_index is not None and compaction_index is not None and boundary_index >= compaction_index:
        boundary_index = None  # the context builder keeps nothing when the id is not before the compaction
    # Where the context starts on the path: the kept entry, else the compaction itself, else the root.
    origin = boundary_index if boundary_index is not None else (compaction_index or 0)

    # Nothing before the origin reaches the context (prunes are already applied to `path`). The size
    # is the CLI's and the status bar's: usage from before the latest compaction is ignored.
    sized = path_context(path[origin:])
    ctx, context = sized.context, sized.estimate

    # Scale every width by usage / estimate of the context messages the usage covered.
    # A prune after the reply shrank outputs its usage counted whole: the bar shrinks by the savings.
    usage_now = context.usage_tokens - context.pruned_tokens
    ratio = None
    scaled_until = -1  # path index of the last entry the usage covered
    if calibrate and context.last_usage_index is not None:
        covered = [index_of[e] for e in ctx.entry_ids[: context.last_usage_index + 1]]
        covered_estimate = sum(estimates[i] for i in covered)
        if covered_estimate:
            ratio = min(max(usage_now / covered_estimate, MIN_RATIO), MAX_RATIO)
            scaled_until = max(covered)

    widths = _widths(path, estimates, compaction_index, ratio, scaled_until)
    covered_width = sum(widths[origin : scaled_until + 1]) if ratio is not None else 0
    overhead = max(0, usage_now - covered_width) if ratio is not None else 0

    positions = _positions(widths, origin, overhead)
    segments = []
    region_tokens = dict.fromkeys((REGION_SUMMARISED, REGION_KEPT, REGION_SUMMARY, REGION_AFTER), 0)
    pruned = pruned_outputs(path_entries)
    protected = set(protected_entry_ids(path[compaction_index])) if compaction_index is not None else set()
    if protected:
        region_tokens[REGION_HEAD] = 0
    for i, message in enumerate(messages):
        if message is None:
            continue
        region = _region(i, origin, boundary_index, compaction_index)
        if region == REGION_SUMMARISED and path[i].get("id") in protected:
            region = REGION_HEAD
        region_tokens[region] += widths[i]
        segments.append(
            Segment(
                path[i].get("id", ""),
                i,
                _ROLE_KINDS.get(str(message.get("role")), "other"),
                region,
                widths[i],
                estimates[i],
                SOURCE_USAGE if i <= scaled_until else SOURCE_ESTIMATE,
                positions[i],
                max(0, pruned[path[i]["id"]] - estimates[i]) if path[i].get("id") in pruned else 0,
            )
        )
    compaction_id = path[compaction_index].get("id") if compaction_index is not None else None
    bar = _Bar(
        positions=tuple(positions),
        estimates=tuple(estimates),
        start=compaction_boundary(path).start,
        calibrate=calibrate,
        keep_ratio=usage_ratio(path_entries) if calibrate else None,
        context_window=context_window,
        context_tokens=context.tokens,
        overhead=overhead,
        previous_summary=widths[compaction_index] if compaction_index is not None else 0,
    )
    keep_span = _keep_span(bar, path, keep_recent_tokens)
    keep, reserve = what_if if what_if is not None else (keep_recent_tokens, reserve_tokens)
    limit = threshold(context_window, reserve_tokens)
    if strategy == STRATEGY_HEAD_TAIL:
        limit = head_tail.threshold(context_window, reserve_tokens).threshold_tokens
    span = keep_span if keep == keep_recent_tokens else None
    return Timeline(
        segments=tuple(segments),
        positions=bar.positions,
        estimates=bar.estimates,
        path_length=n,
        compaction_id=compaction_id,
        compaction_index=compaction_index,
        boundary_id=boundary_id,
        boundary_index=boundary_index,
        context_window=context_window,
        reserve_tokens=reserve_tokens,
        threshold=limit,
        keep_recent_tokens=keep_recent_tokens,
        calibrate=calibrate,
        keep_span=keep_span,
        context_tokens=context.tokens,
        usage_tokens=context.usage_tokens,
        percent=context.tokens / context_window * 100 if context_window > 0 else 0.0,
        overhead_tokens=overhead,
        ratio=ratio,
        region_tokens=region_tokens,
        previous_summary_tokens=bar.previous_summary,
        compactions=tuple(_past_compactions(path, estimates, index_of)),
        what_if=_plan_what_if(
            bar, path_entries, keep, reserve, span, what_if_strategy or strategy, head_tail
        ),
        strategy=strategy,
        head_tail=head_tail,
        context_estimated=not context.measured,
    )


def _widths(
    path: Sequence[Entry],
    estimates: Sequence[int],
    compaction_index: int | None,
    ratio: float | None,
    scaled_until: int,
) -> list[int]:
    """Bar widths: estimates scaled by ``ratio`` up to ``scaled_until``, rounded cumulatively."""
    widths = []
    exact = 0.0
    rounded = 0
    for i, estimate in enumerate(estimates):
        if path[i].get("type") == "compaction" and i != compaction_index:
            # An older summary is no longer in the context: it is a marker, not a width.
            widths.append(0)
            continue
        exact += estimate * ratio if ratio is not None and i <= scaled_until else estimate
        width = round(exact) - rounded
        rounded += width
        widths.append(width)
    return widths


def _positions(widths: Sequence[int], origin: int, overhead: int) -> list[int]:
    """Context coordinates of every entry start; the overhead sits before the origin's entry."""
    positions = [0] * (len(widths) + 1)
    x = overhead
    for i in range(origin, len(widths)):
        positions[i] = x
        x += widths[i]
    positions[len(widths)] = x
    x = 0
    for i in range(origin - 1, -1, -1):
        x -= widths[i]
        positions[i] = x
    return positions


def _region(index: int, origin: int, boundary: int | None, compaction: int | None) -> str:
    if compaction is None:
        return REGION_AFTER
    if index > compaction:
        return REGION_AFTER
    if index == compaction:
        return REGION_SUMMARY
    if boundary is not None and index >= origin:
        return REGION_KEPT
    return REGION_SUMMARISED


def _past_compactions(
    path: Sequence[Entry], estimates: Sequence[int], index_of: dict[Any, int]
) -> list[PastCompaction]:
    # Cumulative estimates of everything a compaction could keep (older summaries never are).
    kept_prefix = [0]
    for entry, estimate in zip(path, estimates, strict=True):
        kept_prefix.append(kept_prefix[-1] + (0 if entry.get("type") == "compaction" else estimate))
    out = []
    for i, entry in enumerate(path):
        if entry.get("type") != "compaction":
            continue
        record = kompakt_record(entry)
        first_kept = entry.get("firstKeptEntryId") or ""
        kept_from = index_of.get(first_kept)
        kept = kept_prefix[i] - kept_prefix[kept_from] if kept_from is not None and kept_from < i else 0
        recorded_after = recorded_count(record.get("tokensAfter"))
        if recorded_after is None:
            recorded_after = recorded_count(entry.get("tokensAfter"))  # oh-my-pi 18 stores it on the entry
        reason = record.get("reason")
        measured = record.get("tokensBeforeMeasured")
        out.append(
            PastCompaction(
                entry_id=entry.get("id", ""),
                index=i,
                timestamp=str(entry.get("timestamp") or ""),
                first_kept_entry_id=str(first_kept),
                tokens_before=recorded_count(entry.get("tokensBefore")) or 0,
                tokens_after=recorded_after if recorded_after is not None else estimates[i] + kept,
                tokens_after_recorded=recorded_after is not None,
                reason=reason if reason in REASONS else "unknown",
                duration_ms=recorded_count(record.get("durationMs")),
                summary_tokens=estimates[i],
                method=_as_text(entry.get("method")),
                warning=_as_text(entry.get("warning")),
                tokens_before_measured=measured if isinstance(measured, bool) else None,
                tokens_after_measured=record.get("tokensAfterMeasured") is True,
            )
        )
    return out


def _as_text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


class _Bar(NamedTuple):
    """What the keep span and the what-if need from a finished layout."""

    positions: tuple[int, ...]
    estimates: tuple[int, ...]
    start: int  # where the planner's range starts (the latest compaction's first kept entry)
    calibrate: bool
    keep_ratio: float | None  # the planner's calibration ratio (usage_ratio of the stored path)
    context_window: int
    context_tokens: int
    overhead: int
    previous_summary: int


def _keep_span(bar: _Bar, path: Sequence[Entry], keep_recent_tokens: int) -> KeepSpan:
    """Walk back from the end adding message estimates, as the planner does, until the budget is met."""
    estimates, positions, start = bar.estimates, bar.positions, bar.start
    keep = calibrated_keep(keep_recent_tokens, bar.keep_ratio) if bar.calibrate else keep_recent_tokens
    end = positions[-1]
    total = 0
    for i in range(len(path) - 1, start - 1, -1):
        if path[i].get("type") != "message" or not estimates[i]:
            continue
        if total + estimates[i] >= keep:
            # Interpolate inside the entry where the budget runs out.
            fraction = (keep - total) / estimates[i]
            x = positions[i + 1] - fraction * (positions[i + 1] - positions[i])
            return KeepSpan(round(x), end, keep, False)
        total += estimates[i]
    return KeepSpan(positions[min(start, len(path))], end, keep, True)


def _plan_what_if(
    bar: _Bar,
    path: Sequence[Entry],
    keep: int,
    reserve: int,
    span: KeepSpan | None,
    strategy: str,
    head_tail: HeadTailConfig,
) -> WhatIf:
    """Run the strategy's planner for ``(keep, reserve)`` on the stored path and place it on the bar.

    The planners apply prunes themselves; the stored path lets calibration see what each request sent.
    """
    if strategy == STRATEGY_HEAD_TAIL:
        return _head_tail_what_if(bar, path, keep, reserve, head_tail)
    plan = prepare_compaction(path, keep_recent_tokens=keep, reserve_tokens=reserve, calibrate=bar.calibrate)
    span = span or _keep_span(bar, path, keep)
    limit = threshold(bar.context_window, reserve)
    if isinstance(plan, PlanSkip):
        return WhatIf(keep, reserve, limit, plan, None, span, 0, 0, 0, bar.context_tokens)
    x = bar.positions
    turn_start = plan.turn_start_index if plan.is_split_turn else plan.first_kept_index

    def width(lo: int, hi: int) -> int:
        # A compaction inside the range (the previous one, when the range starts at its kept entry)
        # gives the summarizer no message; its summary is counted once, as the previous summary.
        summaries = sum(x[i + 1] - x[i] for i in range(lo, hi) if path_types[i] == "compaction")
        return x[hi] - x[lo] - summaries

    path_types = [entry.get("type") for entry in path]
    kept = width(plan.first_kept_index, plan.boundary_end)
    return WhatIf(
        keep_recent_tokens=keep,
        reserve_tokens=reserve,
        threshold=limit,
        plan=plan,
        position=x[plan.first_kept_index],
        keep_span=span,
        summarise_tokens=width(plan.boundary_start, plan.history_end),
        turn_prefix_tokens=width(turn_start, plan.first_kept_index),
        kept_tokens=kept,
        tokens_after=kept + bar.overhead + bar.previous_summary,
    )


def _head_tail_what_if(
    bar: _Bar, path: Sequence[Entry], keep: int, reserve: int, config: HeadTailConfig
) -> WhatIf:
    """``plan_head_tail`` on the bar: the cut, the middle, the head it would copy and the tail."""
    plan = plan_head_tail(path, context_window=bar.context_window, reserve_tokens=reserve, config=config)
    limits = config.threshold(bar.context_window, reserve)
    x = bar.positions
    if isinstance(plan, PlanSkip):
        span = KeepSpan(x[min(bar.start, len(path))], x[-1], limits.tail_budget, True)
        return WhatIf(
            keep,
            reserve,
            limits.threshold_tokens,
            plan,
            None,
            span,
            0,
            0,
            0,
            bar.context_tokens,
            STRATEGY_HEAD_TAIL,
        )

    def width(indices: Sequence[int]) -> int:
        return sum(x[i + 1] - x[i] for i in indices)

    kept = x[plan.boundary_end] - x[plan.first_kept_index]
    head = width(plan.head_indices)
    return WhatIf(
        keep_recent_tokens=keep,
        reserve_tokens=reserve,
        threshold=limits.threshold_tokens,
        plan=plan,
        position=x[plan.first_kept_index],
        keep_span=KeepSpan(x[plan.first_kept_index], x[-1], limits.tail_budget, False),
        summarise_tokens=width(plan.summarize_indices),
        turn_prefix_tokens=0,
        kept_tokens=kept,
        tokens_after=kept + head + bar.overhead + bar.previous_summary,
        strategy=STRATEGY_HEAD_TAIL,
        head_tokens=head,
    )
