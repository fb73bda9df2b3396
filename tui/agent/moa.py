"""Mixture of Agents: reference models draft answers in parallel, then the aggregator acts on them.

:class:`MixtureOfAgents` runs the fan-out of one user turn: every reference model in ``moa.referenceModels``
gets the advisory view of the turn's context (:mod:`tui.agent.moa_view`: tool calls as text, trimmed to
that model's own window, with an adviser's system prompt and no tools) through the provider, at
most ``moa.maxConcurrency`` at a time and each within ``moa.timeoutS`` (counted from its request, after
litellm's warm-up). A reference that fails, times out
or answers nothing is left out of the aggregator's prompt and reported (an event and a notice, never its
error text in the prompt). The outcome is stored as a ``kompakt.moa`` custom entry (see
:mod:`tui.agent.moa_record`) before the aggregated reply, and :func:`with_guidance` adds the drafts, in the
configured order, to the aggregator's request only: the agent loop applies it to the calls of that one run,
so the drafts never enter the stored context. An abort cancels every reference call at once (their HTTP
streams close) and still records what had arrived.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import prompts
from tui.agent.events import AgentEvent, Notice
from tui.agent.moa_events import MoaEnd, MoaReferenceEnd, MoaStart
from tui.agent.moa_record import MoaRecord, ReferenceAnswer
from tui.agent.moa_view import (
    CHARS_PER_TOKEN,
    REFERENCE_MAX_TOKENS,
    fit_view,
    head_and_tail,
    render_view,
    turn_tokens,
    view_budget,
)
from tui.agent.provider import Provider
from tui.agent.stream_events import Done
from tui.compaction.tokens import estimate_tokens
from tui.session.content import content_text
from tui.session.context import convert_to_llm
from tui.session.entries import MOA_CUSTOM_TYPE, Message
from tui.session.redact import scrubber
from tui.session.store import SessionStore

Emit = Callable[[AgentEvent], None]
ABORTED = "Aborted by the user."
# Below this, a reference would see little more than the latest message: it is left out instead.
MIN_VIEW_TOKENS = 256
# A draft cut below this says too little to be worth the aggregator's attention.
MIN_DRAFT_CHARS = 400


@dataclass(frozen=True)
class MoaOptions:
    """The ``moa`` settings a fan-out needs, plus the aggregator it resolved to."""

    references: tuple[str, ...]
    aggregator: str
    max_concurrency: int = 4
    timeout_s: float = 120.0


async def ask_reference(
    provider: Provider,
    model: str,
    messages: Sequence[Message],
    *,
    system_prompt: str,
    timeout_s: float,
    max_tokens: int | None = None,
) -> ReferenceAnswer:
    """One reference model's draft; any failure becomes the answer's ``error`` (only an abort raises)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    builder = provider.new_builder(model)
    done: Done | None = None
    try:
        async with asyncio.timeout(timeout_s):
            async for event in provider.stream(
                messages, (), model=model, system_prompt=system_prompt, max_tokens=max_tokens, builder=builder
            ):
                if isinstance(event, Done):
                    done = event
    except TimeoutError:
        error: str | None = f"No answer within {timeout_s:g} s."
    except Exception as exc:  # anything the provider did not classify; CancelledError passes through
        error = f"{type(exc).__name__}: {exc}"
    else:
        assert done is not None  # the provider always ends with Done
        error = done.error.message if done.error is not None else None
    seconds = loop.time() - started
    message = done.message if done is not None else builder.finish("aborted")
    text = content_text(message["content"])
    if error is None and not text.strip():
        error = "The model answered with no text."
    if error is not None:
        error = scrubber()(error)  # stored in the entry and shown: provider errors can echo a key
    usage = message.get("usage") or {}
    return ReferenceAnswer(
        model=model,
        text=text,
        input_tokens=int(usage.get("input", 0))
        + int(usage.get("cacheRead", 0))
        + int(usage.get("cacheWrite", 0)),
        output_tokens=int(usage.get("output", 0)),
        cost=float((usage.get("cost") or {}).get("total", 0.0)),
        seconds=seconds,
        error=error,
    )


