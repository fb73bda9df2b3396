"""Pilot tests of the session tree UI: rows, keys, filters, search, folds, messages, detail and dialogs."""

from __future__ import annotations

from typing import Any

import pytest
from textual import on
from textual.app import App, ComposeResult
from textual.widgets import Input, OptionList, Static

from tests import factories as f
from tests.pages import screen_shown, until, wait_until
from tests.tree_ui_helpers import COMPACTION_SUMMARY, sample_tree
from tui.screens.dialogs import ConfirmDialog, LabelDialog, SummarizeBranchDialog
from tui.screens.tree_screen import TreeScreen
from tui.session.tree import TreeIndex
from widgets.entry_detail import EntryDetail, describe_entry
from widgets.session_tree import SessionTreeView
from widgets.session_tree_pane import SessionTreePane

SIZE = (120, 40)


class TreeHost(App[None]):
    """The pane with the sample tree; records the messages the view posts."""

    def __init__(self, tree: TreeIndex | None = None, leaf: str | None = None) -> None:
        super().__init__()
        if tree is None:
            tree, leaf = sample_tree()
        self.session_tree, self.leaf = tree, leaf
        self.events: list[tuple[str, Any]] = []

    def compose(self) -> ComposeResult:
        pane = SessionTreePane()
        pane.detail_delay = 0
        yield pane

    def on_mount(self) -> None:
        self.query_one(SessionTreePane).set_session(self.session_tree, self.leaf)
        self.query_one(SessionTreeView).focus()

    @on(SessionTreeView.NavigateRequested)
    def _navigate(self, event: SessionTreeView.NavigateRequested) -> None:
        self.events.append(("navigate", event.entry_id))

    @on(SessionTreeView.LabelRequested)
    def _label(self, event: SessionTreeView.LabelRequested) -> None:
        self.events.append(("label", (event.entry_id, event.current_label)))

    @on(SessionTreeView.Closed)
    def _closed(self) -> None:
        self.events.append(("closed", None))

    @property
    def view(self) -> SessionTreeView:
        return self.query_one(SessionTreeView)


def lines(view: SessionTreeView) -> list[str]:
    """The list as drawn, trailing blanks dropped."""
    drawn = [view.render_line(y).text.rstrip() for y in range(view.scrollable_content_region.height)]
    while drawn and not drawn[-1]:
        drawn.pop()
    return drawn


def static_text(app: App[Any], selector: str) -> str:
    return str(app.query_one(selector, Static).render())


EXPECTED_DEFAULT = [
    "  • [start] user: fix the parser",
    "  • [read: src/parser.py]",
    "  • assistant: fixed the off-by-one",
    "  ├⊟ • user: now add tests",
    "  │     • assistant: tests added",
    "  │     • [compaction: 45k tokens]",
    "  │     • user: continue",
    "› │     • assistant: all green  ← active",
    "  └⊟ user: try a rewrite instead",
    "        [branch summary]: We tried adding tests first.",
    "        assistant: RED text [bold]not bold[/bold] end",
]


# --- rendering --------------------------------------------------------------------------------
async def tree_shown(pilot: Any, app: TreeHost) -> None:
    """Until the pane shows the tree with the cursor on a row and the list focused."""
    await wait_until(pilot, lambda: app.view.has_focus and app.view.selected_id is not None, "the tree")


async def test_rows_render_in_pi_format_with_cursor_on_the_leaf() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot,
            lambda: (
                (lines(app.view) == EXPECTED_DEFAULT)
                and (static_text(app, "#tree-footer") == "(8/11)")
                and (static_text(app, "#tree-search") == "Type to search: ")
                and (static_text(app, "#tree-title") == "Session Tree")
            ),
        )
        assert lines(app.view) == EXPECTED_DEFAULT
        assert static_text(app, "#tree-footer") == "(8/11)"
        assert static_text(app, "#tree-search") == "Type to search: "
        assert static_text(app, "#tree-title") == "Session Tree"


async def test_rows_are_truncated_to_the_width_with_an_ellipsis() -> None:
    long_text = "word " * 60
    tree = TreeIndex(f.chain([f.user(long_text), f.assistant("ok")]))
    app = TreeHost(tree, "00000002")
    async with app.run_test(size=(60, 20)) as pilot:
        await until(
            pilot,
            lambda: (
                app.view.render_line(0).cell_length == app.view.scrollable_content_region.width
                and app.view.render_line(0).text.endswith("…")
                and app.view.render_line(0).text.startswith("  • user: word word")
            ),
        )
        view = app.view
        width = view.scrollable_content_region.width
        first = view.render_line(0)
        assert first.cell_length == width
        assert first.text.endswith("…")
        assert first.text.startswith("  • user: word word")


