"""The main screen: the chat, the prompt, the compaction timeline, the session tree and the status bar.

It composes the panes, routes messages and owns the prompt queue. Keys, slash commands and the command
palette run the rows of one action table (:mod:`tui.actions`) through one Textual action, ``command``,
whose handlers live in :mod:`tui.screens.commands`; ``check_action`` refuses writes in a read-only
session. The longer flows live beside it (:mod:`~tui.screens.tree_actions`,
:mod:`~tui.screens.compaction_actions`, :mod:`~tui.screens.branch_actions`,
:mod:`~tui.screens.session_view`); every write goes through :class:`~tui.agent.session.AgentSession`.
The agent's events come back as :class:`AgentEventMessage` and are drawn by
:class:`~tui.screens.agent_view.AgentEventView`; the store announces every change, and one
:class:`SessionChanged` handler redraws what follows the session. Failed workers are reported in one place
(:meth:`MainScreen._worker_changed`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, getters, on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from tui import slash
from tui.actions import BY_SLASH
from tui.app import KompaktApp
from tui.launch import Launch
from tui.screens import branch_actions, chat_view, commands, compaction_actions, session_view, tree_actions
from tui.screens.laid_out_once import LaidOutOnceScreen
from tui.session.errors import SessionError
from widgets.chat_history import CompactionDivider
from widgets.chat_pane import ChatPane
from widgets.footer import KompaktFooter
from widgets.prompt import PromptBox, PromptInput
from widgets.session_tree import SessionTreeView
from widgets.session_tree_pane import SessionTreePane
from widgets.status_bar import StatusBar
from widgets.timeline import CompactionTimeline

if TYPE_CHECKING:
    from pathlib import Path

    from tui.agent.events import AgentEvent
    from tui.agent.session import AgentSession
    from tui.config import Settings
    from tui.screens.agent_view import AgentEventView
    from tui.screens.branch_actions import PendingEdit
    from tui.session.store import RefreshResult, SessionStore


# One short line per key (none over 71 cells), so it breaks nowhere at 80 columns and up (QA item 17:
# a paragraph with hard breaks wrapped mid-sentence at 100 columns).
WELCOME = """kompakt: a conversation that is a tree, with compaction you can watch.

Type a message and press Enter.
  F1  every key and command
  F2  the session tree
  F4  the compaction timeline
  F5  the settings

Try `kompakt --demo`: a sample session with branches and compactions."""


@dataclass
class AgentEventMessage(Message):
    """An agent event, delivered to the screen's message queue in order."""

    event: AgentEvent


