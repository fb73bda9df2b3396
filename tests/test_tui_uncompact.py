"""Undoing a compaction in the TUI: ``/uncompact`` and Shift+U on a tree row (offline, real session files)."""

from __future__ import annotations

from pathlib import Path

from tests import factories as f
from tests.app_e2e_helpers import (
    new_session,
    offline_app_on,
    ready,
    screen_text,
    submit,
    wait_until,
)
from tests.pages import dialog_shown
from tui.screens.dialogs import ConfirmDialog
from tui.session.store import SessionStore

SIZE = (120, 40)


def compacted_session(tmp_path: Path, *, later: bool) -> tuple[Path, dict[str, str]]:
    """Three turns, a compaction that keeps the last one, and (``later``) one more turn after it."""
    store, ids = new_session(
        tmp_path,
        [("first question", "first answer"), ("second", "reply two"), ("third", "reply three")],
        chars=400,
    )
    compaction = store.append_compaction("OLD TURNS WERE SUMMARISED", ids[4], 600)
    names = {"first": ids[0], "parent": ids[-1], "compaction": compaction["id"], "kept": ids[4]}
    if later:
        names["later"] = store.append_message(f.user("after the compaction")["message"])["id"]
    path = store.path
    store.close()
    return path, names


async def test_slash_uncompact_brings_the_summarised_turns_back_into_the_chat(tmp_path, monkeypatch):
    path, names = compacted_session(tmp_path, later=False)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        store = screen.agent.store
        assert store.build_context().messages[0]["role"] == "compactionSummary"
        assert names["first"] not in [item.entry_id for item in screen.chat._items]
        await submit(pilot, "/uncompact")
        await wait_until(pilot, lambda: store.leaf_id == names["parent"], "the leaf moved")
        chat_ids = lambda: [item.entry_id for item in screen.chat._items]  # noqa: E731
        await wait_until(pilot, lambda: names["first"] in chat_ids(), "the old turns in the chat")
        assert names["compaction"] not in chat_ids()
        assert all(m["role"] != "compactionSummary" for m in store.build_context().messages)
        assert any(note[0] == "Uncompacted" for note in app.notes), app.notes
        await submit(pilot, "/uncompact")  # nothing left to undo on this path
        await wait_until(pilot, lambda: any("Cannot undo" in n[1] for n in app.notes), "the refusal")
    with SessionStore.open(path, read_only=True) as reopened:
        assert reopened.leaf_id == names["parent"] and names["compaction"] in reopened.tree


async def test_shift_u_on_a_compaction_row_asks_when_messages_came_after_it(tmp_path, monkeypatch):
    path, names = compacted_session(tmp_path, later=True)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        store = screen.agent.store
        await pilot.press("f2")
        view = screen.tree_pane.view
        await wait_until(pilot, lambda: view.has_focus and view.selector is not None, "the tree pane")
        while view.selected_id != names["compaction"]:
            await pilot.press("up")
        await pilot.press("U")
        await dialog_shown(pilot, app)
        assert "1 message(s) were added" in screen_text(app)
        await pilot.press("n")  # keep it
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmDialog), "the dialog closed")
        assert store.leaf_id == names["later"]

        view.focus()
        await pilot.press("U")
        await dialog_shown(pilot, app)
        await pilot.press("y")
        await wait_until(pilot, lambda: store.leaf_id == names["parent"], "the leaf moved")
        assert store.tree.parent_of(names["later"]) == names["compaction"]  # kept on its branch
        await wait_until(pilot, lambda: view.selector.leaf_id == names["parent"], "the tree redrawn")
        # Shift+U on a row that is not a compaction says so and moves nothing.
        view.focus()
        while view.selected_id != names["kept"]:
            await pilot.press("up")
        await pilot.press("U")
        await wait_until(pilot, lambda: any("not a compaction" in n[1] for n in app.notes), "the refusal")
        assert store.leaf_id == names["parent"]


async def test_apply_to_this_session_from_the_what_if_and_clear_it(tmp_path, monkeypatch):
    from textual.widgets import Static

    from tui.agent.session_settings import SESSION_SETTINGS_TYPE
    from tui.screens.settings_screen import SettingsScreen
    from widgets.settings_form import SettingRow, editor_id

    path, _names = compacted_session(tmp_path, later=False)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        agent = screen.agent
        file_keep = agent.settings.compaction.keep_recent_tokens
        await pilot.press("f4")
        await wait_until(pilot, lambda: screen.timeline.has_focus, "the focused timeline")
        await pilot.press("plus", "plus", "right_square_bracket")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: agent.session_overrides, "the session's own settings")
        assert agent.session_overrides.values["keepRecentTokens"] == file_keep + 2_000
        assert agent.session_overrides.values["strategy"] == "keep-recent"
        assert agent.base_settings.compaction.keep_recent_tokens == file_keep  # no settings file touched
        await wait_until(pilot, lambda: "session settings" in str(screen.status.render()), "the status bar")
        # The timeline now draws with them, and the what-if is back at the values in force.
        await wait_until(
            pilot, lambda: screen.timeline.timeline.keep_recent_tokens == file_keep + 2_000, "the timeline"
        )
        assert screen.timeline.what_if_settings == (
            file_keep + 2_000,
            agent.settings.compaction.reserve_tokens,
        )

        # The settings screen names "session" as the source of those keys.
        await pilot.press("f5")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), "the settings screen")
        row = app.screen.query_one(f"#row-{editor_id('compaction.keepRecentTokens')}", SettingRow)
        assert str(row.query_one(".setting-row--source", Static).render()) == "session"
        assert f"This session uses {file_keep + 2_000}" in str(
            row.query_one(".setting-row--note", Static).render()
        )
        other = app.screen.query_one(f"#row-{editor_id('compaction.calibrate')}", SettingRow)
        assert str(other.query_one(".setting-row--source", Static).render()) != "session"
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), "the settings closed")

        await submit(pilot, "/session-settings")
        await wait_until(
            pilot, lambda: any("This session sets keepRecentTokens" in n[1] for n in app.notes), "shown"
        )
        await submit(pilot, "/session-settings clear")
        await wait_until(pilot, lambda: not agent.session_overrides, "the settings cleared")
        assert agent.settings.compaction.keep_recent_tokens == file_keep
        await wait_until(pilot, lambda: "session settings" not in str(screen.status.render()), "the status")
        await wait_until(
            pilot, lambda: screen.timeline.timeline.keep_recent_tokens == file_keep, "the timeline"
        )
    with SessionStore.open(path, read_only=True) as reopened:
        stored = [e["data"] for e in reopened.entries if e.get("customType") == SESSION_SETTINGS_TYPE]
    assert (
        stored[-1] == {"compaction": {}} and stored[0]["compaction"]["keepRecentTokens"] == file_keep + 2_000
    )