async def test_escape_sequences_in_entry_text_are_not_interpreted() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot,
            lambda: (
                ("\x1b" not in app.view.render_line(10).text and "\x07" not in app.view.render_line(10).text)
                and "[bold]not bold[/bold]" in app.view.render_line(10).text
                and (
                    not any(
                        segment.style and segment.style.bold
                        for segment in app.view.render_line(10)
                        if "not bold" in segment.text
                    )
                )
            ),
        )
        row = app.view.render_line(10)
        assert "\x1b" not in row.text and "\x07" not in row.text
        assert "[bold]not bold[/bold]" in row.text  # markup stays literal
        assert not any(segment.style and segment.style.bold for segment in row if "not bold" in segment.text)
        app.view.select("a5")
        await until(
            pilot,
            lambda: (
                (
                    "\x1b" not in static_text(app, "#entry-detail-body")
                    and "pwned" not in static_text(app, "#entry-detail-body")
                )
                and "[bold]not bold[/bold]" in static_text(app, "#entry-detail-body")
            ),
        )
        detail = static_text(app, "#entry-detail-body")
        assert "\x1b" not in detail and "pwned" not in detail
        assert "[bold]not bold[/bold]" in detail


# --- movement -----------------------------------------------------------------------------------
async def test_up_and_down_move_and_wrap() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        await pilot.press("down", "down", "down")
        assert app.view.selected_id == "a5"
        await pilot.press("down")
        assert app.view.selected_id == "u1"  # wrapped to the top
        await pilot.press("up")
        assert app.view.selected_id == "a5"  # and back to the bottom
        assert static_text(app, "#tree-footer") == "(11/11)"
        assert lines(app.view)[10].startswith("› ")


async def test_paging_is_clamped() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        await pilot.press("pageup")
        assert app.view.selected_id == "u1"
        await pilot.press("right")
        assert app.view.selected_id == "a5"
        await pilot.press("ctrl+b")
        assert app.view.selected_id == "u1"


async def test_home_and_end_go_to_the_first_and_last_row() -> None:
    """QA item 20: End (and Home) move the cursor to the last (first) row, as pi's tree does."""
    tree = TreeIndex(f.chain([f.user(f"message {i}") for i in range(200)]))
    app = TreeHost(tree, f.entry_id(100))
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        await pilot.press("end")
        await wait_until(pilot, lambda: app.view.selected_id == f.entry_id(199), "the last row")
        assert lines(app.view)[-1].startswith("› ")  # scrolled to it
        await pilot.press("home")
        await wait_until(pilot, lambda: app.view.selected_id == f.entry_id(0), "the first row")
        assert lines(app.view)[0].startswith("› ")


