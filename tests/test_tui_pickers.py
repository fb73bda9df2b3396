"""The model picker and the session picker: listing, filtering as you type, marks, and the value they return."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.app import App
from textual.screen import Screen
from textual.widgets import DataTable, OptionList, Static

from tests import factories as f
from tests.pages import until
from tui.agent.offline import OFFLINE_MODEL
from tui.config import Settings
from tui.screens.model_picker import ModelPicker, format_tokens
from tui.screens.session_picker import SessionPicker, format_size
from tui.session.catalog import encode_cwd

_UNSET = object()


class PickerHost(App[None]):
    """Pushes one picker screen on mount and keeps what it dismisses with."""

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self.picker = screen
        self.result: Any = _UNSET

    def on_mount(self) -> None:
        self.push_screen(self.picker, self._done)

    def _done(self, result: Any) -> None:
        self.result = result


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.upper().startswith("KOMPAKT_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("KOMPAKT_CONFIG_DIR", str(tmp_path / "config"))


async def loaded(app: App[Any], pilot) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


def option_text(picker: ModelPicker, model: str) -> str:
    option_list = picker.query_one("#model-list", OptionList)
    for index in range(option_list.option_count):
        option = option_list.get_option_at_index(index)
        if option.id and option.id.split(":", 1)[1] == model:
            return str(option.prompt)
    raise AssertionError(f"{model} is not listed")


# -- model picker ------------------------------------------------------------------------------------------------


def test_context_windows_are_shown_short():
    assert [format_tokens(n) for n in (None, 512, 8192, 200_000, 1_000_000, 1_048_576, 2_000_000)] == [
        "—",
        "512",
        "8k",
        "200k",
        "1M",
        "1M",
        "2M",
    ]


LOCAL = Settings.model_validate(
    {"models": {"ollama/qwen-local": {"apiBase": "http://localhost:11434", "contextWindow": 32768}}}
)


async def test_model_picker_lists_offline_first_then_local_then_the_map():
    picker = ModelPicker(None, LOCAL, environ={})
    app = PickerHost(picker)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(app, pilot)
        models = picker.visible_models
        assert models[:2] == [OFFLINE_MODEL, "ollama/qwen-local"]
        assert len(models) > 1000  # litellm's whole chat model map
        assert "gpt-4o" in models and "claude-sonnet-4-5" in models
        assert "no key" in option_text(picker, OFFLINE_MODEL)
        local = option_text(picker, "ollama/qwen-local")
        assert "local" in local and "33k" in local and "http://localhost:11434" in local
        assert "200k" in option_text(picker, "claude-sonnet-4-5")
        assert "128k" in option_text(picker, "gpt-4o")


async def test_model_picker_marks_models_whose_key_is_set():
    picker = ModelPicker(None, None, environ={"ANTHROPIC_API_KEY": "sk-test", "GEMINI_API_KEY": "g-test"})
    app = PickerHost(picker)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(app, pilot)
        assert option_text(picker, "claude-sonnet-4-5").startswith("✓")
        gemini = next(m for m in picker.visible_models if m.startswith("gemini/"))
        assert option_text(picker, gemini).startswith("✓")
        assert not option_text(picker, "gpt-4o").startswith("✓")
        # Claude through Bedrock needs AWS credentials, not the Anthropic key.
        assert not option_text(picker, "anthropic.claude-3-5-haiku-20241022-v1:0").startswith("✓")
        legend = str(picker.query_one("#model-picker-legend", Static).render())
        assert "✓ key set" in legend


async def test_model_picker_filters_as_you_type_and_returns_the_choice():
    picker = ModelPicker(None, None, environ={})
    app = PickerHost(picker)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(app, pilot)
        await pilot.press(*"gpt-4o-mini openai")
        await until(
            pilot,
            lambda: (
                (picker.visible_models and all("gpt-4o-mini" in m for m in picker.visible_models))
                and len(picker.visible_models) < 30
            ),
        )
        models = picker.visible_models
        assert models and all("gpt-4o-mini" in m for m in models)
        assert len(models) < 30
        await pilot.press("down")
        await pilot.pause()
        expected = models[1]
        await pilot.press("enter")
        await until(pilot, lambda: app.result == expected)
        assert app.result == expected


async def test_model_picker_highlights_the_current_model_and_escape_cancels():
    picker = ModelPicker("anthropic/claude-sonnet-4-5", None, environ={})
    app = PickerHost(picker)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(app, pilot)
        option_list = picker.query_one("#model-list", OptionList)
        highlighted = option_list.get_option_at_index(option_list.highlighted)
        assert highlighted.id == "map:claude-sonnet-4-5"
        assert "current" in str(highlighted.prompt)
        await pilot.press("escape")
        await until(pilot, lambda: app.result is None)
        assert app.result is None


async def test_a_current_model_missing_from_the_map_is_still_listed():
    picker = ModelPicker("openai/my-finetune", None, environ={"OPENAI_API_KEY": "sk"})
    app = PickerHost(picker)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(app, pilot)
        assert picker.visible_models[1] == "openai/my-finetune"
        assert option_text(picker, "openai/my-finetune").startswith("✓")
        await pilot.press("enter")
        await until(pilot, lambda: app.result == "openai/my-finetune")
        assert app.result == "openai/my-finetune"


async def test_no_match_shows_a_message_and_enter_chooses_nothing():
    picker = ModelPicker(None, None, environ={})
    app = PickerHost(picker)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(app, pilot)
        await pilot.press(*"zzzz-no-such-model")
        await pilot.press("enter")
        await until(
            pilot, lambda: (picker.visible_models == []) and (app.result is _UNSET) and (app.screen is picker)
        )
        assert picker.visible_models == []
        assert app.result is _UNSET
        assert app.screen is picker


# -- session picker ----------------------------------------------------------------------------------------------


def write_session(root: Path, cwd: str, stem: str, entries: list[dict[str, Any]], mtime: float) -> Path:
    path = root / encode_cwd(cwd) / f"{stem}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "type": "session",
        "version": 3,
        "id": f"id-{stem}",
        "timestamp": "2025-01-01T00:00:00Z",
        "cwd": cwd,
    }
    path.write_bytes(b"\n".join(orjson.dumps(e) for e in [header, *f.chain(entries)]) + b"\n")
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    kompakt_home, pi_root = tmp_path / "kompakt", tmp_path / "pi"
    monkeypatch.setenv("KOMPAKT_HOME", str(kompakt_home))
    monkeypatch.setenv("KOMPAKT_PI_SESSIONS", str(pi_root))
    base = 1_750_000_000.0
    return {
        "named": write_session(
            kompakt_home / "sessions",
            "/work/alpha",
            "a",
            [f.user("refactor the parser"), f.session_info("Parser refactor")],
            base + 300,
        ),
        "kompakt": write_session(
            kompakt_home / "sessions", "/work/alpha", "b", [f.user("write the changelog")], base + 200
        ),
        "pi": write_session(
            pi_root,
            "/work/beta",
            "c",
            [f.user("why does \x1b[31mred\x1b[0m [bold]markup[/bold] fail?")],
            base + 100,
        ),
    }


async def test_session_picker_lists_both_sources_newest_first(sessions):
    picker = SessionPicker()
    app = PickerHost(picker)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(app, pilot)
        assert picker.visible_paths == [sessions["named"], sessions["kompakt"], sessions["pi"]]
        table = picker.query_one(DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert rows[0][:2] == ["Parser refactor", "kompakt"]
        assert rows[1][0] == "write the changelog"
        # Escape sequences are dropped and markup stays literal text.
        assert rows[2][:2] == ["why does red [bold]markup[/bold] fail?", "pi"]
        assert rows[2][4] == "/work/beta"
        assert rows[2][3] == format_size(sessions["pi"].stat().st_size)
        assert "3 sessions" in str(picker.query_one("#session-status", Static).render())


async def test_session_picker_filters_and_returns_the_chosen_path(sessions):
    picker = SessionPicker()
    app = PickerHost(picker)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(app, pilot)
        await pilot.press(*"alpha")
        await until(pilot, lambda: picker.visible_paths == [sessions["named"], sessions["kompakt"]])
        assert picker.visible_paths == [sessions["named"], sessions["kompakt"]]
        await pilot.press("down", "enter")
        await until(pilot, lambda: app.result == sessions["kompakt"])
        assert app.result == sessions["kompakt"]


async def test_session_picker_filters_by_source(sessions):
    picker = SessionPicker()
    app = PickerHost(picker)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(app, pilot)
        await pilot.press(*"pi markup")
        await pilot.press("enter")
        await until(pilot, lambda: app.result == sessions["pi"])
        assert app.result == sessions["pi"]


async def test_session_picker_says_loading_until_the_catalog_arrives():
    gate = threading.Event()

    def blocked_lister() -> list:
        gate.wait(timeout=30)  # a safety net only: the test opens the gate itself
        return []

    picker = SessionPicker(blocked_lister)
    app = PickerHost(picker)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: str(picker.query_one("#session-status", Static).render()) == "loading…")
        status = picker.query_one("#session-status", Static)
        assert str(status.render()) == "loading…"
        gate.set()
        await loaded(app, pilot)
        assert "No sessions yet" in str(status.render())
        await pilot.press("escape")
        await until(pilot, lambda: app.result is None)
        assert app.result is None


def test_sizes_read_like_ls():
    assert [format_size(n) for n in (0, 812, 4300, 20_000, 13 * 1024 * 1024)] == [
        "0 B",
        "812 B",
        "4.2 KB",
        "20 KB",
        "13 MB",
    ]


def long_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """One kompakt session with a long first message and a deep directory; its size as the picker shows it."""
    kompakt_home = tmp_path / "kompakt"
    monkeypatch.setenv("KOMPAKT_HOME", str(kompakt_home))
    monkeypatch.setenv("KOMPAKT_PI_SESSIONS", str(tmp_path / "pi"))
    deep = "/work/clients/acme/projects/2026/backend/services/session-store"
    path = write_session(
        kompakt_home / "sessions", deep, "long", [f.user("explain " * 20 + "the end")], 1_750_000_000.0
    )
    size = format_size(path.stat().st_size)
    return size


@pytest.mark.parametrize("width", [80, 100])
async def test_session_picker_keeps_size_and_directory_on_screen(tmp_path, monkeypatch, width):
    """D21: a long first message and a deep directory no longer push Size and Directory off screen;
    the title is cut, the directory keeps its last folders, and a resize cuts them again."""
    size = long_session(tmp_path, monkeypatch)
    picker = SessionPicker()
    app = PickerHost(picker)
    async with app.run_test(size=(width, 24)) as pilot:
        await loaded(app, pilot)

        def row_line() -> str:
            lines = [strip.text for strip in app.screen._compositor.render_strips()]
            return next((line for line in lines if "explain" in line), "")

        await until(pilot, lambda: size in row_line() and "session-store" in row_line())
        line = row_line()
        assert line.index(size) < line.index("session-store")
        await pilot.resize_terminal(width + 40, 24)
        await until(pilot, lambda: "services/session-store" in row_line())


async def test_session_picker_fits_rows_listed_before_the_table_is_laid_out(tmp_path, monkeypatch):
    """D21, a CI flake: when the listing lands before the table has a width, the rows are cut again once
    it has one, so Size and Directory still show (they were cut for the app's 80 cells in a 72-cell table)."""
    size = long_session(tmp_path, monkeypatch)
    # The listing lands at once, in on_mount, before any layout: the order a loaded machine can produce.
    monkeypatch.setattr(SessionPicker, "_load", lambda picker: picker._loaded(list(picker._lister())))
    picker = SessionPicker()
    app = PickerHost(picker)
    async with app.run_test(size=(80, 24)) as pilot:

        def row_line() -> str:
            lines = [strip.text for strip in app.screen._compositor.render_strips()]
            return next((line for line in lines if "explain" in line), "")

        await until(pilot, lambda: size in row_line() and "session-store" in row_line())
        line = row_line()
        assert size in line and "session-store" in line, line
        assert line.index(size) < line.index("session-store")
