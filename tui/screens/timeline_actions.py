"""What pointing at the timeline does on the main screen: the tree pane and the chat follow the entry.

A click on a segment (or a chart point, or a past compaction) and ←/→ in the focused timeline post
:class:`~widgets.timeline.CompactionTimeline.EntryPointed`; :func:`show_pointed_entry` selects that
entry in the tree pane (opening the pane, without taking the focus from the timeline) and scrolls the
chat to it (the history view opens the fold that holds a summarised message). An entry the chat does
not show on its own (a tool result, drawn with its call) scrolls to the nearest earlier entry the chat
shows; one far up the chat (more than ``ChatPane.JUMP_ITEMS`` older messages to mount, tens of ms each)
is shown in a window of a few messages around it, with a bar for the newer ones; one the chat does not
show at all (summarised, in the context view) only moves the tree and says so in the status line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.screens import commands, tree_actions

if TYPE_CHECKING:
    from tui.screens.main import MainScreen


def _tree_follows(screen: MainScreen, entry_id: str) -> None:
    pane = screen.tree_pane
    if not pane.display:
        pane.display = True
    if pane.view.selector is not None:
        pane.select(entry_id)
    else:  # the rows are built after the next frame: select once they are there
        tree_actions.load_tree(screen)
        screen.call_after_refresh(pane.select, entry_id)


def chat_candidates(screen: MainScreen, entry_id: str) -> list[str]:
    """The entries the chat may show for ``entry_id``, best first: itself, then the earlier ones on the
    path back to its user message (a tool result is drawn with its call)."""
    agent = screen.agent
    if agent is None:
        return []
    path = agent.store.get_branch()
    index = next((i for i in range(len(path) - 1, -1, -1) if path[i].get("id") == entry_id), None)
    if index is None:
        return [entry_id]
    candidates = [entry_id]
    for earlier in range(index - 1, -1, -1):
        entry = path[earlier]
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict):
            candidates.append(str(entry.get("id")))
            if message.get("role") == "user":
                break
        if entry.get("type") == "compaction":
            break
    return candidates


async def show_pointed_entry(screen: MainScreen, entry_id: str) -> None:
    """Select ``entry_id`` in the tree pane and scroll the chat to it (see the module docstring)."""
    if screen.agent is None or entry_id not in screen.agent.store.tree.by_id:
        return
    _tree_follows(screen, entry_id)
    shown = False
    for candidate in chat_candidates(screen, entry_id):
        if await screen.chat.scroll_to_entry(candidate):
            shown = True
            break
    if screen.agent.is_busy:
        return  # the status line says what is running
    screen.status.message = (
        "" if shown else "selected in the tree; the chat does not show it here (summarised, or too far back)"
    )


def confirm_compact_now(
    screen: MainScreen, keep_recent_tokens: int, reserve_tokens: int, strategy: str
) -> None:
    """Enter in the timeline: a compaction with these what-if values, once the user has seen them and said
    yes. Enter is easy to hit by accident (a message typed into the focused timeline), and a compaction is
    a summarizer call."""
    from tui.screens.dialogs import ConfirmDialog

    if screen.agent is None or commands.refuse_read_only(screen):
        return
    job = commands.compact_job(None, keep_recent_tokens, reserve_tokens, strategy)
    question = (
        f"Compact now with keepRecentTokens {keep_recent_tokens:,}, "
        f"reserveTokens {reserve_tokens:,} and strategy {strategy}?\n"
        f"The summary is written by {screen.agent.summary_model}."
    )

    def answered(go: bool | None) -> None:
        if go:
            screen.run_agent(job)

    screen.app.push_screen(ConfirmDialog(question, yes="Compact", no="Cancel", default="yes"), answered)
