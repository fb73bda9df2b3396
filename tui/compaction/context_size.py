"""The context size of a root→leaf path: the one figure the CLI, the agent's status and the timeline show.

It is pi's ``estimateContextTokens`` on the context built from the path, with pi's stale-usage rule:
a reply kept from before the latest compaction reported the size of the context *before* that
compaction, so its usage is ignored. Until a reply after the compaction reports usage, the size is
the chars/4 estimate of what the model would now be sent (the summary, the kept messages and what
followed). Which replies are stale is decided by position on the path (after the compaction entry
or not), like pi's ``getContextUsage``, so a clock skew between entries cannot matter. A prune
appended after that reply (omp prunes before every compaction check) took tokens out of outputs the
reply's usage still counts; they are subtracted, as omp tests ``usage − tokensSaved``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from tui.compaction.boundary import latest_compaction_index
from tui.compaction.tokens import ContextEstimate, estimate_context_tokens, estimate_tokens
from tui.session.context import SessionContext, context_from_path
from tui.session.entries import PRUNE_CUSTOM_TYPE, Entry, is_custom


@dataclass(frozen=True)
class PathContext:
    """The context built from a path and its size (``estimate.last_usage_index`` indexes its messages)."""

    context: SessionContext
    estimate: ContextEstimate


def path_context(path: Sequence[Entry]) -> PathContext:
    """Build the context of ``path`` and size it, ignoring usage from before the latest compaction."""
    context = context_from_path(path)
    fresh_from = _fresh_from(path, context)
    estimate = estimate_context_tokens(context.messages, usage_from=fresh_from)
    if estimate.last_usage_index is not None:
        usage_id = context.entry_ids[estimate.last_usage_index]
        pruned = pruned_after(path, context, usage_id)
        if pruned:
            estimate = replace(estimate, tokens=estimate.tokens - pruned, pruned_tokens=pruned)
    return PathContext(context, estimate)


def pruned_after(
    path: Sequence[Entry],
    context: SessionContext,
    entry_id: str | None,
    prune_indices: Sequence[int] | None = None,
) -> int:
    """Tokens that prune entries after ``entry_id`` on ``path`` saved on tool results before it.

    A reply's usage measured those outputs whole; ``context`` (built from ``path``) holds them pruned.
    ``prune_indices``: where the path's prune entries stand, when the caller knows (the store keeps
    them): with none after ``entry_id`` the answer is 0 without a look at the rest of the path.
    """
    if prune_indices is not None:
        # Back from the leaf: the usage is the last reply's, mostly, and an id stands once on a path.
        at_index = next((i for i in range(len(path) - 1, -1, -1) if path[i].get("id") == entry_id), None)
        if at_index is None or all(index < at_index for index in prune_indices):
            return 0
    position = {entry.get("id"): i for i, entry in enumerate(path)}
    at = position.get(entry_id)
    if at is None:
        return 0
    in_context = {eid: i for i, eid in enumerate(context.entry_ids) if eid is not None}
    pruned_before: set[str] = set()
    saved = 0
    for index, entry in enumerate(path):
        if not is_custom(entry, PRUNE_CUSTOM_TYPE):
            continue
        for pruned_id, tokens in ((entry.get("data") or {}).get("entries") or {}).items():
            if index < at:
                pruned_before.add(pruned_id)  # the reply was sent the pruned output already
            elif (
                pruned_id not in pruned_before
                and position.get(pruned_id, at) < at
                and pruned_id in in_context
            ):
                pruned_before.add(pruned_id)
                saved += max(0, int(tokens) - estimate_tokens(context.messages[in_context[pruned_id]]))
    return saved


def context_size(path: Sequence[Entry]) -> ContextEstimate:
    """The context size of ``path`` (see :func:`path_context`)."""
    return path_context(path).estimate


def _fresh_from(path: Sequence[Entry], context: SessionContext) -> int:
    """Index of the first context message whose entry comes after the latest compaction on the path."""
    latest = latest_compaction_index(path)
    if latest < 0:
        return 0
    after = {entry.get("id") for entry in path[latest + 1 :]}
    # The summary comes first, then the kept messages, then those after the compaction.
    return next(
        (i for i, entry_id in enumerate(context.entry_ids) if i and entry_id in after),
        len(context.messages),
    )
