"""Pointing at the timeline (issue 9, part 6): clicks, hovering and ←/→ on the bar; ↓/↑ and Enter on the
past compactions. Widget tests use the fixed compacted path of tests/timeline_helpers.py in an 80-column
host (the bar is 78 cells after the one-cell padding); the end-to-end tests click the real main screen
and check the tree pane and the chat follow.
"""

from __future__ import annotations

import time
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets._footer import FooterKey
from textual.widgets._tooltip import Tooltip

from tests import factories as f
from tests.app_e2e_helpers import new_session, offline_app_on, ready, screen_text, submit, wait_until
from tests.test_tui_uncompact import SIZE, compacted_session
from tests.timeline_helpers import KEEP, RESERVE, WINDOW, compacted_path
from widgets.chat_pane import NewerBar
from widgets.footer import KompaktFooter
from widgets.timeline import CompactionTimeline
from widgets.timeline_layout import BarLayout

PAD = 1  # the timeline's left padding: content column c is widget column c + 1


class Host(App[None]):
    def __init__(self, path: list[dict] | None = None, expanded: bool = False) -> None:
        super().__init__()
        self.path = path if path is not None else compacted_path(usage=True)
        self.expanded = expanded
        self.received: list[Message] = []

    def compose(self) -> ComposeResult:
        yield CompactionTimeline()

    def on_mount(self) -> None:
        widget = self.query_one(CompactionTimeline)
        widget.update_timeline(self.path, WINDOW, RESERVE, KEEP)
        widget.expanded = self.expanded
        widget.focus()

    def on_compaction_timeline_entry_pointed(self, message: CompactionTimeline.EntryPointed) -> None:
        self.received.append(message)

    def on_compaction_timeline_inspect_requested(self, message: CompactionTimeline.InspectRequested) -> None:
        self.received.append(message)

    def on_compaction_timeline_compact_now_requested(
        self, message: CompactionTimeline.CompactNowRequested
    ) -> None:
        self.received.append(message)


def pointed(app: Host) -> list[str]:
    return [m.entry_id for m in app.received if isinstance(m, CompactionTimeline.EntryPointed)]


def owned_column(layout: BarLayout, index: int) -> int:
    """A bar cell that segment ``index`` covers most of."""
    return next(c for c in layout.segment_columns(index) if layout.segment_at(c) == index)


def test_segment_at_finds_every_segment_that_owns_a_cell():
    from tui.compaction.timeline import build_timeline

    timeline = build_timeline(
        compacted_path(usage=True), context_window=WINDOW, reserve_tokens=RESERVE, keep_recent_tokens=KEEP
    )
    for width in (20, 78, 158):
        layout = BarLayout(timeline, width)
        owners = {layout.segment_at(c) for c in range(width)} - {None}
        # Each owned cell lies inside its segment's columns, and the wide segments all own a cell.
        for column in range(width):
            index = layout.segment_at(column)
            if index is not None:
                assert column in layout.segment_columns(index)
        spans = [layout.segment_span(i) for i in range(len(timeline.segments))]
        wide = [i for i, (a, b) in enumerate(spans) if b - a >= 2]
        assert set(wide) <= owners and (wide or width < 78)
        assert layout.segment_at(-1) is None and layout.segment_at(width) is None
    # Past the context (free space, reserve) there is no segment.
    assert layout.segment_at(width - 1) is None


