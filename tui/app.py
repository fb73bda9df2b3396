"""The Textual application: settings, the open session, litellm loading, keys, commands and help.

The app owns what outlives a screen: the effective settings (live-reloaded from settings.toml and
published on :attr:`KompaktApp.settings_changed`), the open session and its agent, and litellm, which
loads in a thread after the first frame so that start-up stays fast. Screens own the widgets.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on, work
from textual._compositor import LayoutUpdate  # the whole-screen frame (no public name for it)
from textual.app import App, SystemCommand
from textual.binding import BindingType
from textual.command import Provider
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.signal import Signal
from textual.worker import Worker, WorkerState

from tui.launch import Launch, OpenedSession, open_session, prefetch_for
from tui.screens.commands import key_bindings
from tui.screens.palette import KompaktCommands, palette_commands
from tui.session.errors import SessionWriteError
from tui.session.store import BATCH_FSYNC_SECONDS
from widgets import gc_pause

if TYPE_CHECKING:
    from rich.console import RenderableType

    from tui.config import Settings, SettingsError
    from tui.config.loader import LoadResult
    from tui.screens.main import MainScreen
    from tui.session.store import SessionStore


def _as_toml(value: object) -> str:
    """A setting's value as the user wrote it in settings.toml (true, "text", [..]); unset for None."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


# XTWINOPS: push the terminal's title before the first change, pop it at exit (terminals without a title
# stack ignore both).
_PUSH_TITLE, _POP_TITLE = "\x1b[22;0t", "\x1b[23;0t"
_TITLE_CHARS = 120
TOAST_PROBLEMS = 5  # a settings toast lists this many problems, then counts the rest (F5 lists them all)


def terminal_title(session: str) -> str:
    """The window title for a session name or file name (D26): one line of text a terminal only shows.

    A session name comes from the file, so escapes are removed, other controls become spaces and
    bidi overrides are shown (the sanitiser's rules), and the title is capped."""
    from tui.session.sanitize import sanitize

    shown = "".join(" " if ord(c) < 32 or 0x7F <= ord(c) <= 0x9F else c for c in sanitize(session))
    title = f"kompakt · {' '.join(shown.split())}"
    return title if len(title) <= _TITLE_CHARS else title[: _TITLE_CHARS - 1] + "…"


def quick_ui_setting(key: str) -> object:
    """``ui.<key>`` from the settings files, read with tomllib alone (no pydantic) for the first frame."""
    import os
    import tomllib

    from platformdirs import user_config_dir

    from tui.fileio import read_regular

    base = os.environ.get("KOMPAKT_CONFIG_DIR") or user_config_dir("kompakt")
    value = None
    for path in (Path(base) / "settings.toml", Path.cwd() / ".kompakt" / "settings.toml"):
        try:  # never blocks on a FIFO: the first frame waits for this
            ui = tomllib.loads(read_regular(path, 4 << 20).decode("utf-8-sig")).get("ui", {})
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(ui, dict) and key in ui:
            value = ui[key]
    env = os.environ.get(f"KOMPAKT_UI__{key.upper()}")
    return env if env else value


