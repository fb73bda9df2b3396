"""Plan which old tool outputs to prune, as oh-my-pi does, without rewriting anything (§5).

Walking the path's tool results from newest to oldest, the newest ``protect_tokens`` worth stay
(the result that crosses the line too), and so do the outputs of protected tools such as ``read``.
Older outputs become candidates; they are pruned only when that saves at least ``minimum_savings``.
Unlike omp, applying the plan appends a ``custom`` entry (DESIGN.md deviation 6) whose ``data`` the
context builder reads, so the original outputs stay in the file. Only tool results that are still in
the model's context are considered: pruning one that a compaction already dropped would save nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tui.compaction.tokens import estimate_tokens
from tui.session.context import pruned_outputs, pruned_tool_result
from tui.session.entries import Entry, now_ms

PROTECT_TOKENS = 40_000
MINIMUM_SAVINGS = 20_000
PROTECTED_TOOLS = frozenset({"read", "skill"})


@dataclass(frozen=True)
class PrunePlan:
    """Tool-result entry ids to prune, with their original token estimates, and the tokens saved."""

    entries: dict[str, int] = field(default_factory=dict)
    tokens_saved: int = 0

    def __bool__(self) -> bool:
        return bool(self.entries)

    def to_json(self) -> dict[str, object]:
        return {"entries": dict(self.entries), "tokensSaved": self.tokens_saved}


def context_entries(path: Sequence[Entry]) -> list[Entry]:
    """The path entries whose messages are in the context: from the latest compaction's kept entry on."""
    for index in range(len(path) - 1, -1, -1):
        if path[index].get("type") == "compaction":
            first_kept = path[index].get("firstKeptEntryId")
            # Back from the compaction: the kept entry is near it, and an id stands once on a path.
            kept = next((i for i in range(index - 1, -1, -1) if path[i].get("id") == first_kept), index)
            return [*path[kept:index], *path[index + 1 :]]
    return list(path)


def plan_pruning(
    path: Sequence[Entry],
    protect_tokens: int = PROTECT_TOKENS,
    minimum_savings: int = MINIMUM_SAVINGS,
    protected_tools: frozenset[str] = PROTECTED_TOOLS,
    *,
    already: Mapping[str, int] | None = None,
) -> PrunePlan:
    """The pruning omp would do on this root→leaf path; an empty plan when it is not worth it.
    ``already``: the path's :func:`pruned_outputs` when the caller has them (the store keeps them)."""
    if already is None:
        already = pruned_outputs(path)
    accumulated = 0
    candidates: dict[str, int] = {}
    savings = 0
    for entry in reversed(context_entries(path)):
        message = entry.get("message") or {}
        if entry.get("type") != "message" or message.get("role") != "toolResult":
            continue
        entry_id = str(entry.get("id"))
        if entry_id in already:
            # Counted at its pruned size, as omp counts an output it has already replaced.
            accumulated += estimate_tokens(pruned_tool_result(message, already[entry_id]))
            continue
        tokens = estimate_tokens(message)
        if accumulated < protect_tokens or message.get("toolName") in protected_tools:
            accumulated += tokens
            continue
        accumulated += tokens
        candidates[entry_id] = tokens
        savings += max(0, tokens - estimate_tokens(pruned_tool_result(message, tokens)))
    if not candidates or savings < minimum_savings:
        return PrunePlan()
    # Oldest first, the order of the path.
    return PrunePlan(dict(reversed(candidates.items())), savings)


def prune_entry_data(plan: PrunePlan, pruned_at_ms: int | None = None) -> dict[str, object]:
    """The ``data`` of the ``custom`` entry (customType ``PRUNE_CUSTOM_TYPE``) that applies ``plan``."""
    return {
        "entries": dict(plan.entries),
        "tokensSaved": plan.tokens_saved,
        "prunedAt": now_ms() if pruned_at_ms is None else pruned_at_ms,
    }