async def test_a_click_on_a_segment_selects_it_and_posts_its_entry():
    app = Host()
    async with app.run_test(size=(80, 24), tooltips=True) as pilot:
        widget = app.query_one(CompactionTimeline)
        await wait_until(pilot, lambda: widget._layout is not None, "the bar")
        timeline = widget.timeline
        index = next(i for i, s in enumerate(timeline.segments) if s.kind == "tool" and s.region == "after")
        column = owned_column(widget._layout, index)
        entry_id = timeline.segments[index].entry_id
        await pilot.click(CompactionTimeline, offset=(PAD + column, 1))
        await wait_until(pilot, lambda: pointed(app) == [entry_id], "the pointed entry")
        assert widget.selected_entry_id == entry_id
        rows = [widget.render_line(y).text for y in range(widget.size.height)]
        assert any(row.startswith("▸ ") and entry_id in row and "tool result (read)" in row for row in rows)
        # The selected cells are drawn in the selection style.
        bar = widget.render_line(1)
        selected_style = widget.get_component_rich_style("timeline--selected")
        cells = list(bar.divide(range(1, bar.cell_length + 1)))
        assert cells[column]._segments[0].style.bgcolor == selected_style.bgcolor
        # A click on the free space past the context selects nothing.
        await pilot.click(CompactionTimeline, offset=(PAD + widget._layout.width - 2, 1))
        await pilot.press("right")  # the walk goes on from the selected segment
        await wait_until(pilot, lambda: len(pointed(app)) == 2, "the next segment")
        assert pointed(app)[1] == timeline.segments[index + 1].entry_id


async def hover(pilot, offset: tuple[int, int]) -> None:
    """Move onto ``offset`` and rest there, as a mouse does: Textual hides a shown tooltip on the first
    move inside the same widget and shows the new one once the pointer rests."""
    await pilot.hover(CompactionTimeline, offset=offset)
    await pilot.hover(CompactionTimeline, offset=offset)


def tooltip_text(app: App) -> str:
    tooltip = app.screen.query_one(Tooltip)
    return str(tooltip.render()) if tooltip.display else ""


async def test_hovering_a_segment_shows_its_kind_tokens_and_source():
    app = Host()
    async with app.run_test(size=(80, 24), tooltips=True) as pilot:
        widget = app.query_one(CompactionTimeline)
        await wait_until(pilot, lambda: widget._layout is not None, "the bar")
        timeline = widget.timeline
        tool = next(i for i, s in enumerate(timeline.segments) if s.kind == "tool" and s.region == "after")
        await hover(pilot, (PAD + owned_column(widget._layout, tool), 1))
        segment = timeline.segments[tool]
        await wait_until(pilot, lambda: segment.entry_id in tooltip_text(app), "the tooltip")
        text = tooltip_text(app)
        assert "tool result (read)" in text and "(measured)" in text and "after the compaction" in text
        assert f"{segment.tokens / 1000:.1f}".removesuffix(".0") + "k tokens" in text
        # The marker row above the bar points at the same segments.
        summarised = next(i for i, s in enumerate(timeline.segments) if s.region == "summarised")
        await hover(pilot, (PAD + owned_column(widget._layout, summarised), 0))
        entry = timeline.segments[summarised].entry_id
        await wait_until(pilot, lambda: entry in tooltip_text(app), "the summarised tooltip")
        assert "summarised" in tooltip_text(app)
        # Past the context: the reserve, in words.
        await hover(pilot, (PAD + widget._layout.width - 1, 1))
        await wait_until(pilot, lambda: "reserve" in tooltip_text(app), "the reserve tooltip")


async def test_a_segment_without_usage_says_it_is_estimated():
    app = Host(compacted_path(usage=False))
    async with app.run_test(size=(80, 24), tooltips=True) as pilot:
        widget = app.query_one(CompactionTimeline)
        await wait_until(pilot, lambda: widget._layout is not None, "the bar")
        timeline = widget.timeline
        tool = next(i for i, s in enumerate(timeline.segments) if s.kind == "tool" and s.region == "after")
        await hover(pilot, (PAD + owned_column(widget._layout, tool), 1))
        await wait_until(pilot, lambda: timeline.segments[tool].entry_id in tooltip_text(app), "the tooltip")
        assert "(estimated)" in tooltip_text(app) and "(measured)" not in tooltip_text(app)


