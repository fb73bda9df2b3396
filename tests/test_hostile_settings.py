"""Hostile settings files: refused with one clear error (never a traceback or a hang), or accepted.

The corpus is tests/corpus/hostile_settings (reject_* and accept_*). A FIFO, a directory or a symlink
loop at the settings path is made here: at start-up, and appearing while the watcher (and the app) run.
Waits are for events with generous guards; nothing asserts on time.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.app_e2e_helpers import RecordingApp, isolated_home, ready, wait_until
from tui.config import SettingsError, load_settings
from tui.config.choices import BINDING_IDS, DEFAULT_KEYS, THEMES
from tui.launch import Launch

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus" / "hostile_settings"
HEALTHY_SESSION = ROOT / "tests" / "corpus" / "hostile_sessions" / "healthy.jsonl"
WAIT_S = 30.0


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.toml")), ids=lambda p: p.stem)
def test_each_hostile_settings_file_is_refused_or_accepted(path: Path) -> None:
    if path.name.startswith("accept_"):
        load_settings(path, None, env={})
        return
    with pytest.raises(SettingsError) as caught:
        load_settings(path, None, env={})
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_bom_is_accepted_and_the_file_read() -> None:
    assert load_settings(CORPUS / "accept_bom.toml", None, env={}).settings.ui.theme == "nord"


def _cli(tmp_path: Path, settings: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    target = config / "settings.toml"
    if target.exists() or target.is_symlink():
        target.unlink()
    target.write_bytes(settings.read_bytes())
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOMPAKT_")}
    env |= {"KOMPAKT_CONFIG_DIR": str(config), "KOMPAKT_HOME": str(tmp_path / "home")}
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )


@pytest.mark.parametrize(
    "name", ["reject_deep_inline_tables_3000", "reject_bool_yes", "reject_keymap_unknown_id"]
)
def test_the_cli_refuses_a_bad_settings_file_in_one_line(tmp_path: Path, name: str) -> None:
    done = _cli(tmp_path, CORPUS / f"{name}.toml", "compact", "--dry-run", str(HEALTHY_SESSION))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "settings.toml" in done.stderr


def test_two_keymap_overrides_on_one_key_are_refused_naming_both_ids_and_the_key() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(CORPUS / "reject_keymap_two_ids_one_key.toml", None, env={})
    assert str(caught.value).endswith(":1: keymap: main.compact and main.model both take the key 'ctrl+k'")


@pytest.mark.parametrize(
    ("keymap", "clash"),
    [
        ({"app.quit": "ctrl+k", "tree.label": "ctrl+k"}, True),  # the app's keys work on every screen
        ({"main.compact": "k", "main.model": "k"}, True),
        ({"main.cancel": "ctrl+x", "timeline.cancel": "ctrl+x"}, False),  # the focused pane's key first
        ({"dialog.confirm.yes": "y", "dialog.confirm.no": "y"}, True),
        ({"tree.up": "k", "model_picker.up": "k", "session_picker.up": "k"}, False),  # never shown together
        ({"tree.up": "k", "timeline.keep_up": "k"}, False),  # two panes: the focused one has the key
        ({"dialog.confirm.yes": "y", "dialog.approval.allow": "y"}, False),  # two dialogs
        ({"dialog.buttons.left": "h", "settings.discard.no": "h"}, True),  # the row is in that dialog
        ({"dialog.buttons.left": "h", "tree.up": "h"}, False),
        ({"main.compact": "ctrl+k", "main.model": "ctrl+y"}, False),
        # A pane's own default keys count (the core once knew only the app's and the main screen's).
        ({"main.model": "ctrl+l"}, True),  # priority over tree.filter.labeled_only's key in the tree pane
        ({"tree.label": "down"}, True),  # tree.down's, in the same pane
        ({"timeline.toggle": "enter"}, True),  # timeline.compact_now's
        ({"tree.label": "down", "tree.down": "j"}, False),  # ... unless that one moves too
        ({"chat.copy": "ctrl+e"}, True),  # a user message has both
        ({"chat.fold": "ctrl+c"}, False),  # a fold row is not a message: it cannot be copied
        ({"app.quit": "q"}, True),  # the help screen closes with q
        ({"main.compact": "f5"}, True),  # F5 is main.settings' default key
        ({"main.compact": "f5", "main.settings": "f10"}, False),  # ... unless that one moves too
        ({"tree.label": "ctrl+q"}, True),  # app.quit's
        # F5 is main.settings', a priority binding: it wins in every pane, so tree.label would never fire
        # there (review, session 18: this was taken for Textual's layering and accepted).
        ({"tree.label": "f5"}, True),
        ({"tree.up": "f9"}, True),  # main.toggle_chat_view's, priority too
        ({"tree.label": "f5", "main.settings": "f10"}, False),
        ({"main.cancel": "ctrl+x", "tree.up": "ctrl+x"}, False),  # not priority: the focused pane's key first
        ({"model_picker.up": "f9"}, False),  # another screen: the main screen's keys do not work there
    ],
)
def test_a_key_clash_counts_only_between_bindings_in_force_together(
    keymap: dict[str, str], clash: bool
) -> None:
    from tui.config.choices import keymap_clashes

    assert bool(keymap_clashes(keymap)) is clash


@pytest.mark.parametrize("keys", ["w", "W", "shift+w", "question_mark", "space", "f10,x"])
def test_a_priority_binding_may_not_take_a_key_that_typing_sends(keys: str) -> None:
    """A priority key fires before the focused widget sees it: ``main.compact = "w"`` would compact
    whenever a w was typed in the prompt."""
    from tui.config.choices import keymap_clashes

    typed = [c for c in keymap_clashes({"main.compact": keys}) if c.startswith("main.compact takes the key ")]
    assert len(typed) == 1 and "from typing" in typed[0]


@pytest.mark.parametrize(
    "keymap",
    [{"main.compact": "ctrl+w"}, {"main.compact": "alt+w"}, {"main.compact": "f10"}, {"tree.label": "w"}],
)
def test_a_modifier_an_f_key_or_a_pane_binding_is_not_taken_from_typing(keymap: dict[str, str]) -> None:
    from tui.config.choices import keymap_clashes

    assert keymap_clashes(keymap) == []


def test_an_override_on_a_default_key_names_the_binding_that_has_it() -> None:
    from tui.config.choices import keymap_clashes

    assert keymap_clashes({"main.compact": "F5"}) == [
        "main.compact and main.settings both take the key 'f5' (main.settings by default)"
    ]


def test_the_binding_ids_and_themes_match_the_app() -> None:
    """choices.py lists them for the core (no Textual there): a new binding must be added to it."""
    from textual.binding import Binding
    from textual.theme import BUILTIN_THEMES

    import tui
    import widgets

    keys: dict[str, set[str]] = {}
    names = ["tui.app"] + [
        m.name
        for package, prefix in ((tui, "tui."), (widgets, "widgets."))
        for m in pkgutil.walk_packages(package.__path__, prefix)
        if prefix == "widgets." or m.name.startswith("tui.screens")
    ]
    for name in names:
        for _, cls in inspect.getmembers(importlib.import_module(name), inspect.isclass):
            for binding in getattr(cls, "BINDINGS", ()) or ():
                if isinstance(binding, Binding) and binding.id:
                    keys.setdefault(binding.id, set()).add(binding.key)
    assert set(keys) == BINDING_IDS, (
        f"add to / remove from tui/config/choices.py: {sorted(set(keys) ^ BINDING_IDS)}"
    )
    # One default for each id (the tree screen repeats the main screen's F-keys), and the core knows it.
    assert {binding_id: [*each] for binding_id, each in keys.items()} == {
        binding_id: [key] for binding_id, key in DEFAULT_KEYS.items()
    }
    assert set(BUILTIN_THEMES) == THEMES


# --- the watcher --------------------------------------------------------------------------------
async def _watch(user_file: Path, events: asyncio.Queue, stop: asyncio.Event, ready_event: asyncio.Event):
    from tui.config.watcher import watch_settings

    await watch_settings(
        (user_file, None),
        lambda settings, changes: events.put_nowait(("change", settings)),
        stop,
        set(),
        on_error=lambda error: events.put_nowait(("error", error)),
        env={},
        initial=load_settings(user_file, None, env={}),
        ready=ready_event,
        debounce_ms=50,
        idle_check_ms=500,
    )


async def _next(events: asyncio.Queue, kind: str) -> object:
    while True:
        got, value = await asyncio.wait_for(events.get(), WAIT_S)
        if got == kind:
            return value


async def test_the_watcher_reports_a_fifo_a_directory_and_a_loop_and_keeps_watching(tmp_path: Path) -> None:
    user_file = tmp_path / "settings.toml"
    user_file.write_text('[ui]\ntheme = "nord"\n')
    events: asyncio.Queue = asyncio.Queue()
    stop, ready_event = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(_watch(user_file, events, stop, ready_event))
    await asyncio.wait_for(ready_event.wait(), WAIT_S)
    try:
        user_file.unlink()
        os.mkfifo(user_file)  # a read would block until a writer came: it must not be attempted
        error = await _next(events, "error")
        assert "is a FIFO, not a settings file" in str(error)
        user_file.unlink()
        user_file.mkdir()
        error = await _next(events, "error")
        assert "is a directory, not a settings file" in str(error)
        user_file.rmdir()
        user_file.symlink_to(tmp_path / "loop")
        (tmp_path / "loop").symlink_to(user_file)
        error = await _next(events, "error")
        assert "symbolic links" in str(error)
        user_file.unlink()
        user_file.write_text('[ui]\ntheme = "gruvbox"\n')
        settings = await _next(events, "change")
        assert settings.ui.theme == "gruvbox"  # still watching
    finally:
        stop.set()
        await asyncio.wait_for(task, WAIT_S)


# --- the app ------------------------------------------------------------------------------------
async def test_the_app_starts_with_a_fifo_settings_file_and_quits_with_ctrl_q(tmp_path, monkeypatch) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    os.mkfifo(home.settings_file)
    app = RecordingApp(Launch("new", cwd=tmp_path), start_background=False)
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        await ready(pilot, app)
        await wait_until(pilot, lambda: app.settings_error is not None, "the settings error")
        assert "is a FIFO" in str(app.settings_error)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: app.return_code is not None, "the app to quit")


async def test_a_fifo_appearing_while_the_app_runs_does_not_freeze_it(tmp_path, monkeypatch) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text('[ui]\ntheme = "nord"\n')
    app = RecordingApp(Launch("new", cwd=tmp_path), start_background=False)
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        await ready(pilot, app)
        app.run_worker(app._watch_settings(), group="settings-watch", exclusive=True, exit_on_error=False)
        await pilot.pause()
        home.settings_file.unlink()
        os.mkfifo(home.settings_file)
        await wait_until(pilot, lambda: app.settings_error is not None, "the settings error")
        assert "is a FIFO" in str(app.settings_error)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: app.return_code is not None, "the app to quit")
