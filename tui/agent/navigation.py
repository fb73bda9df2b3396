"""Move to another point of the session tree, optionally summarising the branch left behind.

This is pi's ``navigateTree`` (reference pi-compaction §7 and §10 "After Enter"): selecting a user
message (or a custom message) puts the leaf on its parent and hands its text back for the editor;
any other entry becomes the leaf. A branch summary is attached at the new leaf and becomes the leaf;
a label goes on the summary, or on the target when there is none. The ``session_before_tree`` hooks
may cancel, supply the summary or override the instructions and the label; ``session_tree`` hears the
outcome. An abort while summarising (the ``abort`` event, or the summary call being cancelled) returns
``cancelled`` and ``aborted`` with the session unchanged; cancelling the caller's task propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui.compaction.branch_summary import (
    BranchSummary,
    collect_entries_for_branch_summary,
    generate_branch_summary,
    prepare_branch_entries,
)
from tui.compaction.summarizer import SummarizeFn
from tui.hooks import SESSION_BEFORE_TREE, SESSION_TREE
from tui.session.content import content_text
from tui.session.entries import Entry

if TYPE_CHECKING:
    from tui.config.model import Settings
    from tui.hooks import HookRunner
    from tui.session.store import SessionStore


@dataclass(frozen=True)
class NavigateResult:
    """What the UI needs after a navigation: the editor text, the new leaf and the summary entry."""

    editor_text: str | None = None
    new_leaf_id: str | None = None
    summary_entry: Entry | None = None
    cancelled: bool = False
    aborted: bool = False


def landing(store: SessionStore, target: Entry) -> tuple[str | None, str | None]:
    """``(new leaf id, editor text)`` for a target: a user or custom message is re-edited from its parent."""
    message = target.get("message") or {}
    if target.get("type") == "message" and message.get("role") == "user":
        return store.tree.parent_of(target["id"]), content_text(message.get("content"))
    if target.get("type") == "custom_message":
        return store.tree.parent_of(target["id"]), content_text(target.get("content"))
    return target["id"], None


async def _run_abortable(
    job: Coroutine[Any, Any, BranchSummary | None], abort: asyncio.Event | None
) -> BranchSummary | None:
    """Await ``job``; a set ``abort`` event cancels it and raises CancelledError here."""
    task = asyncio.ensure_future(job)
    if abort is None:
        return await task
    waiter = asyncio.ensure_future(abort.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        waiter.cancel()
    if abort.is_set() and (task.cancelled() or not task.done()):
        raise asyncio.CancelledError
    return task.result()


async def navigate_tree(
    store: SessionStore,
    target_id: str,
    *,
    summarize: bool,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    label: str | None = None,
    summarize_fn: SummarizeFn | None,
    settings: Settings,
    context_window: int,
    hooks: HookRunner | None = None,
    abort: asyncio.Event | None = None,
) -> NavigateResult:
    """Navigate to ``target_id``; ``summarize_fn`` None writes the deterministic summary (offline)."""
    old_leaf = store.leaf_id
    if target_id == old_leaf:
        return NavigateResult(new_leaf_id=old_leaf)
    target = store.get(target_id)
    branch = collect_entries_for_branch_summary(store.tree, old_leaf, target_id)

    hook_summary = None
    if hooks is not None and hooks.has_handlers(SESSION_BEFORE_TREE):
        preparation = {
            "targetId": target_id,
            "oldLeafId": old_leaf,
            "commonAncestorId": branch.common_ancestor_id,
            "entriesToSummarize": branch.entries,
            "userWantsSummary": summarize,
            "customInstructions": custom_instructions,
            "replaceInstructions": replace_instructions,
            "label": label,
        }
        before = await hooks.emit(SESSION_BEFORE_TREE, {"preparation": preparation}) or {}
        if before.get("cancel"):
            return NavigateResult(cancelled=True)
        supplied = before.get("summary")
        if summarize and supplied and str(supplied.get("summary") or "").strip():
            hook_summary = supplied  # an empty one counts as none, as pi's falsy check does
        if before.get("customInstructions") is not None:
            custom_instructions = before["customInstructions"]
        if before.get("replaceInstructions") is not None:
            replace_instructions = bool(before["replaceInstructions"])
        if before.get("label") is not None:
            label = before["label"]

    new_leaf, editor_text = landing(store, target)
    summary_text = None
    details: dict[str, Any] | None = None
    # Nothing abandoned (the target lies below the old leaf) or nothing in it to summarise: only the
    # leaf moves, whatever the user chose (pi; delta B.1).
    if hook_summary is not None:
        summary_text = str(hook_summary["summary"])
        details = hook_summary.get("details")
    elif summarize and branch.entries:
        budget = max(0, context_window - settings.branch_summary.reserve_tokens)
        prepared = prepare_branch_entries(branch.entries, budget)
        job = generate_branch_summary(prepared, summarize_fn, custom_instructions, replace_instructions)
        try:
            written = await _run_abortable(job, abort)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the caller is being cancelled: not ours to swallow
            return NavigateResult(cancelled=True, aborted=True)
        if written is not None:
            summary_text = written.summary
            details = {"readFiles": written.read_files, "modifiedFiles": written.modified_files}

    summary_entry = None
    if summary_text is not None:
        summary_entry = store.branch_with_summary(
            new_leaf, summary_text, details, from_hook=hook_summary is not None
        )
        if label:
            store.append_label(summary_entry["id"], label)
    else:
        if new_leaf is None:
            store.reset_leaf()
        else:
            store.branch(new_leaf)
        if label:
            store.append_label(target_id, label)

    if hooks is not None:
        payload: dict[str, Any] = {
            "newLeafId": store.leaf_id,
            "oldLeafId": old_leaf,
            "summaryEntry": summary_entry,
        }
        if summary_entry is not None:
            payload["fromExtension"] = hook_summary is not None
        await hooks.emit(SESSION_TREE, payload)
    return NavigateResult(editor_text, store.leaf_id, summary_entry)
