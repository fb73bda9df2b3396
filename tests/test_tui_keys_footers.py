"""Issue 13 F (keys and footers): each screen's footer names its own keys, the full tree's F-keys act,
dialog buttons follow the arrows, the palette finds a slash command's name, /name waits for the turn.

Each test drives :class:`~tui.app.KompaktApp` on a real session file in an isolated home and reads what
the terminal shows (``screen_text``), waiting for the condition (never a fixed pause).
"""

from __future__ import annotations

import json

import pytest
from textual.app import App
from textual.screen import ModalScreen
from textual.widgets import Button

from tests.app_e2e_helpers import branched_session_app, loopback_app, ready, screen_text, wait_until
from tests.fake_openai import Reply, fake_openai_fixture  # noqa: F401
from tests.pages import MainPage, screen_shown


def footer_text(app) -> str:
    """The footer row as the terminal shows it."""
    return screen_text(app).splitlines()[-1]


async def test_the_full_tree_and_its_help_show_their_own_keys(tmp_path, monkeypatch, fake_openai) -> None:
    """F3's footer listed the main screen's keys (or none), and F1 there did nothing."""
    from tui.screens.help import HelpScreen
    from tui.screens.tree_screen import TreeScreen

    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(120, 35), notifications=False) as pilot:
        await ready(pilot, app)
        await wait_until(pilot, lambda: "Send" in footer_text(app), "the main footer")
        await pilot.press("f3")
        await screen_shown(pilot, app, TreeScreen)
        await wait_until(pilot, lambda: "Go here" in footer_text(app), "the tree's keys in the footer")
        footer = footer_text(app)
        assert "f1 Help" in footer and "f3 Close" in footer and "f4 Timeline" in footer, footer
        assert "f5 Settings" in footer and "Send" not in footer, footer
        await pilot.press("f1")
        await screen_shown(pilot, app, HelpScreen)
        await wait_until(pilot, lambda: "esc Close help" in footer_text(app), "the help's own footer")
        assert "Go here" not in footer_text(app) and "Send" not in footer_text(app)
        assert "main.toggle_timeline" in app.screen.query_one("Markdown").source  # F1 lists the tree's keys


