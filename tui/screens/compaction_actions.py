"""The main screen's compaction actions beyond "compact now": undo, and settings for this session only.

Undo (``/uncompact``, Shift+U on a tree row): the core work is :mod:`tui.compaction.undo`; this module
adds the screen's part: the refusals (read-only session, agent busy, not a compaction), the question
when messages were added after the compaction (they stay on its branch), then the chat, tree and
timeline redraw. Session settings (Ctrl+S in the timeline's what-if, ``/session-settings [clear]``):
:mod:`tui.agent.session_settings` stores them; the timeline and the threshold follow at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.screens.main import MainScreen


async def undo_compaction(screen: MainScreen, compaction_id: str | None) -> bool:
    """Undo ``compaction_id`` (None: the latest on the active path); True when the leaf moved.

    Runs in a worker of the screen (it may wait for the confirmation dialog).
    """
    from tui.compaction.inspect import NotACompaction
    from tui.compaction.undo import plan_uncompact, uncompact
    from tui.screens.dialogs import ConfirmDialog

    agent = screen.agent
    if agent is None:
        return False
    if screen.app.session.read_only:
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
    uncompact(store, plan)  # the store's announcement redraws the chat, the tree and the timeline
    from tui.screens.tree_screen import TreeScreen

    if isinstance(screen.app.screen, TreeScreen):  # Shift+U in the full-screen tree
        screen.app.screen.pane.refresh_tree()
    screen.notify(
        f"Compaction {plan.compaction_id} undone: the context before it is live again. "
        "Nothing was deleted; go to the compaction in the tree to redo it.",
        title="Uncompacted",
    )
    return True


def _describe(values: Mapping[str, Any]) -> str:
    return ", ".join(
        f"{key} {value:,}" if isinstance(value, int) else f"{key} {value}" for key, value in values.items()
    )


def apply_to_session(screen: MainScreen, values: Mapping[str, Any]) -> bool:
    """Store the what-if ``values`` (camelCase keys) as this session's own compaction settings."""
    agent = screen.agent
    if agent is None:
        return False
    if screen.app.session.read_only:
        screen.notify("This session is open read-only: its settings cannot be stored.", severity="warning")
        return False
    try:
        overrides = agent.set_session_overrides(values)
    except ValueError as exc:
        screen.notify(f"Not applied: {exc}.", severity="warning")
        return False
    screen.timeline.clear_what_if()
    if not agent.session_overrides_changed:
        screen.notify(f"This session sets {_describe(overrides.values)} already: nothing written.")
        return True
    screen.session_changed()
    screen.notify(
        f"For this session only: {_describe(overrides.values)}. The settings files are unchanged; "
        "/session-settings clear removes them.",
        title="Session settings",
    )
    return True


def session_settings_command(screen: MainScreen, argument: str) -> None:
    """``/session-settings``: say which values this session sets; ``clear`` removes them."""
    agent = screen.agent
    if agent is None:
        return
    word = argument.strip().lower()
    if word not in ("", "clear"):
        screen.notify("Usage: /session-settings [clear]", severity="warning")
        return
    current = agent.session_overrides
    if word == "clear":
        if not current:
            screen.notify("This session has no settings of its own.")
            return
        if screen.app.session.read_only:
            screen.notify(
                "This session is open read-only: its settings cannot be cleared.", severity="warning"
            )
            return
        agent.set_session_overrides(None)
        screen.session_changed()
        screen.notify(
            "Session settings cleared: the settings files' values apply again.", title="Session settings"
        )
        return
    if current:
        screen.notify(f"This session sets {_describe(current.values)}.", title="Session settings")
    else:
        screen.notify("This session has no settings of its own; Ctrl+S in the timeline's what-if stores some.")


