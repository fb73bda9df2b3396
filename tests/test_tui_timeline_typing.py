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
        await pilot.press("plus", "a")
        await wait_until(pilot, lambda: entries(path, "kompakt.settings"), "the session's settings")
        screen.timeline.focus()
        await pilot.press("a")
        await wait_until(pilot, lambda: any("already" in note[1] for note in app.notes), "the no-op said")
        assert len(entries(path, "kompakt.settings")) == 1
        screen.timeline.focus()
        await pilot.press("plus", "a")
        await wait_until(pilot, lambda: len(entries(path, "kompakt.settings")) == 2, "a changed value")
        first, second = (e["data"]["compaction"] for e in entries(path, "kompakt.settings"))
        assert second["keepRecentTokens"] == first["keepRecentTokens"] + 1000
