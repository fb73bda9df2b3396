"""The bar's layout reuses the entries' part of the layout drawn before when only the tail or the what-if moved.

Laying out the entries walks every segment (tens of thousands on a 100k-entry path, about 0.2 s on the event
loop each time); a redraw while a reply streams, or after a what-if re-plan (which keeps the timeline's
segments), takes that part from the previous layout. Each case checks the reuse and that the cells are
those a layout from scratch draws.
"""

from __future__ import annotations

from tests.timeline_helpers import KEEP, RESERVE, WINDOW, compacted_path
from tui.compaction.timeline import build_timeline
from widgets.timeline_layout import BarLayout

WIDTH = 78


def _timeline():
    return build_timeline(
        compacted_path(), context_window=WINDOW, reserve_tokens=RESERVE, keep_recent_tokens=KEEP
    )


def test_a_streamed_tail_reuses_the_entries_part_and_draws_the_same_cells() -> None:
    timeline = _timeline()
    before = BarLayout(timeline, WIDTH)
    streaming = BarLayout(timeline, WIDTH, 2_000, reuse=before)
    assert streaming._entries_coverage is before._entries_coverage
    assert streaming.cells == BarLayout(timeline, WIDTH, 2_000).cells
    assert streaming.cells != before.cells  # the tail shows


def test_a_what_if_re_plan_reuses_the_entries_part_and_draws_the_same_cells() -> None:
    timeline = _timeline()
    before = BarLayout(timeline, WIDTH)
    planned = timeline.with_what_if(compacted_path(), KEEP, RESERVE * 3, None)
    after = BarLayout(planned, WIDTH, reuse=before)
    assert after._entries_coverage is before._entries_coverage
    assert after.cells == BarLayout(planned, WIDTH).cells
    assert after.cells != before.cells  # the reserve moved


def test_another_width_or_timeline_lays_the_entries_out_again() -> None:
    timeline = _timeline()
    before = BarLayout(timeline, WIDTH)
    narrower = BarLayout(timeline, WIDTH - 10, reuse=before)
    assert narrower._entries_coverage is not before._entries_coverage
    assert narrower.cells == BarLayout(timeline, WIDTH - 10).cells
    other = BarLayout(_timeline(), WIDTH, reuse=before)
    assert other._entries_coverage is not before._entries_coverage