async def test_selected_row_is_kept_centred_on_a_long_list() -> None:
    tree = TreeIndex(f.chain([f.user(f"message {i}") for i in range(200)]))
    app = TreeHost(tree, f.entry_id(199))
    async with app.run_test(size=(80, 30)) as pilot:
        await until(
            pilot, lambda: app.view.scroll_offset.y == 200 - app.view.scrollable_content_region.height
        )
        view = app.view
        height = view.scrollable_content_region.height
        assert view.scroll_offset.y == 200 - height  # the leaf at the end: scrolled to the bottom
        for _ in range(60):
            await pilot.press("up")
        index = 199 - 60
        assert view.scroll_offset.y == index - height // 2
        assert lines(view)[height // 2].startswith(f"› • user: message {index}")


async def test_fold_and_unfold_keys() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        app.view.select("u2")
        await pilot.press("ctrl+left")  # u2 is foldable: fold it
        assert lines(app.view)[3] == "› ├⊞ • user: now add tests"
        assert len(lines(app.view)) == 7
        await pilot.press("ctrl+right")  # unfold
        assert len(lines(app.view)) == 11
        await pilot.press("alt+right")  # down to the leaf (no further branch point)
        assert app.view.selected_id == "a4"
        await pilot.press("alt+left")  # a4 is not foldable: up to its segment start
        assert app.view.selected_id == "u2"


# --- filters and search ---------------------------------------------------------------------------
async def test_filter_keys_change_rows_and_footer_tag() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        await pilot.press("ctrl+u")
        assert static_text(app, "#tree-footer") == "(3/4) [user]"
        assert all("user:" in line for line in lines(app.view))
        await pilot.press("ctrl+u")  # toggles back to the default; the cursor stays on u3
        assert static_text(app, "#tree-footer") == "(7/11)"
        await pilot.press("ctrl+t")
        assert static_text(app, "#tree-footer").endswith(" [no-tools]")
        assert not any("[read:" in line for line in lines(app.view))
        await pilot.press("ctrl+l")
        assert lines(app.view) == ["› • [start] user: fix the parser"]
        assert static_text(app, "#tree-footer") == "(1/1) [labeled]"
        await pilot.press("ctrl+a")
        assert static_text(app, "#tree-footer").endswith(" [all]")
        assert any("[label: start]" in line for line in lines(app.view))
        await pilot.press("ctrl+d")  # the cursor stayed on u1, the labelled entry
        assert static_text(app, "#tree-footer") == "(1/11)"


async def test_filter_cycle_forward_and_back() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        tags = []
        for _ in range(5):
            await pilot.press("ctrl+o")
            tags.append(static_text(app, "#tree-footer").partition(")")[2])
        assert tags == [" [no-tools]", " [user]", " [labeled]", " [all]", ""]
        await pilot.press("ctrl+shift+o")
        assert static_text(app, "#tree-footer").endswith(" [all]")


async def test_search_as_you_type_backspace_and_escape() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        await pilot.press("r", "e", "w", "r")
        assert static_text(app, "#tree-search") == "Type to search: rewr"
        assert lines(app.view) == ["› user: try a rewrite instead"]
        await pilot.press("backspace")
        assert app.view.search_query == "rew"
        await pilot.press("space", "x")
        assert app.view.search_query == "rew x"
        assert lines(app.view) == ["  No entries found"]  # no entry holds both words…
        assert static_text(app, "#tree-footer") == "(0/0)"
        await pilot.press("escape")  # …escape clears the query first
        assert app.view.search_query == ""
        assert len(lines(app.view)) == 11
        assert app.events == []
        await pilot.press("escape")  # then closes
        assert app.events == [("closed", None)]


# --- messages ---------------------------------------------------------------------------------------
async def test_enter_posts_navigate_requested_with_the_selected_id() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        await pilot.press("down", "enter")
        await until(pilot, lambda: app.events == [("navigate", "u4")])
        assert app.events == [("navigate", "u4")]


async def test_shift_l_posts_label_requested_with_the_current_label() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        await pilot.press("L")
        app.view.select("u1")
        await pilot.press("L")
        await until(
            pilot,
            lambda: (
                (app.events == [("label", ("a4", None)), ("label", ("u1", "start"))])
                and (app.view.search_query == "")
            ),
        )
        assert app.events == [("label", ("a4", None)), ("label", ("u1", "start"))]
        assert app.view.search_query == ""  # the key did not go into the search


async def test_shift_t_toggles_label_times_and_capitals_never_reach_the_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        app = TreeHost()
        async with app.run_test(size=SIZE) as pilot:
            await tree_shown(pilot, app)
            await pilot.press("T")
            assert static_text(app, "#tree-footer") == "(8/11) [+label time]"
            assert lines(app.view)[0] == "  • [start] 25/1/1 00:00 user: fix the parser"
            await pilot.press("L", "T")  # bound keys: neither goes into the search
            assert app.view.search_query == ""
            assert static_text(app, "#tree-footer") == "(8/11)"
            assert lines(app.view)[0] == "  • [start] user: fix the parser"
            await pilot.press("t")  # lower case is typed as usual
            assert app.view.search_query == "t"
    finally:
        monkeypatch.undo()
        time.tzset()


async def test_hint_line_is_built_from_the_configured_keys() -> None:
    from widgets.session_tree_pane import HINTS

    assert HINTS[0] == (
        "↑/↓: move. ←/→: page. ^←/^→ or Alt+←/Alt+→: fold/branch. shift+l: label. "
        "ctrl+d/ctrl+t/ctrl+u/ctrl+l/ctrl+a: filters (ctrl+o/shift+ctrl+o cycle). shift+t: label time"
    )
    app = TreeHost()
    app.set_keymap({"tree.label": "ctrl+k", "tree.label_times": "f9", "tree.filter.all": "ctrl+g"})
    async with app.run_test(size=(200, 30)) as pilot:
        await until(
            pilot,
            lambda: (
                "ctrl+k: label." in static_text(app, "#tree-hint")
                and "f9: label time" in static_text(app, "#tree-hint")
                and ("/ctrl+g: filters" in static_text(app, "#tree-hint"))
            ),
        )
        hint = static_text(app, "#tree-hint")
        assert "ctrl+k: label." in hint and "f9: label time" in hint and "/ctrl+g: filters" in hint
        await pilot.press("f9")
        assert static_text(app, "#tree-footer").endswith(" [+label time]")


async def test_click_selects_and_double_click_navigates() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        await pilot.click(SessionTreeView, offset=(10, 1))
        assert app.view.selected_id == "t1"
        assert app.events == []
        await pilot.double_click(SessionTreeView, offset=(10, 2))
        await until(pilot, lambda: (app.view.selected_id == "a2") and (("navigate", "a2") in app.events))
        assert app.view.selected_id == "a2"
        assert ("navigate", "a2") in app.events


async def test_refresh_tree_picks_up_appended_entries_and_a_new_leaf() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        entry = f.assistant("one more reply")
        entry.update(id="a9", parentId="a4", timestamp="2025-01-01T00:01:00.000Z")
        app.session_tree.add(entry)
        app.query_one(SessionTreePane).refresh_tree(leaf_id="a9")
        await until(
            pilot,
            lambda: (
                ("• assistant: one more reply  ← active" in lines(app.view)[8])
                and (not lines(app.view)[7].endswith("← active"))
                and (static_text(app, "#tree-footer") == "(8/12)")
            ),
        )
        assert "• assistant: one more reply  ← active" in lines(app.view)[8]
        assert not lines(app.view)[7].endswith("← active")
        assert static_text(app, "#tree-footer") == "(8/12)"  # the selection stayed on a4


# --- detail panel -----------------------------------------------------------------------------------
async def test_detail_shows_a_compaction_in_full() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        await pilot.press("up", "up")
        assert app.view.selected_id == "c1"
        text = static_text(app, "#entry-detail-body")
        assert "tokensBefore: 45,210" in text
        assert "firstKeptEntryId: u2" in text
        assert COMPACTION_SUMMARY in text
        assert "readFiles:\n  src/parser.py" in text
        assert "modifiedFiles:\n  tests/test_parser.py" in text
        assert "id: c1" in text and "parent: a3" in text
        assert app.query_one(EntryDetail).entry_id == "c1"


def test_detail_shows_a_short_summary_and_a_branch_summary() -> None:
    tree, _ = sample_tree()
    compaction = dict(tree.by_id["c1"], shortSummary="parser fixed, tests pending")
    assert "Short summary\nparser fixed, tests pending" in describe_entry(compaction, tree).plain
    text = describe_entry(tree.by_id["s1"], tree).plain
    assert "fromId: a2" in text
    assert "Summary\nWe tried adding tests first." in text


def test_detail_shows_a_tool_result_with_its_call_and_the_label() -> None:
    tree, _ = sample_tree()
    text = describe_entry(tree.by_id["t1"], tree).plain
    assert "Call: read" in text and '"path": "src/parser.py"' in text
    assert "def parse():\n    return 1" in text
    assert "label: start" in describe_entry(tree.by_id["u1"], tree).plain


async def test_detail_follows_the_cursor_after_the_delay() -> None:
    app = TreeHost()
    async with app.run_test(size=SIZE) as pilot:
        await tree_shown(pilot, app)
        pane = app.query_one(SessionTreePane)
        pane.detail_delay = 0.05
        await pilot.press("down")
        await until(pilot, lambda: app.query_one(EntryDetail).entry_id == "u4")
        assert app.query_one(EntryDetail).entry_id == "u4"


async def test_pane_puts_the_detail_below_when_narrow() -> None:
    app = TreeHost()
    async with app.run_test(size=(80, 40)) as pilot:
        await until(
            pilot,
            lambda: (
                app.query_one(SessionTreePane).has_class("-narrow")
                and app.query_one(EntryDetail).region.y > app.view.region.y
            ),
        )
        pane = app.query_one(SessionTreePane)
        assert pane.has_class("-narrow")
        assert app.query_one(EntryDetail).region.y > app.view.region.y
        await pilot.resize_terminal(140, 40)
        await until(
            pilot,
            lambda: (
                (not pane.has_class("-narrow")) and (app.query_one(EntryDetail).region.x > app.view.region.x)
            ),
        )
        assert not pane.has_class("-narrow")
        assert app.query_one(EntryDetail).region.x > app.view.region.x


# --- the /tree screen ----------------------------------------------------------------------------------
class ScreenHost(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.results: list[Any] = []

    def open_tree(self) -> None:
        tree, leaf = sample_tree()
        self.push_screen(TreeScreen(tree, leaf), self.results.append)


async def test_tree_screen_returns_the_chosen_entry_or_none() -> None:
    app = ScreenHost()
    async with app.run_test(size=SIZE) as pilot:
        app.open_tree()
        await screen_shown(pilot, app, TreeScreen)
        await pilot.press("up", "enter")
        await wait_until(pilot, lambda: len(app.results) == 1, "the first choice")
        app.open_tree()
        await screen_shown(pilot, app, TreeScreen)
        await pilot.press("escape")
        await until(pilot, lambda: app.results == ["u3", None])
        assert app.results == ["u3", None]


# --- dialogs -------------------------------------------------------------------------------------------
class DialogHost(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.results: list[Any] = []

    def open(self, screen: Any) -> None:
        self.push_screen(screen, self.results.append)


async def _summary_result(*keys: str, closes: bool = True) -> list[Any]:
    app = DialogHost()
    async with app.run_test(size=SIZE) as pilot:
        dialog = SummarizeBranchDialog()
        app.open(dialog)
        await screen_shown(pilot, app, dialog)
        await pilot.press(*keys)
        await wait_until(pilot, lambda: (app.screen is not dialog) == closes, "the dialog to close or stay")
        return app.results


async def test_summary_dialog_choices() -> None:
    assert await _summary_result("enter") == ["none"]
    assert await _summary_result("down", "enter") == ["summarize"]
    assert await _summary_result("escape") == [None]


async def test_summary_dialog_custom_prompt() -> None:
    assert await _summary_result("down", "down", "enter", "f", "o", "c", "u", "s", "enter") == [
        ("custom", "focus")
    ]
    # Ctrl+J adds a line instead of submitting.
    assert await _summary_result("down", "down", "enter", "a", "ctrl+j", "b", "enter") == [("custom", "a\nb")]
    # An empty prompt is not submitted.
    assert await _summary_result("down", "down", "enter", "enter", closes=False) == []


async def test_summary_dialog_custom_cancel_returns_to_the_choices() -> None:
    app = DialogHost()
    async with app.run_test(size=SIZE) as pilot:
        dialog = SummarizeBranchDialog()
        app.open(dialog)
        await screen_shown(pilot, app, dialog)
        await pilot.press("down", "down", "enter")
        assert dialog.editing
        await pilot.press("escape")
        await until(
            pilot,
            lambda: (
                (not dialog.editing and app.results == [])
                and (dialog.query_one("#choices", OptionList).has_focus)
            ),
        )
        assert not dialog.editing and app.results == []
        assert dialog.query_one("#choices", OptionList).has_focus
        await pilot.press("up", "enter")
        await until(pilot, lambda: app.results == ["summarize"])
        assert app.results == ["summarize"]


async def _label_result(current: str | None, *keys: str) -> list[Any]:
    app = DialogHost()
    async with app.run_test(size=SIZE) as pilot:
        dialog = LabelDialog(current)
        app.open(dialog)
        await until(pilot, lambda: dialog.query_one(Input).value == (current or ""))
        assert dialog.query_one(Input).value == (current or "")
        await pilot.press(*keys)
        await wait_until(pilot, lambda: app.screen is not dialog, "the dialog to close")
        return app.results


async def test_label_dialog_saves_trimmed_clears_and_cancels() -> None:
    assert await _label_result(None, "space", "o", "k", "space", "enter") == ["ok"]
    assert await _label_result("old", "backspace", "backspace", "backspace", "enter") == [""]
    assert await _label_result("old", "x", "escape") == [None]
    assert await _label_result("old", "enter") == ["old"]


async def test_confirm_dialog() -> None:
    for keys, expected in ((("y",), True), (("n",), False), (("escape",), False)):
        app = DialogHost()
        async with app.run_test(size=SIZE) as pilot:
            app.open(ConfirmDialog("Delete it?"))
            await screen_shown(pilot, app, ConfirmDialog)
            await pilot.press(*keys)
            await until(pilot, lambda: app.results == [expected])  # noqa: B023
            assert app.results == [expected]
    app = DialogHost()
    async with app.run_test(size=SIZE) as pilot:
        app.open(ConfirmDialog("Delete it?"))
        await screen_shown(pilot, app, ConfirmDialog)
        await pilot.click("#yes")
        await until(pilot, lambda: app.results == [True])
        assert app.results == [True]