async def test_left_and_right_walk_the_segments_and_escape_clears():
    app = Host()
    async with app.run_test(size=(80, 24), tooltips=True) as pilot:
        widget = app.query_one(CompactionTimeline)
        segments = widget.timeline.segments
        await pilot.press("left")  # the first press starts at the newest entry
        await wait_until(pilot, lambda: pointed(app) == [segments[-1].entry_id], "the last segment")
        await pilot.press("left", "left")
        await wait_until(pilot, lambda: len(pointed(app)) == 3, "two more")
        assert pointed(app)[1:] == [segments[-2].entry_id, segments[-3].entry_id]
        assert widget.selected_entry_id == segments[-3].entry_id
        await pilot.press("right")
        await wait_until(pilot, lambda: len(pointed(app)) == 4, "back one")
        assert widget.selected_entry_id == segments[-2].entry_id
        await pilot.press("escape")
        await wait_until(pilot, lambda: widget.selected_entry_id is None, "cleared")
        await pilot.press("right")  # from nothing, → starts at the oldest
        await wait_until(pilot, lambda: widget.selected_entry_id == segments[0].entry_id, "the first")
        for _ in range(3):
            await pilot.press("left")  # clamps at the first segment
        await wait_until(pilot, lambda: len(pointed(app)) == 8, "the clamped walk")
        assert widget.selected_entry_id == segments[0].entry_id


def _two_compactions() -> list[dict]:
    from tests import factories as f
    from tests.timeline_helpers import turn

    path = compacted_path(usage=True)
    later = turn(8, user_tokens=250, tool_tokens=3_000, reply_tokens=250, usage=30_000)
    path += later
    path.append(f.compaction(f.text_of(1_000 * 4), first_kept=len(path) - 4, tokens_before=31_000))
    path += turn(9, user_tokens=250, tool_tokens=500, reply_tokens=250)
    return f.chain(path)


async def test_down_selects_a_past_compaction_and_enter_inspects_it():
    app = Host(_two_compactions(), expanded=True)
    async with app.run_test(size=(100, 40), tooltips=True) as pilot:
        widget = app.query_one(CompactionTimeline)
        newest, older = (c.entry_id for c in reversed(widget.timeline.compactions))
        await pilot.press("down")
        await wait_until(pilot, lambda: widget.selected_compaction_id == newest, "the newest")
        await pilot.press("down")
        await wait_until(pilot, lambda: widget.selected_compaction_id == older, "the older one")
        assert pointed(app) == [newest, older]  # the tree and the chat follow the list too
        rows = [widget.render_line(y).text for y in range(widget.size.height)]
        assert any(row.startswith("▸ ") and older in row for row in rows)
        assert any("enter inspect" in row for row in rows)
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any(isinstance(m, CompactionTimeline.InspectRequested) for m in app.received),
            "the inspect request",
        )
        request = next(m for m in app.received if isinstance(m, CompactionTimeline.InspectRequested))
        assert request.compaction_id == older
        assert not any(isinstance(m, CompactionTimeline.CompactNowRequested) for m in app.received)
        # ↑ back past the newest leaves the list: Enter compacts again.
        await pilot.press("up", "up")
        await wait_until(pilot, lambda: widget.selected_compaction_id is None, "off the list")
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any(isinstance(m, CompactionTimeline.CompactNowRequested) for m in app.received),
            "compact now",
        )


async def test_a_click_selects_a_past_compaction_and_a_second_click_inspects_it():
    app = Host(_two_compactions(), expanded=True)
    async with app.run_test(size=(100, 40), tooltips=True) as pilot:
        widget = app.query_one(CompactionTimeline)
        older = widget.timeline.compactions[0].entry_id
        await wait_until(pilot, lambda: ("past", older) in widget._row_targets, "the panel")
        row = next(y for y, target in enumerate(widget._row_targets) if target == ("past", older))
        await pilot.click(CompactionTimeline, offset=(PAD + 4, row))
        await wait_until(pilot, lambda: widget.selected_compaction_id == older, "selected")
        await hover(pilot, (PAD + 6, row))
        await wait_until(pilot, lambda: "inspect" in tooltip_text(app), "the row's tooltip")
        await pilot.click(CompactionTimeline, offset=(PAD + 4, row))
        await wait_until(
            pilot,
            lambda: any(isinstance(m, CompactionTimeline.InspectRequested) for m in app.received),
            "the inspect request",
        )
        assert app.received[-1].compaction_id == older


