"""Pilot tests of the CompactionTimeline widget: boundary column, what-if keys, messages, states.

The host app is 80 columns wide; with the widget's one-cell padding the bar is 78 cells. The
summarised history (14k tokens against a 64k window) is squeezed into a fifth of the bar, so the
kept region, and with it the boundary ▼, starts at column 78 // 5 = 15.
"""

from __future__ import annotations

import time

from textual.app import App, ComposeResult
from textual.message import Message

from tests import factories as f
from tests.pages import timeline_shown, until
from tests.timeline_helpers import KEEP, RESERVE, WINDOW, compacted_path
from tui.compaction.plan import prepare_compaction
from widgets import timeline as timeline_module
from widgets.timeline import CompactionTimeline
from widgets.timeline_layout import BarLayout, Cell

BOUNDARY_COLUMN = 78 // 5


class Host(App[None]):
    def __init__(self, path: list[dict] | None = None) -> None:
        super().__init__()
        self.path = path if path is not None else compacted_path()
        self.received: list[Message] = []

    def compose(self) -> ComposeResult:
        yield CompactionTimeline()

    def on_mount(self) -> None:
        widget = self.query_one(CompactionTimeline)
        widget.update_timeline(self.path, WINDOW, RESERVE, KEEP)
        widget.focus()

    def on_compaction_timeline_what_if_changed(self, message: CompactionTimeline.WhatIfChanged) -> None:
        self.received.append(message)

    def on_compaction_timeline_compact_now_requested(
        self, message: CompactionTimeline.CompactNowRequested
    ) -> None:
        self.received.append(message)

    def on_compaction_timeline_jump_to_entry(self, message: CompactionTimeline.JumpToEntry) -> None:
        self.received.append(message)

    def on_compaction_timeline_cancel_requested(self, message: CompactionTimeline.CancelRequested) -> None:
        self.received.append(message)


async def wait_for(pilot, condition, guard: float = 60.0) -> None:
    """Poll between frames until ``condition()`` holds; the guard only catches a hang."""
    deadline = time.monotonic() + guard
    while not condition():
        assert time.monotonic() < deadline, "gave up waiting"
        await pilot.pause(0.02)


def rows(widget: CompactionTimeline) -> list[str]:
    return [widget.render_line(y).text for y in range(widget.size.height)]


def ghost_column(widget: CompactionTimeline) -> int:
    return rows(widget)[0].index("◆")


async def test_boundary_is_drawn_at_the_kept_entry() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: rows(app.query_one(CompactionTimeline))[0].index("▼") == BOUNDARY_COLUMN)
        widget = app.query_one(CompactionTimeline)
        markers, bar, status = rows(widget)
        assert markers.index("▼") == BOUNDARY_COLUMN
        assert markers[BOUNDARY_COLUMN:].startswith(f"▼ {f.entry_id(8)}")
        # The summarised zone is hatched up to the boundary, and the kept region starts there.
        assert bar[:BOUNDARY_COLUMN] == "░" * BOUNDARY_COLUMN
        layout = BarLayout(widget.timeline, 78)
        assert layout.cells[BOUNDARY_COLUMN].left.startswith("kept")
        assert status.startswith("≈23k / 64k (36%) · threshold 56k")


