"""The summary of a head-tail compaction: Hermes's structured sections, merged with the previous notes.

The middle is summarised with ``prompts/head_tail_summary.md`` (first compaction) or
``prompts/head_tail_update.md`` (the previous notes go in ``<previous-summary>`` and are merged), with
the size target of Hermes §2.5 as guidance. The stored text is then ``fold_protected``: the protected
messages (the head, and the latest request when it lies before the tail) reproduced in front
of the notes, because pi's format has room for one kept range only (see ``head_tail``); they are
reproduced in full by :mod:`head_copy` (tool calls with their arguments, outputs up to 50,000
characters, every cut and image said so), not cut like the summarizer's transcript. The optional
short summary is written beside the notes, as on the keep-recent path: if it fails the compaction goes on
without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import prompts
from tui.compaction.file_ops import compute_file_lists
from tui.compaction.head_copy import BLOCK_MAX_CHARS, PART_MAX_CHARS, head_copy
from tui.compaction.head_tail import HeadTailPlan
from tui.compaction.summarizer import (
    PlanSummary,
    SummarizeFn,
    SummaryBudgets,
    finish_summary,
    generate_summary,
    with_story_short_summary,
)


def base_prompt(plan: HeadTailPlan) -> str:
    """The instructions: create the sections, or merge them with the previous notes."""
    name = "head_tail_update" if plan.previous_summary else "head_tail_summary"
    return prompts.render(name, target_tokens=str(plan.summary_target_tokens))


def protected_block(plan: HeadTailPlan) -> str:
    """The text put in front of the notes; empty when nothing is protected."""
    if not plan.protected_messages:
        return ""
    return (
        prompts.render(
            "head_tail_protected",
            transcript=head_copy(plan.protected_messages),
            part_cap=f"{PART_MAX_CHARS:,}",
            block_cap=f"{BLOCK_MAX_CHARS:,}",
        )
        + "\n\n"
    )


def fold_protected(plan: HeadTailPlan, written: PlanSummary) -> tuple[PlanSummary, int]:
    """The summary with the protected block in front, and the block's length (``headChars``)."""
    block = protected_block(plan)
    return replace(written, summary=block + written.summary), len(block)


async def summarize_head_tail(
    plan: HeadTailPlan,
    summarize: SummarizeFn,
    budgets: SummaryBudgets,
    *,
    custom_instructions: str | None = None,
    additional_context: Sequence[str] = (),
    prompt_override: str | None = None,
    short_summary: bool = True,
) -> PlanSummary:
    """The notes for the middle (not yet folded), with file tags, tool trail and end marker; the short
    summary is written at the same time."""
    notes_job = generate_summary(
        plan.messages_to_summarize,
        summarize,
        budgets.history,
        previous_summary=plan.previous_summary,
        custom_instructions=custom_instructions,
        additional_context=additional_context,
        prompt_override=prompt_override or base_prompt(plan),
    )
    story = [*plan.head_messages, *plan.pinned_messages, *plan.messages_to_summarize, *plan.recent_messages]
    notes, short, short_error = await with_story_short_summary(
        notes_job,
        story,
        summarize,
        budgets,
        previous_summary=plan.previous_summary,
        additional_context=additional_context,
        enabled=short_summary,
        carried=lambda result: getattr(result, "short_summary", None),
    )
    read_files, modified_files = compute_file_lists(plan.file_ops)
    summary = finish_summary(notes, read_files, modified_files, plan.messages_to_summarize)
    return PlanSummary(summary, short, read_files, modified_files, short_error)
