"""Issue 13 (F, state you can see): Pilot tests of the real app for D7, D10, D13–D16, D18, D20–D22.

Each test drives :class:`~tui.app.KompaktApp` on real session files in an isolated home, at the sizes a
new user meets (80×24, 100 columns), and waits for the condition it asserts (never a fixed pause).
What is asserted is what the terminal shows (``screen_text``), not a widget's stored text.
"""

from __future__ import annotations

import pytest

from tests.app_e2e_helpers import branched_session_app, ready, screen_text, wait_until
from tests.fake_openai import fake_openai_fixture  # noqa: F401

FILTER_TAGS = {"ctrl+u": "[user]", "ctrl+l": "[labeled]", "ctrl+a": "[all]", "ctrl+t": "[no-tools]"}


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_the_tree_pane_shows_its_filter_tag_next_to_the_count(
    tmp_path, monkeypatch, fake_openai, size
) -> None:
    """D7: each filter's tag is on screen beside ``(i/n)``, in the side pane and the full-screen tree."""
    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=size, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f2")
        view = screen.tree_pane.view
        await wait_until(pilot, lambda: view.has_focus and view.selector is not None, "the tree pane")
        for key, tag in FILTER_TAGS.items():
            await pilot.press(key)
            await wait_until(pilot, lambda tag=tag: tag in screen_text(app), f"{tag} on screen")
        await pilot.press("ctrl+d")  # the default filter has no tag
        await wait_until(pilot, lambda: "[no-tools]" not in screen_text(app), "no tag")
        await pilot.press("f3")
        await wait_until(pilot, lambda: app.screen is not screen, "the full-screen tree")
        await pilot.press("ctrl+u")
        await wait_until(pilot, lambda: "[user]" in screen_text(app), "[user] in the full-screen tree")