def reference_system_prompt(workspace: str, date: str) -> str:
    return prompts.render("moa_reference", workspace=workspace, date=date)


def aggregator_guidance(record: MoaRecord) -> str | None:
    """The block the aggregator reads after the user's message: the drafts in order; None when there are none."""
    answered = record.answered
    if not answered:
        return None
    drafts = "\n\n".join(
        prompts.render("moa_draft", number=str(number), model=answer.model, text=answer.text.strip())
        for number, answer in enumerate(answered, start=1)
    )
    unavailable = ""
    if record.failed:
        # Only the names: an error text may carry a key or a URL that the aggregator has no need to see.
        names = ", ".join(answer.model for answer in record.failed)
        unavailable = "\n" + prompts.render("moa_unavailable", models=names) + "\n"
    return prompts.render(
        "moa_aggregate", count=str(len(answered)), drafts=drafts + "\n", unavailable=unavailable
    )


def with_guidance(messages: Sequence[Message], guidance: str) -> list[Message]:
    """``messages`` with ``guidance`` added as a text block to the last user message (copied, not changed).

    The guidance follows the request it is about, and the messages before it stay the same from call to
    call, so a provider's prompt cache keeps working across the tool iterations of the turn.
    """
    out = list(messages)
    block = {"type": "text", "text": guidance}
    for index in range(len(out) - 1, -1, -1):
        if out[index].get("role") == "user":
            content = out[index].get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or ())
            out[index] = {**out[index], "content": [*blocks, block]}
            return out
    out.append({"role": "user", "content": [block]})
    return out


def fit_guidance(record: MoaRecord, budget_tokens: int) -> tuple[str | None, bool]:
    """The guidance within ``budget_tokens`` (estimated) and whether the drafts had to be cut for it.

    Short drafts stay whole and the long ones share what is left, each cut in its middle; when even
    :data:`MIN_DRAFT_CHARS` per draft does not fit, there is no guidance (the aggregator answers alone).
    """
    full = aggregator_guidance(record)
    if full is None or turn_tokens(full) <= budget_tokens:
        return full, False
    answered = record.answered
    bare = aggregator_guidance(_with_texts(record, {id(a): "" for a in answered}))
    assert bare is not None
    room = budget_tokens * CHARS_PER_TOKEN - len(bare)
    allowance: dict[int, int] = {}
    remaining = sorted(answered, key=lambda answer: len(answer.text))
    while remaining:  # water-filling: what a short draft does not use goes to the longer ones
        share = room // len(remaining)
        answer = remaining.pop(0)
        allowance[id(answer)] = min(len(answer.text), share)
        room -= allowance[id(answer)]
    if any(allowance[id(a)] < min(MIN_DRAFT_CHARS, len(a.text)) for a in answered):
        return None, True
    texts = {id(a): head_and_tail(a.text, allowance[id(a)]) for a in answered}
    return aggregator_guidance(_with_texts(record, texts)), True


def _with_texts(record: MoaRecord, texts: dict[int, str]) -> MoaRecord:
    references = tuple(
        dataclasses.replace(answer, text=texts[id(answer)]) if id(answer) in texts else answer
        for answer in record.references
    )
    return dataclasses.replace(record, references=references)


@dataclass
class AggregatorDrafts:
    """A turn's drafts, fitted on every request of the turn to the room the aggregator's window leaves.

    The room is the window less ``fixed_tokens`` (system prompt, tool definitions, the reply's reserve)
    and the request's messages. After the aggregator overflowed anyway (the estimate was short),
    :meth:`shrink` halves what the drafts may take on the retry.
    """

    record: MoaRecord
    aggregator: str
    window: int
    fixed_tokens: int
    emit: Emit
    cap_tokens: int | None = None
    sent_tokens: int = 0
    _told: set[str] = field(default_factory=set)

    def __call__(self, messages: list[Message]) -> list[Message]:
        room = self.window - self.fixed_tokens - sum(estimate_tokens(m) for m in messages)
        if self.cap_tokens is not None:
            room = min(room, self.cap_tokens)
        guidance, cut = fit_guidance(self.record, room)
        self.sent_tokens = 0 if guidance is None else turn_tokens(guidance)
        if cut:
            kind = "moa_drafts_cut" if guidance is not None else "moa_drafts_left_out"
            if kind not in self._told:  # once per turn, not at every tool iteration
                self._told.add(kind)
                text = prompts.render(kind, aggregator=self.aggregator, window=f"{self.window:,}")
                self.emit(Notice("warning" if guidance is None else "info", text))
        return list(messages) if guidance is None else with_guidance(messages, guidance)

    def shrink(self) -> bool:
        """Halve the drafts' room for the next request; False when the last request carried none."""
        if self.sent_tokens <= 0:
            return False
        self.cap_tokens = self.sent_tokens // 2
        return True


