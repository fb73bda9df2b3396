"""Opening F5 fast (issue 13 F): the first frame has the rows that fit and a pending preview; the rest after it.

Each test drives :class:`~tui.app.KompaktApp` on the demo session in an isolated home and records what the
settings screen held when its first whole frame reached the terminal (the app's ``_display``), then waits for
the screen to be ready and checks that what came later is what F5 showed before in one go.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
from textual._compositor import LayoutUpdate

from tests.app_e2e_helpers import offline_app_on, ready
from tests.pages import wait_until
from tests.settings_ui_helpers import USER_TOML, SettingsHost, clear_kompakt_env, settings_ready
from tui.config import field_docs, load_settings
from tui.demo import build_demo
from tui.screens.settings_screen import SettingsScreen
from widgets import gc_pause
from widgets.setting_values import field_specs, format_value, value_at
from widgets.settings_form import SettingRow, SettingsForm
from widgets.timeline import CompactionTimeline


@pytest.fixture
def files_host(tmp_path, monkeypatch) -> SettingsHost:
    """The settings screen alone (no preview) over a user file."""
    config = tmp_path / "config"
    config.mkdir()
    clear_kompakt_env(monkeypatch, config)
    user = config / "settings.toml"
    user.write_text(USER_TOML)
    return SettingsHost(user, tmp_path / "project" / ".kompakt" / "settings.toml")


def demo_app(tmp_path, monkeypatch) -> Any:
    return offline_app_on(tmp_path, monkeypatch, build_demo(tmp_path / "demo.jsonl", cwd=str(tmp_path)))


def record_first_frame(app: Any) -> dict[str, Any]:
    """What the settings screen showed in its first whole frame, filled in when that frame is drawn."""
    seen: dict[str, Any] = {}
    display = app._display

    def recording(screen: Any, renderable: Any) -> None:
        display(screen, renderable)
        if isinstance(screen, SettingsScreen) and isinstance(renderable, LayoutUpdate) and not seen:
            preview = screen.query_one("#settings-preview", CompactionTimeline)
            seen.update(
                pending=screen.query_one("#settings-preview-pending").display,
                preview_shown=preview.display,
                preview_timeline=preview.timeline,
                rows=len(screen.query(SettingRow)),
                complete=screen.query_one(SettingsForm).complete,
            )

    app._display = recording
    return seen


async def test_f5_draws_the_form_first_and_the_preview_after_it_with_the_sessions_values(
    tmp_path, monkeypatch
) -> None:
    app = demo_app(tmp_path, monkeypatch)
    async with app.run_test(size=(160, 50), notifications=False) as pilot:
        main = await ready(pilot, app)
        first = record_first_frame(app)
        await pilot.press("f5")
        screen = await settings_ready(pilot, app)
        # The first frame: a pending line instead of the preview (never a bar with no session in it), and
        # only the rows that fit.
        assert first["pending"] and not first["preview_shown"] and first["preview_timeline"] is None
        assert 0 < first["rows"] < len(field_docs()) and not first["complete"]
        # Filled in: the same picture as the main screen's timeline, drawn by the same function.
        preview = screen.query_one("#settings-preview", CompactionTimeline)
        assert preview.display and not screen.query_one("#settings-preview-pending").display
        assert preview.timeline == main.timeline.timeline


async def test_the_rows_mounted_after_the_first_frame_are_every_setting_in_order_with_its_value(
    tmp_path, monkeypatch
) -> None:
    app = demo_app(tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        await ready(pilot, app)
        await pilot.press("f5")
        screen = await settings_ready(pilot, app)
        rows = list(screen.query(SettingRow))
        specs = field_specs()
        assert [row.spec.key for row in rows] == [spec.key for spec in specs]
        settings = load_settings(app.settings_paths()[0], None, env={}).settings
        for row, spec in zip(rows, specs, strict=True):
            editor = row.query_one(".setting-row--editor")
            shown = getattr(editor, "text", None) if spec.kind == "table" else getattr(editor, "value", None)
            expected = value_at(settings, spec.segments)
            if spec.kind in ("integer", "number", "text", "list", "table"):
                expected = format_value(spec, expected)
            assert shown == expected or (shown is None and expected is None), spec.key
        # One heading per section, also for the sections that came after the first frame.
        assert len(screen.query(".settings-form--section")) == len({spec.section for spec in specs})


async def test_the_collector_is_held_only_while_f5_opens(tmp_path, monkeypatch) -> None:
    """F5 holds Python's cyclic collector until it is ready, and gives it back when closed early too."""
    app = demo_app(tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        await ready(pilot, app)
        held = gc_pause.streams_open()
        await pilot.press("f5")
        await settings_ready(pilot, app)
        assert gc_pause.streams_open() == held and gc.isenabled()
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), "F5 closed")
        # Closed in its first frame, before the other rows came.
        main = app.screen
        early = SettingsScreen(app.load_result, app.settings_paths()[0])
        closed_early: list[bool] = []

        def close_at_once(_screen: Any) -> None:
            early.screen_layout_refresh_signal.unsubscribe(app)
            closed_early.append(not early.ready and gc_pause.streams_open() == held + 1)
            app.pop_screen()

        early.screen_layout_refresh_signal.subscribe(app, close_at_once, immediate=True)
        app.push_screen(early)
        await wait_until(
            pilot, lambda: closed_early and app.screen is main and not early.is_attached, "closed"
        )
        assert closed_early == [True]
        assert gc_pause.streams_open() == held and gc.isenabled()


async def test_a_terminal_tall_enough_for_every_row_gets_them_in_the_first_frame(files_host) -> None:
    app = files_host
    async with app.run_test(size=(120, 200)) as pilot:
        screen = await settings_ready(pilot, app)
        assert len(screen.query(SettingRow)) == len(field_docs())
        assert gc_pause.streams_open() == 0 and gc.isenabled()