async def test_f4_in_the_full_tree_opens_the_timeline_where_plus_raises_keep(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """F4 in F3 did nothing, and the '+' typed next went into the tree's search."""
    from tui.screens.tree_screen import TreeScreen

    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(120, 35), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f3")
        tree = await screen_shown(pilot, app, TreeScreen)
        await wait_until(pilot, lambda: tree.pane.view.selector is not None, "the tree's rows")
        await pilot.press("f4")
        await wait_until(pilot, lambda: app.screen is screen and screen.timeline.has_focus, "the timeline")
        assert screen.timeline.expanded
        keep = screen.timeline.what_if_settings[0]
        await pilot.press("plus")
        await wait_until(pilot, lambda: screen.timeline.what_if_settings[0] > keep, "keep raised by '+'")
        assert tree.pane.view.selector.query == ""


async def test_f5_and_f2_in_the_full_tree_close_it_and_act(tmp_path, monkeypatch, fake_openai) -> None:
    from tui.screens.settings_screen import SettingsScreen
    from tui.screens.tree_screen import TreeScreen

    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(120, 35), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f3")
        await screen_shown(pilot, app, TreeScreen)
        await pilot.press("f5")
        await screen_shown(pilot, app, SettingsScreen)
        assert [type(s).__name__ for s in app.screen_stack][-2:] == ["MainScreen", "SettingsScreen"]
        await pilot.press("escape")
        await screen_shown(pilot, app, type(screen))
        await pilot.press("f3")
        await screen_shown(pilot, app, TreeScreen)
        await pilot.press("f2")
        await wait_until(
            pilot, lambda: app.screen is screen and screen.tree_pane.view.has_focus, "the tree pane, focused"
        )
        await pilot.press("f3")
        await screen_shown(pilot, app, TreeScreen)
        await pilot.press("f3")  # F3 again closes it
        await screen_shown(pilot, app, type(screen))


async def test_the_main_footer_does_not_show_under_a_dialog(tmp_path, monkeypatch, fake_openai) -> None:
    """A dialog over the main screen let its footer (⏎ Send, F2 …) show through: keys dead there."""
    from tui.screens.dialogs import ConfirmDialog

    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await wait_until(pilot, lambda: "Send" in footer_text(app), "the main footer")
        app.push_screen(ConfirmDialog("Go on?"))
        await screen_shown(pilot, app, ConfirmDialog)
        await wait_until(pilot, lambda: "Help" not in footer_text(app), "the main footer hidden")
        assert "Send" not in footer_text(app)
        await pilot.press("escape")
        await screen_shown(pilot, app, type(screen))
        await wait_until(pilot, lambda: "Send" in footer_text(app), "the main footer back")


class DialogHost(App[None]):
    """An empty app that shows one dialog."""

    def __init__(self, dialog: ModalScreen) -> None:
        super().__init__()
        self.dialog = dialog

    def on_mount(self) -> None:
        self.push_screen(self.dialog)


def _dialogs() -> list[tuple[str, ModalScreen, list[str]]]:
    from tui.screens.approval import ApprovalDialog
    from tui.screens.dialogs import ConfirmDialog
    from tui.screens.settings_screen import ConfirmDiscard

    return [
        ("discard", ConfirmDiscard(2), ["keep", "discard"]),
        (
            "missing cwd",
            ConfirmDialog("Continue?", yes="Continue here", letters=False, default="yes"),
            ["no", "yes"],
        ),
        ("confirm", ConfirmDialog("Go on?"), ["no", "yes"]),
        ("approval", ApprovalDialog("bash", {"command": "ls"}, "asks"), ["deny", "allow"]),
    ]


@pytest.mark.parametrize("index", range(4), ids=[name for name, _d, _o in _dialogs()])
async def test_left_and_right_move_between_a_dialogs_buttons_in_their_drawn_order(index: int) -> None:
    """F5's discard dialog ignored ←/→; in the missing-cwd dialog → moved to the left-hand button."""
    _name, dialog, (left, right) = _dialogs()[index]
    app = DialogHost(dialog)
    async with app.run_test(size=(100, 30)) as pilot:
        await screen_shown(pilot, app, type(dialog))
        dialog.query_one(f"#{left}", Button).focus()
        await wait_until(pilot, lambda: dialog.focused is dialog.query_one(f"#{left}"), "the left button")
        assert dialog.query_one(f"#{left}").region.x < dialog.query_one(f"#{right}").region.x
        await pilot.press("left")  # at the left end: stays
        await pilot.press("right")
        await wait_until(pilot, lambda: dialog.focused is dialog.query_one(f"#{right}"), "→ to the right one")
        await pilot.press("right")  # at the right end: stays
        await pilot.press("left")
        await wait_until(pilot, lambda: dialog.focused is dialog.query_one(f"#{left}"), "← to the left one")
        assert app.screen is dialog  # no arrow answered it


@pytest.mark.parametrize(
    "query, title",
    [("/uncompact", "Undo compaction"), ("session-settings", "Session settings"), ("/name", "Name session")],
)
async def test_the_palette_finds_a_command_by_its_slash_name(
    tmp_path, monkeypatch, fake_openai, query, title
) -> None:
    """Searching "/uncompact" did not find "Undo compaction": the search read the title and group only.
    (The palette's provider is asked directly: its list on screen may still show an earlier query's hits.)"""
    from tui.screens.palette import KompaktCommands

    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(120, 35), notifications=False) as pilot:
        screen = await ready(pilot, app)
        found = [str(hit.text) async for hit in KompaktCommands(screen).search(query)]
        assert title in found, found
        assert "Quit" not in found  # the slash names do not make everything match


def _file_order(store) -> list[str]:
    """Each entry of the session file, in file order: its type, or the role of a message."""
    lines = [json.loads(line) for line in store.path.read_text().splitlines()[1:]]
    return [e["message"]["role"] if e["type"] == "message" else e["type"] for e in lines]


async def test_name_typed_during_a_reply_is_written_after_it(tmp_path, monkeypatch, fake_openai) -> None:
    """/name during a streaming reply wrote its session_info between the user message and the reply."""
    words = "".join(f"word{i} " for i in range(120))
    fake_openai.queue(Reply.text_reply(words, chunk_size=4, tokens_per_second=20))
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        page = MainPage(pilot)
        screen = await page.ready()
        await page.send("tell me a story")
        await wait_until(pilot, lambda: "word1 " in screen_text(app), "the reply streaming")
        await page.send("/name Story time")
        store = screen.agent.store
        await page.wait_idle(lambda: words.strip() in "".join(page.assistant_texts()), "the whole reply")
        await wait_until(pilot, lambda: store.name == "Story time", "the name")
        assert _file_order(store) == ["user", "assistant", "session_info"]


async def test_name_typed_during_a_reply_waits_for_its_end_also_after_esc(
    tmp_path, monkeypatch, fake_openai
) -> None:
    fake_openai.queue(Reply.hang(text="partial words so far"))
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        page = MainPage(pilot)
        screen = await page.ready()
        await page.send("tell me a long story")
        await wait_until(pilot, lambda: "partial words so far" in screen_text(app), "the partial reply")
        await page.send("/name Long story")
        await wait_until(pilot, lambda: screen.queued_name == "Long story", "the name held back")
        store = screen.agent.store
        assert "session_info" not in _file_order(store) and store.name != "Long story"
        await pilot.press("escape")
        await page.wait_idle(lambda: store.name == "Long story", "the name, once the reply stopped")
        assert _file_order(store) == ["user", "assistant", "session_info"]


