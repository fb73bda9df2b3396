"""What the main screen does for a past compaction: undo it (``/uncompact``, Shift+U on a tree row).

The core work is :mod:`tui.compaction.undo`; this module adds the screen's part: the refusals (read-only
session, agent busy, not a compaction), the question when messages were added after the compaction
(they stay on its branch), then the chat, tree and timeline redraw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.screens.main import MainScreen


async def undo_compaction(screen: MainScreen, compaction_id: str | None) -> bool:
    """Undo ``compaction_id`` (None: the latest on the active path); True when the leaf moved.

    Runs in a worker of the screen (it may wait for the confirmation dialog).
    """
    from tui.compaction.inspect import NotACompaction
    from tui.compaction.undo import plan_uncompact, uncompact
    from tui.screens.dialogs import ConfirmDialog
    from tui.screens.main import chat_entries

    agent = screen.agent
    if agent is None:
        return False
    if screen.kapp.session.read_only:
        screen.notify("This session is open read-only: the leaf cannot be moved.", severity="warning")
        return False
    if agent.is_busy:
        screen.notify(
            "Wait for the current reply or compaction to finish (or press Esc).", severity="warning"
        )
        return False
    store = agent.store
    try:
        plan = plan_uncompact(store, compaction_id)
    except NotACompaction as exc:
        screen.notify(f"Cannot undo: {exc}.", severity="warning")
        return False
    if plan.needs_confirmation:
        question = (
            f"{plan.later_messages} message(s) were added after this compaction. Undo it anyway? "
            "They stay in the tree on the compaction's branch."
        )
        if not await screen.app.push_screen_wait(ConfirmDialog(question, yes="Undo", no="Keep")):
            return False
    uncompact(store, plan)
    await screen.chat.load_messages(chat_entries(store))
    screen.session_changed()
    from tui.screens.tree_screen import TreeScreen

    if isinstance(screen.app.screen, TreeScreen):  # Shift+U in the full-screen tree
        screen.app.screen.pane.refresh_tree()
    screen.notify(
        f"Compaction {plan.compaction_id} undone: the context before it is live again. "
        "Nothing was deleted; go to the compaction in the tree to redo it.",
        title="Uncompacted",
    )
    return True