async def inspect_compaction_flow(screen: MainScreen, compaction_id: str | None) -> None:
    """Open the inspector on ``compaction_id`` (None: the latest on the active path); ``u`` there undoes it."""
    from tui.compaction.inspect import NotACompaction, compactions_on, inspect_compaction
    from tui.screens.inspector import CompactionInspector

    agent = screen.agent
    if agent is None:
        return
    store = agent.store
    path = store.get_branch()
    if compaction_id is None:
        ids = compactions_on(path)
        if not ids:
            screen.notify("There is no compaction on the active path to inspect.", severity="warning")
            return
        compaction_id = ids[-1]
    elif compaction_id not in {e.get("id") for e in path}:
        path = store.get_branch(compaction_id) if compaction_id in store.tree else path
    try:
        inspection = inspect_compaction(path, compaction_id)
    except NotACompaction as exc:
        screen.notify(f"Cannot inspect: {exc}.", severity="warning")
        return
    choice = await screen.app.push_screen_wait(CompactionInspector(inspection))
    if choice == "undo":
        await undo_compaction(screen, compaction_id)
    elif choice == "navigate":
        screen.navigate_to(compaction_id)  # an ordinary move in the tree: this is how an undo is redone


async def preview_compaction_flow(
    screen: MainScreen,
    instructions: str | None,
    keep_recent_tokens: int | None = None,
    reserve_tokens: int | None = None,
    strategy: str | None = None,
) -> None:
    """Generate the compaction these values would write, show it in the inspector, write it on Enter.

    Nothing is written until Enter, and then exactly the summary shown (no second model call).
    """
    from tui.compaction.engine import CompactionSkip, StaleDraft
    from tui.compaction.inspect import inspect_draft
    from tui.screens.inspector import CompactionInspector

    agent = screen.agent
    if agent is None:
        return
    if screen.app.session.read_only:
        screen.notify("This session is open read-only: nothing could be written.", severity="warning")
        return
    if agent.is_busy:
        screen.notify(
            "Wait for the current reply or compaction to finish (or press Esc).", severity="warning"
        )
        return
    # The inspector opens at once and the summary streams into it; Esc there cancels the calls.
    view = CompactionInspector(None, preview=True)
    choice: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
    # Awaited: the inspector is mounted before any text (or the finished draft) is drawn into it.
    await screen.app.push_screen(view, lambda result: None if choice.done() else choice.set_result(result))
    drafting = asyncio.ensure_future(
        agent.draft_compaction(
            instructions,
            keep_recent_tokens=keep_recent_tokens,
            reserve_tokens=reserve_tokens,
            strategy=strategy,
            on_text=view.stream,
        )
    )
    screen.status.message = "previewing a compaction (nothing is written)… esc to cancel"
    try:
        await asyncio.wait({drafting, choice}, return_when=asyncio.FIRST_COMPLETED)
        if not drafting.done():  # closed while the summary was being written
            agent.abort()
            await asyncio.gather(drafting, return_exceptions=True)
            screen.notify("Preview cancelled; nothing was written.", severity="warning")
            return
    finally:
        screen.status.message = ""
        if not drafting.done():  # this flow was cancelled itself: the calls must not run on unseen
            agent.abort()

    def close() -> None:
        if not choice.done() and view.is_attached and screen.app.screen is view:
            view.dismiss(None)

    try:
        draft = drafting.result()
    except Exception as exc:  # the summarizer failed in "abort" mode: nothing was written either
        close()
        screen.notify(f"The preview failed: {exc}", severity="error")
        return
    if draft is None:
        close()
        screen.notify("Preview cancelled; nothing was written.", severity="warning")
        return
    if isinstance(draft, CompactionSkip):
        close()
        screen.notify(draft.message)
        return
    if not choice.done():
        await view.show(inspect_draft(agent.store.get_branch(), draft))
    if await choice != "commit":
        screen.notify("Preview discarded; nothing was written.")
        return
    try:
        # Its CompactionEnd event reloads the chat and says "Compacted", as for any compaction.
        await agent.commit_draft(draft)
    except StaleDraft as exc:
        screen.notify(f"Not written: {exc}.", severity="warning")
        return
    screen.session_changed()
