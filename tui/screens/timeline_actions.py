"""What pointing at the timeline does on the main screen: the tree pane and the chat follow the entry.

A click on a segment (or a chart point, or a past compaction) and ←/→ in the focused timeline post
:class:`~widgets.timeline.CompactionTimeline.EntryPointed`; :func:`show_pointed_entry` selects that
entry in the tree pane (opening the pane, without taking the focus from the timeline) and scrolls the
chat to it. An entry the chat does not show on its own (a tool result, drawn with its call) scrolls to
the nearest earlier entry the chat shows; one it does not show at all (summarised, in the context view)
only moves the tree and says so in the status line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.screens.main import MainScreen


def _tree_follows(screen: MainScreen, entry_id: str) -> None:
    pane = screen.tree_pane
    if not pane.display:
        pane.display = True
    if pane.view.selector is not None:
        pane.select(entry_id)
    else:  # the rows are built after the next frame: select once they are there
        screen._load_tree()
        screen.call_after_refresh(pane.select, entry_id)


def chat_target(screen: MainScreen, entry_id: str) -> str | None:
    """The entry the chat shows for ``entry_id``: itself, else the nearest earlier one on the path that
    it shows (a tool result's call), never one across a user message."""
    agent = screen.agent
    if agent is None:
        return None
    shown = {item.entry_id for item in screen.chat.items}
    if entry_id in shown:
        return entry_id
    path = agent.store.get_branch()
    index = next((i for i in range(len(path) - 1, -1, -1) if path[i].get("id") == entry_id), None)
    if index is None:
        return None
    for earlier in range(index - 1, -1, -1):
        entry = path[earlier]
        if entry.get("id") in shown:
            return str(entry.get("id"))
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") == "user":
            return None
    return None


async def show_pointed_entry(screen: MainScreen, entry_id: str) -> None:
    """Select ``entry_id`` in the tree pane and scroll the chat to it (see the module docstring)."""
    if screen.agent is None or entry_id not in screen.agent.store.tree.by_id:
        return
    _tree_follows(screen, entry_id)
    target = chat_target(screen, entry_id)
    shown = target is not None and await screen.chat.scroll_to_entry(target)
    if screen.agent.is_busy:
        return  # the status line says what is running
    screen.status.message = "" if shown else "not in the chat (summarised): selected in the tree"
