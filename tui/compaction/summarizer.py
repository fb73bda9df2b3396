"""Summary generation for a compaction plan (reference pi-compaction §4.5, §6; hermes-compressor §2.5–2.8).

Every call sends the summary system prompt and one user message: the transcript in ``<conversation>``,
the earlier notes in ``<previous-summary>`` (which switches to the update prompt), hook lines in
``<additional-context>``, the base prompt and the user's "Additional focus". A split turn is summarised
in two parallel calls and merged; when the turn has no earlier history the previous summary is carried
forward (DESIGN.md deviation 3). The short summary (oh-my-pi) is written at the same time as the main
one, from the earlier notes and the messages, and is optional: if it fails, the compaction goes on
without it. The stored text is the notes, the file tags, the tool-call
trail and an end marker, so that a weak model reading the summary knows where it stops. Budgets follow
pi and are capped by the model's output limit (pi #4390).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import prompts
from tui.compaction.errors import SummaryError
from tui.compaction.file_ops import compute_file_lists, format_file_operations
from tui.compaction.plan import CompactionPlan
from tui.compaction.summary_input import summarizer_transcript
from tui.compaction.summary_stream import PART_SHORT, PART_SUMMARY, PART_TURN_PREFIX, summary_part
from tui.compaction.tool_trail import format_trail
from tui.session.entries import Message

T = TypeVar("T")

# (system_prompt, user_prompt, max_tokens) → summary text.
SummarizeFn = Callable[[str, str, int], Awaitable[str]]

BRANCH_SUMMARY_MAX_TOKENS = 2048
SHORT_SUMMARY_MAX_TOKENS = 512

_REASONING_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>\s*", re.DOTALL | re.IGNORECASE)


class SummaryText(str):
    """A summary that may come with a ready short summary (a remote endpoint can send both)."""

    short_summary: str | None = None

    def __new__(cls, text: str, short_summary: str | None = None) -> SummaryText:
        value = super().__new__(cls, text)
        value.short_summary = short_summary
        return value


@dataclass(frozen=True)
class SummaryBudgets:
    """``max_tokens`` of each call: history, turn prefix and short summary."""

    history: int
    turn_prefix: int
    short: int

    @classmethod
    def from_reserve(cls, reserve_tokens: int, max_output_tokens: int) -> SummaryBudgets:
        """pi's shares of the reserve (0.8, 0.5, min(512, 0.2)), none above the model's output limit."""
        cap = max(1, max_output_tokens)
        return cls(
            history=max(1, min(int(0.8 * reserve_tokens), cap)),
            turn_prefix=max(1, min(int(0.5 * reserve_tokens), cap)),
            short=max(1, min(SHORT_SUMMARY_MAX_TOKENS, int(0.2 * reserve_tokens), cap)),
        )


@dataclass(frozen=True)
class PlanSummary:
    """The text to store for a compaction, its short summary and its file lists."""

    summary: str
    short_summary: str | None
    read_files: list[str]
    modified_files: list[str]
    short_summary_error: str | None = None


def end_marker() -> str:
    return prompts.load("summary_end_marker")


def strip_end_marker(summary: str) -> str:
    """The summary without the end marker and anything after it (for ``<previous-summary>``)."""
    marker = end_marker()
    index = summary.find(marker)
    return summary[:index].rstrip() if index >= 0 else summary


def build_summary_prompt(
    conversation: str,
    base_prompt: str,
    *,
    previous_summary: str | None = None,
    additional_context: Sequence[str] = (),
    custom_instructions: str | None = None,
) -> str:
    """The user message of a summary call, in pi's order of blocks."""
    parts = [f"<conversation>\n{conversation}\n</conversation>"]
    if previous_summary:
        parts.append(f"<previous-summary>\n{strip_end_marker(previous_summary)}\n</previous-summary>")
    if additional_context:
        lines = "\n".join(f"- {line}" for line in additional_context)
        parts.append(f"<additional-context>\n{lines}\n</additional-context>")
    instructions = base_prompt
    if custom_instructions and custom_instructions.strip():
        instructions += "\n\n" + prompts.render("summary_focus", instructions=custom_instructions.strip())
    parts.append(instructions)
    return "\n\n".join(parts)