async def test_keys_move_the_ghost_boundary_and_post_what_if_changed() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await timeline_shown(pilot, app)
        widget = app.query_one(CompactionTimeline)
        before = ghost_column(widget)
        await pilot.press("greater_than_sign")
        await until(pilot, lambda: ghost_column(widget) < before)
        assert ghost_column(widget) < before  # a larger keep budget cuts earlier
        await pilot.press("plus", "right_square_bracket", "left_curly_bracket")
        await until(
            pilot,
            lambda: (
                [(m.keep_recent_tokens, m.reserve_tokens) for m in app.received]
                == [
                    (KEEP + 5000, RESERVE),
                    (KEEP + 6000, RESERVE),
                    (KEEP + 6000, RESERVE + 1000),
                    (KEEP + 6000, RESERVE - 4000),
                ]
            ),
        )
        values = [(m.keep_recent_tokens, m.reserve_tokens) for m in app.received]
        assert values == [
            (KEEP + 5_000, RESERVE),
            (KEEP + 6_000, RESERVE),
            (KEEP + 6_000, RESERVE + 1_000),
            (KEEP + 6_000, RESERVE - 4_000),
        ]
        expected = prepare_compaction(app.path, KEEP + 6_000, RESERVE - 4_000)
        assert widget.timeline.what_if.plan.to_json() == expected.to_json()
        assert "◆ 12k/4k: summarise ≈" in rows(widget)[2]  # "would" does not fit at 80 columns
        await pilot.press("minus", "less_than_sign", "less_than_sign")
        await until(
            pilot,
            lambda: (app.received[-1].keep_recent_tokens == KEEP - 5_000) and (ghost_column(widget) > before),
        )
        assert app.received[-1].keep_recent_tokens == KEEP - 5_000
        assert ghost_column(widget) > before
        await pilot.press("ctrl+r")
        await until(
            pilot,
            lambda: (
                (ghost_column(widget) == before)
                and (
                    (app.received[-1].keep_recent_tokens, app.received[-1].reserve_tokens) == (KEEP, RESERVE)
                )
            ),
        )
        assert ghost_column(widget) == before
        assert (app.received[-1].keep_recent_tokens, app.received[-1].reserve_tokens) == (KEEP, RESERVE)


async def test_what_if_planned_in_a_worker_on_long_paths(monkeypatch) -> None:
    monkeypatch.setattr(timeline_module, "WORKER_ENTRIES", 0)
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await timeline_shown(pilot, app)
        widget = app.query_one(CompactionTimeline)
        widget.set_what_if(12_000, RESERVE)
        await app.workers.wait_for_complete()
        await until(
            pilot,
            lambda: (
                (widget.timeline.what_if.keep_recent_tokens == 12_000)
                and (
                    widget.timeline.what_if.plan.to_json()
                    == prepare_compaction(app.path, 12_000, RESERVE).to_json()
                )
            ),
        )
        assert widget.timeline.what_if.keep_recent_tokens == 12_000
        assert (
            widget.timeline.what_if.plan.to_json() == prepare_compaction(app.path, 12_000, RESERVE).to_json()
        )


async def test_enter_requests_compaction_with_the_what_if_settings() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await timeline_shown(pilot, app)
        await pilot.press("plus", "enter")
        await until(
            pilot,
            lambda: (
                isinstance(app.received[-1], CompactionTimeline.CompactNowRequested)
                and (app.received[-1].keep_recent_tokens, app.received[-1].reserve_tokens)
                == (KEEP + 1000, RESERVE)
            ),
        )
        request = app.received[-1]
        assert isinstance(request, CompactionTimeline.CompactNowRequested)
        assert (request.keep_recent_tokens, request.reserve_tokens) == (KEEP + 1_000, RESERVE)


async def test_ctrl_f_jumps_to_the_boundary_entry() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await timeline_shown(pilot, app)
        await pilot.press("ctrl+f")
        await until(
            pilot,
            lambda: (
                (isinstance(app.received[-1], CompactionTimeline.JumpToEntry))
                and (app.received[-1].entry_id == f.entry_id(8))
            ),
        )
        assert isinstance(app.received[-1], CompactionTimeline.JumpToEntry)
        assert app.received[-1].entry_id == f.entry_id(8)


