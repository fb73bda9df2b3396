"""The main screen's session plumbing: attaching an agent to the open session, and following a watched file.

:func:`attach_agent` makes the :class:`~tui.agent.session.AgentSession` for the session the app has open
(after start-up and after every session switch, :func:`switch_session`), wires its events to the screen, and asks about a
working directory that is gone or elsewhere. :func:`show_followed` extends the chat when another process
appends to a watched session (``kompakt watch``); the store's own announcement redraws the rest.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Any

from widgets import gc_pause
from widgets.status_bar import SessionFigures
from widgets.timeline import BUILD_WORKER_ENTRIES

if TYPE_CHECKING:
    from collections.abc import Callable

    from tui.agent.session import AgentSession
    from tui.launch import Launch
    from tui.screens.main import MainScreen
    from tui.session.entries import Entry
    from tui.session.store import RefreshResult
    from widgets.timeline import CompactionTimeline

# Entry types the chat shows, and how many new ones watch mode still mounts one by one.
CHAT_ENTRY_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})
FOLLOW_BATCH = 8


async def attach_agent(screen: MainScreen, notices: list[str], *, startup: bool) -> None:
    from tui.agent.session import AgentSession
    from tui.hooks import HookRunner
    from tui.screens.agent_view import AgentEventView
    from tui.screens.main import AgentEventMessage

    app = screen.app
    opened = app.session
    assert opened is not None and app.settings is not None
    store = opened.store
    if screen.agent is not None:
        await screen.agent.close()
        screen.chat.end_stream()  # a reply the old agent left open goes with the next redraw
    settings = app.settings
    store.fsync_mode = settings.session.fsync
    store.index_tree()
    gc_pause.freeze_loaded(len(store.entries))  # a big session's entries and tree index, while it is open
    hooks = HookRunner.from_settings(
        settings.hooks.modules,
        on_error=lambda error: screen.notify(str(error), title="Hook error", severity="warning"),
    )
    # Tools work where kompakt started; a session file's cwd only once the user says so (ask_about_cwd).
    # At start-up the user may have answered already; after a switch the old session's answer is void.
    workspace = (screen.chosen_workspace if startup else None) or app.launch.cwd
    agent = AgentSession(store, settings, workspace=workspace, ask=partial(ask_approval, screen), hooks=hooks)
    screen.agent = agent
    screen.queued_prompts.clear()
    screen.queued_name = None
    screen.pending_edit = None  # Ctrl+E's move was in the session left
    screen.status.forget_figures()  # a long session's are counted on a worker: not the old ones meanwhile
    screen.events = AgentEventView(screen, store, screen.chat, screen.timeline, screen.status)
    agent.subscribe(lambda event: screen.post_message(AgentEventMessage(event)))
    show_timeline(screen, settings.ui.show_timeline)
    screen.refresh_status()
    screen.refresh_timeline()
    for notice in notices:
        screen.notify(notice, timeout=8)
    warn_if_reserve_fills_window(screen)
    if not startup:  # at start-up the first frame asked already (MainScreen.on_mount)
        ask_about_cwd(screen, startup=False)


def ask_about_cwd(screen: MainScreen, *, startup: bool) -> None:
    """Ask about a stored working directory that is gone or elsewhere. At start-up this runs with the first
    frame (the header is the file's first line), so the question comes before the user can type into the
    session, not seconds later over what they are typing."""
    from tui.launch import missing_session_cwd, other_session_cwd
    from tui.screens.missing_cwd import ask_missing_cwd, ask_other_cwd

    app = screen.app
    opened = app.session
    assert opened is not None
    screen.chosen_workspace = None
    if app.launch.mode == "demo":  # the demo's stored cwd is made up and it works here
        return
    missing_cwd = missing_session_cwd(opened.store)
    if missing_cwd is not None:
        ask_missing_cwd(screen, missing_cwd, startup=startup)
    elif not opened.read_only and (other_cwd := other_session_cwd(opened.store, app.launch.cwd)):
        ask_other_cwd(screen, other_cwd)


async def ask_approval(screen: MainScreen, tool: str, args: dict[str, Any], reason: str) -> bool:
    """The agent asks before a tool runs (``tools.approval`` = ask): the approval dialog answers."""
    from tui.screens.approval import ApprovalDialog

    return bool(await screen.app.push_screen_wait(ApprovalDialog(tool, args, reason)))


def show_timeline(screen: MainScreen, show: bool) -> None:
    """``ui.showTimeline``. Shown means "as the stylesheet says", which hides the collapsed strip on a
    short terminal (D25); an inline ``display = True`` would override that."""
    screen.timeline_enabled = show
    if show:
        screen.timeline.styles.clear_rule("display")
    else:
        screen.timeline.display = False


def show_status(screen: MainScreen) -> None:
    """The status bar's figures from the agent: model, context (measured or estimated), cost, budget.
    The context and the cost walk the session: a long one's are counted on a worker thread."""
    agent, status = screen.agent, screen.status
    if agent is None:
        return
    status.model = agent.model
    status.offline = agent.is_offline
    status.session_settings = bool(agent.session_overrides)
    status.max_iterations = screen.app.current_settings.agent.max_iterations
    store = agent.store
    count = partial(session_figures, agent, partial(store.tree.path, store.leaf_id))
    status.show_figures(count, at_once=len(store.entries) <= BUILD_WORKER_ENTRIES)


def session_figures(agent: AgentSession, read_path: Callable[[], list[Entry]]) -> SessionFigures:
    """The context size of the path ``read_path`` gives, and the session's cost (safe on a worker thread:
    the tree only grows meanwhile, and a stored entry never changes)."""
    usage, cost = agent.context_usage(read_path()), agent.cost_total
    if usage is None:
        return SessionFigures(None, 0, False, None, "", cost)
    window_model = usage.window_model or ""
    return SessionFigures(
        usage.tokens, usage.context_window, usage.estimated, usage.compaction_id, window_model, cost
    )


def fill_preview(screen: MainScreen, timeline: CompactionTimeline) -> None:
    """Draw the session's compaction picture on ``timeline`` (the screen's, or the settings preview)."""
    from tui.compaction.head_tail import HeadTailConfig

    agent = screen.agent
    if agent is None:
        return
    compaction = agent.settings.compaction  # with this session's own values, if any
    store = agent.store
    # The path is read with the timeline, on its worker thread for a long session (the tree only grows
    # on the event loop meanwhile, and the leaf is the one of now).
    timeline.update_timeline(
        partial(store.tree.path, store.leaf_id),
        size=len(store.entries),
        context_window=agent.acting_context_window,  # a MoA aggregator's window while it replies
        reserve_tokens=compaction.reserve_tokens,
        keep_recent_tokens=compaction.keep_recent_tokens,
        calibrate=compaction.calibrate,
        strategy=compaction.strategy,
        head_tail=HeadTailConfig.from_settings(compaction),
    )


async def switch_session(screen: MainScreen, launch: Launch) -> bool:
    """/new, /resume, /fork, /clone: the file is opened (read, checked, locked) on a thread, off the event
    loop; on failure the current session stays. True when the switch happened."""
    from tui.launch import open_session
    from tui.screens.commands import restore_queued
    from tui.session.errors import SessionError

    # What was queued for the old session is neither sent to it as the run stops nor dropped: it goes
    # back into the prompt.
    restore_queued(screen)
    agent = screen.agent
    if agent is not None and (agent.is_streaming or agent.is_compacting):
        agent.abort()
    try:
        opened = await asyncio.to_thread(open_session, launch)
    except (SessionError, OSError) as exc:
        screen.notify(str(exc), title="Cannot open the session", severity="error")
        return False
    screen.workers.cancel_group(screen, "follow")  # the session followed so far is closed now
    screen.app.use_session(launch, opened)
    await attach_agent(screen, opened.notices, startup=False)
    await screen.show_chat()
    if opened.follow:  # D27: opened read-only because another kompakt writes it
        screen.follow_session()
    return True


def warn_if_reserve_fills_window(screen: MainScreen) -> None:
    from tui.compaction.engine import reserve_fills_window

    agent = screen.agent
    assert agent is not None
    # The settings in force for this session: the files' with the session's own values on top.
    reserve, window = agent.settings.compaction.reserve_tokens, agent.context_window
    if reserve_fills_window(reserve, window):
        screen.notify(
            f"compaction.reserveTokens {reserve:,} is not below the context window of {window:,} "
            f"tokens of {agent.model}: automatic compaction is off until it is lowered.",
            title="Settings",
            severity="warning",
            timeout=12,
        )


async def show_followed(screen: MainScreen, result: RefreshResult) -> None:
    """Another process appended (or replaced the file): extend the chat; the store's own announcement
    redraws the rest, and the whole chat when the shown path changed (a reload, a compaction, a jump)."""
    store = screen.app.store
    if result.problem:
        if result.problem != screen.follow_problem:
            screen.notify(
                f"{result.problem}; still watching.", title="Cannot read the session", severity="warning"
            )
        screen.follow_problem = result.problem
        return
    screen.follow_problem = None
    shown = [e for e in result.new_entries if e.get("type") in CHAT_ENTRY_TYPES]
    if result.reloaded:
        screen.notify("The session file was replaced or truncated: reloaded.", severity="warning")
        screen.tree_pane.set_session(store.tree, store.leaf_id)
    elif store.path_revision != screen.drawn_path:
        pass  # the pending SessionChanged redraws the whole chat
    elif len(shown) > FOLLOW_BATCH:
        # One redraw for a whole batch: mounting a fast writer's entries one by one fell minutes behind,
        # while a reload mounts about one screen whatever the batch size.
        await screen.draw_chat()
    else:
        for entry in shown:
            await screen.chat.add_message(entry)
