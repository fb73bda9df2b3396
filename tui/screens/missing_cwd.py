"""A session whose stored working directory no longer exists: say so and ask, never fall back silently.

pi 0.73.1 asks "cwd from session file does not exist … continue in current cwd" before it opens such a
session, and its non-interactive modes fail. kompakt's main screen attaches the agent to the current
directory with the prompt disabled, then asks: "Continue here" enables the prompt (tools work in the
current directory, and the notice says which); "Cancel" quits when this was the session kompakt started
with, and starts a new session here after ``/resume`` or F7. A read-only session runs no tools: it gets
the notice alone. A stored cwd that exists but is not where kompakt started is asked about too
(:func:`ask_other_cwd`): a session file cannot move the tools to another directory by naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tui.session.sanitize import sanitize

if TYPE_CHECKING:
    from tui.screens.main import MainScreen


def ask_missing_cwd(screen: MainScreen, missing: str, *, startup: bool) -> None:
    """Ask whether to work in the current directory instead of the vanished ``missing``."""
    from tui.launch import Launch
    from tui.screens.dialogs import ConfirmDialog

    opened = screen.app.session
    assert opened is not None
    here = screen.app.launch.cwd
    if opened.read_only:
        screen.notify(
            f"The session's working directory no longer exists: {missing}",
            title="Missing directory",
            severity="warning",
            timeout=12,
        )
        return
    screen.prompt.disabled = True

    async def answered(go_on: bool | None) -> None:
        if go_on:
            screen.prompt.disabled = False
            screen.prompt.focus()
            screen.notify(f"Working in {here} (the session's {missing} no longer exists).", timeout=10)
        elif startup:
            screen.app.exit(message=f"Not opened: the session's working directory {missing} does not exist.")
        else:
            launch = screen.app.launch
            await screen.switch_session(Launch("new", cwd=here, session_dir=launch.session_dir))
            screen.notify(f"Not opened: its working directory {missing} does not exist.", severity="warning")

    question = (
        f"The working directory stored in this session does not exist:\n  {missing}\n\n"
        f"Continue in the current directory?\n  {here}"
    )
    screen.app.push_screen(
        ConfirmDialog(question, yes="Continue here", no="Cancel", letters=False, default="yes"), answered
    )


def ask_other_cwd(screen: MainScreen, stored: Path) -> None:
    """The session names another existing directory: tools stay here unless the user moves them there."""
    from tui.screens.dialogs import ConfirmDialog

    here = screen.app.launch.cwd
    screen.prompt.disabled = True  # nothing runs anywhere until the user has answered

    async def answered(move: bool | None) -> None:
        if move:  # the agent may not exist yet at start-up: it takes the choice when it is made
            screen.chosen_workspace = stored
            if screen.agent is not None:
                screen.agent.set_workspace(stored)
        screen.prompt.disabled = False
        screen.prompt.focus()
        where = stored if move else here
        screen.notify(f"Tools work in {sanitize(str(where))}.", timeout=8)

    question = (
        f"This session was recorded in another directory:\n  {sanitize(str(stored))}\n\n"
        f"Tools work here, where kompakt was started:\n  {sanitize(str(here))}\n\n"
        "Work in the session's directory instead?"
    )
    screen.app.push_screen(ConfirmDialog(question, yes="Work there", no="Stay here"), answered)