# --- the real main screen ---------------------------------------------------------------------------


async def test_clicking_a_segment_selects_it_in_the_tree_and_scrolls_the_chat(tmp_path, monkeypatch):
    store, ids = new_session(tmp_path, [(f"question {i}", f"answer {i}") for i in range(40)], chars=2000)
    path = store.path
    store.close()
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        timeline, chat = screen.timeline, screen.chat
        await wait_until(pilot, lambda: timeline._layout is not None and chat.first_loaded > 0, "the panes")
        layout = timeline._layout
        # An early question: the chat has not even mounted it yet (it shows the newest messages).
        index = next(
            layout.segment_at(c)
            for c in range(layout.width)
            if layout.segment_at(c) is not None
            and timeline.timeline.segments[layout.segment_at(c)].kind == "user"
        )
        entry_id = timeline.timeline.segments[index].entry_id
        assert ids.index(entry_id) < 10 and ids.index(entry_id) < chat.first_loaded
        await pilot.click(timeline, offset=(PAD + owned_column(layout, index), 1))
        view = screen.tree_pane.view
        await wait_until(pilot, lambda: screen.tree_pane.display and view.selected_id == entry_id, "the tree")

        def on_screen() -> bool:
            widget = next((w for w in chat.message_widgets if w.entry_id == entry_id), None)
            if widget is None:
                return False
            top = widget.virtual_region.y
            return chat.scroll_y <= top < chat.scroll_y + chat.size.height

        await wait_until(pilot, on_screen, "the chat scrolled to the question")
        assert timeline.has_focus  # the tree pane opened without taking the focus
        await pilot.press("right")  # its answer
        answer = ids[ids.index(entry_id) + 1]
        await wait_until(pilot, lambda: view.selected_id == answer, "the tree follows the walk")
        await wait_until(pilot, lambda: any(w.entry_id == answer for w in chat.message_widgets), "mounted")


async def test_an_entry_far_back_is_shown_in_a_window_around_it_without_mounting_the_whole_chat(
    tmp_path, monkeypatch
):
    """Each message widget takes tens of ms to mount: the chat does not mount hundreds to reach one.
    It showed nothing ('too far back'); now it shows a few messages around the entry, scrolled to it,
    with a bar for the newer ones, and an append (or End) returns to the latest."""
    store, ids = new_session(tmp_path, [(f"question {i}", f"answer {i}") for i in range(150)], chars=40)
    path = store.path
    store.close()
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        timeline, chat = screen.timeline, screen.chat
        await wait_until(pilot, lambda: chat.first_loaded > chat.JUMP_ITEMS, "a windowed chat")
        timeline.focus()
        await pilot.press("right")  # the first question, 280 messages above the mounted ones
        view = screen.tree_pane.view
        await wait_until(pilot, lambda: view.selected_id == ids[0], "the tree row")
        await wait_until(pilot, lambda: chat.jumped, "the window around it")
        widgets = chat.message_widgets
        assert len(widgets) <= 1 + chat.JUMP_AFTER and widgets[0].entry_id == ids[0]
        await wait_until(
            pilot, lambda: chat.scroll_offset.y <= widgets[0].virtual_region.y + 1, "scrolled to it"
        )
        await wait_until(pilot, lambda: "question 0q" in screen_text(app), "the question on screen")
        (bar,) = chat.query(NewerBar)
        assert "newer messages" in str(bar.render())
        assert len(chat.items) == 300 and screen.status.message == ""
        # Far forward again (the newest entry, in the hidden part): the window moves there.
        await pilot.press("escape", "left")
        await wait_until(pilot, lambda: view.selected_id == ids[-1], "the newest row")
        await wait_until(pilot, lambda: chat.message_widgets[-1].entry_id == ids[-1], "the newest in view")
        # An append returns to the latest: the newest messages, none of the window, no bar.
        screen.prompt.focus()
        await submit(pilot, "after the jump")
        await wait_until(pilot, lambda: not chat.jumped, "back to the latest")
        await wait_until(
            pilot,
            lambda: any("after the jump" in str(w.message.get("content")) for w in chat.message_widgets),
            "the new message",
        )
        assert chat.message_widgets[0].entry_id != ids[0] and not chat.query(NewerBar)


