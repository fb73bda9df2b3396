"""What the main screen does to branch: ``/fork``, ``/clone``, ``/export jsonl``, and edit & resend (Ctrl+E).

The files come from :mod:`tui.session.branching` (pi 0.73.1's formats, ``parentSession`` in the header);
this module adds the screen's part: the refusals (nothing saved yet, agent busy), the list of user
messages ``/fork`` starts from (the latest selected, as pi does), the switch to the new session and, for
``/fork``, the chosen message's text in the prompt. Ctrl+E moves the leaf at once, as pi's tree does for a
user message; Esc, before anything else moves it, moves it back (:func:`undo_edit`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.session.display import flat
from tui.session.sanitize import sanitize
from widgets.footer import KompaktFooter

if TYPE_CHECKING:
    from tui.screens.main import MainScreen
    from tui.session.store import SessionStore

_ROW_CHARS = 200


class UserMessagePicker(ModalScreen[str | None]):
    """pi's ``/fork`` list: every user message of the session; Enter forks from it, Esc cancels."""

    DEFAULT_CSS = """
    UserMessagePicker { align: center middle; }
    UserMessagePicker > Vertical { width: 90%; max-width: 120; height: 80%; border: round $accent;
        background: $surface; padding: 0 1; }
    UserMessagePicker #fork-title { text-style: bold; height: auto; }
    UserMessagePicker #fork-hint { color: $text-muted; height: auto; }
    UserMessagePicker OptionList { height: 1fr; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Cancel", id="fork_picker.cancel"),
        # A modal screen hides the app's keys from its key chain: F1 is its own here (as in the pickers).
        Binding("f1", "app.help", "Help", id="fork_picker.help"),
    ]

    def __init__(self, messages: list[tuple[str, str]]) -> None:
        super().__init__()
        self._messages = messages

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Fork from a message", id="fork-title", markup=False)
            yield Static(
                "A new session holds everything before the chosen message; its text goes into the prompt.",
                id="fork-hint",
                markup=False,
            )
            yield OptionList(
                *(
                    Option(Text(sanitize(flat(text, _ROW_CHARS))), id=entry_id)
                    for entry_id, text in self._messages
                )
            )
        yield KompaktFooter()  # its own keys, not the main screen's

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = len(self._messages) - 1  # the latest message, as in pi
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


def _ready(screen: MainScreen, nothing: str) -> bool:
    agent = screen.agent
    if agent is None or not agent.store.exists_on_disk or agent.store.leaf_id is None:
        screen.notify(nothing, severity="warning")
        return False
    if agent.is_busy:
        screen.notify(
            "Wait for the current reply or compaction to finish (or press Esc).", severity="warning"
        )
        return False
    return True


async def _open_new(screen: MainScreen, path: object) -> None:
    from pathlib import Path

    from tui.launch import Launch

    launch = screen.app.launch
    await screen.switch_session(Launch("open", Path(str(path)), launch.cwd, launch.session_dir))


async def fork_from_message(screen: MainScreen) -> bool:
    """``/fork``: pick a user message, open a new session up to the one before it, prompt = its text."""
    from tui.session.branching import fork_session, user_messages_for_forking

    if not _ready(screen, "No messages to fork from"):
        return False
    assert screen.agent is not None
    store = screen.agent.store
    messages = user_messages_for_forking(store)
    if not messages:
        screen.notify("No messages to fork from", severity="warning")
        return False
    chosen = await screen.app.push_screen_wait(UserMessagePicker(messages))
    if chosen is None:
        return False
    try:
        forked = fork_session(store, chosen)
    except OSError as exc:
        screen.notify(f"Cannot write the new session: {exc}", title="Fork failed", severity="error")
        return False
    await _open_new(screen, forked.path)
    screen.prompt.text = forked.prompt_text or ""
    screen.prompt.focus()
    screen.notify(f"Forked to new session {forked.path.name}", title="Forked")
    return True


async def clone_branch(screen: MainScreen, entry_id: str | None) -> bool:
    """``/clone [id]``: a new session with the branch up to ``entry_id`` (default: the current entry)."""
    from tui.session.branching import create_branched_session
    from tui.session.errors import EntryNotFoundError

    if not _ready(screen, "Nothing to clone yet"):
        return False
    assert screen.agent is not None
    store = screen.agent.store
    try:
        cloned = create_branched_session(store, entry_id or store.leaf_id)
    except EntryNotFoundError:
        screen.notify(f"No entry {entry_id} in this session.", severity="warning")
        return False
    except OSError as exc:
        screen.notify(f"Cannot write the new session: {exc}", title="Clone failed", severity="error")
        return False
    await _open_new(screen, cloned.path)
    screen.prompt.text = ""
    screen.notify(f"Cloned to new session {cloned.path.name}", title="Cloned")
    return True


def export_jsonl(screen: MainScreen, target: str | None) -> None:
    """``/export jsonl [FILE]`` (or ``/export FILE.jsonl``): the current branch as a pi session file."""
    from pathlib import Path

    from tui.session.branching import default_jsonl_export_path, export_branch_jsonl

    agent = screen.agent
    if agent is None or not agent.store.exists_on_disk:
        screen.notify("Nothing to export yet.", severity="warning")
        return
    # Where kompakt started (as pi's /export), also for a relative FILE.
    name = target or default_jsonl_export_path(agent.store.path).name
    out = screen.app.launch.cwd / Path(name).expanduser()
    store, leaf = agent.store, agent.store.leaf_id

    async def write() -> None:
        # A long branch is tens of MB: written on a thread, from a snapshot (the agent may append meanwhile).
        try:
            path = await asyncio.to_thread(lambda: export_branch_jsonl(store.snapshot(), out, leaf))
        except OSError as exc:
            screen.notify(f"Cannot write the export: {exc}", title="Export failed", severity="error")
            return
        screen.notify(f"Wrote {path}", title="Exported")

    screen.run_worker(write(), group="export", exit_on_error=False)


@dataclass(frozen=True)
class PendingEdit:
    """Ctrl+E moved the leaf from ``leaf`` to ``branch_point`` and put ``text`` in the prompt."""

    store: SessionStore
    leaf: str | None
    branch_point: str | None
    text: str


def edit_and_resend(screen: MainScreen, entry_id: str | None, text: str) -> None:
    """Ctrl+E on a user message: branch off just before it and put its text in the prompt."""
    agent = screen.agent
    if agent is None or entry_id is None or screen.read_only:
        return
    if agent.is_busy:
        screen.notify("Wait for the reply to finish (or press Esc) before editing.", severity="warning")
        return
    previous = agent.store.leaf_id
    agent.branch_before(entry_id)  # the store's announcement redraws the chat
    screen.pending_edit = PendingEdit(agent.store, previous, agent.store.leaf_id, text)
    screen.prompt.load_text(text)
    screen.prompt.move_cursor(screen.prompt.document.end)  # to go on typing where the message ends
    screen.prompt.focus()
    screen.notify(
        "Editing a copy: sending it starts a new branch (the original stays in the tree). Esc goes back."
    )


def undo_edit(screen: MainScreen) -> bool:
    """Esc after Ctrl+E: the leaf back where it was, while nothing (a send, the tree) has moved it since.
    The prompt is cleared when it still holds the message as it was loaded; edited text stays."""
    pending, screen.pending_edit = screen.pending_edit, None
    agent = screen.agent
    if pending is None or agent is None or agent.is_busy or agent.store is not pending.store:
        return False  # another session since (its ids may be the same: /fork, /clone)
    if agent.store.leaf_id != pending.branch_point:
        return False
    if pending.leaf is None:
        agent.store.reset_leaf()
    else:
        agent.store.branch(pending.leaf)
    if screen.prompt.text == pending.text:
        screen.prompt.clear()
    screen.notify("Edit cancelled: back where you were.")
    return True
