"""The context size of a root→leaf path: the one figure the CLI, the agent's status and the timeline show.

It is pi's ``estimateContextTokens`` on the context built from the path, with pi's stale-usage rule:
a reply kept from before the latest compaction reported the size of the context *before* that
compaction, so its usage is ignored. Until a reply after the compaction reports usage, the size is
the chars/4 estimate of what the model would now be sent (the summary, the kept messages and what
followed). Which replies are stale is decided by position on the path (after the compaction entry
or not), like pi's ``getContextUsage``, so a clock skew between entries cannot matter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tui.compaction.boundary import latest_compaction_index
from tui.compaction.tokens import ContextEstimate, estimate_context_tokens
from tui.session.context import SessionContext, context_from_path
from tui.session.entries import Entry


@dataclass(frozen=True)
class PathContext:
    """The context built from a path and its size (``estimate.last_usage_index`` indexes its messages)."""

    context: SessionContext
    estimate: ContextEstimate


def path_context(path: Sequence[Entry]) -> PathContext:
    """Build the context of ``path`` and size it, ignoring usage from before the latest compaction."""
    context = context_from_path(path)
    fresh_from = _fresh_from(path, context)
    return PathContext(context, estimate_context_tokens(context.messages, usage_from=fresh_from))


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