async def test_a_summarised_segment_opens_its_fold_in_the_history_view_and_not_in_the_context_view(
    tmp_path, monkeypatch
):
    path, names = compacted_session(tmp_path, later=True)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        timeline, chat = screen.timeline, screen.chat
        assert not any(item.entry_id == names["first"] for item in chat.items)  # folded, not drawn
        timeline.focus()
        await pilot.press("right")  # the oldest segment: the first question, summarised
        view = screen.tree_pane.view
        await wait_until(pilot, lambda: view.selected_id == names["first"], "the tree row")

        def first_on_screen() -> bool:
            widget = next((w for w in chat.message_widgets if w.entry_id == names["first"]), None)
            return (
                widget is not None
                and chat.scroll_y <= widget.virtual_region.y < chat.scroll_y + chat.size.height
            )

        await wait_until(pilot, first_on_screen, "the fold opened and scrolled to the question")
        assert timeline.has_focus
        # The context view does not draw what was summarised: the tree moves, the status line says so.
        await pilot.press("f9")
        await wait_until(pilot, lambda: getattr(chat, "view", "") == "context", "the context view")
        timeline.focus()
        await pilot.press("escape", "right")
        await wait_until(pilot, lambda: "does not show it" in screen.status.message, "the status line")
        assert view.selected_id == names["first"]


async def test_a_summarised_message_far_back_opens_its_fold_in_a_window(tmp_path, monkeypatch):
    """A fold more than JUMP_ITEMS messages up the chat: it was 'too far back'; now the chat shows a
    window from the fold, opens it and scrolls to the summarised message."""
    store, ids = new_session(
        tmp_path, [("first question", "first answer"), ("second", "reply two")], chars=40
    )
    store.append_compaction("OLD TURNS WERE SUMMARISED", ids[2], 600)
    for i in range(60):
        store.append_message(f.user(f"later question {i}".ljust(40, "q"))["message"])
        store.append_message(f.assistant(f"later answer {i}".ljust(40, "a"))["message"])
    path = store.path
    store.close()
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        timeline, chat = screen.timeline, screen.chat
        await wait_until(pilot, lambda: chat.first_loaded > chat.JUMP_ITEMS, "a windowed chat")
        timeline.focus()
        await pilot.press("right")  # the oldest segment: the first question, summarised
        await wait_until(pilot, lambda: screen.tree_pane.view.selected_id == ids[0], "the tree row")

        def first_on_screen() -> bool:
            widget = next((w for w in chat.message_widgets if w.entry_id == ids[0]), None)
            return (
                widget is not None
                and chat.scroll_y <= widget.virtual_region.y < chat.scroll_y + chat.size.height
            )

        await wait_until(pilot, first_on_screen, "the fold opened and scrolled to the question")
        assert chat.jumped and len(chat.message_widgets) < chat.JUMP_ITEMS


# --- the context chart and the breakdown in the panel ------------------------------------------------


