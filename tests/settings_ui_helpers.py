"""Shared setup for the settings screen tests: a clean KOMPAKT_ environment, files, and a host app.

The host app pushes a :class:`SettingsScreen` on mount and records what it dismisses with and every
``WhatIf``/``Saved`` message that reaches the app, so tests can assert on what the lead's app would see.
:func:`settings_ready` waits until F5 has every row and its preview (the first frame has only what fits).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from textual.app import App

from tests.pages import wait_until
from tui.config import load_settings
from tui.screens.settings_screen import SettingsScreen

USER_TOML = """\
# My kompakt settings.
model = "openai/gpt-4o-mini"   # the everyday model

[compaction]
# how much stays verbatim
keepRecentTokens = 20000  # tuned by hand
reserveTokens = 16384

# --- retries below ---
[retry]
maxRetries = 3
"""


async def settings_ready(pilot: Any, app: App[Any]) -> SettingsScreen:
    """Until the settings screen is the active one with every row mounted and its preview drawn; the screen."""

    def ready() -> SettingsScreen | None:
        screen = app.screen
        return screen if isinstance(screen, SettingsScreen) and screen.is_mounted and screen.ready else None

    return await wait_until(pilot, ready, "the settings screen, every row and the preview")


def clear_kompakt_env(monkeypatch: Any, config_dir: Path) -> None:
    """No KOMPAKT_ setting from the machine running the tests; the config dir points at ``config_dir``."""
    for name in list(os.environ):
        if name.upper().startswith("KOMPAKT_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("KOMPAKT_CONFIG_DIR", str(config_dir))


class SettingsHost(App[None]):
    """Pushes a SettingsScreen for ``user_file`` (and a project file) and records what comes back."""

    def __init__(self, user_file: Path, project_file: Path) -> None:
        super().__init__()
        self.user_file = user_file
        self.project_file = project_file
        self.dismissed: list[Any] = []
        self.what_ifs: list[tuple[int, int]] = []
        self.saved: list[SettingsScreen.Saved] = []
        self.ignore_hashes: set[str] = set()

    def on_mount(self) -> None:
        result = load_settings(self.user_file, self.project_file)
        screen = SettingsScreen(result, self.user_file, self.ignore_hashes, project_path=self.project_file)
        self.push_screen(screen, self.dismissed.append)

    def on_settings_screen_what_if(self, message: SettingsScreen.WhatIf) -> None:
        self.what_ifs.append((message.keep_recent_tokens, message.reserve_tokens))

    def on_settings_screen_saved(self, message: SettingsScreen.Saved) -> None:
        self.saved.append(message)