async def test_compacting_state_shows_a_spinner_and_escape_cancels() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await timeline_shown(pilot, app)
        widget = app.query_one(CompactionTimeline)
        await pilot.press("escape")  # nothing runs: no cancel request
        await until(pilot, lambda: app.received == [])
        assert app.received == []
        widget.set_compacting("manual", time.monotonic())
        await until(
            pilot,
            lambda: (
                rows(widget)[2][0] in timeline_module.SPINNER
                and ("compacting (manual)" in rows(widget)[2] and "esc to cancel" in rows(widget)[2])
            ),
        )
        status = rows(widget)[2]
        assert status[0] in timeline_module.SPINNER
        assert "compacting (manual)" in status and "esc to cancel" in status
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.received[-1], CompactionTimeline.CancelRequested))
        assert isinstance(app.received[-1], CompactionTimeline.CancelRequested)
        await pilot.press("enter")  # no second compaction while one runs
        await until(pilot, lambda: len(app.received) == 1)
        assert len(app.received) == 1
        widget.set_idle()
        await until(pilot, lambda: "compacting" not in rows(widget)[2])
        assert "compacting" not in rows(widget)[2]


async def test_streaming_tail_grows_without_replanning() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await timeline_shown(pilot, app)
        widget = app.query_one(CompactionTimeline)
        planned = widget.timeline
        widget.set_streaming_tokens(5_000)
        await until(pilot, lambda: (widget.timeline is planned) and ("+5k streaming" in rows(widget)[2]))
        assert widget.timeline is planned
        assert "+5k streaming" in rows(widget)[2]
        cells = BarLayout(planned, 78, 5_000).cells
        assert sum(c.left == "streaming" for c in cells) >= 5  # 5k tokens at about 1k per cell
        widget.update_timeline(app.path, WINDOW, RESERVE, KEEP)
        await until(pilot, lambda: "streaming" not in rows(widget)[2])
        assert "streaming" not in rows(widget)[2]


async def test_expanded_panel_lists_past_compactions() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.query_one(CompactionTimeline).size.height == 3)
        widget = app.query_one(CompactionTimeline)
        assert widget.size.height == 3
        await pilot.press("space")
        await until(pilot, lambda: widget.expanded)
        assert widget.expanded
        text = rows(widget)
        assert len(text) > 3
        header = next(i for i, row in enumerate(text) if row.startswith("Past compactions (1)"))
        past = text[header + 1]
        assert "2025-01-01 00:00:12" in past and f.entry_id(12) in past
        assert "21k → ≈9.1k" in past and "threshold" in past and "3.2s" in past
        assert any(row.startswith("What-if  keepRecentTokens 6,000") for row in text)
        await pilot.press("space")
        await until(pilot, lambda: widget.size.height == 3)
        assert widget.size.height == 3


async def test_past_compactions_show_omp_method_and_warning() -> None:
    path = compacted_path()
    compaction = next(e for e in path if e["type"] == "compaction")
    compaction.update(method="remote", warning="summary cut short")  # oh-my-pi 18 writes these
    app = Host(path)
    async with app.run_test(size=(120, 30)) as pilot:
        await timeline_shown(pilot, app)
        widget = app.query_one(CompactionTimeline)
        await pilot.press("space")
        await wait_for(pilot, lambda: widget.expanded)
        await until(
            pilot,
            lambda: (
                "remote"
                in rows(widget)[
                    next((i for i, row in enumerate(rows(widget)) if row.startswith("Past compactions (1)")))
                    + 1
                ]
                and "⚠ summary cut short"
                in rows(widget)[
                    next((i for i, row in enumerate(rows(widget)) if row.startswith("Past compactions (1)")))
                    + 1
                ]
            ),
        )
        text = rows(widget)
        header = next(i for i, row in enumerate(text) if row.startswith("Past compactions (1)"))
        assert "remote" in text[header + 1] and "⚠ summary cut short" in text[header + 1]


