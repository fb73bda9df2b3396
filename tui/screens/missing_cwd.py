"""A session whose stored working directory no longer exists: say so and ask, never fall back silently.

pi 0.73.1 asks "cwd from session file does not exist … continue in current cwd" before it opens such a
session, and its non-interactive modes fail. kompakt's main screen attaches the agent to the current
directory with the prompt disabled, then asks: "Continue here" enables the prompt (tools work in the
current directory, and the notice says which); "Cancel" quits when this was the session kompakt started
with, and starts a new session here after ``/resume`` or F7. A read-only session runs no tools: it gets
the notice alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.screens.main import MainScreen


def ask_missing_cwd(screen: MainScreen, missing: str, *, startup: bool) -> None:
    """Ask whether to work in the current directory instead of the vanished ``missing``."""
    from tui.launch import Launch
    from tui.screens.dialogs import ConfirmDialog

    opened = screen.kapp.session
    assert opened is not None
    here = screen.kapp.launch.cwd
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
            launch = screen.kapp.launch
            await screen._switch(Launch("new", cwd=here, session_dir=launch.session_dir))
            screen.notify(f"Not opened: its working directory {missing} does not exist.", severity="warning")

    question = (
        f"The working directory stored in this session does not exist:\n  {missing}\n\n"
        f"Continue in the current directory?\n  {here}"
    )
    screen.app.push_screen(ConfirmDialog(question, yes="Continue here", no="Cancel"), answered)