def test_the_chart_gives_each_sample_its_cells_and_marks_the_threshold():
    from tui.export.chart import Sample
    from widgets.timeline_chart import FILL_COMPACTION, FILL_OVER, FILL_THRESHOLD, ContextChart

    samples = [
        Sample("reply", "a", 8_000, True),
        Sample("reply", "b", 60_000, True),  # above the threshold
        Sample("compaction", "c", 60_000, False, 9_000),
        Sample("reply", "d", 10_000, False),
    ]
    chart = ContextChart(samples, width=20, rows=2, context_window=64_000, threshold=56_000)
    assert [chart.sample_at(c) for c in range(13)] == [0] * 3 + [1] * 3 + [2] * 3 + [3] * 3 + [None]
    top, bottom = chart.row(0), chart.row(1)
    # 8k of 64k on 16 eighths: 2 eighths, in the bottom row; 60k: 15 eighths, full bottom and 7/8 above.
    assert bottom[0][0] == "▂" and top[0] == ("┈", FILL_THRESHOLD)
    assert bottom[3] == ("█", FILL_OVER) and top[3] == ("▇", FILL_OVER)
    assert top[6][1] == FILL_COMPACTION
    assert top[15] == ("┈", FILL_THRESHOLD)  # the threshold line runs on past the samples
    # More samples than cells: each cell shows the largest of its share, a compaction first.
    many = [Sample("reply", str(i), 1_000 * (i % 7), True) for i in range(100)]
    many[41] = Sample("compaction", "x", 3_000, False, 500)
    narrow = ContextChart(many, width=10, rows=1, context_window=64_000, threshold=56_000)
    assert narrow.sample_at(4) == 41 and narrow.sample_at(0) in range(10)
    assert narrow.samples[narrow.sample_at(0)].tokens == 6_000


def test_one_huge_tokens_before_does_not_flatten_the_chart():
    from tui.export.chart import Sample
    from widgets.timeline_chart import CLIPPED_MARK, FILL_OVER, ContextChart

    # tokensBefore 999,999,999,999 is allowed in a session file; the replies around it are ordinary.
    samples = [
        Sample("reply", "a", 30_000, True),
        Sample("compaction", "c", 999_999_999_999, False, 9_000),
        Sample("reply", "d", 60_000, True),
    ]
    chart = ContextChart(samples, width=9, rows=2, context_window=64_000, threshold=56_000)
    assert chart.clipped and chart.top <= 96_000  # the scale stays near the window
    top, bottom = chart.row(0), chart.row(1)
    # 30k of at most 96k on 16 eighths: at least 5 eighths, not the single eighth a 1e12 scale gives.
    assert bottom[0][0] in "▅▆▇█" and bottom[6][0] == "█"
    assert top[3] == (CLIPPED_MARK, FILL_OVER)  # the outlier is cut at the top, and marked
    assert top[0][0] != CLIPPED_MARK and top[6][0] != CLIPPED_MARK
    # Within the window nothing is clipped, and without a window the peak is the scale.
    assert not ContextChart(samples[:1], 9, 2, 64_000, 56_000).clipped
    assert ContextChart(samples, 9, 2, 0, 0).top == 999_999_999_999


def test_the_panel_shrinks_section_by_section_to_its_budget():
    from widgets.timeline import _fit

    row = lambda: (None, None)  # noqa: E731
    sections = {
        "legend": [[row()], []],
        "markers": [[row()], []],
        "breakdown": [[row(), row()], [row()], []],
        "chart": [[row()] * 4, [row()] * 3, [row()] * 2, []],
        "past": [[row()] * 5, [row()] * 3, [row()] * 2],
    }
    assert len(_fit(sections, 100)) == 13
    assert len(_fit(sections, 12)) == 12  # the chart loses a row first
    assert len(_fit(sections, 9)) <= 9
    assert len(_fit(sections, 0)) == 2  # the smallest forms: what cannot go stays