class SessionChanged(Message):
    """The store changed (an append, a leaf move, a reload); a burst of them redraws once."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SessionChanged)


class MainScreen(LaidOutOnceScreen[None]):
    """Chat, prompt, timeline, tree pane and status, wired to the agent."""

    app = getters.app(KompaktApp)
    AUTO_FOCUS = "PromptInput"
    # D25: below these heights the welcome, the collapsed strip, the status bar and the chat are hidden in
    # turn (app.tcss), so that the prompt stays on screen.
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [
        (0, "-minimal"),
        (5, "-tiny"),
        (9, "-short"),
        (14, "-low"),
        (24, "-roomy"),
    ]
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [(0, "-narrow"), (80, "-wide")]
    BINDINGS: ClassVar[list[BindingType]] = commands.key_bindings(on_app=False)
    # The title each worker group's failure is reported under (widgets' too: widgets/worker_failures.py).
    WORKER_FAILURES: ClassVar[dict[str, str]] = {
        "agent": "Error",
        "navigate": "Tree navigation failed",
        "follow": "Watching the session file stopped",
        "export": "Export failed",
        "tree-build": "Building the session tree failed",
        "timeline-build": "Building the timeline failed",
        "timeline-what-if": "Planning the what-if failed",
        "timeline-point": "Showing the entry failed",
        "status-figures": "Counting the context and the cost failed",
    }

    def __init__(self) -> None:
        super().__init__()
        self.chat = ChatPane(id="chat")
        self.timeline = CompactionTimeline(id="timeline")
        self.timeline.label_of = lambda entry_id: self.agent.store.tree.label(entry_id) if self.agent else None
        self.timeline.breakdown_source = lambda: self.agent.context_breakdown() if self.agent else None
        from tui.session.catalog import kompakt_home

        self.prompt = PromptInput(id="prompt", history_path=kompakt_home() / "prompt-history.jsonl")
        self.chat.type_target = self.take_typing
        self.tree_pane = SessionTreePane(id="tree-pane")
        self.status = StatusBar(id="status")
        self.agent: AgentSession | None = None
        self.events: AgentEventView | None = None
        self.queued_prompts: list[str] = []
        self.queued_name: str | None = None  # /name typed during a run: written once the run ends
        self.pending_edit: PendingEdit | None = None  # Ctrl+E's leaf move, which Esc takes back
        self.tree_loaded = False
        self.timeline_enabled = True  # ui.showTimeline
        self.tree_loading = False  # a build is queued behind the next frame
        self.drawn_path = -1  # the store's path_revision the chat shows
        self.follow_problem: str | None = None  # watch mode's last read problem, said once
        self._stop_listening: Callable[[], None] | None = None
        self.chosen_workspace: Path | None = None  # the session's own cwd, once the user chose it

    def compose(self) -> ComposeResult:
        self.add_breakpoint_class()  # before any child is styled (tui/screens/laid_out_once.py)
        with Horizontal(id="body"):
            yield self.tree_pane
            with Vertical(id="main"):
                yield Static(WELCOME, id="welcome", markup=False)
                yield self.chat
                yield self.timeline
                yield PromptBox(self.prompt, id="prompt-box")
        yield self.status
        yield KompaktFooter()

    async def on_mount(self) -> None:
        """First frame: the session's chat and the prompt. The rest waits for :meth:`finish_start`."""
        # Immediate: the agent and the timeline switch to new settings in the same step as the app does.
        self.app.settings_changed.subscribe(self, self._on_settings_changed, immediate=True)
        self.app.litellm_loaded.subscribe(self, self._on_litellm_loaded)
        self.status.litellm_loading = self.app.start_background
        self.tree_pane.display = False
        # The stylesheet lays out a short screen differently while the timeline's panel is open (D25).
        self.watch(self.timeline, "expanded", lambda expanded: self.set_class(expanded, "-panel"))
        if self.app.session is None:
            try:
                self.app.open_launch(self.app.launch)
            except (SessionError, OSError) as exc:
                self.notify(str(exc), title="Cannot open the session", severity="error", timeout=15)
                self.app.open_launch(Launch("new", cwd=self.app.launch.cwd))
        await self.show_chat()
        session_view.ask_about_cwd(self, startup=True)

    async def finish_start(self) -> None:
        """After the first frame (settings are loaded by then): the agent, timeline, status, watch mode."""
        opened = self.app.session
        assert opened is not None
        opened.store.index_tree()  # left out of the first frame; built here, before any worker can ask
        await session_view.attach_agent(self, opened.notices, startup=True)
        if opened.follow:
            self.follow_session()

    # --- the session --------------------------------------------------------------------------
    @property
    def read_only(self) -> bool:
        return self.app.session is not None and self.app.session.read_only

    async def show_chat(self) -> None:
        opened = self.app.session
        assert opened is not None
        store = opened.store
        if self._stop_listening is not None:
            self._stop_listening()
        self._stop_listening = store.on_change(lambda: self.post_message(SessionChanged()))
        await self.draw_chat()
        self.prompt.disabled = opened.read_only
        self.chat.set_read_only(opened.read_only)  # no edit & resend on its messages
        self.prompt.placeholder = (
            f"Read-only: {store.path.name}"
            if opened.read_only
            else "Message (Enter sends, Shift+Enter new line)"
        )
        self._show_session_name(store)
        self.refresh_bindings()  # write actions come and go with read-only (check_action)
        self._show_welcome()
        self.tree_loaded = False
        if self.tree_pane.display:
            tree_actions.load_tree(self)

    async def draw_chat(self) -> None:
        store = self.app.store
        self.drawn_path = store.path_revision
        await chat_view.draw(self.chat, store)

    @on(CompactionDivider.InspectRequested)
    def _inspect_divider(self, event: CompactionDivider.InspectRequested) -> None:
        event.stop()
        self.compaction_flow("inspect", event.compaction_id)

    def _show_welcome(self) -> None:
        """The welcome text stands where the chat is while the session has no entries at all."""
        welcome = self.query_one("#welcome")
        if self.app.store.entries:
            welcome.display = False
        else:  # as the stylesheet says: a short terminal leaves it out (D25)
            welcome.styles.clear_rule("display")

    def _show_session_name(self, store: SessionStore) -> None:
        """The session's name (/name), or its file name, as the screen's subtitle and the terminal's title."""
        self.sub_title = store.name or store.path.name
        self.status.session_name = store.name or ""
        self.app.show_terminal_title(self.sub_title)

    def refresh_timeline(self) -> None:
        session_view.fill_preview(self, self.timeline)

    def refresh_status(self) -> None:
        session_view.show_status(self)

    @on(SessionChanged)
    async def _session_changed(self, _message: SessionChanged) -> None:
        """The one redraw after a store change: the whole chat only when the shown path changed."""
        store = self.app.store
        if store.path_revision != self.drawn_path:
            await self.draw_chat()
        self._show_session_name(store)
        self.session_changed()

    def session_changed(self) -> None:
        """Redraw what follows the session: welcome text, tree, timeline, status (the store's own
        announcement calls this through :class:`SessionChanged`; settings changes call it too)."""
        if self.agent is None:
            return
        self._show_welcome()
        if self.tree_loaded:
            self.tree_pane.refresh_tree(self.agent.store.leaf_id)
        self.refresh_timeline()
        self.refresh_status()

    def _on_settings_changed(self, payload: tuple[Settings, list[Any]]) -> None:
        settings, _changes = payload
        if self.agent is not None:
            self.agent.update_settings(settings)
            self.agent.store.fsync_mode = settings.session.fsync
            session_view.warn_if_reserve_fills_window(self)
        session_view.show_timeline(self, settings.ui.show_timeline)
        self.refresh_timeline()
        self.refresh_status()

    def _on_litellm_loaded(self, _loaded: bool) -> None:
        self.status.litellm_loading = False
        self.refresh_status()
        self.refresh_timeline()

    async def switch_session(self, launch: Launch) -> bool:
        """/new, /resume, /fork, /clone: see :func:`tui.screens.session_view.switch_session`."""
        return await session_view.switch_session(self, launch)

    # --- commands: keys, slash commands and the palette run the action table ------------------
    async def action_command(self, name: str, argument: str = "") -> None:
        await commands.run(self, name, argument)

    def on_key(self, event: events.Key) -> None:
        if commands.refused_write_key(self, event.key):  # a write key hidden by read-only: say why
            event.stop()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # D5: a read-only session offers no write (footer, palette, help) and refuses it.
        if action == "command" and parameters:
            return commands.allowed(self, str(parameters[0]))
        return True

    async def run_command(self, name: str, argument: str) -> None:
        """The slash command ``/name argument`` (``name`` as typed, without the slash)."""
        await commands.run_slash(self, BY_SLASH[name], argument)

    # --- the prompt ---------------------------------------------------------------------------
    def take_typing(self, text: str) -> None:
        """Keys typed on a pane that does not bind them (the chat, the timeline): into the prompt at its
        cursor, which takes focus (D1)."""
        if self.prompt.disabled:  # a read-only session: nothing to type into
            return
        self.prompt.insert(text)
        if self.focused is not self.prompt:
            self.prompt.focus()

    @on(PromptInput.Submitted)
    async def _submitted(self, event: PromptInput.Submitted) -> None:
        event.stop()
        parsed = slash.parse(event.text)
        if parsed.kind == "command":
            await self.run_command(parsed.name, parsed.argument)
        elif parsed.kind == "unknown":
            commands.unknown_command(self, parsed.name, event.text)
        elif parsed.kind == "bash":
            self.run_agent(commands.bash_job(self, parsed.argument, parsed.exclude_from_context))
        elif parsed.argument.strip():
            if self.agent is not None and self.agent.is_busy:
                # pi queues what is typed during a run and sends it afterwards.
                self.queued_prompts.append(parsed.argument)
                self.status.message = f"{len(self.queued_prompts)} message(s) queued · esc cancels the run"
            else:
                self.run_agent(commands.prompt_job(parsed.argument))

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def run_agent(self, job: Callable[[AgentSession], Awaitable[object]]) -> None:
        """Run one agent job (a prompt, a shell line, a compaction: :mod:`tui.screens.commands` makes them);
        its events arrive as AgentEventMessage, a failure as the worker's ERROR state (reported by
        :meth:`_worker_changed`). What was typed meanwhile goes out after it, also after a failure."""
        assert self.agent is not None
        try:
            await job(self.agent)
        finally:
            commands.send_queued(self)
            self.session_changed()

    def run_job(self, group: str, job: Awaitable[object]) -> None:
        """A flow of the screen in its worker group: a second one of the group replaces the first."""
        self.run_worker(job, group=group, exclusive=True, exit_on_error=False)

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        """The one place a failed worker of this screen (or of a widget on it) reaches the user."""
        title = self.WORKER_FAILURES.get(event.worker.group)
        if event.state is WorkerState.ERROR and title is not None:
            error = event.worker.error
            self.notify(f"{type(error).__name__}: {error}", title=title, severity="error", timeout=12)

    # --- agent events -------------------------------------------------------------------------
    @on(AgentEventMessage)
    async def _agent_event(self, message: AgentEventMessage) -> None:
        if self.events is not None:
            await self.events.show(message.event)

    def show_busy(self, streaming: bool, compacting: bool) -> None:
        self.set_class(streaming, "-streaming")
        self.set_class(compacting, "-compacting")

    @on(ChatPane.EditRequested)
    def _edit_requested(self, event: ChatPane.EditRequested) -> None:
        event.stop()
        branch_actions.edit_and_resend(self, event.entry_id, event.text)

    # --- the tree (routed to tui.screens.tree_actions) ----------------------------------------
    @on(SessionTreeView.NavigateRequested)
    def _navigate_requested(self, event: SessionTreeView.NavigateRequested) -> None:
        event.stop()
        tree_actions.enter_on_entry(self, event.entry_id)

    @on(SessionTreeView.Closed)
    def _tree_closed(self, event: SessionTreeView.Closed) -> None:
        event.stop()
        self.tree_pane.display = False
        self.remove_class("-tree-open")
        self.prompt.focus()

    @on(SessionTreeView.LabelRequested)
    def label_requested(self, event: SessionTreeView.LabelRequested) -> None:
        """Shift+L on a tree row (this screen's pane, or the full-screen tree through its callback)."""
        event.stop()
        tree_actions.ask_label(self, event)

    @on(SessionTreeView.CompactionActionRequested)
    def compaction_action_requested(self, event: SessionTreeView.CompactionActionRequested) -> None:
        """Shift+U / Shift+I on a tree row (this screen's pane, or the full-screen tree through its callback)."""
        event.stop()
        if event.action == "inspect":
            self.compaction_flow("inspect", event.entry_id)
        else:
            self.run_job("navigate", compaction_actions.undo_compaction(self, event.entry_id))

    # --- workers: one group each, so that a second request replaces the first ------------------
    @work(exclusive=True, group="inspect", exit_on_error=False)
    async def compaction_flow(self, kind: str, *args: Any) -> None:
        """The inspector (``/inspect``, Shift+I, the timeline's Ctrl+O) or a preview (``/compact --preview``, Ctrl+G)."""
        if kind == "inspect":
            await compaction_actions.inspect_compaction_flow(self, args[0])
        else:
            await compaction_actions.preview_compaction_flow(self, *args)

    def navigate_to(self, entry_id: str) -> None:
        """pi's "After Enter": see :func:`tui.screens.tree_actions.navigate`."""
        self.run_job("navigate", tree_actions.navigate(self, entry_id))

    # --- the timeline -------------------------------------------------------------------------
    @on(CompactionTimeline.CompactNowRequested)
    def _compact_now(self, event: CompactionTimeline.CompactNowRequested) -> None:
        event.stop()
        from tui.screens.timeline_actions import confirm_compact_now

        confirm_compact_now(self, event.keep_recent_tokens, event.reserve_tokens, event.strategy)

    @on(CompactionTimeline.ApplyToSessionRequested)
    def _apply_to_session(self, event: CompactionTimeline.ApplyToSessionRequested) -> None:
        event.stop()
        values = {"keepRecentTokens": event.keep_recent_tokens, "reserveTokens": event.reserve_tokens}
        compaction_actions.apply_to_session(self, {**values, "strategy": event.strategy})

    @on(CompactionTimeline.PreviewRequested)
    def _preview(self, event: CompactionTimeline.PreviewRequested) -> None:
        event.stop()
        self.compaction_flow("preview", None, event.keep_recent_tokens, event.reserve_tokens, event.strategy)

    @on(CompactionTimeline.InspectRequested)
    def _inspect_latest(self, event: CompactionTimeline.InspectRequested) -> None:
        event.stop()
        self.compaction_flow("inspect", event.compaction_id)

    @on(CompactionTimeline.EntryPointed)
    def _timeline_pointed(self, event: CompactionTimeline.EntryPointed) -> None:
        """A click or ←/→ on the timeline: the tree pane and the chat follow (tui/screens/timeline_actions.py)."""
        event.stop()
        from tui.screens.timeline_actions import show_pointed_entry

        self.run_job("timeline-point", show_pointed_entry(self, event.entry_id))

    @on(CompactionTimeline.JumpToEntry)
    def _jump(self, event: CompactionTimeline.JumpToEntry) -> None:
        event.stop()
        tree_actions.jump_to(self, event.entry_id)

    @on(CompactionTimeline.CancelRequested)
    def _timeline_cancel(self, event: CompactionTimeline.CancelRequested) -> None:
        event.stop()
        commands.cancel(self)

    # --- watch mode ---------------------------------------------------------------------------
    @work(exclusive=True, group="follow", exit_on_error=False)
    async def follow_session(self) -> None:
        from tui.session.follow import follow_session

        stop = asyncio.Event()
        try:
            await follow_session(self.app.store, self._followed, stop)
        finally:
            stop.set()

    async def _followed(self, result: RefreshResult) -> None:
        await session_view.show_followed(self, result)
