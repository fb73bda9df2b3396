"""The main screen's session tree: the side pane (F2), the full-screen tree (F3), labels and navigation.

The screen routes the tree's messages here. The side pane's rows are built lazily, the first time it is
shown, and then past one frame so that its loading line is on screen before 10k rows take their moment.
Navigation is pi's "After Enter": ask whether to summarise the branch being left, then move the leaf.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.agent.navigation import NavigateResult
    from tui.screens.dialogs import SummaryChoice
    from tui.screens.main import MainScreen
    from widgets.session_tree import SessionTreeView


def load_tree(screen: MainScreen) -> None:
    """Build the tree pane's rows after the next frame; until then the pane says it is loading."""
    if screen.tree_loading:
        return
    screen.tree_loading = True
    screen.tree_pane.show_loading()
    screen.call_after_refresh(build_tree, screen)


def build_tree(screen: MainScreen) -> None:
    screen.tree_loading = False
    if screen.tree_loaded or screen.app.session is None:
        return
    store = screen.app.session.store
    filter_mode = screen.app.settings.ui.tree_filter_mode if screen.app.settings else "default"
    screen.tree_pane.set_session(store.tree, store.leaf_id, filter_mode=filter_mode)
    screen.tree_loaded = True


def toggle_tree(screen: MainScreen) -> None:
    """F2: the side pane, focused and on the current leaf; F2 again hides it and focuses the prompt."""
    pane = screen.tree_pane
    pane.display = not pane.display
    screen.set_class(pane.display, "-tree-open")  # a narrow screen stacks the pane over the prompt
    if pane.display and screen.app.session is not None:
        if screen.tree_loaded:
            leaf = screen.app.session.store.leaf_id
            pane.refresh_tree(leaf)
            if leaf is not None:
                pane.select(leaf)
        else:
            load_tree(screen)  # it selects the leaf once the rows are there
        pane.view.focus()
    else:
        screen.prompt.focus()


def open_tree(screen: MainScreen) -> None:
    """F3 or /tree: the full-screen tree; the entry chosen there is entered as from the pane."""
    if screen.agent is None or not len(screen.agent.store.tree):
        screen.notify("No entries in session")
        return
    from tui.screens.tree_screen import MainCommand, TreeScreen

    store, mode = screen.agent.store, screen.app.current_settings.ui.tree_filter_mode
    tree = TreeScreen(
        store.tree,
        store.leaf_id,
        filter_mode=mode,
        on_label=screen.label_requested,
        on_compaction_action=screen.compaction_action_requested,
    )

    async def chosen(result: str | MainCommand | None) -> None:
        if isinstance(result, MainCommand):  # an F-key closed the tree: it acts here (F2: the pane)
            if result.name == "toggle_tree" and screen.tree_pane.display:
                screen.tree_pane.view.focus()
            else:
                await screen.app.run_action(("", "command", (result.name, "")), screen)
        elif result is not None:
            enter_on_entry(screen, result)

    screen.app.push_screen(tree, chosen)


def enter_on_entry(screen: MainScreen, entry_id: str) -> None:
    """Enter on a tree row: a compaction opens the inspector (``g`` there goes to it), else go there."""
    entry = screen.agent.store.tree.by_id.get(entry_id) if screen.agent is not None else None
    if entry is not None and entry.get("type") == "compaction":
        screen.compaction_flow("inspect", entry_id)
    else:
        screen.navigate_to(entry_id)


def ask_label(screen: MainScreen, event: SessionTreeView.LabelRequested) -> None:
    """Shift+L on a tree row: the label dialog, then the label is saved through the agent."""
    from tui.screens.dialogs import LabelDialog
    from tui.screens.tree_screen import TreeScreen

    if screen.read_only:
        screen.notify("This session is open read-only: labels cannot be saved.", severity="warning")
        return

    def save(label: str | None) -> None:
        if label is None or screen.agent is None:
            return
        screen.agent.label(event.entry_id, label)
        if isinstance(screen.app.screen, TreeScreen):
            screen.app.screen.pane.refresh_tree()

    screen.app.push_screen(LabelDialog(event.current_label or ""), save)


def jump_to(screen: MainScreen, entry_id: str) -> None:
    """The timeline's Ctrl+F: the tree pane, open and focused on ``entry_id``."""
    if not screen.tree_pane.display:
        toggle_tree(screen)
    screen.tree_pane.select(entry_id)
    screen.tree_pane.view.focus()


async def navigate(screen: MainScreen, entry_id: str) -> None:
    """pi's "After Enter": ask whether to summarise the branch being left, then move the leaf."""
    agent = screen.agent
    if agent is None:
        return
    if entry_id == agent.store.leaf_id:
        screen.notify("Already at this point")
        return
    if agent.is_streaming:
        screen.notify(
            "Wait for the reply to finish (or press Esc) before moving in the tree.", severity="warning"
        )
        return
    settings = screen.app.current_settings.branch_summary
    choice: SummaryChoice | None = "none"
    if settings.enabled and not settings.skip_prompt and not screen.read_only:
        from tui.screens.dialogs import SummarizeBranchDialog

        choice = await screen.app.push_screen_wait(SummarizeBranchDialog())
        if choice is None:
            if not screen.tree_pane.display:
                open_tree(screen)
            return
    result: NavigateResult | None = None
    if screen.read_only:
        agent.show(entry_id)  # nothing is written: a read-only session is navigated for reading
    else:
        instructions = choice[1] if isinstance(choice, tuple) else None
        result = await agent.navigate(entry_id, summarize=choice != "none", custom_instructions=instructions)
        if result is None or result.cancelled:
            aborted = result is not None and result.aborted
            screen.notify(
                "Branch summarization cancelled" if aborted else "Navigation cancelled", severity="warning"
            )
            return
    if result is not None and result.editor_text and not screen.prompt.text.strip():
        screen.prompt.text = result.editor_text
    screen.notify("Navigated to selected point")
    screen.prompt.focus()  # the next text typed is a message, not a search in the tree (pi 0.73.1)
    from tui.screens.commands import send_queued

    send_queued(screen)  # what was typed during the branch summary goes out now (pi 0.73.1)
