"""QA pass (session 16) at the sizes a user's terminal may have: F5 and F7 at 60x15, the footer at 160x45.

Each test drives :class:`~tui.app.KompaktApp` on a real session file in an isolated home and asserts what
the terminal shows (``screen_text``), waiting for the condition (never a fixed pause).
"""

from __future__ import annotations

import pytest

from tests.app_e2e_helpers import branched_session_app, ready, screen_text, wait_until
from tests.fake_openai import fake_openai_fixture  # noqa: F401


def footer_text(app) -> str:
    """The footer row as the terminal shows it."""
    return screen_text(app).splitlines()[-1]


@pytest.mark.parametrize("size", [(60, 15), (40, 10)])
async def test_f5_on_a_small_screen_shows_settings_rows_and_the_save_and_close_keys(
    tmp_path, monkeypatch, fake_openai, size
) -> None:
    """QA item 14: at 60x15 F5 showed the what-if strip, the target bar and the help box, and no setting;
    at 40x10 (session 17) the border and the help box still left no row for a setting."""
    from widgets.settings_form import SettingRow

    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=size, notifications=False) as pilot:
        await ready(pilot, app)
        await pilot.press("f5")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "SettingsScreen", "the settings")
        await wait_until(pilot, lambda: "esc Close" in footer_text(app), "Esc in the footer")
        assert "^s Save" in footer_text(app)
        rows = app.screen.query_one("#settings-form-rows")
        first, second = list(app.screen.query(SettingRow))[:2]
        await wait_until(
            pilot,
            lambda: all(
                rows.region.contains_region(row.region) and row.region.height >= 2 for row in (first, second)
            ),
            "two settings on screen",
        )
        assert all(f"\n{row.spec.label[:8]}" in rendered_rows(app) for row in (first, second))  # or cut…


def rendered_rows(app) -> str:
    """Each screen line stripped of borders and padding, one per line."""
    return "\n" + "".join(line.strip(" │╭╮╰╯─") + "\n" for line in screen_text(app).splitlines())


@pytest.mark.parametrize("key, picker", [("f7", "SessionPicker"), ("f6", "ModelPicker")])
async def test_a_picker_at_60x15_shows_its_own_keys_in_the_footer(
    tmp_path, monkeypatch, fake_openai, key, picker
) -> None:
    """QA item 19: with F7 open the footer showed the main screen's keys (⏎ Send …), dead under the picker."""
    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(60, 15), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await wait_until(pilot, lambda: "Send" in footer_text(app), "the main footer")
        await pilot.press(key)
        await wait_until(pilot, lambda: type(app.screen).__name__ == picker, "the picker")
        await wait_until(pilot, lambda: "esc Cancel" in footer_text(app), "the picker's keys in the footer")
        assert "Send" not in footer_text(app) and "f1 Help" in footer_text(app)
        await pilot.press("f1")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", "F1 in the picker")
        assert screen is app.main


async def test_the_timeline_footer_at_160_columns_keeps_the_screens_keys(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """QA item 19: with the timeline focused at 160x45 the footer ended '… f4 Timeline  f5 S▏^p palette'; the
    timeline's unchosen keys (jump, expand) give way so that F5 and Quit stay, and come back when wider."""
    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(160, 45), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f4")
        await wait_until(pilot, lambda: screen.timeline.has_focus, "the timeline")
        await wait_until(pilot, lambda: "f5 Settings" in footer_text(app), "F5 in the footer")
        assert "^q Quit" in footer_text(app) and "+/- Keep" in footer_text(app)
        await pilot.resize_terminal(220, 45)
        await wait_until(pilot, lambda: "Jump to boundary" in footer_text(app), "the timeline's extra keys")
        assert "^q Quit" in footer_text(app)


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 45)])
async def test_the_welcome_breaks_only_where_its_lines_end(tmp_path, monkeypatch, size) -> None:
    """QA item 17: at 100x30 the welcome broke mid-sentence ("F5 / the settings," then "F1 every key…")."""
    from tests.app_e2e_helpers import isolated_home, make_app, settings_toml
    from tui.launch import Launch
    from tui.screens.main import WELCOME

    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(None))
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=size, notifications=False) as pilot:
        screen = await ready(pilot, app)
        welcome = screen.query_one("#welcome")
        await wait_until(pilot, lambda: welcome.display and welcome.region.height, "the welcome")
        region = welcome.content_region
        drawn = screen_text(app).splitlines()[region.y : region.bottom]
        lines = [line[region.x : region.right].rstrip() for line in drawn]
        while lines and not lines[-1]:
            lines.pop()
        assert lines == WELCOME.splitlines()


def footer_items(app) -> list[str]:
    """The footer's items as drawn ('f1 Help', …), the palette key at the right edge left out."""
    row = footer_text(app).split("▏")[0]
    return [item.strip() for item in row.split("  ") if item.strip()]


@pytest.mark.parametrize("width", [80, 100, 120, 160])
async def test_the_timeline_footer_shows_whole_keys_with_f1_first(
    tmp_path, monkeypatch, fake_openai, width
) -> None:
    """Issue 13 F: with the timeline focused the footer was cut mid-label ('^r R▏' at 80 columns, 'f5 Se▏'
    at 120): every key drawn is whole, and F1 Help is the first."""
    from textual.widgets._footer import FooterKey

    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(width, 40), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f4")
        await wait_until(pilot, lambda: screen.timeline.has_focus, "the timeline")
        await wait_until(pilot, lambda: "+/- Keep" in footer_text(app), "the timeline's keys in the footer")
        labels = {f"{key.key_display} {key.description}" for key in app.screen.query(FooterKey)}
        items = footer_items(app)
        assert items[0] == "f1 Help"
        assert all(item in labels for item in items), items
        assert footer_text(app).rstrip().endswith("^p palette")


@pytest.mark.parametrize("size", [(40, 12), (70, 24)])
async def test_the_tree_pane_on_a_narrow_screen_leaves_the_prompt_on_screen(
    tmp_path, monkeypatch, fake_openai, size
) -> None:
    """QA (session 17): at 40x12 F2's pane (min-width 40) took the whole width and the prompt vanished."""
    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=size, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f2")
        await wait_until(pilot, lambda: screen.tree_pane.view.has_focus, "the tree pane")
        await wait_until(
            pilot,
            lambda: "Session Tree" in screen_text(app) and "Message" in screen_text(app),
            "tree and prompt",
        )
        width, height = size
        prompt, pane = screen.prompt.region, screen.tree_pane.region
        assert prompt.width > width // 2 and prompt.height >= 1 and prompt.bottom <= height
        assert pane.width == width and pane.bottom <= prompt.y  # stacked above the prompt, full width
        await pilot.press("f2")
        await wait_until(
            pilot, lambda: not screen.tree_pane.display and screen.chat.region.height > 0, "the chat"
        )
        assert not screen.has_class("-tree-open")