async def call_summarizer(
    summarize: SummarizeFn, prompt: str, max_tokens: int, failure: str, part: str = PART_SUMMARY
) -> str:
    """One call; any failure or an empty answer becomes :class:`SummaryError` (an abort propagates).

    ``part`` names what the call writes for a preview that streams it (:mod:`summary_stream`)."""
    try:
        with summary_part(part):
            answer = await summarize(prompts.load("summary_system"), prompt, max_tokens)
    except SummaryError as exc:
        raise SummaryError(f"{failure}: {exc}") from exc
    except Exception as exc:  # provider and transport errors of any kind
        raise SummaryError(f"{failure}: {exc or type(exc).__name__}") from exc
    short = getattr(answer, "short_summary", None)
    text = str(answer or "")
    # Hermes #32: reasoning leaked into the answer is not part of the notes.
    stripped = _REASONING_BLOCK.sub("", text).strip()
    text = stripped or text.strip()
    if not text:
        raise SummaryError(f"{failure}: the summarizer returned no text")
    return SummaryText(text, short)


async def generate_summary(
    messages: Sequence[Message],
    summarize: SummarizeFn,
    max_tokens: int,
    *,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
    additional_context: Sequence[str] = (),
    prompt_override: str | None = None,
) -> str:
    """The history summary: the initial prompt, or the update prompt when there are earlier notes."""
    base = prompt_override or prompts.load("summary_update" if previous_summary else "summary_initial")
    prompt = build_summary_prompt(
        summarizer_transcript(messages),
        base,
        previous_summary=previous_summary,
        additional_context=additional_context,
        custom_instructions=custom_instructions,
    )
    return await call_summarizer(summarize, prompt, max_tokens, "Summarization failed")


async def generate_turn_prefix_summary(
    messages: Sequence[Message], summarize: SummarizeFn, max_tokens: int
) -> str:
    """The opening of a split turn; it gets no earlier notes and no custom instructions (pi)."""
    prompt = build_summary_prompt(summarizer_transcript(messages), prompts.load("summary_turn_prefix"))
    return await call_summarizer(
        summarize, prompt, max_tokens, "Turn prefix summarization failed", PART_TURN_PREFIX
    )


# A summarize function with this attribute set answers with the short summary too (a remote endpoint):
# no separate call is made for it.
RETURNS_SHORT_SUMMARY = "returns_short_summary"


def answers_with_short_summary(summarize: SummarizeFn) -> bool:
    return bool(getattr(summarize, RETURNS_SHORT_SUMMARY, False))


async def generate_short_summary(
    messages: Sequence[Message],
    summarize: SummarizeFn,
    max_tokens: int,
    *,
    previous_summary: str | None = None,
    additional_context: Sequence[str] = (),
) -> str:
    """oh-my-pi's two-or-three-sentence description of the work, from the whole story the context will
    tell: the earlier notes, the messages being compacted and the kept ones. It needs none of the notes
    being written, so it runs beside the main summary (one call's wait, not two)."""
    prompt = build_summary_prompt(
        summarizer_transcript(messages),
        prompts.load("summary_short"),
        previous_summary=previous_summary,
        additional_context=additional_context,
    )
    return await call_summarizer(summarize, prompt, max_tokens, "Short summary failed", PART_SHORT)


async def with_short_summary(
    main: Awaitable[T], short: Callable[[], Awaitable[str]] | None
) -> tuple[T, str | None, str | None]:
    """Run ``main`` and the short summary at the same time: ``(main's result, short, short's error)``.

    A failed short summary is only reported; a failed or cancelled main cancels the short one.
    """
    if short is None:
        return await main, None, None

    async def guarded() -> tuple[str | None, str | None]:
        try:
            return await short(), None
        except SummaryError as exc:
            return None, str(exc)

    short_task = asyncio.ensure_future(guarded())
    try:
        result = await main
    except BaseException:
        short_task.cancel()
        await asyncio.gather(short_task, return_exceptions=True)
        raise
    text, error = await short_task
    return result, text, error


