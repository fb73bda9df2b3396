"""Summaries of the branch the user leaves when navigating the session tree (reference pi-compaction §7).

The entries from the old leaf up to (not including) the common ancestor with the target are collected,
then filled into the token budget newest first: tool results are skipped (their calls carry the
context), and an earlier summary that would break the budget still goes in while the running total is
under 90 %. The file lists are seeded from earlier branch summaries that no hook wrote. The stored text
is a short preamble, the notes and the file tags; with no summary model (offline) the notes are the
deterministic fallback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import prompts
from tui.compaction.fallback import build_fallback_summary
from tui.compaction.file_ops import (
    FileOps,
    compute_file_lists,
    extract_file_ops,
    format_file_operations,
    seed_from_details,
)
from tui.compaction.summarizer import (
    BRANCH_SUMMARY_MAX_TOKENS,
    SummarizeFn,
    build_summary_prompt,
    call_summarizer,
)
from tui.compaction.summary_input import summarizer_transcript
from tui.compaction.summary_stream import PART_BRANCH
from tui.compaction.tokens import estimate_tokens
from tui.session.context import entry_to_message
from tui.session.entries import LEAF_CUSTOM_TYPE, Entry, Message, is_custom
from tui.session.tree import TreeIndex

SUMMARY_ENTRY_TYPES = frozenset({"compaction", "branch_summary"})
NO_SUMMARIZER = "no summary model is configured"


@dataclass(frozen=True)
class BranchEntries:
    """The abandoned entries in chronological order and the common ancestor they hang from."""

    entries: list[Entry]
    common_ancestor_id: str | None


@dataclass(frozen=True)
class BranchPreparation:
    """The messages the summary reads, the files they touched and their estimated tokens."""

    messages: list[Message]
    file_ops: FileOps = field(default_factory=FileOps)
    total_tokens: int = 0


@dataclass(frozen=True)
class BranchSummary:
    """The text to store and the file lists for the entry's ``details``."""

    summary: str
    read_files: list[str]
    modified_files: list[str]


def collect_entries_for_branch_summary(
    tree: TreeIndex, old_leaf_id: str | None, target_id: str | None
) -> BranchEntries:
    """From the old leaf up to the common ancestor (excluded); nothing when there is no old leaf."""
    if old_leaf_id is None:
        return BranchEntries([], None)
    ancestor = tree.common_ancestor(old_leaf_id, target_id)
    collected: list[Entry] = []
    seen: set[str] = set()
    current: str | None = old_leaf_id
    while current is not None and current != ancestor and current not in seen:
        entry = tree.by_id.get(current)
        if entry is None:
            break
        seen.add(current)
        # kompakt's leaf markers are bookkeeping, not conversation.
        if not is_custom(entry, LEAF_CUSTOM_TYPE):
            collected.append(entry)
        current = entry.get("parentId")
    collected.reverse()
    return BranchEntries(collected, ancestor)


def _branch_message(entry: Entry) -> Message | None:
    message = entry_to_message(entry)
    if message is None or message.get("role") == "toolResult":
        return None
    return message


def prepare_branch_entries(entries: Sequence[Entry], token_budget: int = 0) -> BranchPreparation:
    """Fill ``token_budget`` (0: no limit) with the newest messages first."""
    ops = FileOps()
    for entry in entries:
        if entry.get("type") == "branch_summary":
            seed_from_details(entry, ops)
    messages: list[Message] = []
    total = 0
    for entry in reversed(entries):
        message = _branch_message(entry)
        if message is None:
            continue
        # Read before the budget check: the message that breaks the budget still counts its files.
        extract_file_ops(message, ops)
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            if entry.get("type") in SUMMARY_ENTRY_TYPES and total < 0.9 * token_budget:
                messages.append(message)
                total += tokens
            break
        messages.append(message)
        total += tokens
    messages.reverse()
    return BranchPreparation(messages, ops, total)


def _instructions(custom_instructions: str | None, replace_instructions: bool) -> tuple[str, str | None]:
    """The base prompt and the focus to append (pi's rules for custom and replacing instructions)."""
    custom = custom_instructions.strip() if custom_instructions else None
    if custom and replace_instructions:
        return custom, None
    return prompts.load("branch_summary"), custom


async def generate_branch_summary(
    preparation: BranchPreparation,
    summarize: SummarizeFn | None,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
) -> BranchSummary | None:
    """The summary of a prepared branch; raises :class:`SummaryError`, an abort propagates.

    None when the branch holds no message: an empty or "No content to summarize" summary is never
    written, since it would reach the model on every later turn (delta B.1).
    """
    if not preparation.messages:
        return None
    read_files, modified_files = compute_file_lists(preparation.file_ops)
    if summarize is None:
        notes = build_fallback_summary(
            preparation.messages, read_files=read_files, modified_files=modified_files, reason=NO_SUMMARIZER
        )
    else:
        base, focus = _instructions(custom_instructions, replace_instructions)
        prompt = build_summary_prompt(
            summarizer_transcript(preparation.messages), base, custom_instructions=focus
        )
        notes = await call_summarizer(
            summarize, prompt, BRANCH_SUMMARY_MAX_TOKENS, "Branch summary failed", PART_BRANCH
        )
    text = prompts.load("branch_summary_preamble") + "\n\n" + notes
    return BranchSummary(
        text + format_file_operations(read_files, modified_files), read_files, modified_files
    )
