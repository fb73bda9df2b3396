"""Issue 13 (F, state you can see): Pilot tests of the real app for D7, D10, D13–D16, D18, D20–D22.

Each test drives :class:`~tui.app.KompaktApp` on real session files in an isolated home, at the sizes a
new user meets (80×24, 100 columns), and waits for the condition it asserts (never a fixed pause).
What is asserted is what the terminal shows (``screen_text``), not a widget's stored text.
"""

from __future__ import annotations

import re

import pytest

from tests.app_e2e_helpers import branched_session_app, ready, screen_text, wait_until
from tests.fake_openai import fake_openai_fixture  # noqa: F401
from tui.screens.help import help_markdown

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


def footer_text(app) -> str:
    """The footer row as the terminal shows it."""
    return screen_text(app).splitlines()[-1]


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_f1_stays_in_the_footer_at_80_and_100_columns(tmp_path, monkeypatch, fake_openai, size) -> None:
    """D14: whatever has the focus (prompt, tree pane, timeline), F1 Help is on screen in the footer."""
    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=size, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await wait_until(pilot, lambda: "f1 Help" in footer_text(app), "F1 with the prompt focused")
        await pilot.press("f2")
        await wait_until(pilot, lambda: screen.tree_pane.view.has_focus, "the tree pane")
        await wait_until(pilot, lambda: "f1 Help" in footer_text(app), "F1 with the tree focused")
        await pilot.press("f4")
        await wait_until(pilot, lambda: screen.timeline.has_focus, "the timeline")
        await wait_until(pilot, lambda: "f1 Help" in footer_text(app), "F1 with the timeline focused")
        await pilot.press("f5")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "SettingsScreen", "the settings")
        await wait_until(pilot, lambda: "f1 Help" in footer_text(app), "F1 in the settings")


