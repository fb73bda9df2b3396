"""The settings watcher: in-place writes, atomic replaces, vim-style saves, own writes and invalid files.

Every wait is for an event, with a generous timeout; nothing asserts on time. The idle re-check is set to a
minute so that these tests see the file-system events themselves, not the fallback.
"""

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tui.config import Settings, SettingsError, load_settings
from tui.config.watcher import diff_settings, watch_settings
from tui.config.writer import set_value

WAIT_S = 20.0


class Watch:
    """Runs watch_settings in a task and queues what it reports."""

    def __init__(self, user: Path | None, project: Path | None, *, initial: bool = True) -> None:
        self.paths = (user, project)
        self.initial = load_settings(user, project, {}) if initial else None
        self.events: asyncio.Queue[tuple[str, object, object]] = asyncio.Queue()
        self.stop = asyncio.Event()
        self.ready = asyncio.Event()
        self.ignore: set[str] = set()

    async def __aenter__(self) -> "Watch":
        self.task = asyncio.create_task(
            watch_settings(
                self.paths,
                lambda settings, changes: self.events.put_nowait(("change", settings, changes)),
                self.stop,
                self.ignore,
                on_error=self._on_error,
                env={},
                initial=self.initial,
                ready=self.ready,
                debounce_ms=100,
                idle_check_ms=60_000,
            )
        )
        await asyncio.wait_for(self.ready.wait(), WAIT_S)
        return self

    async def _on_error(self, error: SettingsError) -> None:
        await self.events.put(("error", error, None))

    async def __aexit__(self, *exc: object) -> None:
        self.stop.set()
        await asyncio.wait_for(self.task, WAIT_S)

    async def next(self) -> tuple[str, object, object]:
        return await asyncio.wait_for(self.events.get(), WAIT_S)

    async def until(self, predicate: Callable[[Settings], bool]) -> Settings:
        """Skip intermediate reports until the settings satisfy ``predicate``."""
        while True:
            kind, settings, _ = await self.next()
            if kind == "change" and predicate(settings):
                return settings


async def eventually(condition: Callable[[], bool]) -> None:
    """Wait (with the generous timeout) until ``condition`` holds."""

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), WAIT_S)


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    path = tmp_path / "config" / "settings.toml"
    path.parent.mkdir()
    path.write_text('# mine\n[ui]\ntheme = "nord"\n')
    return path


def _theme(name: str) -> str:
    return f'# mine\n[ui]\ntheme = "{name}"\n'


async def test_in_place_write_is_reported_with_the_diff(user_file):
    async with Watch(user_file, None) as watch:
        with open(user_file, "w") as handle:
            handle.write(_theme("gruvbox"))
        kind, settings, changes = await watch.next()
        assert kind == "change"
        assert settings.ui.theme == "gruvbox"
        assert changes == [("ui.theme", "nord", "gruvbox")]


async def test_atomic_replace_is_picked_up_every_time(user_file):
    async with Watch(user_file, None) as watch:
        for name in ("gruvbox", "dracula", "monokai"):
            temp = user_file.with_name("settings.toml.tmp")
            temp.write_text(_theme(name))
            os.replace(temp, user_file)
            await watch.until(lambda s, name=name: s.ui.theme == name)


async def test_vim_style_save_is_picked_up_every_time(user_file):
    backup = user_file.with_name("settings.toml~")
    async with Watch(user_file, None) as watch:
        for name in ("gruvbox", "dracula"):
            os.rename(user_file, backup)
            user_file.write_text(_theme(name))
            backup.unlink()
            await watch.until(lambda s, name=name: s.ui.theme == name)


async def test_delete_and_recreate(user_file):
    async with Watch(user_file, None) as watch:
        user_file.unlink()
        user_file.write_text(_theme("dracula"))
        await watch.until(lambda s: s.ui.theme == "dracula")


async def test_deleting_the_file_falls_back_to_the_lower_layers(user_file):
    async with Watch(user_file, None) as watch:
        user_file.unlink()
        settings = await watch.until(lambda s: s.ui.theme == "textual-dark")
        assert settings == Settings()