@pytest.mark.parametrize("width", [60, 120])
async def test_a_long_leaf_row_keeps_its_active_marker(width: int) -> None:
    """The tree pane cut a long leaf row at its right edge, '← active' with it."""
    from tests import factories as f
    from tests.test_tui_tree import TreeHost, lines
    from tui.session.tree import TreeIndex

    long_text = " ".join(f"word{i}" for i in range(80))
    user, reply = f.user(long_text), f.assistant(long_text)
    user.update(id="u1", parentId=None, timestamp="2025-01-01T00:00:01.000Z")
    reply.update(id="a1", parentId="u1", timestamp="2025-01-01T00:00:02.000Z")
    app = TreeHost(TreeIndex([user, reply]), "a1")
    async with app.run_test(size=(width, 30)) as pilot:
        await wait_until(pilot, lambda: len(lines(app.view)) == 2, "the two rows")
        first, leaf = lines(app.view)
        assert leaf.endswith("…  ← active") and "assistant: word0" in leaf, leaf
        assert first.endswith("…") and "← active" not in first, first
        assert len(leaf) == app.view.scrollable_content_region.width


async def test_the_full_tree_opens_scrolled_to_the_leaf(tmp_path, monkeypatch, fake_openai) -> None:
    """With its footer the full tree opened at the top of a long session, the selected leaf off screen:
    both centring tries ran before the view had its scrollbar (SessionTreeView._centre forces now)."""
    from tests.app_e2e_helpers import saved_session_app
    from tests.test_tui_tree import lines
    from tui.screens.tree_screen import TreeScreen

    turns = [(f"question {i}", f"answer {i}") for i in range(30)]
    app, _home, _ids = saved_session_app(tmp_path, monkeypatch, fake_openai, turns)
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        await ready(pilot, app)
        await pilot.press("f3")
        tree = await screen_shown(pilot, app, TreeScreen)
        view = tree.pane.view
        await wait_until(pilot, lambda: view.selector is not None and view.size.height > 0, "the rows")
        await wait_until(
            pilot, lambda: any("answer 29  ← active" in line for line in lines(view)), "the leaf"
        )
        assert view.scroll_offset.y > 0


async def test_the_what_if_panel_names_the_timeline_keys_as_bound() -> None:
    """The panel's key line still said 's strategy · r reset · b go to ▼' after those keys moved to
    Ctrl+T, Ctrl+R and Ctrl+F (a letter typed there goes to the prompt); a [keymap] remap shows too."""
    from tests.test_tui_narrow import TimelineHost, rows
    from widgets.timeline import CompactionTimeline

    app = TimelineHost()
    async with app.run_test(size=(160, 40)) as pilot:
        widget = app.query_one(CompactionTimeline)
        await wait_until(
            pilot, lambda: widget.timeline is not None and widget.size.height > 0, "the timeline"
        )
        widget.expanded = True
        await wait_until(pilot, lambda: any(" strategy · " in row for row in rows(widget)), "the key line")
        line = next(row for row in rows(widget) if " strategy · " in row)
        assert "^t strategy · ^r reset" in line and "^f go to ▼" in line, line
        app.set_keymap({"timeline.switch_strategy": "ctrl+y"})
        app.on_mount()  # the settings' keymap comes with new settings, and the timeline is updated then
        await wait_until(pilot, lambda: any("^y strategy" in row for row in rows(widget)), "the remapped key")


async def test_the_fork_picker_shows_its_own_keys_and_f1_opens_help(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """/fork's list showed no keys of its own (the main footer showed through before, none after)."""
    from tui.screens.branch_actions import UserMessagePicker
    from tui.screens.help import HelpScreen

    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        await ready(pilot, app)
        await MainPage(pilot).send("/fork")
        await screen_shown(pilot, app, UserMessagePicker)
        await wait_until(pilot, lambda: "esc Cancel" in footer_text(app), "the picker's keys in the footer")
        assert "f1 Help" in footer_text(app) and "Send" not in footer_text(app)
        await pilot.press("f1")
        await screen_shown(pilot, app, HelpScreen)


async def test_a_modal_screens_footer_names_the_palette_key_that_works_there(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """Textual's footer left '^p palette' out on a modal screen (its key chain skips the app), though the
    app's Ctrl+P, a priority key, opens the palette there too."""
    from textual.command import CommandPalette

    from tui.screens.tree_screen import TreeScreen

    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=(120, 35), notifications=False) as pilot:
        await ready(pilot, app)
        await pilot.press("f3")
        await screen_shown(pilot, app, TreeScreen)
        await wait_until(
            pilot, lambda: "^p palette" in footer_text(app), "the palette key in the tree's footer"
        )
        assert footer_text(app).count("palette") == 1
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette over the tree")
