"""The headless agent session that the TUI and the CLI drive: prompts, tools, compaction, navigation, abort.

:class:`AgentSession` owns one writable :class:`~tui.session.store.SessionStore`, resolves the model (the
offline model when there is no key and no model, with a standing notice), runs the agent loop and sends
:mod:`tui.agent.events` to its subscribers. Automatic compaction follows pi (reference pi-compaction §8.2,
§8.3): after each run it checks the reply (and once more before each prompt) for a context overflow from
the acting model, the main model or a MoA aggregator with its own window (drop the failed reply, compact for
that window, retry once with the turn's drafts refitted; never loop) or a crossed threshold (compact,
then auto-continue with a synthetic prompt), with pi's stale-usage and error-estimate rules. Only one
operation runs at a time; :meth:`AgentSession.abort` stops whichever it is and leaves the session well formed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable, Coroutine, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple, TypedDict, TypeVar, Unpack

import prompts
from tui.agent import model_info
from tui.agent.budget import IterationBudget
from tui.agent.compaction_breaker import STATE_KEY as BREAKER_STATE_KEY
from tui.agent.compaction_breaker import CompactionBreaker, saved_state
from tui.agent.errors import is_context_overflow
from tui.agent.events import (
    AgentEvent,
    BranchSummaryEnd,
    BranchSummaryStart,
    BudgetUpdate,
    CompactionEnd,
    CompactionOutcome,
    CompactionProgress,
    CompactionReason,
    CompactionStart,
    MessageEnd,
    MessageStart,
    Notice,
    StateChange,
    TurnEnd,
    TurnStart,
)
from tui.agent.loop import AgentLoop, LoopOutcome
from tui.agent.moa import AggregatorDrafts, MixtureOfAgents, MoaOptions, reference_system_prompt
from tui.agent.moa_record import moa_record
from tui.agent.moa_view import turn_tokens
from tui.agent.navigation import NavigateResult, navigate_tree
from tui.agent.offline import OFFLINE_MODEL, is_offline, resolve_model
from tui.agent.provider import Provider
from tui.agent.retry import RetryPolicy
from tui.agent.session_settings import (
    SESSION_SETTINGS_TYPE,
    SessionOverrides,
    apply_overrides,
    entry_data,
    read_overrides,
)
from tui.agent.summary_model import AUTO as AUTO_REASONING
from tui.agent.summary_model import provider_summarize_fn
from tui.agent.tools import ApprovalCallback, Tool, ToolContext, default_tools
from tui.agent.tools.bash import BashTool
from tui.compaction.boundary import latest_compaction_index
from tui.compaction.breakdown import ContextBreakdown, context_breakdown
from tui.compaction.context_size import context_size, pruned_after
from tui.compaction.engine import (
    CompactionDraft,
    CompactionResult,
    CompactionSkip,
    apply_pruning,
    commit_draft,
    compact_session,
    compaction_due,
    draft_compaction,
)
from tui.compaction.errors import CompactionCancelled, CompactionFailed
from tui.compaction.head_tail import HeadTailConfig
from tui.compaction.hook_payload import compaction_result_payload
from tui.compaction.skip_advice import explain_skip, skip_state
from tui.compaction.summarizer import SummarizeFn
from tui.compaction.summary_stream import SummarySink, streaming
from tui.compaction.tokens import (
    assistant_usage,
    calculate_context_tokens,
    estimate_context_tokens,
    sum_tokens,
)
from tui.config.model import Settings
from tui.hooks import COMPACTION_END, COMPACTION_START, HookRunner
from tui.session.entries import AUTO_CONTINUE_TYPE, Entry, Message, iso_to_ms, now_ms
from tui.session.store import SessionStore

Subscriber = Callable[[AgentEvent], None]
T = TypeVar("T")


_RETRY = "retry"
_CONTINUE = "continue"
_FAILURE_PREFIX = {
    "manual": "Compaction failed",
    "threshold": "Auto-compaction failed",
    "overflow": "Context overflow recovery failed",
}


class _MoaTurn(NamedTuple):
    """How a Mixture-of-Agents prompt runs: the acting model, and the drafts fitted into its requests."""

    aggregator: str
    drafts: AggregatorDrafts | None


class CompactionOverrides(TypedDict, total=False):
    """One compaction's values in place of the settings (:meth:`AgentSession.compact` and
    :meth:`AgentSession.draft_compaction` take the same ones); None or absent keeps the setting."""

    keep_recent_tokens: int | None
    reserve_tokens: int | None
    strategy: str | None
    calibrate: bool | None
    context_window: int | None


class AgentBusyError(RuntimeError):
    """Another operation (a turn, a compaction, a navigation, a shell command) is still running."""


class ContextUsage(NamedTuple):
    """pi's ``getContextUsage``, with a figure right after a compaction too (pi's is None until a reply
    reports usage): then ``estimated`` is true and the tokens are the chars/4 estimate of the context.
    ``compaction_id`` names the latest compaction on the path (None: none), so a display can tell a
    change of source within one context from a move to another branch."""

    tokens: int
    context_window: int
    percent: float
    estimated: bool = False
    compaction_id: str | None = None
    window_model: str | None = None  # whose window it is when not the main model's (a MoA aggregator)


def system_prompt(workspace: Path) -> str:
    """The system prompt of every request in ``workspace`` (the context breakdown estimates it too)."""
    return prompts.render("system", workspace=str(workspace), date=date.today().isoformat())


def tool_definitions(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """The tool definitions as they are sent (OpenAI function tools)."""
    from tui.agent.openai_format import to_openai_tools
    from tui.agent.tools import tool_schemas

    return to_openai_tools(tool_schemas(tools))


class AgentSession:
    """One agent working on one session file. Subscribe, then call the async operations one at a time."""

    def __init__(
        self,
        store: SessionStore,
        settings: Settings,
        *,
        provider: Provider | None = None,
        tools: Sequence[Tool] | None = None,
        workspace: Path | None = None,
        ask: ApprovalCallback | None = None,
        hooks: HookRunner | None = None,
        summarize: SummarizeFn | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        # The settings files' values; ``settings`` applies this session's own overrides on top.
        self._base_settings = settings
        self._session_overrides = read_overrides(store.entries)
        self.session_overrides_changed = False  # whether the last set_session_overrides wrote an entry
        self._settings = apply_overrides(settings, self._session_overrides)
        self.env = os.environ if env is None else env
        self.provider = provider or Provider(
            retry=RetryPolicy.from_settings(settings.retry.model_dump(by_alias=True)),
            models={
                name: override.model_dump(by_alias=True, exclude_none=True)
                for name, override in settings.models.items()
            },
            env=self.env,
        )
        self.tools: list[Tool] = list(default_tools() if tools is None else tools)
        self.workspace = (workspace or Path.cwd()).resolve()
        self.tool_context = ToolContext(self.workspace, approval=dict(settings.tools.approval), ask=ask)
        self.hooks = hooks
        self._summarize = summarize
        self.model, offline = resolve_model(settings.model, self.env)
        # Notices that stay true while the session lives; every new subscriber hears them at once.
        self.standing_notices: list[Notice] = []
        if offline and not settings.model:
            self.standing_notices.append(
                Notice("warning", prompts.render("offline_notice", model=OFFLINE_MODEL))
            )
        if self._session_overrides.problem:
            self.standing_notices.append(Notice("warning", self._overrides_problem_text()))
        self.is_streaming = False
        self.is_compacting = False
        self._subscribers: list[Subscriber] = []
        self._task: asyncio.Task[Any] | None = None
        self._abort_event: asyncio.Event | None = None
        # pi's one-attempt guard: one compact-and-retry per overflow, reset by a user message or a good reply.
        self._overflow_attempted = False
        # /moa on|off: (the choice, moa.enabled when it was made); a later change of the setting wins.
        self._moa_choice: tuple[bool, bool] | None = None
        self._moa_turn: _MoaTurn | None = None  # the running turn's, for its overflow recovery
        # The breaker's count is kept in the file, so a reopened session is still (or no longer) tripped.
        self.breaker = CompactionBreaker.restore(saved_state(store.entries))
        self._skip_advised: tuple[str, str | None, int, int] | None = None  # the state last advised on
        self._breaker_saved = self.breaker.state()

    # --- events -----------------------------------------------------------------------------
    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Receive every event (the standing notices at once); returns the function that unsubscribes."""
        self._subscribers.append(callback)
        for notice in self.standing_notices:
            callback(notice)
        return lambda: self._subscribers.remove(callback)

    def _emit(self, event: AgentEvent) -> None:
        if isinstance(event, MessageEnd):
            message = event.message
            if message.get("role") == "assistant" and message.get("stopReason") != "error":
                self._overflow_attempted = False
        for callback in list(self._subscribers):
            callback(event)

    def _set_state(self, *, streaming: bool | None = None, compacting: bool | None = None) -> None:
        new = (
            self.is_streaming if streaming is None else streaming,
            self.is_compacting if compacting is None else compacting,
        )
        if new != (self.is_streaming, self.is_compacting):
            self.is_streaming, self.is_compacting = new
            self._emit(StateChange(*new))

    # --- model ------------------------------------------------------------------------------
    @property
    def is_offline(self) -> bool:
        return is_offline(self.model)

    @property
    def context_window(self) -> int:
        return self.provider.context_window(self.model)

    @property
    def window_model(self) -> str:
        """The model whose context window the next reply must fit: the MoA aggregator while MoA is on
        with reference models (it writes the reply, and the threshold check uses its window), else the
        main model."""
        if self.moa_enabled and self.settings.moa.reference_models:
            return self.moa_aggregator
        return self.model

    @property
    def acting_context_window(self) -> int:
        """The context window of :attr:`window_model` (what the status bar and the timeline show)."""
        return self.provider.context_window(self.window_model)

    @property
    def summary_model(self) -> str:
        return self.settings.summary_model or self.model

    @property
    def settings(self) -> Settings:
        """The settings in force: the files' (:attr:`base_settings`) with the session's overrides."""
        return self._settings

    @property
    def base_settings(self) -> Settings:
        return self._base_settings

    @property
    def session_overrides(self) -> SessionOverrides:
        return self._session_overrides

    def _set_layers(self, base: Settings, overrides: SessionOverrides) -> None:
        self._base_settings, self._session_overrides = base, overrides
        self._settings = apply_overrides(base, overrides)

    def set_session_overrides(self, values: Mapping[str, Any] | None) -> SessionOverrides:
        """Store compaction values for this session only (camelCase keys; None or {} clears them).

        Nothing is written when they are the session's values already (QA: `a` typed twice in a word
        wrote two identical entries); ``session_overrides_changed`` says whether the last call wrote."""
        data = entry_data(values or {})
        candidate = read_overrides([{"type": "custom", "customType": SESSION_SETTINGS_TYPE, "data": data}])
        if candidate.problem:
            raise ValueError(candidate.problem)
        current = self._session_overrides
        self.session_overrides_changed = current.problem is not None or candidate.values != current.values
        if not self.session_overrides_changed:
            return current
        self.store.append_custom(SESSION_SETTINGS_TYPE, data)
        self._set_layers(self._base_settings, read_overrides(self.store.entries))
        return self._session_overrides

    def _overrides_problem_text(self) -> str:
        return (
            f"The session's own compaction settings (entry {self._session_overrides.entry_id}) are ignored: "
            f"{self._session_overrides.problem}."
        )

    def reload_session_overrides(self) -> None:
        """Read the overrides again (another writer may have appended to the file)."""
        self._set_layers(self._base_settings, read_overrides(self.store.entries))

    def update_settings(self, settings: Settings) -> None:
        """Apply reloaded settings: the next request, check and compaction use them."""
        compaction = self.settings.compaction
        self._set_layers(settings, self._session_overrides)
        settings = self.settings
        if settings.compaction != compaction:
            self.breaker.reset()  # a lower keepRecentTokens is one of the ways out
            self._save_breaker()
        self.provider.retry = RetryPolicy.from_settings(settings.retry.model_dump(by_alias=True))
        self.provider.models = {
            name: override.model_dump(by_alias=True, exclude_none=True)
            for name, override in settings.models.items()
        }
        self.tool_context.approval = dict(settings.tools.approval)
        if settings.model and settings.model != self.model:
            self.model, _ = resolve_model(settings.model, self.env)

    def set_model(self, model: str) -> None:
        """Switch the model for the next requests and record it as a ``model_change`` entry."""
        self.model = model
        provider, model_id = model_info.split_model(model)
        self.store.append_model_change(provider, model_id)

    def _summarize_fn(self, *, branch: bool = False) -> SummarizeFn | None:
        """The injected summarizer, else the summary model; None (deterministic summary) when offline.

        Compaction summaries reason at the session's current thinking level (none at "off"); branch
        summaries never ask for reasoning (pi 0.73.1, delta A.4 and B.6).
        """
        if self._summarize is not None:
            return self._summarize
        if is_offline(self.summary_model):
            return None
        if branch:
            return provider_summarize_fn(self.provider, self.summary_model)
        return provider_summarize_fn(
            self.provider,
            self.summary_model,
            reasoning_effort=AUTO_REASONING,
            thinking_level=self.store.build_context().thinking_level,
        )

    def _loop(self, moa: _MoaTurn | None = None) -> AgentLoop:
        thinking = self.store.build_context().thinking_level
        return AgentLoop(
            store=self.store,
            provider=self.provider,
            model=self.model if moa is None else moa.aggregator,
            tools=self.tools,
            tool_context=self.tool_context,
            system_prompt=system_prompt(self.workspace),
            emit=self._emit,
            reasoning_effort=None if thinking == "off" else thinking,
            request_messages=None if moa is None else moa.drafts,
        )

    # --- Mixture of Agents ------------------------------------------------------------------
    @property
    def moa_enabled(self) -> bool:
        """``moa.enabled``, or the ``/moa`` choice made for this session while the setting stays the same."""
        if self._moa_choice is not None and self._moa_choice[1] == self.settings.moa.enabled:
            return self._moa_choice[0]
        return self.settings.moa.enabled

    @property
    def moa_aggregator(self) -> str:
        return self.settings.moa.aggregator or self.model

    def set_moa(self, enabled: bool) -> None:
        """``/moa on|off``: answer the next prompts with a mixture of agents, or with the model alone."""
        self._moa_choice = (enabled, self.settings.moa.enabled)
        if enabled and not self.settings.moa.reference_models:
            self._emit(Notice("warning", prompts.render("moa_no_references", model=self.moa_aggregator)))

    async def _consult_references(self) -> _MoaTurn | None:
        """The fan-out before a prompt's first reply: None when MoA is off or has no reference models."""
        config = self.settings.moa
        if not (self.moa_enabled and config.reference_models):
            return None
        options = MoaOptions(
            tuple(config.reference_models), self.moa_aggregator, config.max_concurrency, config.timeout_s
        )
        reference_prompt = reference_system_prompt(str(self.workspace), date.today().isoformat())
        self._set_state(streaming=True)
        try:
            record = await MixtureOfAgents(self.provider, options, self._emit).consult(
                self.store, reference_prompt
            )
        except BaseException:
            self._set_state(streaming=False)
            raise
        if record.all_failed:
            return _MoaTurn(options.aggregator, None)  # the aggregator answers alone
        window = self.provider.context_window(options.aggregator)
        fixed = (
            turn_tokens(system_prompt(self.workspace))
            + turn_tokens(json.dumps(tool_definitions(self.tools)))
            + min(self.settings.compaction.reserve_tokens, window // 4)  # room for the reply
        )
        drafts = AggregatorDrafts(record, options.aggregator, window, fixed, self._emit)
        return _MoaTurn(options.aggregator, drafts)

    # --- running one operation at a time ----------------------------------------------------
    @property
    def is_busy(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _exclusive(
        self, job: Coroutine[Any, Any, T], abort_event: asyncio.Event | None = None
    ) -> T | None:
        """Run ``job`` as the one active task; an :meth:`abort` makes this return None instead of raising."""
        if self.is_busy:
            job.close()
            raise AgentBusyError("kompakt is busy: wait for the current operation or abort it first")
        task = asyncio.ensure_future(job)
        self._task, self._abort_event = task, abort_event
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and not (current is not None and current.cancelling()):
                return None  # aborted through abort(): a normal outcome for the caller
            raise
        finally:
            if self._task is task:
                self._task, self._abort_event = None, None

    def abort(self) -> None:
        """Stop whatever runs: the stream, a tool, a compaction, a branch summary or a shell command."""
        if not self.is_busy:
            return
        if self._abort_event is not None:
            self._abort_event.set()  # these jobs stop gracefully and report what they did
        else:
            assert self._task is not None
            self._task.cancel()

    async def _abort_and_wait(self) -> None:
        task = self._task
        if task is None or task.done():
            return
        self.abort()
        await asyncio.wait({task})

    # --- prompting --------------------------------------------------------------------------
    async def prompt(self, text: str) -> LoopOutcome | None:
        """Send a user message and run the agent until it stops; None when aborted."""
        return await self._exclusive(self._prompt(text))

    async def continue_(self) -> LoopOutcome | None:
        """Run the agent again from the current leaf (after an abort, an error or a spent budget)."""
        return await self._exclusive(self._turn(None))

    async def _prompt(self, text: str) -> LoopOutcome:
        self._overflow_attempted = False
        return await self._turn(text)

    async def _turn(self, prompt_text: str | None) -> LoopOutcome:
        self._emit(TurnStart(prompt_text))
        budget = IterationBudget(self.settings.agent.max_iterations)
        moa: _MoaTurn | None = None
        self._moa_turn = None
        try:
            if prompt_text is not None:
                last = self._last_assistant()
                if last is not None:
                    # pi checks once more before each prompt, counting an aborted last reply too.
                    await self._check_compaction(last, skip_aborted=False, before_prompt=True)
                user = {
                    "role": "user",
                    "content": [{"type": "text", "text": prompt_text}],
                    "timestamp": now_ms(),
                }
                self._append(user)
                moa = self._moa_turn = await self._consult_references()
            outcome = await self._stream(budget, moa)
            while (follow_up := await self._after_reply(outcome, budget)) is not None:
                if follow_up == _RETRY:
                    # Hermes §5: the request that overflowed does not count against the budget.
                    budget.refund()
                    self._emit(BudgetUpdate(budget.used, budget.max_total))
                else:
                    self._append_auto_continue()
                outcome = await self._stream(budget, moa)  # the turn's drafts stay with its retries
        except asyncio.CancelledError:
            self._emit(TurnEnd("aborted", None))
            raise
        finally:
            self._moa_turn = None
        self._emit(TurnEnd(outcome.reason, outcome.message))
        return outcome

    async def _stream(self, budget: IterationBudget, moa: _MoaTurn | None = None) -> LoopOutcome:
        self._set_state(streaming=True)
        try:
            return await self._loop(moa).run(budget)
        finally:
            self._set_state(streaming=False)

    async def _after_reply(self, outcome: LoopOutcome, budget: IterationBudget) -> str | None:
        """What follows a run: a retry after an overflow compaction, an auto-continue, or nothing."""
        message = outcome.message
        if message is None:
            return None
        overflow = is_context_overflow(message, self._acting_window(message))
        if message["stopReason"] == "error" and not overflow:
            self._emit(Notice("error", message.get("errorMessage") or "The model call failed."))
        follow_up = await self._check_compaction(message, skip_aborted=True)
        if follow_up == _CONTINUE and budget.remaining == 0:
            # The synthetic prompt cannot run: say so, or the compaction looks like the end of the turn.
            text = prompts.render("budget_no_continue", used=str(budget.used), max=str(budget.max_total))
            self._emit(Notice("warning", text))
            return None
        return follow_up

    def _append(self, message: Message) -> Entry:
        self._emit(MessageStart(str(message.get("role"))))
        entry = self.store.append_message(message)
        self._emit(MessageEnd(message, entry["id"]))
        return entry

    def _append_auto_continue(self) -> None:
        # A custom message reaches the model as a user message, and the tree shows it is not the user's.
        self._emit(MessageStart("custom"))
        entry = self.store.append_custom_message(AUTO_CONTINUE_TYPE, prompts.render("auto_continue"))
        message = self.store.build_context().messages[-1]
        self._emit(MessageEnd(message, entry["id"]))

    # --- automatic compaction (pi §8.2) -----------------------------------------------------
    def _last_assistant(self) -> Message | None:
        for message in reversed(self.store.build_context().messages):
            if message.get("role") == "assistant":
                return message
        return None

    def _latest_compaction_ms(self) -> int | None:
        for entry in reversed(self.store.get_branch()):
            if entry.get("type") == "compaction":
                return iso_to_ms(entry.get("timestamp"))
        return None

    def _acting_model(self, message: Message) -> str | None:
        """The model acting for the session that wrote ``message``: the main model, or the MoA
        aggregator while MoA is on (its window may be smaller); None for a reply from any other model."""
        candidates = [self.model]
        if self.moa_enabled:
            candidates.append(self.moa_aggregator)
        for model in candidates:
            provider, model_id = model_info.split_model(model)
            if (message.get("provider"), message.get("model")) == (provider, model_id):
                return model
        return None

    def _acting_window(self, message: Message) -> int:
        """The context window that ``message``'s reply had to fit: its acting model's, else the main one's."""
        acting = self._acting_model(message)
        return self.context_window if acting is None else self.provider.context_window(acting)

    async def _check_compaction(
        self, message: Message, *, skip_aborted: bool, before_prompt: bool = False
    ) -> str | None:
        """pi's ``_checkCompaction``: returns ``"retry"``, ``"continue"`` or None (nothing more to do)."""
        config = self.settings.compaction
        if not config.enabled:
            return None
        self._prune()  # omp: first, on every check, before the aborted-reply rule
        if skip_aborted and message.get("stopReason") == "aborted":
            return None
        latest_ms = self._latest_compaction_ms()
        # Stale guard (pi #1382): a reply from before the latest compaction says nothing about the context now.
        if latest_ms is not None and (message.get("timestamp") or 0) <= latest_ms:
            return None
        # The window of the model that replied (a MoA aggregator's may be smaller than the main model's).
        acting = self._acting_model(message)
        window = self._acting_window(message)
        limit = self._threshold(window)
        usage = assistant_usage(message)
        if usage is not None:
            self.breaker.observe(calculate_context_tokens(usage), limit)
            self._save_breaker()
        if acting is not None and is_context_overflow(message, window):
            return await self._recover_from_overflow(message, before_prompt, acting, window)
        path = self.store.get_branch()
        context = self.store.branch_context()  # the path's, kept by the store for the next look
        messages = context.messages
        if message.get("stopReason") == "error":
            # The failed reply reports nothing: use the last good usage plus what came after it.
            estimate = estimate_context_tokens(messages)
            if estimate.last_usage_index is None:
                return None
            usage_time = messages[estimate.last_usage_index].get("timestamp") or 0
            if latest_ms is not None and usage_time <= latest_ms:
                return None  # only a kept pre-compaction reply has usage: it is stale
            tokens, usage_index = estimate.tokens, estimate.last_usage_index
        else:
            usage_index = next((i for i, m in enumerate(messages) if m is message), len(messages) - 1)
            reported = calculate_context_tokens(message.get("usage") or {})
            tokens = reported + sum_tokens(messages[usage_index + 1 :])
        # omp tests the threshold against usage minus what the pruning saved.
        usage_id = context.entry_ids[usage_index] if 0 <= usage_index < len(messages) else None
        tokens = max(0, tokens - pruned_after(path, context, usage_id, self.store.branch_prunes().indices))
        # keep-recent: pi's rule on these tokens; head-tail: Hermes's trigger on its own estimate.
        if not compaction_due(path, self.settings, window, tokens):
            return None
        if self.breaker.tripped:
            if (text := self.breaker.notice(limit)) is not None:
                self._emit(Notice("warning", text))
            return None
        result = await self._auto_compact("threshold", will_retry=False, context_window=window)
        if isinstance(result, CompactionResult):
            self.breaker.compacted(tokens)
        elif isinstance(result, CompactionSkip):
            self.breaker.skipped(tokens, message.get("timestamp"))
            self._advise_skip(result, tokens, limit)
        self._save_breaker()
        if (
            isinstance(result, CompactionResult)
            and config.auto_continue
            and not result.no_progress
            and not before_prompt
        ):
            return _CONTINUE
        return None

    def _threshold(self, window: int) -> int:
        """The configured strategy's threshold in tokens (pi's window − reserve, or Hermes's)."""
        config = self.settings.compaction
        if config.strategy == "head-tail":
            return (
                HeadTailConfig.from_settings(config).threshold(window, config.reserve_tokens).threshold_tokens
            )
        return window - config.reserve_tokens

    def _save_breaker(self) -> None:
        """Append the breaker's state when it changed (a marker pi ignores; the leaf stays)."""
        state = self.breaker.state()
        if state != self._breaker_saved and not self.store.read_only:
            self.store.append_marker({BREAKER_STATE_KEY: state})
            self._breaker_saved = state

    def _prune(self) -> None:
        prune = apply_pruning(self.store)
        if prune:
            count = len(prune.entries)
            self._emit(
                Notice(
                    "info",
                    f"Pruned {count} old tool output{'s' if count != 1 else ''}: "
                    f"about {prune.tokens_saved:,} tokens saved.",
                )
            )

    async def _recover_from_overflow(
        self, message: Message, before_prompt: bool, model: str, window: int
    ) -> str | None:
        """Compact for ``model``'s window and retry once. A MoA aggregator's retry keeps the turn's drafts,
        fitted to the room the compaction made; if it found nothing to compact, the drafts are halved
        instead (they may be what overflowed)."""
        if self._overflow_attempted:
            text = prompts.render("overflow_failed", model=model)
            end = CompactionEnd("overflow", "error", error_message=text)
            self._emit(end)
            await self._compaction_hook(end)
            self._emit(Notice("error", text))
            return None
        self._overflow_attempted = True
        is_error = message.get("stopReason") == "error"
        if is_error:
            self._drop_failed_reply(message)
        will_retry = is_error and not before_prompt
        result = await self._auto_compact("overflow", will_retry=will_retry, context_window=window)
        drafts = self._moa_turn.drafts if self._moa_turn is not None else None
        if isinstance(result, CompactionResult):
            self.breaker.compacted(result.tokens_before)
            self._save_breaker()
            return _RETRY if will_retry else None
        if will_retry and drafts is not None and model == drafts.aggregator and drafts.shrink():
            return _RETRY
        if isinstance(result, CompactionSkip) and is_error:
            # "Nothing to compact" alone would hide that the request itself failed.
            # The skip's sentence inside the notice's own: without its "Nothing to compact: " and full stop
            # (it read "(Nothing to compact: everything fits in the recent budget.).").
            reason = result.message.removeprefix("Nothing to compact: ").rstrip(".")
            text = prompts.render("overflow_unrecovered", model=model, reason=reason)
            self._emit(Notice("error", text))
        elif isinstance(result, CompactionSkip):
            # A reply that came back over the window: the planner's "everything fits in the recent
            # budget" would read as false at 389 % (D10); the advice names the cause with the figures.
            used = calculate_context_tokens(message.get("usage") or {})
            self._advise_skip(result, used, self._threshold(window))
        return None

    def _drop_failed_reply(self, message: Message) -> None:
        """Take the overflow error out of the context by moving the leaf to its parent.

        pi only drops the error from its in-memory messages and keeps it in the file. kompakt rebuilds the
        context from the file, so the error would come back (and be summarised); moving the leaf keeps it
        in the file as an abandoned sibling branch, while the compaction and the retry continue from the
        request that overflowed. The move is persisted (a leaf marker), so a reload resumes there too.
        """
        leaf = self.store.leaf_id
        if leaf is None:
            return
        entry = self.store.get(leaf)
        if entry.get("type") != "message" or entry.get("message") is not message:
            return
        parent = entry.get("parentId")
        if parent is None:
            self.store.reset_leaf()
        else:
            self.store.branch(parent)

    def _advise_skip(self, skip: CompactionSkip, tokens: int, limit: int) -> None:
        """Over the threshold with nothing to summarise: say why, with the figures and the ways out,
        once per state (the skip's reason, the latest compaction, the budgets), not after every turn."""
        config = self.settings.compaction
        path = self.store.get_branch()
        state = skip_state(path, skip.reason, config.keep_recent_tokens, config.reserve_tokens)
        if state == self._skip_advised:
            return
        self._skip_advised = state
        text = explain_skip(
            path,
            skip.reason,
            context_tokens=tokens,
            threshold=limit,
            keep_recent_tokens=config.keep_recent_tokens,
        )
        self._emit(Notice("warning", text))

    async def _auto_compact(
        self, reason: CompactionReason, *, will_retry: bool, context_window: int | None = None
    ) -> CompactionResult | CompactionSkip | None:
        end = await self._run_compaction(reason, None, will_retry, context_window=context_window)
        return end.result or end.skip

    async def _compaction_hook(self, event: CompactionStart | CompactionEnd) -> None:
        """pi 0.73.1's ``compaction_start`` / ``compaction_end`` for hooks, for every compaction (A.7)."""
        if self.hooks is None:
            return
        if isinstance(event, CompactionStart):
            await self.hooks.emit(COMPACTION_START, {"reason": event.reason})
            return
        payload: dict[str, Any] = {
            "reason": event.reason,
            "result": None if event.result is None else compaction_result_payload(event.result.entry),
            "aborted": event.outcome == "aborted",
            "willRetry": event.will_retry,
        }
        if event.outcome == "error":
            payload["errorMessage"] = event.error_message
        await self.hooks.emit(COMPACTION_END, payload)

    async def _run_compaction(
        self,
        reason: CompactionReason,
        custom_instructions: str | None,
        will_retry: bool,
        settings: Settings | None = None,
        context_window: int | None = None,
    ) -> CompactionEnd:
        """Run the engine between a start and an end event; returns the end event (also on failure).

        A failed manual compaction raises :class:`CompactionFailed` after its end event (pi 0.73.1).
        """
        start = CompactionStart(reason)
        self._emit(start)
        self._set_state(compacting=True)
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            await self._compaction_hook(start)
            end_event = await self._compact_between_events(
                reason, custom_instructions, will_retry, settings, context_window, loop, started
            )
        except asyncio.CancelledError:
            end_event = CompactionEnd(
                reason,
                "aborted",
                duration_ms=(loop.time() - started) * 1000,
                error_message="Compaction cancelled",
            )
            self._set_state(compacting=False)
            self._emit(end_event)
            with contextlib.suppress(Exception):
                await asyncio.shield(self._compaction_hook(end_event))
            raise
        await self._compaction_hook(end_event)
        if reason == "manual" and end_event.outcome == "error":
            raise CompactionFailed(end_event.error_message or _FAILURE_PREFIX[reason])
        return end_event

    async def _compact_between_events(
        self,
        reason: CompactionReason,
        custom_instructions: str | None,
        will_retry: bool,
        settings: Settings | None,
        context_window: int | None,
        loop: asyncio.AbstractEventLoop,
        started: float,
    ) -> CompactionEnd:
        def end(outcome: CompactionOutcome, **fields: Any) -> CompactionEnd:
            fields.setdefault("duration_ms", (loop.time() - started) * 1000)
            event = CompactionEnd(reason, outcome, **fields)
            self._emit(event)
            return event

        try:
            result = await compact_session(
                self.store,
                reason=reason,
                settings=settings or self.settings,
                summarize=self._summarize_fn(),
                context_window=context_window or self.context_window,
                max_output_tokens=self.provider.max_output_tokens(self.summary_model),
                custom_instructions=custom_instructions,
                hooks=self.hooks,
                on_progress=lambda phase: self._emit(CompactionProgress(reason, phase)),
                summary_model=self.summary_model,
            )
        except CompactionCancelled as exc:
            return end("aborted", error_message=str(exc))
        except Exception as exc:  # the summarizer failed in "abort" mode, or worse: nothing was written
            text = f"{_FAILURE_PREFIX[reason]}: {exc}"
            self._emit(Notice("error", text))
            return end("error", error_message=text)
        finally:
            self._set_state(compacting=False)
        if isinstance(result, CompactionSkip):
            if reason == "manual":  # an automatic one says why in _advise_skip, once per state
                self._emit(Notice("info", result.message))
            return end("skip", skip=result, tokens_before=result.tokens_before or None)
        if result.message:
            self._emit(Notice("warning", result.message))
        if result.summary_error:
            text = f"The summarizer failed ({result.summary_error}); kompakt wrote the deterministic summary."
            self._emit(Notice("warning", text))
        return end(
            "result",
            result=result,
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
            duration_ms=float(result.duration_ms),
            will_retry=will_retry,
        )

    # --- manual operations ------------------------------------------------------------------
    async def compact(
        self, custom_instructions: str | None = None, **overrides: Unpack[CompactionOverrides]
    ) -> CompactionResult | CompactionSkip | None:
        """Compact now (pi §8.1): a running turn is aborted first; None when cancelled.

        A failure raises :class:`CompactionFailed` ("Compaction failed: …") once the end event and
        the ``compaction_end`` hooks have heard it, as pi 0.73.1 throws it to the caller.

        The keyword overrides apply to this compaction only: the timeline's "compact now" uses them to
        carry out the what-if the user is looking at, without saving it as a setting.
        """
        await self._abort_and_wait()
        settings = self._with_budgets(overrides)
        end = await self._exclusive(
            self._run_compaction(
                "manual", custom_instructions, False, settings, overrides.get("context_window")
            )
        )
        return None if end is None else end.result or end.skip

    def _with_budgets(self, overrides: CompactionOverrides) -> Settings | None:
        """The settings with these compaction values in place (None when there are none)."""
        values = {
            "keep_recent_tokens": overrides.get("keep_recent_tokens"),
            "reserve_tokens": overrides.get("reserve_tokens"),
            "strategy": overrides.get("strategy"),
            "calibrate": overrides.get("calibrate"),
        }
        update = {key: value for key, value in values.items() if value is not None}
        if not update:
            return None
        compaction = self.settings.compaction.model_copy(update=update)
        return self.settings.model_copy(update={"compaction": compaction})

    async def draft_compaction(
        self,
        custom_instructions: str | None = None,
        *,
        on_text: SummarySink | None = None,
        **overrides: Unpack[CompactionOverrides],
    ) -> CompactionDraft | CompactionSkip | None:
        """The compaction that :meth:`compact` would write with these values, written nowhere.

        The dry run and the preview call it; :meth:`commit_draft` writes the draft as it is (no second
        model call). None when it was aborted; a summarizer failure in "abort" mode raises. ``on_text``
        gets the summary calls' text as it streams (:mod:`tui.compaction.summary_stream`).
        """
        await self._abort_and_wait()
        settings = self._with_budgets(overrides) or self.settings
        job = draft_compaction(
            self.store,
            reason="manual",
            settings=settings,
            summarize=self._summarize_fn(),
            context_window=overrides.get("context_window") or self.context_window,
            max_output_tokens=self.provider.max_output_tokens(self.summary_model),
            custom_instructions=custom_instructions,
            hooks=self.hooks,
            summary_model=self.summary_model,
        )
        with streaming(on_text):  # the job's task is created inside: it and its calls see the sink
            return await self._exclusive(job)

    async def commit_draft(self, draft: CompactionDraft) -> CompactionResult:
        """Write a draft from :meth:`draft_compaction`; raises :class:`StaleDraft` if the session moved on."""
        if self.is_busy:
            raise AgentBusyError("kompakt is busy: wait for the current operation or abort it first")
        start = CompactionStart("manual")
        self._emit(start)
        await self._compaction_hook(start)  # a committed draft is a manual compaction for hooks too
        result = await commit_draft(self.store, draft, self.hooks)
        end = CompactionEnd(
            "manual",
            "result",
            result=result,
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
            duration_ms=float(result.duration_ms),
        )
        self._emit(end)
        await self._compaction_hook(end)
        return result

    async def navigate(
        self,
        target_id: str,
        summarize: bool,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> NavigateResult | None:
        """Move to ``target_id`` in the tree, optionally summarising the branch left (refused while busy)."""
        abort = asyncio.Event()
        return await self._exclusive(
            self._navigate(target_id, summarize, custom_instructions, replace_instructions, label, abort),
            abort,
        )

    async def _navigate(
        self,
        target_id: str,
        summarize: bool,
        custom_instructions: str | None,
        replace_instructions: bool,
        label: str | None,
        abort: asyncio.Event,
    ) -> NavigateResult:
        if summarize:
            self._emit(BranchSummaryStart(target_id))
            self._set_state(compacting=True)
        try:
            result = await navigate_tree(
                self.store,
                target_id,
                summarize=summarize,
                custom_instructions=custom_instructions,
                replace_instructions=replace_instructions,
                label=label,
                summarize_fn=self._summarize_fn(branch=True),
                settings=self.settings,
                context_window=self.context_window,
                hooks=self.hooks,
                abort=abort,
            )
            self.breaker.reset()  # another point in the tree is another context
            self._save_breaker()
        except asyncio.CancelledError:
            if summarize:
                self._emit(BranchSummaryEnd(target_id, "aborted"))
            raise
        except Exception as exc:
            if summarize:
                self._emit(BranchSummaryEnd(target_id, "error", error_message=str(exc)))
            raise
        finally:
            self._set_state(compacting=False)
        if summarize:
            self._emit(BranchSummaryEnd(target_id, "aborted" if result.aborted else "done", result))
        return result

    async def run_bash(self, command: str, exclude_from_context: bool = False) -> Message | None:
        """Run a shell command for the user and store it as a ``bashExecution`` message (``!!``: not sent)."""
        cancel = asyncio.Event()
        return await self._exclusive(self._run_bash(command, exclude_from_context, cancel), cancel)

    async def _run_bash(self, command: str, exclude_from_context: bool, cancel: asyncio.Event) -> Message:
        context = ToolContext(self.workspace, ask=None, cancel=cancel)
        run = await BashTool().execute({"command": command}, context)
        details = run.details
        message: Message = {
            "role": "bashExecution",
            "command": command,
            "output": run.output,
            "exitCode": details.get("exitCode"),
            "cancelled": bool(details.get("cancelled")),
            "truncated": bool(details.get("truncated")),
            "timestamp": now_ms(),
        }
        if details.get("fullOutputPath"):
            message["fullOutputPath"] = details["fullOutputPath"]
        if exclude_from_context:
            message["excludeFromContext"] = True
        self._append(message)
        return message

    # --- edits the UI makes to the session (the store announces each one) --------------------
    def label(self, entry_id: str, text: str | None) -> None:
        """Label ``entry_id`` (an empty text clears its label)."""
        self.store.append_label(entry_id, text or None)

    def rename(self, name: str) -> None:
        self.store.append_session_info(name)

    def branch_before(self, entry_id: str) -> None:
        """Edit and resend: move the leaf to just before ``entry_id`` (no leaf for a first message), so
        that the edited text starts a new branch and the original stays in the tree."""
        parent = self.store.tree.parent_of(entry_id)
        if parent is None:
            self.store.reset_leaf()
        else:
            self.store.branch(parent)

    def show(self, entry_id: str) -> None:
        """Move the leaf without writing anything (a read-only session is navigated for reading only)."""
        self.store.get(entry_id)
        self.store.leaf_id = entry_id

    # --- figures for the UI -----------------------------------------------------------------
    def context_breakdown(self) -> ContextBreakdown:
        """The current context by category (total: :meth:`context_usage`'s tokens)."""
        return context_breakdown(
            self.store.get_branch(),
            context_window=self.acting_context_window,
            reserve_tokens=self.settings.compaction.reserve_tokens,
            system_prompt=system_prompt(self.workspace),
            tool_definitions=tool_definitions(self.tools),
        )

    def context_usage(self, path: Sequence[Entry] | None = None) -> ContextUsage | None:
        """The context size the CLI and the timeline show (``context_size``) of ``path`` (default: the
        active path) against the window that applies (:attr:`window_model`'s); None when the window is
        unknown."""
        window = self.acting_context_window
        if window <= 0:
            return None
        if path is None:
            path = self.store.get_branch()
        estimate = context_size(path)
        estimated = not estimate.measured
        latest = latest_compaction_index(path)
        compaction_id = path[latest].get("id") if latest >= 0 else None
        other = self.window_model if self.window_model != self.model else None
        return ContextUsage(
            estimate.tokens, window, estimate.tokens / window * 100, estimated, compaction_id, other
        )

    @property
    def cost_total(self) -> float:
        """Dollars spent on every assistant reply stored in the session (all branches)."""
        total = 0.0
        for entry in self.store.entries:
            record = moa_record(entry)
            if record is not None:
                total += record.cost  # the reference models' drafts are paid for too
            if entry.get("type") == "message" and (entry.get("message") or {}).get("role") == "assistant":
                cost = ((entry["message"].get("usage") or {}).get("cost") or {}).get("total")
                total += float(cost or 0.0)
        return total

    def set_workspace(self, workspace: Path) -> None:
        """Move the tools (and the system prompt's directory) to ``workspace``, which the user chose."""
        self.workspace = workspace.resolve()
        self.tool_context.workspace = self.workspace

    async def close(self) -> None:
        """Abort what runs and wait for it to wind down."""
        with contextlib.suppress(asyncio.CancelledError):
            await self._abort_and_wait()
