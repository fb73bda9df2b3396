"""F5 follows the settings file while it is open (D13, issue 13 QA fixes 3): an invalid file shows its
problems, a valid change shows the new values and sources, and a field being edited is kept."""

from __future__ import annotations

from textual.widgets import Input

from tests.app_e2e_helpers import ready, saved_session_app, settings_toml, wait_until
from tests.fake_openai import fake_openai_fixture  # noqa: F401
from tests.pages import rendered_text
from tui.screens.settings_screen import SettingsScreen
from widgets.settings_form import SettingRow, editor_id

SIZE = (120, 40)
RESERVE, KEEP = "compaction.reserveTokens", "compaction.keepRecentTokens"


def field(app, key: str) -> Input:
    return app.screen.query_one(f"#{editor_id(key)}", Input)


def row_text(app, key: str) -> str:
    row = app.screen.query_one(f"#row-{editor_id(key)}", SettingRow)
    return " ".join(str(static.render()) for static in row.query("Static"))


async def test_f5_follows_the_settings_file_while_it_is_open(tmp_path, monkeypatch, fake_openai) -> None:
    app, home, _ids = saved_session_app(
        tmp_path, monkeypatch, fake_openai, [("q", "a")], reserve_tokens=30000
    )
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await ready(pilot, app)
        app.run_worker(app._watch_settings(), group="settings-watch", exclusive=True, exit_on_error=False)
        await pilot.press("f5")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), "F5")
        await wait_until(pilot, lambda: field(app, RESERVE).value == "30000", "the reserve field")
        # Invalid on disk: the banner lists every problem; the fields keep the last good values.
        home.settings_file.write_text('[compaction]\nreserveTokens = "lots"\nkeepRecentTokens = -5\n')
        banner = lambda: str(app.screen.query_one("#settings-file-problems").render())  # noqa: E731
        await wait_until(
            pilot, lambda: "reserveTokens" in banner() and "keepRecentTokens" in banner(), "banner"
        )
        assert "invalid" in rendered_text(app)
        # Valid again, with a new value: the untouched field takes it and its source; no banner.
        home.settings_file.write_text(settings_toml(fake_openai, reserve_tokens=8000))
        await wait_until(pilot, lambda: field(app, RESERVE).value == "8000", "the new reserve value")
        await wait_until(
            pilot, lambda: not app.screen.query_one("#settings-file-problems").display, "no banner"
        )
        assert "Reloaded from disk" in rendered_text(app)
        # A field being edited is kept, and says what the file has now.
        keep = field(app, KEEP)
        keep.focus()
        keep.value = "12345"
        await wait_until(pilot, lambda: app.screen.query_one("SettingsForm").pending, "the edit")
        home.settings_file.write_text(
            settings_toml(fake_openai, reserve_tokens=9000, keep_recent_tokens=15000)
        )
        await wait_until(pilot, lambda: field(app, RESERVE).value == "9000", "the next reserve value")
        assert field(app, KEEP).value == "12345"
        assert "differs from the file" in row_text(app, KEEP) and "15000" in row_text(app, KEEP).replace(
            ",", ""
        )
        # The file removed: the defaults, from "default".
        home.settings_file.unlink()
        await wait_until(pilot, lambda: field(app, RESERVE).value == "16384", "the default reserve")
        assert "default" in row_text(app, RESERVE)