async def test_clicking_and_hovering_the_chart_point_at_replies():
    app = Host(expanded=True)
    async with app.run_test(size=(100, 40), tooltips=True) as pilot:
        widget = app.query_one(CompactionTimeline)
        await wait_until(pilot, lambda: any(t and t[0] == "chart" for t in widget._row_targets), "the chart")
        y = next(i for i, t in enumerate(widget._row_targets) if t and t[0] == "chart")
        chart = widget._row_targets[y][1]
        column = next(
            c
            for c in range(chart.width)
            if chart.sample_at(c) is not None
            and chart.samples[chart.sample_at(c)].kind == "reply"
            and chart.samples[chart.sample_at(c)].measured
        )
        sample = chart.samples[chart.sample_at(column)]
        await hover(pilot, (PAD + column, y))
        await wait_until(pilot, lambda: sample.entry_id in tooltip_text(app), "the point's tooltip")
        assert "(measured)" in tooltip_text(app) and "context" in tooltip_text(app)
        await pilot.click(CompactionTimeline, offset=(PAD + column, y))
        await wait_until(pilot, lambda: pointed(app) == [sample.entry_id], "the reply pointed at")
        assert widget.selected_entry_id == sample.entry_id  # the bar marks the same entry


async def expanded_panel(pilot, app):
    """F4 on the app's main screen until the panel is open and focused: the screen, the timeline, and a
    function that reads the panel's text."""
    screen = await ready(pilot, app)
    await pilot.press("f4")
    timeline = screen.timeline
    await wait_until(pilot, lambda: timeline.expanded and timeline.has_focus, "the panel")

    def text() -> str:
        return "\n".join(timeline.render_line(y).text for y in range(timeline.size.height))

    return screen, timeline, text


async def test_the_expanded_timeline_shows_the_context_breakdown_of_the_agent(tmp_path, monkeypatch):
    from widgets.timeline_pointer import format_tokens

    path, _names = compacted_session(tmp_path, later=True)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen, _timeline, text = await expanded_panel(pilot, app)
        expected = screen.agent.context_breakdown()
        await wait_until(pilot, lambda: "Context by category" in text(), "the breakdown")
        shown = text()
        assert f"{format_tokens(expected.total)})" in shown
        for category in expected.rows():
            if category.tokens:
                assert f"{category.name}" in shown, category
        assert "Context over" in shown  # and the chart under it


async def test_the_charts_threshold_line_follows_a_what_if_reserve(tmp_path, monkeypatch):
    """QA: the sparkline's "┈ threshold 111.6k" stayed at the saved value while the bar's ghost moved."""
    from widgets.timeline_pointer import format_tokens

    path, _names = compacted_session(tmp_path, later=True)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        _screen, timeline, text = await expanded_panel(pilot, app)
        saved = timeline.timeline.threshold
        await wait_until(pilot, lambda: f"┈ threshold {format_tokens(saved)} ·" in text(), "the saved line")
        await pilot.press("]")  # a larger reserve: a lower threshold
        await wait_until(pilot, lambda: timeline.timeline.what_if.threshold < saved, "the what-if")
        ghost = timeline.timeline.what_if.threshold
        await wait_until(
            pilot, lambda: f"┈ threshold {format_tokens(ghost)} what-if ·" in text(), "the what-if line"
        )


async def test_a_hostile_label_is_shown_literally_in_the_tooltip():
    path = compacted_path(usage=True)
    app = Host(path)
    hostile = "[/] [bold red]boom[/bold red] \x1b]52;c;aGk=\x07 \u202e"
    async with app.run_test(size=(80, 24), tooltips=True) as pilot:
        widget = app.query_one(CompactionTimeline)
        await wait_until(pilot, lambda: widget._layout is not None, "the bar")
        timeline = widget.timeline
        tool = next(i for i, s in enumerate(timeline.segments) if s.kind == "tool" and s.region == "after")
        target = timeline.segments[tool].entry_id
        widget.label_of = lambda entry_id: hostile if entry_id == target else None
        await hover(pilot, (PAD + owned_column(widget._layout, tool), 1))
        await wait_until(pilot, lambda: target in tooltip_text(app), "the tooltip")
        text = tooltip_text(app)
        assert "[/] [bold red]boom[/bold red]" in text  # markup shown, not applied (nor raised)
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
        await pilot.press("right")  # the pointer row says the same, as text
        await wait_until(pilot, lambda: widget.selected_entry_id is not None, "a selection")
        assert app.is_running


