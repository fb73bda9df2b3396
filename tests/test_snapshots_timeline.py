"""Snapshots of the compaction timeline at 120×40 and 80×24, collapsed and expanded.

The host app (tests/snap_apps/timeline_app.py) draws a fixed compacted session with usage and a
what-if of keep 9k, so the boundary, the ghost, the keep bracket and the threshold all show.
"""

from __future__ import annotations

import pytest

from tests.snap_apps.timeline_app import TimelineApp


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
@pytest.mark.parametrize("expanded", [False, True], ids=["strip", "panel"])
def test_timeline_snapshot(snap_compare, size: tuple[int, int], expanded: bool) -> None:
    assert snap_compare(TimelineApp(expanded=expanded), terminal_size=size)


def test_timeline_pointed_snapshot(snap_compare) -> None:
    """A selected segment (drawn inverted, described under the figures) and a selected past compaction."""
    assert snap_compare(TimelineApp(expanded=True, pointed=True), terminal_size=(120, 40))
