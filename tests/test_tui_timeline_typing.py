"""Keys on the focused timeline (issue 13 QA, the D1 rule): typing goes to the prompt, Enter asks first,
and `a` writes the session's settings once (offline, real session files)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app_e2e_helpers import new_session, offline_app_on, ready, wait_until
from tests.pages import dialog_shown
from tui.screens.dialogs import ConfirmDialog

SIZE = (120, 40)


def session(tmp_path: Path) -> Path:
    store, _ = new_session(tmp_path, [(f"question {i}", f"answer {i}") for i in range(10)], chars=8000)
    path = store.path
    store.close()
    return path


def entries(path: Path, kind: str) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e for e in lines if e.get("type") == kind or e.get("customType") == kind]


async def focus_timeline(pilot, screen) -> None:
    await pilot.press("f4")
    await wait_until(pilot, lambda: screen.timeline.has_focus, "the timeline focused")


async def test_a_message_typed_on_the_timeline_goes_to_the_prompt_and_enter_sends_it(tmp_path, monkeypatch):
    """QA: F4, `tell me more` Enter: the letters went nowhere and Enter started a compaction."""
    path = session(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await focus_timeline(pilot, screen)
        await pilot.press(*"tell me more", "enter")
        sent = lambda: [e for e in entries(path, "message") if e["message"]["role"] == "user"]  # noqa: E731
        await wait_until(pilot, lambda: "tell me more" in json.dumps(sent()[-1]), "the message sent")
        assert not isinstance(app.screen, ConfirmDialog)
        assert entries(path, "compaction") == [] and entries(path, "kompakt.settings") == []


async def test_enter_on_the_timeline_asks_with_the_values_before_it_compacts(tmp_path, monkeypatch):
    path = session(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await focus_timeline(pilot, screen)
        await pilot.press("minus", "enter")
        dialog = await dialog_shown(pilot, app)
        keep = screen.timeline.what_if_settings[0]
        assert f"keepRecentTokens {keep:,}" in dialog._question and "reserveTokens" in dialog._question
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmDialog), "the dialog closed")
        assert entries(path, "compaction") == []
        screen.timeline.focus()
        await pilot.press("enter")
        await dialog_shown(pilot, app)
        await pilot.press("enter")  # "Compact" has the focus
        await wait_until(pilot, lambda: entries(path, "compaction"), "the compaction")
        assert len(entries(path, "compaction")) == 1


async def test_apply_twice_writes_one_settings_entry(tmp_path, monkeypatch):
    """QA: two identical kompakt.settings entries; now one, and only when the values change."""
    path = session(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await focus_timeline(pilot, screen)
        await pilot.press("plus", "ctrl+s")
        await wait_until(pilot, lambda: entries(path, "kompakt.settings"), "the session's settings")
        screen.timeline.focus()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any("already" in note[1] for note in app.notes), "the no-op said")
        assert len(entries(path, "kompakt.settings")) == 1
        screen.timeline.focus()
        await pilot.press("plus", "ctrl+s")
        await wait_until(pilot, lambda: len(entries(path, "kompakt.settings")) == 2, "a changed value")
        first, second = (e["data"]["compaction"] for e in entries(path, "kompakt.settings"))
        assert second["keepRecentTokens"] == first["keepRecentTokens"] + 1000


# Words that start with each letter the timeline bound: a (apply), p (preview), s (strategy), r (reset),
# i (inspect), b (boundary), each followed by the what-if symbols and Space, which stay bound.
WORDS = ("apply", "please", "so", "run", "it", "but", "b+-[] {x}")


async def test_words_typed_on_the_timeline_change_nothing_but_the_prompt(tmp_path, monkeypatch):
    """Issue 13 F: a word starting with a timeline letter fired it first (`p` a summarizer call, `a` a
    settings entry, `i` the inspector, `s`/`r`/`b` the what-if and the tree)."""
    path = session(tmp_path)
    before = path.read_bytes()
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await focus_timeline(pilot, screen)
        timeline = screen.timeline
        what_if = timeline.what_if_settings, timeline.what_if_strategy
        selected = screen.tree_pane.display
        for word in WORDS:
            screen.prompt.text = ""
            timeline.focus()
            await wait_until(pilot, lambda: timeline.has_focus, "the timeline focused")
            await pilot.press(*word)
            await wait_until(pilot, lambda w=word: screen.prompt.text == w, f"{word!r} in the prompt")
            assert app.screen is screen  # no inspector, no preview, no question
            assert (timeline.what_if_settings, timeline.what_if_strategy) == what_if
            assert screen.tree_pane.display == selected
        assert path.read_bytes() == before


async def test_a_burst_queued_before_the_focus_moves_goes_to_the_prompt_in_order(tmp_path, monkeypatch):
    """Keys that reach the timeline before the focus has moved to the prompt (a fast burst, a paste
    without bracketed paste) follow the first one there; the what-if symbols among them do not act."""
    from textual.events import Key

    path = session(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await focus_timeline(pilot, screen)
        timeline = screen.timeline
        what_if, expanded = timeline.what_if_settings, timeline.expanded
        burst = [("h", "h"), ("plus", "+"), ("minus", "-"), ("space", " "), ("right_square_bracket", "]")]
        for key, character in burst:  # all queued at once, before any is handled
            app.post_message(Key(key, character))
        await wait_until(pilot, lambda: screen.prompt.text == "h+- ]", "the burst in the prompt")
        assert timeline.what_if_settings == what_if and timeline.expanded == expanded
        timeline.focus()
        await wait_until(pilot, lambda: timeline.has_focus, "the timeline focused again")
        await pilot.press("plus")  # back on the timeline, its keys act again
        await wait_until(pilot, lambda: timeline.what_if_settings[0] == what_if[0] + 1000, "a nudge")


async def test_the_timeline_keys_remap_through_the_keymap(tmp_path, monkeypatch):
    """The moved keys keep their ids: `[keymap]` puts Apply on another key and Ctrl+S then does nothing."""
    from tests.app_e2e_helpers import isolated_home, make_app, settings_toml
    from tui.launch import Launch

    path = session(tmp_path)
    home = isolated_home(tmp_path, monkeypatch)
    keymap = '\n[keymap]\n"timeline.apply_to_session" = "ctrl+w"\n'
    home.settings_file.write_text(settings_toml(None) + keymap)
    app = make_app(home, Launch("open", path, tmp_path))
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await focus_timeline(pilot, screen)
        keep = screen.timeline.what_if_settings[0]
        await pilot.press("plus", "ctrl+s", "plus", "ctrl+w")  # Ctrl+S would have written keep + 1k
        await wait_until(pilot, lambda: entries(path, "kompakt.settings"), "the session's settings")
        [written] = entries(path, "kompakt.settings")  # the entries are written in order: Ctrl+S wrote none
        assert written["data"]["compaction"]["keepRecentTokens"] == keep + 2000
