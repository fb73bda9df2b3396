"""The main screen: the chat, the prompt, the compaction timeline, the session tree and the status bar.

It composes the panes, routes messages and owns the prompt queue. Widget messages and commands become
agent operations (the longer ones live in :mod:`tui.screens.main_commands`, :mod:`~tui.screens.compaction_actions`
and :mod:`~tui.screens.branch_actions`); every write goes through :class:`~tui.agent.session.AgentSession`.
The agent's events come back as :class:`AgentEventMessage` and are drawn by
:class:`~tui.screens.agent_view.AgentEventView`; the store announces every change, and one
:class:`SessionChanged` handler redraws what follows the session. Failed workers are reported in one place
(:meth:`MainScreen._worker_changed`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import getters, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from tui import slash
from tui.app import KompaktApp
from tui.launch import Launch, missing_session_cwd, open_session, other_session_cwd
from tui.screens import chat_view, main_commands
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
    from tui.agent.events import AgentEvent
    from tui.agent.session import AgentSession
    from tui.config import Settings
    from tui.screens.agent_view import AgentEventView
    from tui.session.store import RefreshResult, SessionStore


WELCOME = """kompakt: a conversation that is a tree, with compaction you can watch.

Type a message and press Enter. F2 shows the session tree, F4 the compaction timeline, F5 the settings,
F1 every key and command. `kompakt --demo` opens a session with branches and compactions to explore."""


@dataclass
class AgentEventMessage(Message):
    """An agent event, delivered to the screen's message queue in order."""

    event: AgentEvent


