"""Pilot tests of the timeline and the tree pane in small terminals: nothing overwrites, rows degrade.

The timeline's marker row must keep every mark (◆, ▼, ┃) visible and never cut a label with one; its
status row shortens part by part and ends with an ellipsis only when even the shortest form is too
long. The tree pane keeps its key hints on one row and leaves the list at least ``MIN_TREE_ROWS``
rows when the detail is stacked under it.
"""

from __future__ import annotations

import re

from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.pages import timeline_shown, until
from tests.timeline_helpers import KEEP, RESERVE, WINDOW, compacted_path
from tests.tree_ui_helpers import sample_tree
from widgets.session_tree import SessionTreeView
from widgets.session_tree_pane import HINTS, MIN_TREE_ROWS, SessionTreePane
from widgets.timeline import CompactionTimeline, format_tokens
from widgets.timeline_layout import BarLayout

WIDTHS = (34, 42, 50, 58, 66, 80, 100, 120)


class TimelineHost(App[None]):
    def compose(self) -> ComposeResult:
        yield CompactionTimeline()

    def on_mount(self) -> None:
        self.query_one(CompactionTimeline).update_timeline(compacted_path(), WINDOW, RESERVE, KEEP)


def rows(widget: CompactionTimeline) -> list[str]:
    return [widget.render_line(y).text for y in range(widget.size.height)]


def check_marker_row(widget: CompactionTimeline, keep: int) -> None:
    timeline = widget.timeline
    assert timeline is not None and timeline.boundary_index is not None
    markers = rows(widget)[0]
    layout = BarLayout(timeline, widget.content_size.width)
    assert timeline.what_if.position is not None
    marks = {
        "◆": layout.column(timeline.what_if.position),
        "▼": layout.column(timeline.positions[timeline.boundary_index]),
        "┃": layout.column(timeline.threshold),
    }
    columns = list(marks.values())
    for mark, column in marks.items():
        if columns.count(column) == 1:  # two marks in one cell cannot both show
            assert markers[column] == mark, (mark, markers)
    # A label is whole or absent, never cut short by a mark.
    if "keep" in markers:
        assert f"keep {format_tokens(keep)}" in markers, markers
    boundary_id = str(timeline.boundary_id)
    label = re.search(r"▼ (\S+)|(\S+) ▼", markers)
    if label is not None:
        text = label.group(1) or label.group(2)
        assert text == boundary_id or (text.endswith("…") and boundary_id.startswith(text[:-1])), markers


async def test_marks_and_labels_never_overwrite_each_other() -> None:
    app = TimelineHost()
    async with app.run_test(size=(80, 24)) as pilot:
        await timeline_shown(pilot, app)
        widget = app.query_one(CompactionTimeline)
        for width in WIDTHS:
            await pilot.resize_terminal(width, 24)
            await until(pilot, lambda: widget.outer_size.width == width)  # noqa: B023
            for keep in (KEEP, 9_000, 12_000):
                widget.set_what_if(keep, RESERVE)
                await until(pilot, lambda: check_marker_row(widget, keep) is None)  # noqa: B023  (raises until drawn)
                check_marker_row(widget, keep)


async def test_keep_label_moves_out_of_the_bracket_when_the_ghost_is_in_the_way() -> None:
    app = TimelineHost()
    async with app.run_test(size=(80, 24)) as pilot:
        await timeline_shown(pilot, app)
        widget = app.query_one(CompactionTimeline)
        widget.set_what_if(9_000, RESERVE)
        await until(pilot, lambda: " keep 9k " in rows(widget)[0])
        markers = rows(widget)[0]
        # At 80 columns the bracket is too short for the label beside the ◆, so it sits just outside:
        # right of it, as the boundary's id takes the room on the left.
        start, end = markers.index("├"), markers.index("┤")
        assert "◆" in markers[start:end] and "keep" not in markers[start:end]
        assert markers[end + 1 :].startswith(" keep 9k ")