class KompaktApp(App[None]):
    """kompakt: a tree-shaped LLM session with live, inspectable compaction."""

    main: MainScreen  # the default screen, made by get_default_screen
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute, so subclasses elsewhere find it
    TITLE = "kompakt"
    ENABLE_COMMAND_PALETTE = True
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {KompaktCommands}
    BINDINGS: ClassVar[list[BindingType]] = key_bindings(on_app=True)

    def __init__(
        self,
        launch: Launch | None = None,
        *,
        load_result: LoadResult | None = None,
        start_background: bool = True,
        prefetch: bool = True,
    ) -> None:
        super().__init__()
        # Textual adds the palette's Ctrl+P to the app's own bindings here, not to BINDINGS, so the
        # declared bindings a keymap change restores (D9) are these, not the class's.
        self._declared_bindings = self._bindings.copy()
        self.launch = launch or Launch()
        # The file is read while Textual starts; not when the caller opened it already (run_tui).
        self._prefetch = prefetch_for(self.launch) if prefetch else None
        self.settings_changed: Signal[tuple[Settings, list]] = Signal(self, "settings_changed")
        self.litellm_loaded: Signal[bool] = Signal(self, "litellm_loaded")
        self.load_result = load_result
        self.settings: Settings | None = load_result.settings if load_result else None
        self.settings_error: SettingsError | None = None
        self.session: OpenedSession | None = None
        self.start_background = start_background
        self.ignore_hashes: set[str] = set()
        self._stop_watch = asyncio.Event()
        self.terminal_title: str | None = None  # the window title set last (D26)
        self._gc_held = False  # the cyclic collector is held off until the first frame (get_default_screen)

    # --- start-up -------------------------------------------------------------------------------
    # The first frame shows the session's chat and the prompt; settings (pydantic), the agent, the
    # timeline and the status follow right after it, and litellm loads in a thread after that.
    def get_default_screen(self) -> Screen[Any]:
        """The main screen is the default one; the app keeps it as :attr:`main` (typed, no stack search)."""
        # Until the first frame the cyclic collector is held off: start-up allocates hundreds of thousands
        # of containers (the screens' modules, a 10k-entry session, the widgets, the stylesheet) with almost
        # no cycles, and its passes over them took 120-130 ms of a 10k session's first frame (35-60 ms of an
        # empty one). Reference counting still frees what start-up drops.
        if not self._gc_held:
            self._gc_held = True
            gc_pause.pause()
        from tui.screens.main import MainScreen  # here only: the screen module imports this one

        self.main = MainScreen()
        return self.main

    def on_mount(self) -> None:
        theme = quick_ui_setting("theme")
        if isinstance(theme, str) and theme in self.available_themes:
            self.theme = theme
        self.call_after_refresh(self._after_first_frame)
        self.set_interval(BATCH_FSYNC_SECONDS, self._sync_batched)

    def _sync_batched(self) -> None:
        """``fsync = "batch"``: an append made soon after the last fsync reaches the disk within half a
        second, not only with the next append or on close."""
        if self.session is None:
            return
        try:
            self.session.store.sync()
        except SessionWriteError as exc:  # the store removed what it could not save and says so
            self.notify(str(exc), title="Not saved", severity="error", markup=False, timeout=30)

    # A batch (Textual's Markdown mounts its blocks in one) holds every write to the terminal, and a frame
    # composed meanwhile is dropped, not postponed: a screen pushed then (a dialog, F1 help) was laid out
    # but never shown, until another screen came and went (QA: an invisible y/n dialog took the keys).
    reports_frames = True  # screens with a ``frame_shown`` hear of each whole frame that reached the terminal

    key_time = 0.0  # when the key whose bindings are being checked was read (events' clock)

    def _on_key(self, event: events.Key) -> None:
        """Runs before App's own ``_on_key`` (Textual calls each class's handler in MRO order), which runs
        the bindings: a dialog can tell a key typed before it was shown (ConfirmDialog.check_action)."""
        self.key_time = event.time

    _frame_dropped = False  # a frame was composed while a batch held the terminal

    def _end_batch(self) -> None:
        """The last batch ended after it dropped a frame: repaint the current screen whole (as Textual's
        own ``delay_update`` does); only then, so a streamed reply's batches do not repaint everything."""
        super()._end_batch()
        if not self._batch_count and self._frame_dropped and self._has_screen():
            self._frame_dropped = False
            self.screen.refresh()

    def _has_screen(self) -> bool:
        try:
            return bool(self.screen_stack)
        except KeyError:  # the mode's stack is gone (shutting down)
            return False

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        if renderable is not None and self._batch_count:
            self._frame_dropped = True
        # A whole-screen frame (a LayoutUpdate): a partial one may show a corner of a dialog, not its buttons.
        shown = isinstance(renderable, LayoutUpdate) and not self._batch_count and screen is self.screen
        super()._display(screen, renderable)
        frame_shown = getattr(screen, "frame_shown", None)
        if shown and frame_shown is not None:
            frame_shown()

    def _release_gc(self) -> None:
        if self._gc_held:
            self._gc_held = False
            # The session read for the first frame: at 100k entries its first full pass took 1.9 s.
            gc_pause.freeze_loaded(len(self.session.store.entries) if self.session is not None else 0)
            gc_pause.resume()

    async def _after_first_frame(self) -> None:
        self._release_gc()
        self.load_settings()
        await self.main.finish_start()
        if self.start_background:
            self.load_litellm()
            self.run_worker(
                self._watch_settings(), group="settings-watch", exclusive=True, exit_on_error=False
            )

    def load_settings(self) -> None:
        """Load and apply the settings files (once, after the first frame); an error keeps the defaults."""
        from tui.config import Settings, SettingsError
        from tui.config.loader import load_default_settings

        if self.load_result is None:
            try:
                self.load_result = load_default_settings()
            except SettingsError as exc:
                self.settings_error = exc
        self.apply_settings(self.load_result.settings if self.load_result else Settings())
        for notice in self.load_result.notices if self.load_result else ():
            self.notify(notice, title="Settings", severity="warning", timeout=12)
        if self.load_result is not None and self.load_result.withheld:
            self.ask_project_trust(self.load_result)
        if self.settings_error:
            self.notify(
                f"{self.settings_error.listing(TOAST_PROBLEMS)}\nUsing the defaults until it is fixed"
                " (F5 lists every problem).",
                title="Settings error",
                severity="error",
                timeout=12,
            )

    @work(thread=True, group="litellm", exit_on_error=False)
    def load_litellm(self) -> None:
        # First the Markdown stack, which the first frame does without (widgets/plain_text.py), so that
        # the first reply or opened block does not wait for it; in this thread, as litellm's imports
        # share pygments with it (two threads importing one package may deadlock, and Python fails one).
        import widgets.chunked_markdown  # noqa: F401
        from tui.agent.litellm_loader import load_litellm

        load_litellm()
        self.call_from_thread(self.litellm_loaded.publish, True)

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        """The one place the app's own workers report a failure (they never take the app down)."""
        if event.state is not WorkerState.ERROR:
            return
        error = event.worker.error
        if event.worker.group == "litellm":
            # Model calls cannot work without it; the status bar must not say "loading" for good.
            self.notify(f"{type(error).__name__}: {error}", title="litellm failed to load", severity="error")
            self.litellm_loaded.publish(False)
        elif event.worker.group == "settings-watch":
            self.notify(
                f"{type(error).__name__}: {error}\nEdits to settings.toml apply after a restart.",
                title="Watching the settings files stopped",
                severity="error",
            )

    def open_launch(self, launch: Launch) -> OpenedSession:
        """Open the store for ``launch`` and make it the current session (closing the previous one)."""
        prefetch, self._prefetch = self._prefetch, None  # for the first open only
        return self.use_session(launch, open_session(launch, prefetch))

    def use_session(self, launch: Launch, opened: OpenedSession) -> OpenedSession:
        """Make ``opened`` (for ``launch``) the current session, closing the previous one."""
        if self.session is not None:
            self.session.store.close()
        self.launch, self.session = launch, opened
        return opened

    @property
    def store(self) -> SessionStore:
        """The open session's store (there is one from the first frame on)."""
        assert self.session is not None
        return self.session.store

    @property
    def current_settings(self) -> Settings:
        """The settings in force (loaded right after the first frame)."""
        assert self.settings is not None
        return self.settings

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A toast whose text is always shown literally (widgets' ``notify`` passes ``markup=True``):
        notifications carry model names, paths and settings values, and a stray ``[/x]`` in one must
        neither style the toast nor crash the app."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    # Textual's own toasts carry markup (``[b]…[/b]``, ``[$text-success]…``), which the literal toasts
    # above would show as brackets: kompakt words them itself.
    @on(events.DeliveryComplete)
    def _screenshot_saved(self, event: events.DeliveryComplete) -> None:
        if event.name != "screenshot":
            return
        event.prevent_default()  # not Textual's handler too
        where = f" to {event.path}" if event.path is not None else ""
        self.notify(f"Saved screenshot{where}", title="Screenshot")

    async def action_quit(self) -> None:
        """Ctrl+Q: quit. A draft in the prompt, or messages queued behind the running reply, is never lost
        silently: a dialog asks first, and Ctrl+Q again (or Quit) quits while it is shown."""
        from tui.screens.dialogs import QuitDialog

        main = getattr(self, "main", None)
        draft = main.prompt.submit_text.strip() if main is not None and main.is_attached else ""
        queued = len(main.queued_prompts) if main is not None else 0
        if not (draft or queued) or isinstance(self.screen, QuitDialog):
            self.exit()
            return
        unsent = " and ".join(
            part
            for part in (
                "the unsent text in the prompt" if draft else "",
                f"{queued} queued message{'s' if queued != 1 else ''}" if queued else "",
            )
            if part
        )
        question = f"Quit kompakt? {unsent[0].upper()}{unsent[1:]} will be lost."

        def answered(quit_now: bool | None) -> None:
            if quit_now:
                self.exit()

        self.push_screen(QuitDialog(question, yes="Quit", no="Keep editing", letters=False), answered)

    def action_help_quit(self) -> None:
        """Ctrl+C where nothing copies: say how to quit (Textual's wording is markup)."""
        for active in self.active_bindings.values():
            if active.binding.action in ("quit", "app.quit"):
                self.notify(f"Press {self.get_key_display(active.binding)} to quit", title="Quit?")
                return

    # --- settings -------------------------------------------------------------------------------
    def apply_settings(self, settings: Settings) -> None:
        """Apply the parts of the settings that belong to the app: theme and keymap."""
        self.settings = settings
        if settings.ui.theme in self.available_themes:
            self.theme = settings.ui.theme
        keymap = dict(settings.keymap)
        if keymap != getattr(self, "_applied_keymap", {}):
            self._applied_keymap = keymap
            self._restore_default_bindings()
            self.set_keymap(keymap)

    def _restore_default_bindings(self) -> None:
        """Every node's bindings as its class declares them (D9).

        Textual applies a keymap by rewriting each node's bindings in place, so an override that is
        removed (or a settings file deleted) would keep its key until restart; the new keymap is then
        applied afresh to the declared keys."""
        for node in (
            self,
            *(n for screen in self.screen_stack for n in screen.walk_children(with_self=True)),
        ):
            merged = self._declared_bindings if node is self else type(node)._merged_bindings
            if merged is not None:
                node._bindings = merged.copy()

    def settings_paths(self) -> tuple[Path, Path]:
        from tui.config.loader import project_settings_path, user_settings_path

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

    def _settings_reloaded(self, settings: Settings, changes: list, *, from_disk: bool = True) -> None:
        from tui.config import SettingsError
        from tui.config.loader import load_default_settings

        self.settings_error = None
        self.apply_settings(settings)
        with contextlib.suppress(SettingsError):
            self.load_result = load_default_settings()
        shown = ", ".join(f"{key} {_as_toml(old)} → {_as_toml(new)}" for key, old, new in changes[:4])
        more = f" (+{len(changes) - 4} more)" if len(changes) > 4 else ""
        self.notify(f"{shown}{more}", title="Settings reloaded", timeout=6)
        self.settings_changed.publish((settings, changes))
        if from_disk:  # F5's own save has updated F5 already
            self._tell_settings_screens(self.load_result)
        if self.load_result is not None and self.load_result.withheld:
            self.ask_project_trust(self.load_result)  # an edited project file asks again

    def ask_project_trust(self, loaded: LoadResult) -> None:
        """The project file sets keys that need trust: ask once; yes records it and applies them."""
        from tui.screens.dialogs import ConfirmDialog

        project, digest = loaded.project_file, loaded.project_hash
        if project is None or digest is None:
            return
        question = (
            f"{project} (this project's settings) wants to set:\n  "
            + "\n  ".join(loaded.withheld)
            + "\nThese send your transcript or keys elsewhere, run code or weaken approvals. "
            "Trust this file as it is now?"
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self._trust_project(loaded)

        self.push_screen(ConfirmDialog(question, yes="Trust", no="Not now"), answered)

    def _trust_project(self, loaded: LoadResult) -> None:
        from tui.config import Settings, SettingsError
        from tui.config.loader import load_settings
        from tui.config.watcher import diff_settings

        loaded.trust_project()
        old = self.settings or Settings()
        try:
            self.load_result = load_settings(loaded.user_file, loaded.project_file)
        except SettingsError as exc:
            self._settings_invalid(exc)
            return
        settings = self.load_result.settings
        self.apply_settings(settings)
        self.notify(
            f"Trusted {loaded.project_file}: its settings apply in full.", title="Settings", timeout=6
        )
        self.settings_changed.publish((settings, diff_settings(old, settings)))

    def _tell_settings_screens(self, load_result: LoadResult | None) -> None:
        """An open F5 follows the files (it has ``settings_files_changed``); None: they are invalid now."""
        for screen in self.screen_stack:
            follow = getattr(screen, "settings_files_changed", None)
            if callable(follow):
                follow(load_result)

    def _settings_invalid(self, error: SettingsError) -> None:
        self.settings_error = error
        self._tell_settings_screens(None)
        self.notify(
            f"{error.listing(TOAST_PROBLEMS)}\nThe last good settings stay in force (F5 lists every problem).",
            title="Settings not applied",
            severity="error",
            timeout=12,
        )

    def on_settings_screen_saved(self, message: Any) -> None:
        """The settings screen saved: apply at once (the watcher ignores our own write)."""
        from tui.config.watcher import diff_settings

        self._settings_reloaded(
            message.settings, diff_settings(self.settings, message.settings), from_disk=False
        )

    # --- commands and help ----------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The palette's commands over ``screen`` (see :mod:`tui.screens.palette`), without their groups."""
        for command in palette_commands(self, screen):
            yield SystemCommand(command.title, command.help, command.callback)

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def show_terminal_title(self, session: str) -> None:
        """Name the session in the terminal's window title (tmux shows it in its status line)."""
        title = terminal_title(session)
        if title == self.terminal_title:
            return
        first = self.terminal_title is None
        self.terminal_title = title
        if self._driver is not None and not self.is_headless:
            self._driver.write((_PUSH_TITLE if first else "") + f"\x1b]2;{title}\x07")

    async def on_unmount(self) -> None:
        self._release_gc()  # an app that ends before its first frame
        if self.terminal_title is not None and self._driver is not None and not self.is_headless:
            self._driver.write(_POP_TITLE)
        self._stop_watch.set()
        if self.session is not None:
            self.session.store.close()