class SessionChanged(Message):
    """The store changed (an append, a leaf move, a reload); a burst of them redraws once."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SessionChanged)


# Entry types the chat shows, and how many new ones watch mode still mounts one by one.
_CHAT_ENTRY_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})
FOLLOW_BATCH = 8


class MainScreen(Screen[None]):
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
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f2", "toggle_tree", "Tree pane", id="main.toggle_tree", priority=True),
        Binding("f3", "open_tree", "Full tree", id="main.open_tree", priority=True, show=False),
        Binding("f4", "toggle_timeline", "Timeline", id="main.toggle_timeline", priority=True),
        Binding("f5", "settings", "Settings", id="main.settings", priority=True),
        Binding("f6", "model", "Model", id="main.model", priority=True, show=False),
        Binding("f7", "resume", "Sessions", id="main.resume", priority=True, show=False),
        Binding("f8", "compact", "Compact", id="main.compact", priority=True),
        Binding(
            "f9",
            "toggle_chat_view",
            "View",
            tooltip="Chat: history view (every message, compactions folded) or context view (what the model sees)",
            id="main.toggle_chat_view",
            priority=True,
        ),
        Binding("escape", "cancel", "Cancel", id="main.cancel", show=False),
        Binding("ctrl+n", "new_session", "New session", id="main.new", show=False),
    ]
    # The title a failure of each worker group is reported under.
    WORKER_FAILURES: ClassVar[dict[str, str]] = {
        "agent": "Error",
        "navigate": "Tree navigation failed",
        "follow": "Watching the session file stopped",
        "export": "Export failed",
    }

    def __init__(self) -> None:
        super().__init__()
        self.chat = ChatPane(id="chat")
        self.timeline = CompactionTimeline(id="timeline")
        self.timeline.label_of = lambda entry_id: (
            self.agent.store.tree.label(entry_id) if self.agent else None
        )
        self.timeline.breakdown_source = lambda: self.agent.context_breakdown() if self.agent else None
        from tui.session.catalog import kompakt_home

        self.prompt = PromptInput(id="prompt", history_path=kompakt_home() / "prompt-history.jsonl")
        self.chat.type_target = self._type_into_prompt
        self.tree_pane = SessionTreePane(id="tree-pane")
        self.status = StatusBar(id="status")
        self.agent: AgentSession | None = None
        self.events: AgentEventView | None = None
        self.queued_prompts: list[str] = []
        self._tree_loaded = False
        self._timeline_enabled = True  # ui.showTimeline
        self._tree_loading = False  # a build is queued behind the next frame
        self._drawn_path = -1  # the store's path_revision the chat shows
        self._stop_listening: Callable[[], None] | None = None

    def compose(self) -> ComposeResult:
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
        await self._show_chat()

    async def finish_start(self) -> None:
        """After the first frame (settings are loaded by then): the agent, timeline, status, watch mode."""
        opened = self.app.session
        assert opened is not None
        await self._attach_agent(opened.notices, startup=True)
        if opened.follow:
            self.follow_session()

    # --- the session --------------------------------------------------------------------------
    @property
    def read_only(self) -> bool:
        return self.app.session is not None and self.app.session.read_only

    async def _show_chat(self) -> None:
        opened = self.app.session
        assert opened is not None
        store = opened.store
        if self._stop_listening is not None:
            self._stop_listening()
        self._stop_listening = store.on_change(lambda: self.post_message(SessionChanged()))
        await self._draw_chat()
        self.prompt.disabled = opened.read_only
        self.prompt.placeholder = (
            f"Read-only: {store.path.name}"
            if opened.read_only
            else "Message (Enter sends, Shift+Enter new line)"
        )
        self._show_session_name(store)
        self.refresh_bindings()  # write actions come and go with read-only (check_action)
        self._show_welcome()
        self._tree_loaded = False
        if self.tree_pane.display:
            self._load_tree()

    async def _draw_chat(self) -> None:
        store = self.app.store
        self._drawn_path = store.path_revision
        await chat_view.draw(self.chat, store)

    async def redraw_chat(self) -> None:
        await self._draw_chat()

    async def action_toggle_chat_view(self) -> None:
        await chat_view.toggle(self)

    @on(CompactionDivider.InspectRequested)
    def _inspect_divider(self, event: CompactionDivider.InspectRequested) -> None:
        event.stop()
        self.compaction_flow("inspect", event.compaction_id)

    def _show_welcome(self) -> None:
        """The welcome text stands where the chat is while the session has no entries at all."""
        welcome = self.query_one("#welcome")
        if self.app.session.store.entries:
            welcome.display = False
        else:  # as the stylesheet says: a short terminal leaves it out (D25)
            welcome.styles.clear_rule("display")

    async def _attach_agent(self, notices: list[str] = (), *, startup: bool = False) -> None:
        from tui.agent.session import AgentSession
        from tui.hooks import HookRunner
        from tui.screens.agent_view import AgentEventView

        opened = self.app.session
        assert opened is not None and self.app.settings is not None
        store = opened.store
        if self.agent is not None:
            await self.agent.close()
            self.chat.end_stream()  # a reply the old agent left open goes with the next redraw
        settings = self.app.settings
        store.fsync_mode = settings.session.fsync
        hooks = HookRunner.from_settings(settings.hooks.modules, on_error=self._hook_failed)
        # Asked below, once the agent exists; the demo's stored cwd is made up and it works here.
        missing_cwd = None if self.app.launch.mode == "demo" else missing_session_cwd(store)
        # Tools work where kompakt started; a session file's cwd only once the user says so (below).
        workspace = self.app.launch.cwd
        asks = self.app.launch.mode != "demo" and not opened.read_only and missing_cwd is None
        other_cwd = other_session_cwd(store, workspace) if asks else None
        self.agent = AgentSession(store, settings, workspace=workspace, ask=self._ask_approval, hooks=hooks)
        self.queued_prompts.clear()
        self.events = AgentEventView(self, store, self.chat, self.timeline, self.status)
        self.agent.subscribe(lambda event: self.post_message(AgentEventMessage(event)))
        self._show_timeline(settings.ui.show_timeline)
        self.refresh_status()
        self.refresh_timeline()
        for notice in notices:
            self.notify(notice, timeout=8)
        self._warn_if_reserve_fills_window()
        if missing_cwd is not None:
            from tui.screens.missing_cwd import ask_missing_cwd

            ask_missing_cwd(self, missing_cwd, startup=startup)
        elif other_cwd is not None:
            from tui.screens.missing_cwd import ask_other_cwd

            ask_other_cwd(self, other_cwd)

    def _warn_if_reserve_fills_window(self) -> None:
        from tui.compaction.engine import reserve_fills_window

        assert self.agent is not None
        # The settings in force for this session: the files' with the session's own values on top.
        reserve, window = self.agent.settings.compaction.reserve_tokens, self.agent.context_window
        if reserve_fills_window(reserve, window):
            self.notify(
                f"compaction.reserveTokens {reserve:,} is not below the context window of {window:,} "
                f"tokens of {self.agent.model}: automatic compaction is off until it is lowered.",
                title="Settings",
                severity="warning",
                timeout=12,
            )

    def _load_tree(self) -> None:
        """Build the tree pane's rows after the next frame; until then the pane says it is loading.

        Deferred until the pane is first shown, and then past one refresh: 10k rows take a moment,
        and the pane's loading line must reach the screen before that work blocks the loop.
        """
        if self._tree_loading:
            return
        self._tree_loading = True
        self.tree_pane.show_loading()
        self.call_after_refresh(self._build_tree)

    def _build_tree(self) -> None:
        self._tree_loading = False
        if self._tree_loaded or self.app.session is None:
            return
        store = self.app.session.store
        filter_mode = self.app.settings.ui.tree_filter_mode if self.app.settings else "default"
        self.tree_pane.set_session(store.tree, store.leaf_id, filter_mode=filter_mode)
        self._tree_loaded = True

    def refresh_timeline(self) -> None:
        self.fill_preview(self.timeline)

    def refresh_status(self) -> None:
        if self.agent is None:
            return
        usage = self.agent.context_usage()
        self.status.model = self.agent.model
        self.status.offline = self.agent.is_offline
        if usage is None:
            self.status.show_context(None, 0, False)
        else:
            self.status.show_context(usage.tokens, usage.context_window, usage.estimated, usage.compaction_id)
        self.status.cost = self.agent.cost_total
        self.status.session_settings = bool(self.agent.session_overrides)
        self.status.max_iterations = self.app.settings.agent.max_iterations

    def _show_session_name(self, store: SessionStore) -> None:
        """The session's name (/name), or its file name, as the screen's subtitle and the terminal's title."""
        self.sub_title = store.name or store.path.name
        self.app.show_terminal_title(self.sub_title)

    @on(SessionChanged)
    async def _session_changed(self, _message: SessionChanged) -> None:
        """The one redraw after a store change: the whole chat only when the shown path changed."""
        store = self.app.store
        if store.path_revision != self._drawn_path:
            await self._draw_chat()
        self._show_session_name(store)
        self.session_changed()

    def session_changed(self) -> None:
        """Redraw what follows the session: welcome text, tree, timeline, status (the store's own
        announcement calls this through :class:`SessionChanged`; settings changes call it too)."""
        if self.agent is None:
            return
        self._show_welcome()
        if self._tree_loaded:
            self.tree_pane.refresh_tree(self.agent.store.leaf_id)
        self.refresh_timeline()
        self.refresh_status()

    def _on_settings_changed(self, payload: tuple[Settings, list[Any]]) -> None:
        settings, _changes = payload
        if self.agent is not None:
            self.agent.update_settings(settings)
            self.agent.store.fsync_mode = settings.session.fsync
            self._warn_if_reserve_fills_window()
        self._show_timeline(settings.ui.show_timeline)
        self.refresh_timeline()
        self.refresh_status()

    def _on_litellm_loaded(self, _loaded: bool) -> None:
        self.status.litellm_loading = False
        self.refresh_status()
        self.refresh_timeline()

    def _hook_failed(self, error: Any) -> None:
        self.notify(str(error), title="Hook error", severity="warning")

    async def _ask_approval(self, tool: str, args: dict, reason: str) -> bool:
        from tui.screens.approval import ApprovalDialog

        return bool(await self.app.push_screen_wait(ApprovalDialog(tool, args, reason)))

    # --- the prompt ---------------------------------------------------------------------------
    def _type_into_prompt(self, text: str) -> None:
        """Keys typed while the chat has focus: into the prompt at its cursor, which takes focus (D1)."""
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
            # D19: the typed text stays, to be fixed (or sent as text with '//' in front).
            if not self.prompt.text:
                self.prompt.text = event.text
                self.prompt.move_cursor(self.prompt.document.end)
            self.notify(
                f"Unknown command /{parsed.name}. Press F1 for the list; start with // to send it as text.",
                severity="warning",
            )
        elif parsed.kind == "bash":
            self.run_agent("bash", parsed.argument, parsed.exclude_from_context)
        elif parsed.argument.strip():
            if self.agent is not None and self.agent.is_busy:
                # pi queues what is typed during a run and sends it afterwards.
                self.queued_prompts.append(parsed.argument)
                self.status.message = f"{len(self.queued_prompts)} message(s) queued · esc cancels the run"
            else:
                self.run_agent("prompt", parsed.argument)

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def run_agent(self, operation: str, *args: Any) -> None:
        """Run one agent operation; its events arrive as AgentEventMessage, a failure as the worker's
        ERROR state (reported by :meth:`_worker_changed`)."""
        assert self.agent is not None
        try:
            if operation == "prompt":
                await self.agent.prompt(args[0])
            elif operation == "bash":
                self.status.message = "running a shell command · esc cancels it"
                await self.agent.run_bash(args[0], exclude_from_context=args[1])
            elif operation == "compact":
                from tui.compaction.errors import CompactionFailed

                instructions, keep, reserve, strategy = (*args, None, None, None)[:4]
                with contextlib.suppress(CompactionFailed):  # its end event has shown the error
                    await self.agent.compact(
                        instructions, keep_recent_tokens=keep, reserve_tokens=reserve, strategy=strategy
                    )
            elif operation == "continue":
                await self.agent.continue_()
        except Exception:
            self.send_queued()
            raise
        else:
            self.send_queued()
        finally:
            if operation == "bash":
                self.status.message = ""
            self.session_changed()

    def send_queued(self) -> None:
        """What was typed during the run goes out now (also after a failed run), before anything typed later."""
        if self.queued_prompts:
            queued, self.queued_prompts = "\n\n".join(self.queued_prompts), []
            self.status.message = ""
            self.run_agent("prompt", queued)

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        """The one place a failed worker of this screen reaches the user (they run with exit_on_error=False
        so that a failure never takes the app down)."""
        title = self.WORKER_FAILURES.get(event.worker.group)
        if event.state is WorkerState.ERROR and title is not None:
            error = event.worker.error
            self.notify(f"{type(error).__name__}: {error}", title=title, severity="error", timeout=12)

    async def run_command(self, name: str, argument: str) -> None:
        writes = ("compact", "continue", "uncompact", "label", "name", "session-settings")
        if name in writes and self.refuse_read_only():
            return
        if name == "compact":
            preview, _, focus = (
                argument.partition(" ") if argument.startswith("--preview") else ("", "", argument)
            )
            if preview == "--preview":
                self.compaction_flow("preview", focus.strip() or None)
            else:
                self.run_agent("compact", argument or None)
        elif name == "inspect":
            self.compaction_flow("inspect", argument or None)
        elif name == "continue":
            self.run_agent("continue")
        elif name == "uncompact":
            self.uncompact(argument or None)
        elif name == "session-settings":
            from tui.screens.compaction_actions import session_settings_command

            session_settings_command(self, argument)
        elif name == "fork":
            self.fork_session()
        elif name == "clone":
            self.clone_session(argument or None)
        elif name == "tree":
            self.action_open_tree()
        elif name == "model":
            self.action_model(argument)
        elif name == "settings":
            self.action_settings()
        elif name == "label":
            self.action_label(argument)
        elif name == "export":
            main_commands.export(self, argument or "html")
        elif name == "new":
            await self.action_new_session()
        elif name == "resume":
            self.action_resume()
        elif name == "name":
            main_commands.rename(self, argument)
        elif name == "moa":
            main_commands.toggle_moa(self, argument)
        elif name == "help":
            self.app.action_help()

    def action_label(self, text: str = "") -> None:
        if self.agent is None or self.agent.store.leaf_id is None:
            self.notify("Nothing to label yet.", severity="warning")
            return
        self.agent.label(self.agent.store.leaf_id, text)

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
        """Edit and resend: branch off just before that user message and put its text in the prompt."""
        event.stop()
        if self.agent is None or event.entry_id is None or self.read_only:
            return
        if self.agent.is_busy:
            self.notify("Wait for the reply to finish (or press Esc) before editing.", severity="warning")
            return
        self.agent.branch_before(event.entry_id)  # the store's announcement redraws the chat
        self.prompt.text = event.text
        self.prompt.focus()
        self.notify("Editing a copy: sending it starts a new branch (the original stays in the tree).")

    # --- the tree -----------------------------------------------------------------------------
    def action_toggle_tree(self) -> None:
        self.tree_pane.display = not self.tree_pane.display
        if self.tree_pane.display and self.app.session is not None:
            if self._tree_loaded:
                leaf = self.app.session.store.leaf_id
                self.tree_pane.refresh_tree(leaf)
                if leaf is not None:
                    self.tree_pane.select(leaf)
            else:
                self._load_tree()  # it selects the leaf once the rows are there
            self.tree_pane.view.focus()
        else:
            self.prompt.focus()

    def action_open_tree(self) -> None:
        if self.agent is None or not len(self.agent.store.tree):
            self.notify("No entries in session")
            return
        from tui.screens.tree_screen import TreeScreen

        store, mode = self.agent.store, self.app.current_settings.ui.tree_filter_mode
        screen = TreeScreen(
            store.tree,
            store.leaf_id,
            filter_mode=mode,
            on_label=self.label_requested,
            on_compaction_action=self.compaction_action_requested,
        )
        self.app.push_screen(screen, self._tree_chosen)

    def _tree_chosen(self, entry_id: str | None) -> None:
        if entry_id is not None:
            self._enter_on_entry(entry_id)

    @on(SessionTreeView.NavigateRequested)
    def _navigate_requested(self, event: SessionTreeView.NavigateRequested) -> None:
        event.stop()
        self._enter_on_entry(event.entry_id)

    def _enter_on_entry(self, entry_id: str) -> None:
        """Enter on a tree row: a compaction opens the inspector (``g`` there goes to it), else go there."""
        entry = self.agent.store.tree.by_id.get(entry_id) if self.agent is not None else None
        if entry is not None and entry.get("type") == "compaction":
            self.compaction_flow("inspect", entry_id)
        else:
            self.navigate_to(entry_id)

    @on(SessionTreeView.Closed)
    def _tree_closed(self, event: SessionTreeView.Closed) -> None:
        event.stop()
        self.tree_pane.display = False
        self.prompt.focus()

    @on(SessionTreeView.LabelRequested)
    def label_requested(self, event: SessionTreeView.LabelRequested) -> None:
        """Shift+L on a tree row (this screen's pane, or the full-screen tree through its callback)."""
        event.stop()
        from tui.screens.dialogs import LabelDialog
        from tui.screens.tree_screen import TreeScreen

        if self.read_only:
            self.notify("This session is open read-only: labels cannot be saved.", severity="warning")
            return

        def save(label: str | None) -> None:
            if label is None or self.agent is None:
                return
            self.agent.label(event.entry_id, label)
            if isinstance(self.app.screen, TreeScreen):
                self.app.screen.pane.refresh_tree()

        self.app.push_screen(LabelDialog(event.current_label or ""), save)

    @on(SessionTreeView.CompactionActionRequested)
    def compaction_action_requested(self, event: SessionTreeView.CompactionActionRequested) -> None:
        """Shift+U / Shift+I on a tree row (this screen's pane, or the full-screen tree through its callback)."""
        event.stop()
        if event.action == "inspect":
            self.compaction_flow("inspect", event.entry_id)
        else:
            self.uncompact(event.entry_id)

    @work(exclusive=True, group="inspect", exit_on_error=False)
    async def compaction_flow(self, kind: str, *args: Any) -> None:
        """The inspector (``/inspect``, Shift+I, ``i``) or a preview (``/compact --preview``, ``p``)."""
        from tui.screens.compaction_actions import inspect_compaction_flow, preview_compaction_flow

        if kind == "inspect":
            await inspect_compaction_flow(self, args[0])
        else:
            await preview_compaction_flow(self, *args)

    @work(exclusive=True, group="navigate", exit_on_error=False)
    async def uncompact(self, compaction_id: str | None) -> None:
        """``/uncompact`` and Shift+U: see :func:`tui.screens.compaction_actions.undo_compaction`."""
        from tui.screens.compaction_actions import undo_compaction

        await undo_compaction(self, compaction_id)

    @work(exclusive=True, group="navigate", exit_on_error=False)
    async def fork_session(self) -> None:
        """``/fork``: see :func:`tui.screens.branch_actions.fork_from_message`."""
        from tui.screens.branch_actions import fork_from_message

        await fork_from_message(self)

    @work(exclusive=True, group="navigate", exit_on_error=False)
    async def clone_session(self, entry_id: str | None) -> None:
        """``/clone [id]``: see :func:`tui.screens.branch_actions.clone_branch`."""
        from tui.screens.branch_actions import clone_branch

        await clone_branch(self, entry_id)

    @work(exclusive=True, group="navigate", exit_on_error=False)
    async def navigate_to(self, entry_id: str) -> None:
        """pi's "After Enter": see :func:`tui.screens.main_commands.navigate`."""
        if self.agent is not None:
            await main_commands.navigate(self, self.agent, entry_id)

    # --- the timeline -------------------------------------------------------------------------
    def _show_timeline(self, show: bool) -> None:
        """``ui.showTimeline``. Shown means "as the stylesheet says", which hides the collapsed strip on a
        short terminal (D25); an inline ``display = True`` would override that."""
        self._timeline_enabled = show
        if show:
            self.timeline.styles.clear_rule("display")
        else:
            self.timeline.display = False

    def action_toggle_timeline(self) -> None:
        """F4: expand the timeline and focus it (its what-if keys then work at once); F4 again gives the
        prompt the focus back. An expanded timeline without the focus (the prompt was clicked) gets
        the focus, rather than collapsing under the user (D20). Whether it is shown is the setting's
        say (``ui.showTimeline``): a short terminal shows the panel only once it is expanded (D25)."""
        timeline = self.timeline
        if timeline.expanded and (timeline.has_focus or not self._timeline_enabled):
            timeline.expanded = False
            if timeline.has_focus:
                self.prompt.focus()
            return
        timeline.expanded = True
        if self._timeline_enabled:
            timeline.focus()

    @on(CompactionTimeline.CompactNowRequested)
    def _compact_now(self, event: CompactionTimeline.CompactNowRequested) -> None:
        event.stop()
        if self.agent is None or self.refuse_read_only():
            return
        self.run_agent(
            "compact", None, event.keep_recent_tokens, event.reserve_tokens, getattr(event, "strategy", None)
        )

    @on(CompactionTimeline.ApplyToSessionRequested)
    def _apply_to_session(self, event: CompactionTimeline.ApplyToSessionRequested) -> None:
        event.stop()
        from tui.screens.compaction_actions import apply_to_session

        apply_to_session(
            self,
            {
                "keepRecentTokens": event.keep_recent_tokens,
                "reserveTokens": event.reserve_tokens,
                "strategy": event.strategy,
            },
        )

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

        self.run_worker(
            show_pointed_entry(self, event.entry_id),
            group="timeline-point",
            exclusive=True,
            exit_on_error=False,
        )

    @on(CompactionTimeline.JumpToEntry)
    def _jump(self, event: CompactionTimeline.JumpToEntry) -> None:
        event.stop()
        if not self.tree_pane.display:
            self.action_toggle_tree()
        self.tree_pane.select(event.entry_id)
        self.tree_pane.view.focus()

    @on(CompactionTimeline.CancelRequested)
    def _timeline_cancel(self, event: CompactionTimeline.CancelRequested) -> None:
        event.stop()
        self.action_cancel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # D5: a read-only session offers no compaction (footer, palette, help) and refuses it.
        return not (action == "compact" and self.app.session is not None and self.app.session.read_only)

    def refuse_read_only(self) -> bool:
        """True (and says so at once, before any model call) when the session is open read-only."""
        if self.app.session is None or not self.app.session.read_only:
            return False
        self.notify("This session is open read-only: nothing can be written to it.", severity="warning")
        return True

    def action_compact(self) -> None:
        if not self.refuse_read_only():
            self.run_agent("compact", None)

    def action_cancel(self) -> None:
        if self.agent is not None and self.agent.is_busy:  # a reply, a compaction or a shell command
            self.agent.abort()
            self.status.message = "cancelling…"

    # --- other screens ------------------------------------------------------------------------
    def action_settings(self) -> None:
        main_commands.open_settings(self)

    def fill_preview(self, timeline: CompactionTimeline) -> None:
        """Give the settings screen's preview the same picture as the main timeline."""
        from tui.compaction.head_tail import HeadTailConfig

        if self.agent is None:
            return
        compaction = self.agent.settings.compaction  # with this session's own values, if any
        timeline.update_timeline(
            self.agent.store.get_branch(),
            context_window=self.agent.context_window,
            reserve_tokens=compaction.reserve_tokens,
            keep_recent_tokens=compaction.keep_recent_tokens,
            calibrate=compaction.calibrate,
            strategy=compaction.strategy,
            head_tail=HeadTailConfig.from_settings(compaction),
        )

    def action_model(self, name: str = "") -> None:
        main_commands.pick_model(self, name)

    def action_resume(self) -> None:
        from tui.screens.session_picker import SessionPicker
        from tui.session.catalog import list_sessions, session_roots

        launch = self.app.launch  # pi's configured session directory is listed too
        lister = partial(list_sessions, session_roots(str(launch.cwd), launch.session_dir, demos=True))
        self.app.push_screen(SessionPicker(lister), self._resume_chosen)

    async def _resume_chosen(self, path: Path | None) -> None:
        if path is not None:
            await self.switch_session(Launch("open", path, self.app.launch.cwd, self.app.launch.session_dir))

    async def action_new_session(self) -> None:
        await self.switch_session(
            Launch("new", cwd=self.app.launch.cwd, session_dir=self.app.launch.session_dir)
        )

    async def switch_session(self, launch: Launch) -> bool:
        """/new, /resume, /fork, /clone: the file is opened (read, checked, locked) on a thread, off the event
        loop; on failure the current session stays. True when the switch happened."""
        if self.agent is not None and (self.agent.is_streaming or self.agent.is_compacting):
            self.agent.abort()
        try:
            opened = await asyncio.to_thread(open_session, launch)
        except (SessionError, OSError) as exc:
            self.notify(str(exc), title="Cannot open the session", severity="error")
            return False
        self.workers.cancel_group(self, "follow")  # the session followed so far is closed now
        self.app.use_session(launch, opened)
        await self._attach_agent(opened.notices)
        await self._show_chat()
        if opened.follow:  # D27: opened read-only because another kompakt writes it
            self.follow_session()
        return True

    # --- watch mode ---------------------------------------------------------------------------
    _follow_problem: str | None = None

    @work(exclusive=True, group="follow", exit_on_error=False)
    async def follow_session(self) -> None:
        from tui.session.follow import follow_session

        stop = asyncio.Event()
        try:
            await follow_session(self.app.store, self._followed, stop)
        finally:
            stop.set()

    async def _followed(self, result: RefreshResult) -> None:
        """Another process appended (or replaced the file): extend the chat; the store's own announcement
        redraws the rest, and the whole chat when the shown path changed (a reload, a compaction, a jump)."""
        store = self.app.store
        if result.problem:
            if result.problem != self._follow_problem:
                self.notify(
                    f"{result.problem}; still watching.", title="Cannot read the session", severity="warning"
                )
            self._follow_problem = result.problem
            return
        self._follow_problem = None
        shown = [e for e in result.new_entries if e.get("type") in _CHAT_ENTRY_TYPES]
        if result.reloaded:
            self.notify("The session file was replaced or truncated: reloaded.", severity="warning")
        if result.reloaded:
            self.tree_pane.set_session(store.tree, store.leaf_id)
        elif store.path_revision != self._drawn_path:
            pass  # the pending SessionChanged redraws the whole chat
        elif len(shown) > FOLLOW_BATCH:
            # One redraw for a whole batch: mounting a fast writer's entries one by one fell minutes behind,
            # while a reload mounts about one screen whatever the batch size.
            await self._draw_chat()
        else:
            for entry in shown:
                await self.chat.add_message(entry)