async def test_status_row_shortens_by_priority_and_ends_with_an_ellipsis() -> None:
    # The path has no usage: every figure is an estimate, marked ≈ (D11).
    app = TimelineHost()
    async with app.run_test(size=(120, 24)) as pilot:
        widget = app.query_one(CompactionTimeline)
        await until(pilot, lambda: widget.timeline is not None)
        what_if = widget.timeline.what_if
        summarise = format_tokens(what_if.summarise_tokens + what_if.turn_prefix_tokens)
        kept = format_tokens(what_if.kept_tokens)
        full = f"· threshold 56k · ◆ would summarise ≈{summarise}, keep ≈{kept}"
        await until(pilot, lambda: full in rows(widget)[2])
        assert full in rows(widget)[2] and rows(widget)[2].startswith("≈23k / 64k (36%) ")
        await pilot.resize_terminal(60, 24)
        short = f"≈23k / 64k (36%) · threshold 56k · ◆ ≈−{summarise}/+{kept}"
        await until(pilot, lambda: rows(widget)[2].rstrip() == short)
        assert rows(widget)[2].rstrip() == short
        await pilot.resize_terminal(44, 24)
        await until(
            pilot, lambda: rows(widget)[2].rstrip() == f"≈23k / 64k (36%) · ┃56k · ◆ ≈−{summarise}/+{kept}"
        )
        assert rows(widget)[2].rstrip() == f"≈23k / 64k (36%) · ┃56k · ◆ ≈−{summarise}/+{kept}"
        await pilot.resize_terminal(38, 24)
        await until(pilot, lambda: rows(widget)[2].rstrip() == f"≈23k / 64k (36%) · ◆ ≈−{summarise}/+{kept}")
        assert rows(widget)[2].rstrip() == f"≈23k / 64k (36%) · ◆ ≈−{summarise}/+{kept}"
        await pilot.resize_terminal(24, 24)
        await until(
            pilot,
            lambda: (
                (rows(widget)[2].endswith("…") and len(rows(widget)[2]) == 22)
                and rows(widget)[2].startswith("≈23k / 64k (36%) · ◆")
            ),
        )
        status = rows(widget)[2]
        assert status.endswith("…") and len(status) == 22
        assert status.startswith("≈23k / 64k (36%) · ◆")


async def test_panel_rows_that_do_not_fit_end_with_an_ellipsis() -> None:
    app = TimelineHost()
    async with app.run_test(size=(80, 30)) as pilot:
        await timeline_shown(pilot, app)
        widget = app.query_one(CompactionTimeline)
        widget.expanded = True
        await until(pilot, lambda: "· ⏎ compact · ^f ▼" in "\n".join(rows(widget)))
        text = rows(widget)
        assert "· ⏎ compact · ^f ▼" in "\n".join(text)  # the short key hints at 80 columns
        await pilot.resize_terminal(50, 30)
        await until(pilot, lambda: all(len(row) == 48 for row in rows(widget)))
        for y, row in enumerate(rows(widget)):
            assert len(row) == 48
            target = widget._row_targets[y]
            if y >= 3 and not (target and target[0] == "chart"):  # the chart's rows are no text
                assert row.endswith((" ", "…")), row


class PaneHost(App[None]):
    def compose(self) -> ComposeResult:
        yield SessionTreePane()

    def on_mount(self) -> None:
        tree, leaf = sample_tree()
        self.query_one(SessionTreePane).set_session(tree, leaf)


async def test_tree_pane_hint_is_one_row_and_the_list_keeps_its_rows() -> None:
    app = PaneHost()
    async with app.run_test(size=(40, 22)) as pilot:
        await until(
            pilot,
            lambda: (
                app.query_one(SessionTreePane).has_class("-narrow")
                and (
                    app.query_one(SessionTreePane).query_one("#tree-hint", Static).size.height == 1
                    and str(app.query_one(SessionTreePane).query_one("#tree-hint", Static).render())
                    == HINTS[-1]
                )
            ),
        )
        pane = app.query_one(SessionTreePane)
        hint = pane.query_one("#tree-hint", Static)
        assert pane.has_class("-narrow")
        assert hint.size.height == 1 and str(hint.render()) == HINTS[-1]
        view = app.query_one(SessionTreeView)
        assert view.size.height >= MIN_TREE_ROWS
        detail = pane.detail
        await until(pilot, lambda: detail.region.y >= view.region.bottom)  # laid out below the list
        assert detail.region.y >= view.region.bottom and detail.region.bottom <= pane.region.bottom
        assert detail.size.height >= 3
        await pilot.resize_terminal(56, 22)
        await until(pilot, lambda: str(hint.render()) == HINTS[3] and view.size.height >= MIN_TREE_ROWS)
        assert str(hint.render()) == HINTS[3] and view.size.height >= MIN_TREE_ROWS
        await pilot.resize_terminal(80, 50)
        await until(
            pilot,
            lambda: (
                (str(hint.render()) == HINTS[2])
                and (view.size.height >= MIN_TREE_ROWS and detail.outer_size.height > 4)
            ),
        )
        assert str(hint.render()) == HINTS[2]  # 78 columns: no room for the full hint
        # With room to spare the detail takes its share, still under the list.
        assert view.size.height >= MIN_TREE_ROWS and detail.outer_size.height > 4
        await pilot.resize_terminal(140, 30)
        await until(pilot, lambda: not pane.has_class("-narrow") and str(hint.render()) == HINTS[1])
        assert not pane.has_class("-narrow") and str(hint.render()) == HINTS[1]
        await pilot.resize_terminal(180, 30)
        await until(
            pilot,
            lambda: (
                (str(hint.render()) == HINTS[0])
                and (detail.region.x > view.region.x and detail.outer_size.height == view.outer_size.height)
            ),
        )
        assert str(hint.render()) == HINTS[0]  # pi 0.73.1's own hint line
        assert detail.region.x > view.region.x and detail.outer_size.height == view.outer_size.height
