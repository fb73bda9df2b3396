"""Run one compaction of a session's active path, from pruning to the stored entry (pi §8.1, §8.3).

The steps: plan the tool-output pruning (omp), plan the compaction as if that pruning were applied,
ask the hooks (``session_before_compact`` may cancel or supply the whole result;
``session.compacting`` may add context lines, replace the prompt or attach ``preserveData``), write
the summaries (the remote endpoint when one is set, else the model, else the deterministic fallback),
then append the prune entry and ONE ``compaction`` entry and tell the ``session_compact`` hooks.
Nothing is appended before the summary is complete, so a cancellation (``asyncio.CancelledError``)
or a failure leaves the session untouched; the prune entry is written alone only when the plan is a
skip. The agent prunes before every compaction check, as omp does (:func:`apply_pruning`), and tests
the threshold on what is left, so a session that pruning alone brings under it is not compacted. A compaction that saves 5 % or less
of the context is reported as "no progress" (Hermes §4.1), so that the caller does not try again.
``compaction.strategy`` picks the planner: pi's keep-recent one, or Hermes's head-tail one
(``head_tail``), whose summary uses its own prompts, carries the protected head in front of the notes and
records the regions in ``details.kompakt``; its progress check counts messages and its own estimate.
``details.kompakt`` (a field pi ignores) also records what the inspector shows: the budgets and strategy
the run used, the summary model, the summary calls' tokens and cost, and whether ``tokensBefore`` came
from a reply's usage. The work is split in two: :func:`draft_compaction` computes everything and writes
nothing (the dry run and the preview stop there), :func:`commit_draft` appends exactly that draft.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, Unpack

from tui.compaction.context_size import path_context
from tui.compaction.errors import CompactionCancelled, SummaryError
from tui.compaction.fallback import build_fallback_summary
from tui.compaction.file_ops import compute_file_lists
from tui.compaction.head_tail import (
    HeadTailConfig,
    HeadTailPlan,
    context_size,
    made_progress,
    plan_head_tail,
    saved_enough,
)
from tui.compaction.head_tail_summary import fold_protected, summarize_head_tail
from tui.compaction.plan import CompactionPlan, PlanSkip, prepare_compaction, threshold
from tui.compaction.pruning import PrunePlan, plan_pruning, prune_entry_data
from tui.compaction.summarizer import PlanSummary, SummarizeFn, SummaryBudgets, finish_summary, summarize_plan
from tui.compaction.summary_sources import SummaryMeter, remote_summarize_fn
from tui.compaction.tokens import should_compact, sum_tokens
from tui.session.context import context_from_path
from tui.session.entries import PRUNE_CUSTOM_TYPE, Entry

if TYPE_CHECKING:
    from tui.config.model import Settings
    from tui.hooks import HookRunner
    from tui.session.store import SessionStore

Reason = Literal["manual", "threshold", "overflow"]
SummarySource = Literal["model", "fallback", "hook", "remote"]
ProgressFn = Callable[[str], None]

NO_SUMMARIZER = "no summary model is configured"
_PENDING_ID = "(pending)"


@dataclass(frozen=True)
class CompactionResult:
    """A stored compaction: the entry, the context size before and after, and how it went."""

    entry: Entry
    tokens_before: int
    tokens_after: int
    duration_ms: int
    reason: Reason
    summary_source: SummarySource
    no_progress: bool
    pruned_count: int
    message: str | None = None
    summary_error: str | None = None
    short_summary_error: str | None = None


@dataclass(frozen=True)
class CompactionSkip:
    """Nothing to compact (DESIGN.md deviation 4); pruning may still have been applied."""

    reason: str
    message: str
    tokens_before: int = 0
    pruned_count: int = 0
    # The pruning planned with the skip: compact_session applies it, a dry run only reports it.
    prune: PrunePlan | None = field(default=None, compare=False, repr=False)


def _prune_fields(plan: PrunePlan) -> dict[str, Any]:
    return {"type": "custom", "customType": PRUNE_CUSTOM_TYPE, "data": prune_entry_data(plan)}


def prunable(path: list[Entry], already: Mapping[str, int] | None = None) -> PrunePlan:
    """The pruning omp would do now; none right after a compaction (the leaf must stay the compaction,
    or "nothing to compact" would not hold). ``already``: the path's pruned outputs, if known."""
    if not path or path[-1].get("type") == "compaction":
        return PrunePlan()
    return plan_pruning(path, already=already)