async def with_story_short_summary(
    main: Awaitable[T],
    story: Sequence[Message],
    summarize: SummarizeFn,
    budgets: SummaryBudgets,
    *,
    previous_summary: str | None,
    additional_context: Sequence[str],
    enabled: bool,
    carried: Callable[[T], object],
) -> tuple[T, str | None, str | None]:
    """``main`` with the short summary of ``story`` (both strategies): ``(main's result, short, error)``.

    The short summary runs beside ``main``; an endpoint that answers with it (``carried`` reads it off
    ``main``'s result) gets no call of its own, unless that answer lacked it this time.
    """

    def short_job() -> Awaitable[str]:
        return generate_short_summary(
            story,
            summarize,
            budgets.short,
            previous_summary=previous_summary,
            additional_context=additional_context,
        )

    parallel = enabled and not answers_with_short_summary(summarize)
    result, short, short_error = await with_short_summary(main, short_job if parallel else None)
    if short is None and short_error is None:
        sent = carried(result)
        short = str(sent) if sent else None
        if short is None and enabled and not parallel:
            # The endpoint that usually sends it along did not this time: ask for it now.
            try:
                short = await short_job()
            except SummaryError as exc:
                short_error = str(exc)
    return result, short, short_error


def merge_split_turn(history: str, prefix: str) -> str:
    return prompts.render("summary_split_turn", history=history, prefix=prefix)


def finish_summary(
    text: str, read_files: list[str], modified_files: list[str], compacted: Sequence[Message]
) -> str:
    """The stored text: the notes, the file tags, the tool-call trail, then the end marker."""
    body = strip_end_marker(text)
    return (
        body
        + format_file_operations(read_files, modified_files)
        + format_trail(compacted)
        + "\n\n"
        + end_marker()
    )


async def _history_text(
    plan: CompactionPlan,
    summarize: SummarizeFn,
    budgets: SummaryBudgets,
    custom_instructions: str | None,
    additional_context: Sequence[str],
    prompt_override: str | None,
) -> str:
    if plan.messages_to_summarize:
        return await generate_summary(
            plan.messages_to_summarize,
            summarize,
            budgets.history,
            previous_summary=plan.previous_summary,
            custom_instructions=custom_instructions,
            additional_context=additional_context,
            prompt_override=prompt_override,
        )
    # Nothing new before the kept region: keep the earlier notes as they are (omp; deviation 3).
    if plan.previous_summary:
        return strip_end_marker(plan.previous_summary)
    return prompts.load("summary_no_history")


async def summarize_plan(
    plan: CompactionPlan,
    summarize: SummarizeFn,
    budgets: SummaryBudgets,
    *,
    custom_instructions: str | None = None,
    additional_context: Sequence[str] = (),
    prompt_override: str | None = None,
    short_summary: bool = True,
) -> PlanSummary:
    """All the summaries a plan needs, assembled into the text to store; every call runs at once."""
    history_job = _history_text(
        plan, summarize, budgets, custom_instructions, additional_context, prompt_override
    )
    story = [*plan.messages_to_summarize, *plan.turn_prefix_messages, *plan.recent_messages]

    async def main_text() -> tuple[str, str]:
        if not (plan.is_split_turn and plan.turn_prefix_messages):
            history = await history_job
            return history, history
        prefix_job = generate_turn_prefix_summary(plan.turn_prefix_messages, summarize, budgets.turn_prefix)
        # A task group cancels the other call as soon as one fails, so nothing runs on unobserved.
        try:
            async with asyncio.TaskGroup() as group:
                history_task = group.create_task(history_job)
                prefix_task = group.create_task(prefix_job)
        except* SummaryError as failures:
            raise failures.exceptions[0] from None
        history = history_task.result()
        return history, merge_split_turn(history, prefix_task.result())

    (_, text), short, short_error = await with_story_short_summary(
        main_text(),
        story,
        summarize,
        budgets,
        previous_summary=plan.previous_summary,
        additional_context=additional_context,
        enabled=short_summary,
        carried=lambda result: getattr(result[0], "short_summary", None),
    )
    read_files, modified_files = compute_file_lists(plan.file_ops)
    compacted = [*plan.messages_to_summarize, *plan.turn_prefix_messages]
    summary = finish_summary(text, read_files, modified_files, compacted)
    return PlanSummary(summary, short, read_files, modified_files, short_error)