def failure_summary(record: MoaRecord) -> str:
    return ", ".join(f"{answer.model} ({answer.error})" for answer in record.failed)


class MixtureOfAgents:
    """The fan-out of one turn: ask the references, report and store what they said."""

    def __init__(self, provider: Provider, options: MoaOptions, emit: Emit) -> None:
        self.provider = provider
        self.options = options
        self.emit = emit

    async def consult(self, store: SessionStore, system_prompt: str) -> MoaRecord:
        """Ask every reference about the context at the store's leaf, then append the ``kompakt.moa`` entry.

        On an abort the entry records the answers that had arrived (the others as aborted) and the
        cancellation propagates.
        """
        options = self.options
        turns = render_view(convert_to_llm(store.build_context().messages))
        answers: list[ReferenceAnswer | None] = [None] * len(options.references)
        gate = asyncio.Semaphore(options.max_concurrency)

        async def run(index: int, model: str) -> None:
            max_tokens = min(REFERENCE_MAX_TOKENS, self.provider.max_output_tokens(model))
            window = self.provider.context_window(model)
            budget = view_budget(window, max_tokens, system_prompt)
            if budget < MIN_VIEW_TOKENS:
                answer = ReferenceAnswer(
                    model, error=prompts.render("moa_window_too_small", window=f"{window:,}")
                )
            else:
                async with gate:
                    answer = await ask_reference(
                        self.provider,
                        model,
                        fit_view(turns, budget),
                        system_prompt=system_prompt,
                        timeout_s=options.timeout_s,
                        max_tokens=max_tokens,
                    )
            answers[index] = answer
            self.emit(MoaReferenceEnd(index, answer))

        self.emit(MoaStart(options.references, options.aggregator))
        # Loading litellm and its first call's set-up can take seconds: a reference's timeout starts after
        # them, when its request is sent, so that the first reference is not timed out by the warm-up.
        await self.provider.warm_up()
        try:
            async with asyncio.TaskGroup() as group:
                for index, model in enumerate(options.references):
                    group.create_task(run(index, model))
        except asyncio.CancelledError:
            # The task group has cancelled and awaited every call, so each HTTP stream is closed by now.
            for index, model in enumerate(options.references):
                if answers[index] is None:
                    answers[index] = aborted = ReferenceAnswer(model, error=ABORTED)
                    self.emit(MoaReferenceEnd(index, aborted))
            self._store(store, _record(options, answers, aborted=True))
            raise
        record = _record(options, answers, aborted=False)
        self._store(store, record)
        if record.all_failed:
            text = prompts.render(
                "moa_all_failed", failures=failure_summary(record), aggregator=options.aggregator
            )
            self.emit(Notice("warning", text))
        elif record.failed:
            self.emit(Notice("warning", prompts.render("moa_left_out", failures=failure_summary(record))))
        return record

    def _store(self, store: SessionStore, record: MoaRecord) -> None:
        entry = store.append_custom(MOA_CUSTOM_TYPE, record.to_data())
        self.emit(MoaEnd(record, entry["id"]))


def _record(options: MoaOptions, answers: list[ReferenceAnswer | None], *, aborted: bool) -> MoaRecord:
    finished = tuple(answer for answer in answers if answer is not None)
    return MoaRecord(options.aggregator, finished, aborted=aborted)