def apply_pruning(store: SessionStore) -> PrunePlan:
    """omp's step before every compaction check: append the prune entry when pruning is worth it."""
    prune = prunable(store.get_branch(), store.branch_prunes().outputs)
    if prune:
        store.append(_prune_fields(prune))
    return prune


def _context_tokens(path: list[Entry]) -> int:
    return sum_tokens(context_from_path(path).messages)


def _branch_tokens(store: SessionStore, path: list[Entry]) -> int:
    """:func:`_context_tokens` of ``path``, from the store's kept context while it is still the active path."""
    if store.get_branch() == path:  # the same entries: compared by identity first, no deep look
        return sum_tokens(store.branch_context().messages)
    return _context_tokens(path)


async def _emit(hooks: HookRunner | None, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    if hooks is None:
        return {}
    return await hooks.emit(event, payload) or {}


def _summary_source(
    settings: Settings, summarize: SummarizeFn | None
) -> tuple[SummarySource, SummarizeFn | None]:
    endpoint = settings.compaction.remote_endpoint
    if endpoint:
        return "remote", remote_summarize_fn(endpoint)
    return ("model", summarize) if summarize is not None else ("fallback", None)


def plan_for_strategy(
    path: list[Entry], settings: Settings, context_window: int
) -> CompactionPlan | HeadTailPlan | PlanSkip:
    """The plan of the configured strategy for a (pruned) path."""
    config = settings.compaction
    if config.strategy == "head-tail":
        return plan_head_tail(
            path,
            context_window=context_window,
            reserve_tokens=config.reserve_tokens,
            config=HeadTailConfig.from_settings(config),
        )
    return prepare_compaction(
        path,
        keep_recent_tokens=config.keep_recent_tokens,
        reserve_tokens=config.reserve_tokens,
        calibrate=config.calibrate,
    )


@dataclass(frozen=True)
class PreparedCompaction:
    """The pruning applied first, the path the planner saw (with the prune entry) and the plan."""

    prune: PrunePlan
    planned_path: list[Entry]
    plan: CompactionPlan | HeadTailPlan | PlanSkip


def prepare_session_compaction(
    path: list[Entry],
    settings: Settings,
    context_window: int,
    *,
    prune: bool = True,
    already: Mapping[str, int] | None = None,
) -> PreparedCompaction:
    """What a compaction of ``path`` would do with these settings: ``kompakt compact`` and the TUI run
    it, ``kompakt plan`` shows it, so the two cannot pick different cut points. ``prune=False`` plans
    the path as stored (``kompakt plan --no-prune``, to compare with pi, which has no pruning).
    ``already``: the path's pruned outputs when the caller has them (the store keeps them)."""
    pruning = prunable(path, already) if prune else PrunePlan()
    planned_path = [*path, _prune_fields(pruning)] if pruning else path
    return PreparedCompaction(
        pruning, planned_path, plan_for_strategy(planned_path, settings, context_window)
    )


def reserve_fills_window(reserve_tokens: int, context_window: int) -> bool:
    """A reserve as large as the window leaves no threshold: every turn would try to compact, and no
    summary could make room, so automatic compaction waits until the setting is fixed (the UI says so)."""
    return context_window > 0 and reserve_tokens >= context_window


def compaction_due(path: list[Entry], settings: Settings, context_window: int, context_tokens: int) -> bool:
    """Whether automatic compaction is on and the configured strategy's trigger fires for the active path."""
    config = settings.compaction
    if not config.enabled:
        return False
    return trigger_check(path, settings, context_window, context_tokens).crossed


@dataclass(frozen=True)
class TriggerCheck:
    """The figures the threshold test compared, whichever strategy made it."""

    tokens: int
    threshold: int
    crossed: bool
    measure: str


def trigger_check(
    path: list[Entry], settings: Settings, context_window: int, context_tokens: int
) -> TriggerCheck:
    """The strategy's threshold test on ``path`` (the agent's and ``kompakt plan``'s one rule).

    keep-recent: pi's rule on ``context_tokens`` (the last usage plus what followed, minus what pruning
    after that usage saved). head-tail: Hermes's threshold on its own estimate of the path, the estimate
    its planner cuts with (``context_tokens`` is not used).
    """
    config = settings.compaction
    room = not reserve_fills_window(config.reserve_tokens, context_window)
    if config.strategy == "head-tail":
        head_tail = HeadTailConfig.from_settings(config)
        limit = head_tail.threshold(context_window, config.reserve_tokens).threshold_tokens
        tokens = context_size(path)[1]
        return TriggerCheck(tokens, limit, room and tokens >= limit, "head-tail estimate")
    crossed = room and should_compact(context_tokens, context_window, config.reserve_tokens)
    return TriggerCheck(
        context_tokens, threshold(context_window, config.reserve_tokens), crossed, "usage + estimate"
    )


def _fallback(plan: CompactionPlan | HeadTailPlan, reason: str, focus: str | None = None) -> PlanSummary:
    read_files, modified_files = compute_file_lists(plan.file_ops)
    compacted = [*plan.messages_to_summarize, *plan.turn_prefix_messages]
    text = build_fallback_summary(
        compacted,
        read_files=read_files,
        modified_files=modified_files,
        previous_summary=plan.previous_summary,
        reason=reason,
        head=plan.head_messages if isinstance(plan, HeadTailPlan) else (),
        focus=focus,
    )
    return PlanSummary(
        finish_summary(text, read_files, modified_files, compacted), None, read_files, modified_files
    )


@dataclass(frozen=True)
class CompactionDraft:
    """A compaction computed to the last byte but not written: what :func:`commit_draft` appends.

    The dry run (``kompakt compact --dry-run``) and the preview show a draft and drop it; committing it
    writes exactly this summary, with no second model call. ``leaf_id`` is the leaf the draft was planned
    on: a draft for a session that has moved on since is refused.
    """

    leaf_id: str | None
    plan: CompactionPlan | HeadTailPlan
    prune: PrunePlan
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    tokens_after: int
    estimate_before: int
    details: dict[str, Any]
    extra: dict[str, Any]
    reason: Reason
    summary_source: SummarySource
    no_progress: bool
    duration_ms: int
    message: str | None = None
    summary_error: str | None = None
    short_summary_error: str | None = None

    @property
    def short_summary(self) -> str | None:
        return self.extra.get("shortSummary")

    def to_json(self) -> dict[str, Any]:
        """The draft as ``kompakt compact --dry-run --json`` prints it (the plan comes along)."""
        return {
            "compacted": False,
            "dryRun": True,
            "leafId": self.leaf_id,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
            "tokensAfter": self.tokens_after,
            "summary": self.summary,
            "shortSummary": self.short_summary,
            "details": self.details,
            "summarySource": self.summary_source,
            "summaryError": self.summary_error,
            "noProgress": self.no_progress,
            "prunedToolOutputs": len(self.prune.entries),
            "durationMs": self.duration_ms,
            "plan": self.plan.to_json(),
        }


class StaleDraft(Exception):
    """The session moved on after the draft was made; it would no longer fit."""


def _settings_details(settings: Settings, plan: CompactionPlan | HeadTailPlan) -> dict[str, Any]:
    """The budgets a compaction ran with, stored so that the inspector can show them later."""
    config = settings.compaction
    fields: dict[str, Any] = {
        "strategy": config.strategy,
        "keepRecentTokens": config.keep_recent_tokens,
        "reserveTokens": config.reserve_tokens,
    }
    if isinstance(plan, CompactionPlan):
        fields["keepRecentTokensUsed"] = plan.keep_recent_tokens
        if plan.calibration_ratio is not None:
            fields["calibrationRatio"] = round(plan.calibration_ratio, 4)
    return fields


class CompactionOptions(TypedDict):
    """The keywords of :func:`draft_compaction` and :func:`compact_session` (one list for both).

    ``summary_model`` is only recorded (``details.kompakt.model``) when the model wrote the summary;
    ``max_output_tokens`` caps the summary budgets; ``context_window`` is passed on to the hooks.
    """

    reason: Reason
    settings: Settings
    summarize: SummarizeFn | None
    context_window: int
    max_output_tokens: int
    custom_instructions: NotRequired[str | None]
    hooks: NotRequired[HookRunner | None]
    on_progress: NotRequired[ProgressFn | None]
    summary_model: NotRequired[str | None]


async def draft_compaction(
    store: SessionStore, **options: Unpack[CompactionOptions]
) -> CompactionDraft | CompactionSkip:
    """Plan and summarise the active path, writing nothing (see :func:`compact_session`).

    A skip carries the pruning that the caller may still apply (``CompactionSkip.prune``).
    """
    from tui.compaction.hook_payload import preparation_payload
    from tui.hooks import SESSION_BEFORE_COMPACT, SESSION_COMPACTING

    reason, settings, summarize = options["reason"], options["settings"], options["summarize"]
    context_window, max_output_tokens = options["context_window"], options["max_output_tokens"]
    custom_instructions, hooks = options.get("custom_instructions"), options.get("hooks")
    on_progress, summary_model = options.get("on_progress"), options.get("summary_model")

    started = time.monotonic()
    progress = on_progress or (lambda phase: None)
    config = settings.compaction
    path = store.get_branch()

    progress("pruning")
    # The plan, the deterministic summary and the figures walk the whole path (about 1 s at 65k entries):
    # they run on a thread, on this path's entries, so the app keeps drawing and taking keys meanwhile.
    already = dict(store.branch_prunes().outputs)  # a copy: the store may move on while the thread reads
    prepared = await asyncio.to_thread(
        prepare_session_compaction, path, settings, context_window, already=already
    )
    prune, planned_path, plan = prepared.prune, prepared.planned_path, prepared.plan
    head_tail = isinstance(plan, HeadTailPlan)
    if isinstance(plan, PlanSkip):
        return CompactionSkip(plan.reason, plan.message, plan.tokens_before, len(prune.entries), prune)

    before = await _emit(
        hooks,
        SESSION_BEFORE_COMPACT,
        {
            "preparation": preparation_payload(plan, settings, path),
            "plan": plan,  # kompakt's own view of the same cut, for hooks written for kompakt
            "branchEntries": path,
            "customInstructions": custom_instructions,
            "reason": reason,
            "contextWindow": context_window,
        },
    )
    if before.get("cancel"):
        raise CompactionCancelled()

    summary_error = None
    short_error = None
    strategy_details: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    metered: dict[str, Any] = {}
    hook_result = before.get("compaction")
    if hook_result:
        source: SummarySource = "hook"
        summary = str(hook_result["summary"])
        first_kept = hook_result.get("firstKeptEntryId") or plan.first_kept_entry_id
        tokens_before = int(hook_result.get("tokensBefore", plan.tokens_before))
        details = dict(hook_result.get("details") or {})
        short = hook_result.get("shortSummary")
        if hook_result.get("preserveData") is not None:
            extra["preserveData"] = hook_result["preserveData"]
    else:
        compacting = await _emit(
            hooks,
            SESSION_COMPACTING,
            {
                "sessionId": store.session_id,
                "messages": [*plan.messages_to_summarize, *plan.turn_prefix_messages],
            },
        )
        if compacting.get("preserveData") is not None:
            extra["preserveData"] = compacting["preserveData"]
        progress("summarizing")
        source, summarize_fn = _summary_source(settings, summarize)
        meter: SummaryMeter | None = getattr(summarize_fn, "meter", None)
        meter_start = meter.snapshot() if isinstance(meter, SummaryMeter) else None
        if summarize_fn is None:
            written = await asyncio.to_thread(_fallback, plan, NO_SUMMARIZER, custom_instructions)
        else:
            try:
                summarize_strategy = summarize_head_tail if isinstance(plan, HeadTailPlan) else summarize_plan
                written = await summarize_strategy(
                    plan,  # type: ignore[arg-type]  # the strategy matches the plan's type (chosen above)
                    summarize_fn,
                    SummaryBudgets.from_reserve(config.reserve_tokens, max_output_tokens),
                    custom_instructions=custom_instructions,
                    additional_context=[str(line) for line in compacting.get("context") or ()],
                    prompt_override=compacting.get("prompt"),
                )
            except SummaryError as exc:
                if config.on_summary_failure == "abort":
                    raise
                source, summary_error = "fallback", str(exc)
                written = await asyncio.to_thread(_fallback, plan, summary_error, custom_instructions)
        if isinstance(meter, SummaryMeter) and meter_start is not None:
            spent = meter.since(meter_start)
            if spent.calls:
                metered = {
                    "summaryCalls": spent.calls,
                    "summaryInputTokens": spent.input_tokens,
                    "summaryOutputTokens": spent.output_tokens,
                    "costUsd": round(spent.cost, 6),
                }
        if isinstance(plan, HeadTailPlan):
            written, head_chars = fold_protected(plan, written)
            strategy_details = plan.kompakt_details(head_chars)
        summary = written.summary
        first_kept = plan.first_kept_entry_id
        tokens_before = plan.tokens_before
        details = {"readFiles": written.read_files, "modifiedFiles": written.modified_files}
        short = written.short_summary
        short_error = written.short_summary_error

    # Like for like (Hermes #57): the estimated context before this run and after it.
    pending = {
        "type": "compaction",
        "id": _PENDING_ID,
        "summary": summary,
        "firstKeptEntryId": first_kept,
        "tokensBefore": tokens_before,
    }
    # tokensAfter is pi's measure of the new context for both strategies, like tokensBefore.
    after_path = [*planned_path, pending]
    tokens_after, measured = await asyncio.to_thread(
        lambda: (_context_tokens(after_path), _usage_measured(path))
    )
    if head_tail:
        # Hermes's rule with Hermes's estimate: fewer messages, or more than 5 % fewer tokens.
        (count_before, estimate_before), (count_after, estimate_after) = await asyncio.to_thread(
            lambda: (context_size(path), context_size(after_path))
        )
        no_progress = not made_progress(count_before, count_after, estimate_before, estimate_after)
        strategy_details["estimatedTokensAfter"] = estimate_after
    else:
        estimate_before = _branch_tokens(store, path)  # the store's kept context: no walk when it is warm
        estimate_after = tokens_after
        no_progress = not saved_enough(estimate_before, tokens_after)  # more than 5 % (Hermes §4.1)
    message = None
    if no_progress:
        message = (
            f"Compaction made no real progress: the context went from about {estimate_before} to "
            f"{estimate_after} tokens. It will not be retried automatically."
        )
    duration_ms = int((time.monotonic() - started) * 1000)
    details["kompakt"] = {
        "reason": reason,
        "tokensAfter": tokens_after,
        "durationMs": duration_ms,
        "summarySource": source,
        # tokensBefore comes from the last reply's usage when one is on the path, else from chars/4;
        # tokensAfter is always the estimate of the new context (no reply has measured it yet).
        "tokensBeforeMeasured": measured,
        "tokensAfterMeasured": False,
        **_settings_details(settings, plan),
        **({"model": summary_model} if source == "model" and summary_model else {}),
        **metered,
        **strategy_details,
    }
    if short:
        extra["shortSummary"] = str(short)
    return CompactionDraft(
        leaf_id=store.leaf_id,
        plan=plan,
        prune=prune,
        summary=summary,
        first_kept_entry_id=first_kept,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        estimate_before=estimate_before,
        details=details,
        extra=extra,
        reason=reason,
        summary_source=source,
        no_progress=no_progress,
        duration_ms=duration_ms,
        message=message,
        summary_error=summary_error,
        short_summary_error=short_error,
    )


def _usage_measured(path: list[Entry]) -> bool:
    return path_context(path).estimate.measured  # the offline model's usage is an estimate too


async def commit_draft(
    store: SessionStore, draft: CompactionDraft, hooks: HookRunner | None = None
) -> CompactionResult:
    """Append the draft's prune entry and its ONE compaction entry, then tell the ``session_compact`` hooks.

    Raises :class:`StaleDraft` when the leaf moved since the draft was made (its plan no longer fits).
    """
    from tui.hooks import SESSION_COMPACT

    if store.leaf_id != draft.leaf_id:
        raise StaleDraft("the session changed after this compaction was previewed; preview it again")
    source = draft.summary_source
    if draft.prune:
        store.append(_prune_fields(draft.prune))
    entry = store.append_compaction(
        draft.summary,
        draft.first_kept_entry_id,
        draft.tokens_before,
        draft.details,
        from_hook=source == "hook",
        **draft.extra,
    )
    await _emit(hooks, SESSION_COMPACT, {"compactionEntry": entry, "fromExtension": source == "hook"})
    return CompactionResult(
        entry=entry,
        tokens_before=draft.tokens_before,
        tokens_after=draft.tokens_after,
        duration_ms=draft.duration_ms,
        reason=draft.reason,
        summary_source=source,
        no_progress=draft.no_progress,
        pruned_count=len(draft.prune.entries),
        message=draft.message,
        summary_error=draft.summary_error,
        short_summary_error=draft.short_summary_error,
    )


async def compact_session(
    store: SessionStore, **options: Unpack[CompactionOptions]
) -> CompactionResult | CompactionSkip:
    """Compact the active path; raises :class:`CompactionCancelled` (hook) or :class:`SummaryError`
    (summarizer failed with ``onSummaryFailure = "abort"``); a user abort propagates as CancelledError.
    """
    draft = await draft_compaction(store, **options)
    if isinstance(draft, CompactionSkip):
        if draft.prune:
            store.append(_prune_fields(draft.prune))
        return draft
    (options.get("on_progress") or (lambda phase: None))("writing")
    return await commit_draft(store, draft, options.get("hooks"))
