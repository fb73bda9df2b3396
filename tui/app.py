"""The Textual application: settings, the open session, litellm loading, keys, commands and help.

The app owns what outlives a screen: the effective settings (live-reloaded from settings.toml and
published on :attr:`KompaktApp.settings_changed`), the open session and its agent, and litellm, which
loads in a thread after the first frame so that start-up stays fast. Screens own the widgets.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.signal import Signal

from tui.config import Settings, SettingsError
from tui.config.loader import LoadResult, load_default_settings, project_settings_path, user_settings_path
from tui.launch import Launch, OpenedSession, open_session

HELP_URL_TEXT = "F1 help · ctrl+p commands · F2 tree · F3 /tree · F4 timeline · F5 settings · F6 model"


class KompaktApp(App[None]):
    """kompakt: a tree-shaped LLM session with live, inspectable compaction."""

    CSS_PATH = "app.tcss"
    TITLE = "kompakt"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "help", "Help", id="app.help"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
    ]

    def __init__(
        self,
        launch: Launch | None = None,
        *,
        load_result: LoadResult | None = None,
        start_background: bool = True,
    ) -> None:
        super().__init__()
        self.launch = launch or Launch()
        self.settings_changed: Signal[tuple[Settings, list]] = Signal(self, "settings_changed")
        self.litellm_loaded: Signal[bool] = Signal(self, "litellm_loaded")
        self.load_result = load_result
        self.settings = load_result.settings if load_result else Settings()
        self.settings_error: SettingsError | None = None
        self.session: OpenedSession | None = None
        self.start_background = start_background
        self.ignore_hashes: set[str] = set()
        self._stop_watch = asyncio.Event()

    # --- start-up -------------------------------------------------------------------------------
    def on_mount(self) -> None:
        if self.load_result is None:
            try:
                self.load_result = load_default_settings()
                self.settings = self.load_result.settings
            except SettingsError as exc:
                self.settings_error = exc
        self.apply_settings(self.settings)
        from tui.screens.main import MainScreen

        self.push_screen(MainScreen())
        if self.settings_error:
            self.notify(
                f"{self.settings_error}\nUsing the defaults until it is fixed.",
                title="Settings error",
                severity="error",
                timeout=12,
            )
        if self.start_background:
            self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        self.load_litellm()
        self.run_worker(self._watch_settings(), group="settings-watch", exclusive=True, exit_on_error=False)

    @work(thread=True, group="litellm", exit_on_error=False)
    def load_litellm(self) -> None:
        from tui.agent.litellm_loader import load_litellm

        load_litellm()
        self.call_from_thread(self.litellm_loaded.publish, True)

    def open_launch(self, launch: Launch) -> OpenedSession:
        """Open the store for ``launch`` and make it the current session (closing the previous one)."""
        opened = open_session(launch)
        if self.session is not None:
            self.session.store.close()
        self.launch, self.session = launch, opened
        return opened

    # --- settings -------------------------------------------------------------------------------
    def apply_settings(self, settings: Settings) -> None:
        """Apply the parts of the settings that belong to the app: theme and keymap."""
        self.settings = settings
        if settings.ui.theme in self.available_themes:
            self.theme = settings.ui.theme
        if settings.keymap:
            self.set_keymap(dict(settings.keymap))

    def settings_paths(self) -> tuple[Path, Path]:
        return user_settings_path(), project_settings_path()

    async def _watch_settings(self) -> None:
        from tui.config.watcher import watch_settings

        await watch_settings(
            self.settings_paths(),
            self._settings_reloaded,
            self._stop_watch,
            self.ignore_hashes,
            on_error=self._settings_invalid,
            initial=self.load_result,
        )

    def _settings_reloaded(self, settings: Settings, changes: list) -> None:
        self.settings_error = None
        self.apply_settings(settings)
        with contextlib.suppress(SettingsError):
            self.load_result = load_default_settings()
        shown = ", ".join(f"{key} {old!r} → {new!r}" for key, old, new in changes[:4])
        more = f" (+{len(changes) - 4} more)" if len(changes) > 4 else ""
        self.notify(f"{shown}{more}", title="Settings reloaded", timeout=6)
        self.settings_changed.publish((settings, changes))

    def _settings_invalid(self, error: SettingsError) -> None:
        self.settings_error = error
        self.notify(
            f"{error}\nThe last good settings stay in force.",
            title="Settings not applied",
            severity="error",
            timeout=12,
        )

    def on_settings_screen_saved(self, message: Any) -> None:
        """The settings screen saved: apply at once (the watcher ignores our own write)."""
        from tui.config.watcher import diff_settings

        self._settings_reloaded(message.settings, diff_settings(self.settings, message.settings))

    def on_settings_screen_what_if(self, message: Any) -> None:
        from tui.screens.main import MainScreen

        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                screen.show_what_if(message.keep_recent_tokens, message.reserve_tokens)

    # --- commands and help ----------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for binding in screen.active_bindings.values():
            b = binding.binding
            if b.description and b.action not in ("help", "command_palette", "quit"):
                yield SystemCommand(
                    b.description,
                    b.tooltip or f"Key: {b.key}",
                    lambda node=binding.node, action=b.action: self.run_action(action, node),
                )
        yield SystemCommand("Help", "Keys, commands and what each pane does (F1)", self.action_help)

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    async def on_unmount(self) -> None:
        self._stop_watch.set()
        if self.session is not None:
            self.session.store.close()
