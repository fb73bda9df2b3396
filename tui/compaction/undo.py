"""Undo a compaction by moving the leaf back to where it was before it: the compaction's parent.

Nothing is deleted. The compaction stays in the tree on its own branch, with whatever was added after
it; the pre-compaction context is live again because the leaf now sits on the entry the compaction was
appended to. Going back is an ordinary navigation to the compaction (or to a later entry of its
branch). The move is persisted like any navigation (the leaf marker, DESIGN.md deviation 1).
:func:`plan_uncompact` says what an undo would do, so that the UI can ask first when messages were
added after the compaction; :func:`uncompact` carries it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui.compaction.inspect import NotACompaction, compactions_on

if TYPE_CHECKING:
    from tui.session.store import SessionStore


@dataclass(frozen=True)
class UncompactPlan:
    """Undoing ``compaction_id`` moves the leaf to ``target_id``; ``later_messages`` stay on its branch."""

    compaction_id: str
    target_id: str | None
    later_messages: int
    on_active_path: bool

    @property
    def needs_confirmation(self) -> bool:
        return self.later_messages > 0


def plan_uncompact(store: SessionStore, compaction_id: str | None = None) -> UncompactPlan:
    """What undoing ``compaction_id`` (default: the latest compaction on the active path) would do."""
    path = store.get_branch()
    if compaction_id is None:
        ids = compactions_on(path)
        if not ids:
            raise NotACompaction("there is no compaction on the active path to undo")
        compaction_id = ids[-1]
    entry = store.tree.by_id.get(compaction_id)
    if entry is None or entry.get("type") != "compaction":
        raise NotACompaction(f"{compaction_id} is not a compaction")
    index = next((i for i, e in enumerate(path) if e.get("id") == compaction_id), None)
    later = 0
    if index is not None:
        later = sum(1 for e in path[index + 1 :] if e.get("type") in ("message", "custom_message"))
    # Through leaf markers: pi may have appended the compaction after one of ours.
    return UncompactPlan(compaction_id, store.tree.parent_of(compaction_id), later, index is not None)


def uncompact(store: SessionStore, plan: UncompactPlan) -> None:
    """Move the leaf to the compaction's parent (a root compaction: an empty leaf)."""
    if plan.target_id is None:
        store.reset_leaf()
    else:
        store.branch(plan.target_id)
