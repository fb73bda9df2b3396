"""What each row of the action table (:mod:`tui.actions`) does on the main screen.

Keys, slash commands and the palette all reach these handlers through one Textual action,
``command(name, argument)`` on the main screen, so ``check_action`` refuses a write in a read-only session
whichever way it was asked for. A handler takes the screen and the slash command's argument ("" from a key
or the palette); the longer ones live beside the screen's other flows (:mod:`~tui.screens.compaction_actions`,
:mod:`~tui.screens.branch_actions`, :mod:`~tui.screens.tree_actions`). Failures are not caught here: a
worker's ERROR state is reported by the screen's one worker handler.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual.binding import Binding, BindingType

from tui.actions import ACTIONS, BY_NAME, Action
from tui.screens import branch_actions, chat_view, compaction_actions, session_view

if TYPE_CHECKING:
    from pathlib import Path

    from tui.agent.session import AgentSession
    from tui.export import ExportFormat
    from tui.screens.main import MainScreen

EXPORT_FORMATS: dict[str, ExportFormat] = {"html": "html", "md": "md", "markdown": "md"}
READ_ONLY = "This session is open read-only: nothing can be written to it."


# The footer shows the bindings in this order (F-keys first, as the README lists them).
KEY_ORDER = ("f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "escape", "ctrl+n", "ctrl+q")


def key_bindings(*, on_app: bool) -> list[BindingType]:
    """The main screen's bindings (or the app's), from the table: each runs ``command(name)``."""
    keyed = sorted((a for a in ACTIONS if a.key), key=lambda a: KEY_ORDER.index(a.key))
    return [
        Binding(
            action.key,
            action.name if on_app else f"command({action.name!r})",
            action.title,
            tooltip=action.help,
            id=action.binding_id,
            show=action.footer,
            priority=action.priority,
        )
        for action in keyed
        if action.on_app == on_app
    ]


def allowed(screen: MainScreen, name: str) -> bool:
    """``check_action`` for a table row: a write is neither offered nor run in a read-only session."""
    action = BY_NAME.get(name)
    return action is not None and not (action.writes and screen.read_only)


async def run(screen: MainScreen, name: str, argument: str) -> None:
    result = HANDLERS[name](screen, argument)
    if inspect.isawaitable(result):
        await result


async def run_slash(screen: MainScreen, action: Action, argument: str) -> None:
    """A slash command, through the action system; a refusal is said at once (D5: before any model call)."""
    if not await screen.app.run_action(("", "command", (action.name, argument)), screen):
        reason = (
            READ_ONLY if action.writes and screen.read_only else f"/{action.slash} is not available here."
        )
        screen.notify(reason, severity="warning")


def unknown_command(screen: MainScreen, name: str, typed: str) -> None:
    """D19: an unknown /command keeps its text in the prompt, to be fixed (or sent with '//' in front)."""
    if not screen.prompt.text:
        screen.prompt.text = typed
        screen.prompt.move_cursor(screen.prompt.document.end)
    screen.notify(
        f"Unknown command /{name}. Press F1 for the list; start with // to send it as text.",
        severity="warning",
    )


def refused_write_key(screen: MainScreen, key: str) -> bool:
    """Whether ``key`` is the key (default or remapped) of a write the read-only session hides: D5 hides
    it from the footer, so pressing it did nothing at all; it is refused in words instead."""
    if not screen.read_only:
        return False
    keymap = screen.app.settings.keymap if screen.app.settings is not None else {}
    for action in ACTIONS:
        if action.writes and action.key and not action.on_app:
            keys = keymap.get(action.binding_id, action.key)
            if key in (k.strip() for k in keys.split(",")):
                return refuse_read_only(screen)
    return False


def refuse_read_only(screen: MainScreen) -> bool:
    """True (and says so at once, before any model call) when the session is open read-only."""
    if not screen.read_only:
        return False
    screen.notify(READ_ONLY, severity="warning")
    return True


# --- agent jobs: what MainScreen.run_agent runs ---------------------------------------------------
def prompt_job(text: str) -> Callable[[AgentSession], Awaitable[object]]:
    return lambda agent: agent.prompt(text)


def bash_job(screen: MainScreen, command: str, exclude: bool) -> Callable[[AgentSession], Awaitable[None]]:
    """``!cmd`` (``!!cmd``: ``exclude`` from the context), with the status line saying it runs."""

    async def job(agent: AgentSession) -> None:
        screen.status.message = "running a shell command · esc cancels it"
        try:
            await agent.run_bash(command, exclude_from_context=exclude)
        finally:
            screen.status.message = ""

    return job


def compact_job(
    instructions: str | None, keep: int | None = None, reserve: int | None = None, strategy: str | None = None
) -> Callable[[AgentSession], Awaitable[None]]:
    """A compaction now (F8, /compact, the what-if's Enter with its values)."""

    async def job(agent: AgentSession) -> None:
        from tui.compaction.errors import CompactionFailed

        with contextlib.suppress(CompactionFailed):  # its end event has shown the error
            await agent.compact(
                instructions, keep_recent_tokens=keep, reserve_tokens=reserve, strategy=strategy
            )

    return job


# --- the handlers ---------------------------------------------------------------------------------
def compact(screen: MainScreen, argument: str) -> None:
    """F8 or ``/compact [--preview] [focus]``."""
    preview, _, focus = argument.partition(" ") if argument.startswith("--preview") else ("", "", argument)
    if preview == "--preview":
        screen.compaction_flow("preview", focus.strip() or None)
    else:
        screen.run_agent(compact_job(argument or None))


def label(screen: MainScreen, text: str) -> None:
    agent = screen.agent
    if agent is None or agent.store.leaf_id is None:
        screen.notify("Nothing to label yet.", severity="warning")
        return
    agent.label(agent.store.leaf_id, text)


def open_settings(screen: MainScreen, _argument: str = "") -> None:
    from tui.screens.settings_screen import SettingsScreen

    app = screen.app
    if app.load_result is None:
        screen.notify(
            f"{app.settings_error.listing() if app.settings_error else ''}\n"
            "Fix the file first; the defaults are in force.",
            title="Settings file is invalid",
            severity="error",
        )
        return
    user, project = app.settings_paths()
    settings = SettingsScreen(
        app.load_result,
        user,
        app.ignore_hashes,
        project_path=project,
        preview=partial(session_view.fill_preview, screen),
        session_values=screen.agent.session_overrides.dotted() if screen.agent is not None else None,
        on_what_if=screen.timeline.set_what_if,
    )
    app.push_screen(settings, lambda _result: screen.timeline.clear_what_if())


def pick_model(screen: MainScreen, name: str) -> None:
    """``/model name`` sets it; F6 or a bare ``/model`` opens the picker."""
    from tui.screens.model_picker import ModelPicker

    if refuse_read_only(screen):  # the choice is recorded as a model_change entry
        return

    def chosen(model: str | None) -> None:
        if model and screen.agent is not None:
            screen.agent.set_model(model)
            screen.notify(f"Model: {model}")

    if name:
        chosen(name)
        return
    current = screen.agent.model if screen.agent else None
    screen.app.push_screen(ModelPicker(current=current, settings=screen.app.settings), chosen)


def rename(screen: MainScreen, argument: str) -> None:
    """/name: pi trims the name; /name alone shows the current one. During a run the name waits for its
    end (:func:`send_queued`): its entry written mid-turn landed between the user message and the reply."""
    agent = screen.agent
    if agent is not None and argument.strip() and agent.is_busy:
        screen.queued_name = argument
        screen.notify(f"The session is named when the reply ends: {argument.strip()}")
    elif agent is not None and argument.strip():
        agent.rename(argument)
        screen.notify(f"Session name set: {agent.store.name}")
    elif agent is not None and agent.store.name:
        screen.notify(f"Session name: {agent.store.name}")
    else:
        screen.notify("Usage: /name <name>", severity="warning")


def toggle_moa(screen: MainScreen, argument: str) -> None:
    word = argument.strip().lower()
    if screen.agent is None or word not in ("on", "off"):
        screen.notify("Usage: /moa on|off", severity="warning")
        return
    screen.agent.set_moa(word == "on")
    screen.refresh_status()  # the window that applies is the aggregator's while MoA is on
    screen.refresh_timeline()
    references = screen.app.current_settings.moa.reference_models
    models = ", ".join(references) or "none configured (set moa.referenceModels)"
    screen.notify(f"Mixture of Agents {word}. Reference models: {models}")


def export(screen: MainScreen, kind: str) -> None:
    """/export [html|md|jsonl [FILE]]: the page is written on a thread (a long session takes a while)."""
    kind = kind.strip() or "html"
    word, _, target = kind.partition(" ")
    fmt = EXPORT_FORMATS.get(word.lower())
    if screen.agent is None or not screen.agent.store.exists_on_disk:
        screen.notify("Nothing to export yet.", severity="warning")
    elif word.lower() == "jsonl" or word.lower().endswith(".jsonl"):
        from tui.screens.branch_actions import export_jsonl

        export_jsonl(screen, target.strip() or None if word.lower() == "jsonl" else word)
    elif fmt is None:
        screen.notify("Usage: /export [html|md|jsonl [file]]", severity="warning")
    else:
        from tui.export import default_export_path

        # Where kompakt started (as pi's /export), not beside the session file in the sessions directory;
        # a relative FILE is relative to it too.
        name = target.strip() or default_export_path(screen.agent.store.path, fmt).name
        out = screen.app.launch.cwd / Path(name).expanduser()
        screen.run_worker(_export(screen, screen.agent, fmt, out), group="export", exit_on_error=False)


async def _export(screen: MainScreen, agent: AgentSession, fmt: ExportFormat, out: Path | None) -> None:
    from tui.export import export_session

    store, leaf = agent.store, agent.store.leaf_id
    # The agent may append while the page renders: the thread reads a snapshot, not the live index.
    try:
        path = await asyncio.to_thread(lambda: export_session(store.snapshot(), fmt, out, leaf_id=leaf))
    except OSError as exc:
        screen.notify(f"Cannot write the export: {exc}", title="Export failed", severity="error")
        return
    screen.notify(f"Wrote {path}", title="Exported")


def session_settings(screen: MainScreen, argument: str) -> None:
    from tui.screens.compaction_actions import session_settings_command

    session_settings_command(screen, argument)


def resume(screen: MainScreen, _argument: str = "") -> None:
    """F7 or /resume: the session picker (pi's configured session directory is listed too)."""
    from tui.screens.session_picker import SessionPicker
    from tui.session.catalog import list_sessions, session_roots

    launch = screen.app.launch
    lister = partial(list_sessions, session_roots(str(launch.cwd), launch.session_dir, demos=True))

    async def chosen(path: Path | None) -> None:
        if path is not None:
            from tui.launch import Launch

            await screen.switch_session(Launch("open", path, launch.cwd, launch.session_dir))

    screen.app.push_screen(SessionPicker(lister), chosen)


async def new_session(screen: MainScreen, _argument: str = "") -> None:
    from tui.launch import Launch

    launch = screen.app.launch
    await screen.switch_session(Launch("new", cwd=launch.cwd, session_dir=launch.session_dir))


def toggle_timeline(screen: MainScreen, _argument: str = "") -> None:
    """F4: expand the timeline and focus it (its what-if keys then work at once); F4 again gives the
    prompt the focus back. An expanded timeline without the focus (the prompt was clicked) gets
    the focus, rather than collapsing under the user (D20). Whether it is shown is the setting's
    say (``ui.showTimeline``): a short terminal shows the panel only once it is expanded (D25)."""
    timeline = screen.timeline
    if timeline.expanded and (timeline.has_focus or not screen.timeline_enabled):
        timeline.expanded = False
        if timeline.has_focus:
            screen.prompt.focus()
        return
    timeline.expanded = True
    if screen.timeline_enabled:
        timeline.focus()


def cancel(screen: MainScreen, _argument: str = "") -> None:
    """Esc: the running reply, compaction or shell command stops. What was typed meanwhile is not sent
    (nor lost): it goes back into the prompt, before any draft, for the user to send or edit (pi 0.73.1).
    With nothing running, Esc right after Ctrl+E takes the edit back."""
    if screen.agent is not None and screen.agent.is_busy:
        restore_queued(screen)
        screen.agent.abort()
        screen.status.message = "cancelling…"
    elif screen.pending_edit is not None:
        branch_actions.undo_edit(screen)


def send_queued(screen: MainScreen) -> None:
    """The run ended (also after a failure or Esc): a /name typed meanwhile is written, after the reply;
    then what was typed goes out, before anything typed later."""
    name, screen.queued_name = screen.queued_name, None
    if name is not None and screen.agent is not None:
        screen.agent.rename(name)
        screen.notify(f"Session name set: {screen.agent.store.name}")
    if screen.queued_prompts:
        queued, screen.queued_prompts = "\n\n".join(screen.queued_prompts), []
        screen.status.message = ""
        screen.run_agent(prompt_job(queued))


def restore_queued(screen: MainScreen) -> None:
    """The queued messages back into the prompt, ahead of what is typed there, the cursor at the end."""
    if not screen.queued_prompts:
        return
    queued, screen.queued_prompts = screen.queued_prompts, []
    prompt = screen.prompt
    prompt.load_text("\n\n".join(part for part in [*queued, prompt.text] if part.strip()))
    prompt.move_cursor(prompt.document.end)


def _toggle_tree(screen: MainScreen, _argument: str) -> None:
    from tui.screens.tree_actions import toggle_tree

    toggle_tree(screen)


def _open_tree(screen: MainScreen, _argument: str) -> None:
    from tui.screens.tree_actions import open_tree

    open_tree(screen)


async def _quit(screen: MainScreen, _argument: str) -> None:
    await screen.app.action_quit()


Handler = Callable[["MainScreen", str], Awaitable[None] | None]
HANDLERS: dict[str, Handler] = {
    "compact": compact,
    "open_tree": _open_tree,
    "model": pick_model,
    "settings": open_settings,
    "label": label,
    "export": export,
    "fork": lambda screen, _argument: screen.run_job("navigate", branch_actions.fork_from_message(screen)),
    "clone": lambda screen, argument: screen.run_job(
        "navigate", branch_actions.clone_branch(screen, argument or None)
    ),
    "new_session": new_session,
    "resume": resume,
    "moa": toggle_moa,
    "continue": lambda screen, _argument: screen.run_agent(lambda agent: agent.continue_()),
    "uncompact": lambda screen, argument: screen.run_job(
        "navigate", compaction_actions.undo_compaction(screen, argument or None)
    ),
    "inspect": lambda screen, argument: screen.compaction_flow("inspect", argument or None),
    "session_settings": session_settings,
    "rename": rename,
    "help": lambda screen, _argument: screen.app.action_help(),
    "toggle_tree": _toggle_tree,
    "toggle_timeline": toggle_timeline,
    "toggle_chat_view": lambda screen, _argument: chat_view.toggle(screen),
    "cancel": cancel,
    "quit": _quit,
}
assert set(HANDLERS) == set(BY_NAME), "every row of tui.actions.ACTIONS needs a handler here"