async def test_escape_clears_the_selection_and_still_reaches_the_screen():
    """Escape in the timeline must still cancel a running reply (the screen's Escape) when it clears."""
    from textual.binding import Binding

    class EscapeHost(Host):
        BINDINGS: ClassVar = [Binding("escape", "screen_escape", "Cancel")]
        escapes = 0

        def action_screen_escape(self) -> None:
            self.escapes += 1

    app = EscapeHost()
    async with app.run_test(size=(80, 24)) as pilot:
        widget = app.query_one(CompactionTimeline)
        await pilot.press("left")
        await wait_until(pilot, lambda: widget.selected_entry_id is not None, "a selection")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.escapes == 1, "the screen's escape")
        assert widget.selected_entry_id is None


def test_the_chart_takes_the_timelines_compaction_sizes_and_agrees_with_the_export():
    from tui.compaction.timeline import build_timeline
    from tui.export.chart import context_series

    path = compacted_path(usage=True, reason=None)  # no tokensAfter stored: the export rebuilds it
    timeline = build_timeline(path, context_window=WINDOW, reserve_tokens=RESERVE, keep_recent_tokens=KEEP)
    known = {c.entry_id: c.tokens_after for c in timeline.compactions}
    rebuilt, given = context_series(path), context_series(path, known)
    assert [(s.kind, s.entry_id, s.tokens) for s in rebuilt] == [
        (s.kind, s.entry_id, s.tokens) for s in given
    ]
    (compaction,) = [s for s in given if s.kind == "compaction"]
    assert compaction.after == known[compaction.entry_id]
    rebuilt_after = next(s.after for s in rebuilt if s.kind == "compaction")
    assert abs(compaction.after - rebuilt_after) <= 0.05 * rebuilt_after  # the same estimate, near enough


class FooterHost(Host):
    def compose(self) -> ComposeResult:
        yield CompactionTimeline()
        yield KompaktFooter()


def footer_text(app: App) -> str:
    return " ".join(f"{key.key_display} {key.description}" for key in app.query(FooterKey))


async def test_the_footer_names_what_enter_and_escape_do_with_a_past_compaction_selected():
    """The footer said '⏎ Compact' and 'esc Cancel' while Enter would inspect the selected past
    compaction and Esc would clear the selection (nothing was running)."""
    app = FooterHost(_two_compactions(), expanded=True)
    async with app.run_test(size=(120, 40)) as pilot:
        widget = app.query_one(CompactionTimeline)
        await wait_until(pilot, lambda: "⏎ Compact" in footer_text(app), "the what-if footer")
        await pilot.press("down")
        await wait_until(pilot, lambda: "⏎ Inspect" in footer_text(app), "Enter labelled Inspect")
        assert widget.selected_compaction_id is not None
        assert "⏎ Compact" not in footer_text(app) and "esc Clear" in footer_text(app), footer_text(app)
        widget.expanded = False  # collapsed, Enter compacts again (the list is not shown)
        await wait_until(pilot, lambda: "⏎ Compact" in footer_text(app), "Enter labelled Compact")
        widget.expanded = True
        await wait_until(pilot, lambda: "⏎ Inspect" in footer_text(app), "Inspect again")
        await pilot.press("up")
        await wait_until(pilot, lambda: "⏎ Compact" in footer_text(app), "off the list")
        widget.set_compacting("threshold", time.monotonic())
        await wait_until(pilot, lambda: "esc Cancel" in footer_text(app), "Esc cancels a compaction")
