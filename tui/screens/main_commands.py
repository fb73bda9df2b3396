"""The main screen's longer actions: tree navigation, the settings and model screens, /name, /moa, /export.

Each takes the :class:`~tui.screens.main.MainScreen` it runs for and goes through its agent, so the screen
module keeps to composing and routing. Failures are not caught here: the calling worker's ERROR state is
reported by the screen's one worker handler.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.agent.navigation import NavigateResult
    from tui.agent.session import AgentSession
    from tui.export import ExportFormat
    from tui.screens.dialogs import SummaryChoice
    from tui.screens.main import MainScreen

EXPORT_FORMATS: dict[str, ExportFormat] = {"html": "html", "md": "md", "markdown": "md"}


async def navigate(screen: MainScreen, agent: AgentSession, entry_id: str) -> None:
    """pi's "After Enter": ask whether to summarise the branch being left, then move the leaf."""
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
                screen.action_open_tree()
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
    screen.send_queued()  # what was typed during the branch summary goes out now (pi 0.73.1)


def open_settings(screen: MainScreen) -> None:
    from tui.screens.settings_screen import SettingsScreen

    app = screen.app
    if app.load_result is None:
        screen.notify(
            f"{app.settings_error}\nFix the file first; the defaults are in force.",
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
        preview=screen.fill_preview,
        session_values=screen.agent.session_overrides.dotted() if screen.agent is not None else None,
        on_what_if=screen.timeline.set_what_if,
    )
    app.push_screen(settings, lambda _result: screen.timeline.clear_what_if())


def pick_model(screen: MainScreen, name: str) -> None:
    """``/model name`` sets it; F6 or a bare ``/model`` opens the picker."""
    from tui.screens.model_picker import ModelPicker

    if screen.refuse_read_only():  # the choice is recorded as a model_change entry
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
    """/name: pi trims the name; /name alone shows the current one."""
    agent = screen.agent
    if agent is not None and argument.strip():
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
    references = screen.app.current_settings.moa.reference_models
    models = ", ".join(references) or "none configured (set moa.referenceModels)"
    screen.notify(f"Mixture of Agents {word}. Reference models: {models}")


def export(screen: MainScreen, kind: str) -> None:
    """/export: the page is written on a thread (a long session takes a while to render and write)."""
    word, _, target = kind.strip().partition(" ")
    fmt = EXPORT_FORMATS.get(kind.strip().lower())
    if screen.agent is None or not screen.agent.store.exists_on_disk:
        screen.notify("Nothing to export yet.", severity="warning")
    elif word.lower() == "jsonl" or word.lower().endswith(".jsonl"):
        from tui.screens.branch_actions import export_jsonl

        export_jsonl(screen, target.strip() or None if word.lower() == "jsonl" else word)
    elif fmt is None:
        screen.notify("Usage: /export [html|md|jsonl [file]]", severity="warning")
    else:
        screen.run_worker(_export(screen, screen.agent, fmt), group="export", exit_on_error=False)


async def _export(screen: MainScreen, agent: AgentSession, fmt: ExportFormat) -> None:
    from tui.export import export_session

    store, leaf = agent.store, agent.store.leaf_id
    # The agent may append while the page renders: the thread reads a snapshot, not the live index.
    path = await asyncio.to_thread(lambda: export_session(store.snapshot(), fmt, leaf_id=leaf))
    screen.notify(f"Wrote {path}", title="Exported")
