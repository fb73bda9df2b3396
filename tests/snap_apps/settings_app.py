"""Snapshot host for the settings screen: fixed files, a fixed environment, nothing time-dependent.

The user file sets the model and keepRecentTokens (with comments), the project file turns the timeline off and
the environment overrides compaction.reserveTokens, so the source column shows all four kinds. Files are
written under a fixed directory so the paths on screen are the same on every machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from textual.app import App

from tui.config import load_settings
from tui.screens.settings_screen import SettingsScreen

SNAP_DIR = Path("/tmp/kompakt-snap-settings")
USER_TOML = """\
# snapshot user settings
model = "anthropic/claude-sonnet-4-5"

[compaction]
keepRecentTokens = 12000  # smaller tail
"""
PROJECT_TOML = "[ui]\nshowTimeline = false\n"
ENV = {"KOMPAKT_COMPACTION__RESERVETOKENS": "8192"}


class SettingsSnapApp(App[None]):
    """Opens the settings screen over an empty app."""

    def __init__(self) -> None:
        super().__init__()
        user, project = SNAP_DIR / "settings.toml", SNAP_DIR / "project" / ".kompakt" / "settings.toml"
        project.parent.mkdir(parents=True, exist_ok=True)
        user.write_text(USER_TOML)
        project.write_text(PROJECT_TOML)
        self._screen = SettingsScreen(
            load_settings(user, project, env=ENV), user, set(), project_path=project
        )

    def on_mount(self) -> None:
        self.push_screen(self._screen)


if __name__ == "__main__":
    SettingsSnapApp().run()