async def test_session_text_cannot_inject_escape_sequences() -> None:
    path = compacted_path(reason=None)
    path[12]["firstKeptEntryId"] = "\x1b]0;pwned\x07[bold]x"
    path[12]["timestamp"] = "\x1b[2J2025"
    app = Host(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await timeline_shown(pilot, app)
        widget = app.query_one(CompactionTimeline)
        widget.expanded = True
        await until(
            pilot,
            lambda: (
                ("\x1b" not in "\n".join(rows(widget)) and "\x07" not in "\n".join(rows(widget)))
                and "▼ [bold]x" in "\n".join(rows(widget))
            ),
        )
        text = "\n".join(rows(widget))
        assert "\x1b" not in text and "\x07" not in text
        assert "▼ [bold]x" in text  # shown literally, never parsed as markup


async def test_the_panel_says_what_the_threshold_is_compared_with() -> None:  # pi-073-delta B.5
    # kompakt checks the last reply's usage plus the estimate of the messages after it; pi the usage only.
    for size, expected in (
        ((120, 30), "threshold (last reply's usage + later messages)"),
        ((80, 24), "threshold: usage + later"),
    ):
        app = Host()
        async with app.run_test(size=size) as pilot:
            await timeline_shown(pilot, app)
            widget = app.query_one(CompactionTimeline)
            await pilot.press("space")
            await until(pilot, lambda: any(expected in row for row in rows(widget)))  # noqa: B023
            assert any(expected in row for row in rows(widget)), rows(widget)
    assert "plus an\nestimate of the messages after it" in CompactionTimeline.HELP


async def test_a_what_if_reserve_draws_a_ghost_threshold_and_moves_the_reserve() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        widget = app.query_one(CompactionTimeline)
        await wait_for(pilot, lambda: widget.timeline is not None and "┃" in rows(widget)[0])
        saved = rows(widget)[0].index("┃")
        assert "╏" not in rows(widget)[0]  # no what-if: only the saved threshold
        reserve_before = BarLayout(widget.timeline, 78).cells.count(Cell("reserve", None, 8))
        widget.set_what_if(KEEP, RESERVE + 8_000)
        await wait_for(pilot, lambda: "╏" in rows(widget)[0])
        ghost = rows(widget)[0].index("╏")
        assert ghost < saved  # a larger reserve lowers the threshold
        assert rows(widget)[0].index("┃") == saved  # the saved threshold stays where it is in force
        layout = BarLayout(widget.timeline, 78)
        assert layout.column(widget.timeline.what_if.threshold) == ghost
        assert layout.cells.count(Cell("reserve", None, 8)) > reserve_before
        widget.set_what_if(KEEP, RESERVE)
        await wait_for(pilot, lambda: "╏" not in rows(widget)[0])


async def test_the_strip_says_loading_until_the_session_is_drawn() -> None:
    """On a big session the strip is on screen well before start-up fills it: not "No session yet"."""

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield CompactionTimeline()

    app = Bare()
    async with app.run_test(size=(100, 20)):
        widget = app.query_one(CompactionTimeline)
        shown = "\n".join(widget.render_line(y).text for y in range(3))
        assert "Loading the session…" in shown and "No session" not in shown
        widget.update_timeline(compacted_path(), WINDOW, RESERVE, KEEP)
        shown = "\n".join(widget.render_line(y).text for y in range(3))
        assert "Loading" not in shown


async def test_a_reserve_larger_than_the_window_says_so_and_never_shows_a_negative_threshold() -> None:
    """QA issue 13 F4: reserveTokens 72k over the 64k window in the what-if (F5's preview) showed
    ``threshold -8k``; now the words say the reserve exceeds the window, and no threshold is marked."""
    app = Host()
    async with app.run_test(size=(120, 40)) as pilot:
        widget = app.query_one(CompactionTimeline)
        await wait_for(pilot, lambda: widget.timeline is not None and "┃" in rows(widget)[0])
        widget.set_what_if(KEEP, WINDOW + 8_000)
        await wait_for(pilot, lambda: "reserveTokens exceeds the context window" in "\n".join(rows(widget)))
        await pilot.press("space")  # the panel: markers, the what-if's cut, the chart
        await wait_for(pilot, lambda: len(rows(widget)) > 6 and "What-if" in "\n".join(rows(widget)))
        text = "\n".join(rows(widget))
        assert "threshold -" not in text and "┃-" not in text, text
        assert "╏" not in rows(widget)[0]  # no ghost threshold at the bar's left end
