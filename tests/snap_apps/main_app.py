"""Snapshot host for the main screen: the real app on the bundled demo session, with fixed directories.

:func:`main_snap_app` points kompakt's home, config and pi-session directories at fixed paths under
``/tmp/kompakt-snap-main`` (the settings screen shows the settings file's path, so it must not vary), writes no
user settings (no model and no key: the offline model, so nothing depends on the machine), and opens
``--demo``. :func:`settle` is the ``run_before`` start: it waits for start-up, clears the start-up
notifications and stops cursor blinking so that every frame is the same.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tui.app import KompaktApp
from tui.config.loader import load_settings
from tui.launch import Launch
from tui.screens.main import MainScreen

SNAP_DIR = Path("/tmp/kompakt-snap-main")
ENV = {
    "KOMPAKT_HOME": str(SNAP_DIR / "home"),
    "KOMPAKT_CONFIG_DIR": str(SNAP_DIR / "config"),
    "KOMPAKT_PI_SESSIONS": str(SNAP_DIR / "pi-sessions"),
}
HANG_GUARD_S = 60.0


def main_snap_app() -> KompaktApp:
    """The app on a fresh demo session (call with ``ENV`` in the environment)."""
    shutil.rmtree(SNAP_DIR, ignore_errors=True)
    (SNAP_DIR / "config").mkdir(parents=True)
    return KompaktApp(
        Launch("demo", cwd=SNAP_DIR), load_result=load_settings(None, None, env={}), start_background=False
    )


async def wait_for(pilot: Any, predicate: Any) -> Any:
    """Poll between frames; the limit only keeps a broken snapshot from hanging the suite."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not (value := predicate()):
        assert time.monotonic() < deadline, "the snapshot app never got there"
        await pilot.pause(0.02)
    return value


def main_screen(app: KompaktApp) -> MainScreen:
    return next(screen for screen in app.screen_stack if isinstance(screen, MainScreen))


def still(app: KompaktApp) -> None:
    """No blinking cursors and no toasts in the picture."""
    for widget in app.screen.query("*"):
        if hasattr(widget, "cursor_blink"):
            widget.cursor_blink = False
    app.clear_notifications()


async def settle(pilot: Any) -> MainScreen:
    """Start-up done (agent, timeline, chat), notifications gone, cursors still."""
    app = pilot.app
    await wait_for(pilot, lambda: any(isinstance(s, MainScreen) for s in app.screen_stack))
    screen = main_screen(app)
    await wait_for(pilot, lambda: screen.agent is not None and screen.timeline.timeline is not None)
    await pilot.pause()
    still(app)
    await pilot.pause()
    return screen


if __name__ == "__main__":
    import os

    os.environ.update(ENV)
    main_snap_app().run()
