"""F1 help (kompakt's own keys with their remappable ids and the commands) and ui settings applied on start."""

from __future__ import annotations

from tests.app_e2e_helpers import isolated_home, make_app, ready, wait_until
from tui.launch import Launch
from tui.screens.help import HelpScreen, help_markdown


async def test_f1_lists_kompakt_bindings_with_ids_and_commands(tmp_path, monkeypatch) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        screen = await ready(pilot, app)
        text = help_markdown(screen)
        assert "`main.compact`" in text and "`prompt.submit`" in text and "`app.help`" in text
        assert "Cursor up" not in text  # the text editor's own keys are not kompakt's bindings
        assert (
            "/compact [--preview] [instructions]" in text and "/continue" in text and "/inspect [id]" in text
        )
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen), "help to close")


async def test_ui_show_timeline_setting_hides_the_strip(tmp_path, monkeypatch) -> None:
    from tests.app_e2e_helpers import settings_toml

    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(None) + "\n[ui]\nshowTimeline = false\n")
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        screen = await ready(pilot, app)
        assert screen.timeline.display is False


async def test_welcome_shows_on_an_empty_session_only(tmp_path, monkeypatch) -> None:
    from tests.app_e2e_helpers import settings_toml

    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(None))
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        screen = await ready(pilot, app)
        welcome = screen.query_one("#welcome")
        assert welcome.display
        screen.prompt.text = "!echo hi"
        await pilot.press("enter")
        await wait_until(pilot, lambda: not welcome.display, "the welcome to go once there is an entry")


async def test_f1_commands_table_keeps_pipes_inside_their_cell(tmp_path, monkeypatch) -> None:
    """QA item 16: ``/export [html|md|jsonl [file]]`` and ``/moa on|off`` are one cell each, not split at ``|``."""
    from textual.widgets._markdown import MarkdownTable

    home = isolated_home(tmp_path, monkeypatch)
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        await ready(pilot, app)
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        await wait_until(pilot, lambda: len(app.screen.query(MarkdownTable)) >= 2, "the help tables")
        commands = app.screen.query(MarkdownTable)[1]
        await wait_until(pilot, lambda: getattr(commands, "_rows", None), "the commands table's rows")
        first_cells = {row[0].plain: len(row) for row in commands._rows}
        assert first_cells.get("/export [html|md|jsonl [file]]") == 2, sorted(first_cells)
        assert first_cells.get("/moa on|off") == 2
