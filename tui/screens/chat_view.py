"""Which view of the branch the chat shows, and drawing it: history (the default) or context.

The history view is the whole active branch with each compaction's summarised messages folded behind a
divider (:mod:`widgets.chat_history`); the context view is exactly what the model sees
(``displayed_entries``: the messages of ``build_session_context``). F9 switches (``main.toggle_chat_view``);
the main screen's one redraw, :meth:`MainScreen.draw_chat`, calls :func:`draw` for either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from tui.session.display import displayed_entries

if TYPE_CHECKING:
    from tui.screens.main import MainScreen
    from tui.session.store import SessionStore
    from widgets.chat_pane import ChatPane

ChatView = Literal["history", "context"]

VIEW_NOTES: dict[str, str] = {
    "history": "History view: the whole branch; what a compaction summarised is folded behind its divider.",
    "context": "Context view: exactly the messages the model sees.",
}


def view_of(chat: ChatPane) -> ChatView:
    return "context" if getattr(chat, "view", "history") == "context" else "history"


async def draw(chat: ChatPane, store: SessionStore) -> None:
    """Show the active path in the chat's current view."""
    if view_of(chat) == "context":
        await chat.load_messages(displayed_entries(store))
    else:
        await chat.load_history(store.get_branch())


async def toggle(screen: MainScreen) -> None:
    """Switch the chat between the history and the context view, and redraw it."""
    chat = screen.chat
    had_focus = screen.focused is not None and (screen.focused is chat or chat in screen.focused.ancestors)
    chat.view = "context" if view_of(chat) == "history" else "history"
    await screen.draw_chat()
    if had_focus:
        chat.focus()  # the focused message went with the redraw
    screen.notify(VIEW_NOTES[chat.view], timeout=3)