async def test_own_write_is_ignored_and_the_next_external_edit_is_not(user_file):
    async with Watch(user_file, None) as watch:
        set_value(user_file, "retry.maxRetries", 7, ignore_hashes=watch.ignore)
        # Give the watcher the own write's event before the external edit (it must swallow it).
        await eventually(lambda: not watch.ignore)
        text = user_file.read_text().replace('"nord"', '"dracula"')
        user_file.write_text(text)
        kind, settings, changes = await watch.next()
        assert kind == "change"
        assert changes == [("ui.theme", "nord", "dracula")]  # the own change is not reported
        assert settings.retry.max_retries == 7  # but it is part of the current settings


async def test_comment_only_edit_reports_nothing(user_file):
    async with Watch(user_file, None) as watch:
        user_file.write_text("# a different comment\n" + _theme("nord"))
        await asyncio.sleep(0)  # the next report must come from the real edit below
        user_file.write_text("# a different comment\n" + _theme("gruvbox"))
        kind, _, changes = await watch.next()
        assert (kind, changes) == ("change", [("ui.theme", "nord", "gruvbox")])


async def test_invalid_file_reports_an_error_and_keeps_the_last_good_settings(user_file):
    async with Watch(user_file, None) as watch:
        user_file.write_text('# mine\n[ui]\ntheme = "nord"\ntreeFilterMode = "mine"\n')
        kind, error, _ = await watch.next()
        assert kind == "error"
        assert isinstance(error, SettingsError)
        assert (error.path, error.line, error.key) == (user_file.absolute(), 4, "ui.treeFilterMode")
        user_file.write_text("# mine\n[ui\n")
        kind, error, _ = await watch.next()
        assert kind == "error" and error.line == 2 and "invalid TOML" in str(error)
        user_file.write_text(_theme("gruvbox"))
        kind, _, changes = await watch.next()
        assert kind == "change"
        assert changes == [("ui.theme", "nord", "gruvbox")]  # measured against the last good settings


async def test_project_directory_created_later_is_watched(user_file, tmp_path):
    project = tmp_path / "work" / ".kompakt" / "settings.toml"
    async with Watch(user_file, project) as watch:
        project.parent.mkdir(parents=True)
        project.write_text("[agent]\nmaxIterations = 12\n")
        settings = await watch.until(lambda s: s.agent.max_iterations == 12)
        assert settings.ui.theme == "nord"  # the user file still applies beneath it
        project.write_text("[agent]\nmaxIterations = 13\n")
        await watch.until(lambda s: s.agent.max_iterations == 13)


async def test_change_made_before_the_watch_started_is_reported(user_file):
    watch = Watch(user_file, None)  # loads the initial settings now
    user_file.write_text(_theme("gruvbox"))
    async with watch:
        kind, _, changes = await watch.next()
        assert (kind, changes) == ("change", [("ui.theme", "nord", "gruvbox")])


async def test_invalid_file_at_start_is_reported(user_file):
    user_file.write_text("[ui]\nbogus = 1\n")
    async with Watch(user_file, None, initial=False) as watch:
        kind, error, _ = await watch.next()
        assert kind == "error" and error.key == "ui.bogus"


async def test_a_failing_callback_does_not_stop_the_watch(user_file):
    calls: list[str] = []

    def on_change(settings: Settings, changes: list) -> None:
        calls.append(settings.ui.theme)
        if len(calls) == 1:
            raise RuntimeError("ui bug")

    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(
        watch_settings((user_file, None), on_change, stop, set(), env={}, ready=ready, idle_check_ms=60_000)
    )
    await asyncio.wait_for(ready.wait(), WAIT_S)
    user_file.write_text(_theme("gruvbox"))
    await eventually(lambda: len(calls) == 1)
    user_file.write_text(_theme("dracula"))
    await eventually(lambda: len(calls) == 2)
    stop.set()
    await asyncio.wait_for(task, WAIT_S)
    assert calls == ["gruvbox", "dracula"]


def test_diff_settings_lists_changed_added_and_removed_keys():
    old = Settings.model_validate({"models": {"a": {"contextWindow": 1}}, "ui": {"theme": "nord"}})
    new = Settings.model_validate(
        {"models": {"b": {"apiBase": "http://x"}}, "compaction": {"enabled": False}}
    )
    changes = diff_settings(old, new)
    assert ("compaction.enabled", True, False) in changes
    assert ("ui.theme", "nord", "textual-dark") in changes
    assert ("models.a.contextWindow", 1, None) in changes
    assert ("models.b.apiBase", None, "http://x") in changes
    assert len(changes) == 4
    assert diff_settings(old, old) == []