async def test_f1_help_lists_each_section_once_and_the_keys_in_order(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """D15: no section twice (the tree pane and its list share one text), one row per binding id, and
    the F-keys first in their numeric order."""
    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f2")
        await wait_until(pilot, lambda: screen.tree_pane.view.has_focus, "the tree pane")
        text = help_markdown(screen)
        headings = [line for line in text.splitlines() if line.startswith("#")]
        assert len(headings) == len(set(headings)), headings
        ids = re.findall(r"\| `[^`]+` \| [^|]+ \| `([a-z_.]+)` \|", text)
        assert ids and len(ids) == len(set(ids)), ids
        keys = re.findall(r"^\| `(f\d+)` \|", text, re.M)
        assert keys == sorted(keys, key=lambda k: int(k[1:])), keys
        assert keys[0] == "f1"
        first_rows = re.findall(r"^\| `([^`]+)` \|", text, re.M)
        assert first_rows[: len(keys)] == keys, first_rows  # the F-keys come first
        screen.prompt.focus()
        await wait_until(pilot, lambda: screen.prompt.has_focus, "the prompt")
        text = help_markdown(screen)
        # One row per id, its keys together.
        assert "| `shift+⏎` or `^j` | New line | `prompt.newline` |" in text, text


async def test_textuals_own_notifications_show_no_markup(tmp_path, monkeypatch, fake_openai) -> None:
    """D16: the screenshot toast (and Ctrl+C's "how to quit") are worded without markup, since every
    toast is shown literally: before, the toast read ``Saved screenshot to [$text-success]'…'``."""
    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        app.action_screenshot(path=str(tmp_path))
        note = await wait_until(
            pilot, lambda: next((n for n in app.notes if n[0] == "Screenshot"), None), "the screenshot toast"
        )
        assert "[" not in note[1] and str(tmp_path) in note[1], note
        assert list(tmp_path.glob("*.svg"))
        app.action_help_quit()
        quit_note = await wait_until(
            pilot, lambda: next((n for n in app.notes if "quit" in n[1]), None), "quit"
        )
        assert "[b]" not in quit_note[1] and "^q" in quit_note[1], quit_note


def cursor_on_screen(view) -> bool:
    """The tree's selected row lies inside the rows the pane shows."""
    top, height = view.scroll_offset.y, view.scrollable_content_region.height
    index = view.selector.selected_index
    return height > 0 and top <= index < top + height


async def test_the_tree_cursor_stays_visible_after_esc_clears_a_search(tmp_path, monkeypatch) -> None:
    """D18: on the demo (49 rows, the cursor on the leaf near the end) a search narrows the rows; Esc
    clears it and the pane scrolls back to the cursor, which it kept, instead of showing the top."""
    from tests.app_e2e_helpers import isolated_home, make_app
    from tui.launch import Launch

    home = isolated_home(tmp_path, monkeypatch)
    app = make_app(home, Launch("demo", cwd=tmp_path))
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f2")
        view = screen.tree_pane.view
        await wait_until(pilot, lambda: view.has_focus and view.selector is not None, "the tree pane")
        await wait_until(pilot, lambda: cursor_on_screen(view) and view.scroll_offset.y > 0, "the leaf shown")
        leaf = view.selected_id
        await pilot.press(*"fsync")
        await wait_until(pilot, lambda: view.search_query == "fsync", "the search")
        await pilot.press("escape")
        await wait_until(pilot, lambda: view.search_query == "", "the cleared search")
        assert view.selected_id == leaf
        await wait_until(pilot, lambda: cursor_on_screen(view), "the cursor on screen")
        assert "›" in screen_text(app)


async def test_f4_focuses_the_timeline_whenever_it_is_not_focused(tmp_path, monkeypatch, fake_openai) -> None:
    """D20: F4 expands and focuses; with the prompt focused again (a click), F4 focuses the expanded
    timeline instead of collapsing it; F4 on the focused timeline collapses it and goes back; a
    collapsed timeline reached with Shift+Tab expands and keeps the focus."""
    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        screen = await ready(pilot, app)
        timeline, prompt = screen.timeline, screen.prompt
        await pilot.press("f4")
        await wait_until(pilot, lambda: timeline.expanded and timeline.has_focus, "expanded and focused")
        await pilot.click(prompt)
        await wait_until(pilot, lambda: prompt.has_focus, "the prompt clicked")
        await pilot.press("f4")
        await wait_until(pilot, lambda: timeline.has_focus, "the timeline focused by F4")
        assert timeline.expanded
        await pilot.press("f4")
        await wait_until(pilot, lambda: prompt.has_focus and not timeline.expanded, "collapsed, back")
        timeline.focus()
        await wait_until(pilot, lambda: timeline.has_focus, "the collapsed timeline focused")
        await pilot.press("f4")
        await wait_until(pilot, lambda: timeline.expanded, "expanded")
        assert timeline.has_focus


async def test_nothing_to_summarise_over_the_threshold_is_explained_once(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """D10: two turns over the threshold (32,000 − 16,384) whose messages all fit keepRecentTokens:
    one notice says why with the figures and what to do; no "Compaction skipped" toast after each turn."""
    from tests.app_e2e_helpers import make_app, saved_session_app, wait_idle
    from tests.fake_openai import Reply

    app, home, _ids = saved_session_app(tmp_path, monkeypatch, fake_openai, [("q1", "a1"), ("q2", "a2")])
    # Without the usage calibration the budget stays 20,000 estimated tokens, so both turns skip.
    text = home.settings_file.read_text().replace("[compaction]\n", "[compaction]\ncalibrate = false\n")
    home.settings_file.write_text(text)
    app = make_app(home, app.launch)
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        screen = await ready(pilot, app)
        store = app.session.store
        for turn in range(2):
            fake_openai.queue(Reply.text_reply(f"big reply {turn}", usage=(20_000 + turn, 10)))
            screen.prompt.focus()
            screen.prompt.text = f"turn {turn}"
            before = len(store.entries)
            await pilot.press("enter")
            await wait_idle(
                pilot, app, lambda before=before: len(store.entries) >= before + 2, f"turn {turn}"
            )
        advice = [n for n in app.notes if "found nothing to summarise" in n[1]]
        assert len(advice) == 1, app.notes
        text = advice[0][1]
        assert "20,010" in text and "15,616" in text and "keepRecentTokens (20,000)" in text, text
        assert "/compact" in text
        assert not any(n[0] == "Compaction skipped" for n in app.notes), app.notes
        assert not any(e.get("type") == "compaction" for e in store.entries)


async def test_the_what_if_footer_keeps_esc_and_f9_at_80_columns(tmp_path, monkeypatch, fake_openai) -> None:
    """QA 13 F: with the timeline focused at 80×24 the footer was cut after "s Sw…" (Esc, F9 off screen).

    Esc shows only while it has something to cancel (a compaction, a selection), so it must come and go.
    """
    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(80, 24), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f4")
        await wait_until(pilot, lambda: screen.timeline.has_focus, "the timeline")
        await pilot.press("left")  # a selected segment: Esc clears it
        await wait_until(pilot, lambda: screen.timeline.selected_entry_id is not None, "a selected segment")
        for key in ("f1 Help", "esc Clear", "f9 View", "+/- Keep", "]/[ Reserve", "⏎ Compact"):
            await wait_until(pilot, lambda key=key: key in footer_text(app), f"{key!r} in the footer")
        await pilot.press("escape")  # the selection is cleared: nothing left for Esc to cancel
        await wait_until(pilot, lambda: "esc " not in footer_text(app), "Esc gone from the footer")
        assert "f9 View" in footer_text(app) and "^t Strategy" in footer_text(app)


async def test_a_manual_compaction_with_nothing_to_compact_says_so_once(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """QA: /compact on a session too small to compact showed two toasts with the same words."""
    from tests.app_e2e_helpers import saved_session_app, submit, wait_idle

    app, _home, _ids = saved_session_app(tmp_path, monkeypatch, fake_openai, [("q1", "a1")])
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        await ready(pilot, app)
        await submit(pilot, "/compact")
        await wait_idle(pilot, app, lambda: any("Nothing to compact" in n[1] for n in app.notes), "the skip")
        assert sum("Nothing to compact" in n[1] for n in app.notes) == 1, app.notes
