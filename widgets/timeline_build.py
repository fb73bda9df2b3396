"""What the compaction timeline draws, built in one go: the path, its :class:`Timeline` and the panel's figures.

:func:`build` reads the path (a list, or a function that reads it from the session's tree), runs
``build_timeline`` over it and, for the open panel, the chart's samples and the context by category. It
touches no widget, so the timeline runs it on a worker thread for a long path
(:class:`~widgets.latest_only.LatestOnly`) and at once for a short one; a 100k-entry session's timeline
took 2 to 4 seconds of the event loop before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui.session.entries import Entry
from widgets.timeline_layout import BarLayout

if TYPE_CHECKING:
    from tui.compaction.breakdown import ContextBreakdown
    from tui.compaction.timeline import Timeline
    from tui.export.chart import Sample

PathSource = Sequence[Entry] | Callable[[], Sequence[Entry]]
BreakdownSource = Callable[[], "ContextBreakdown | None"]


@dataclass(frozen=True)
class BuiltTimeline:
    """One build: the path and its timeline, the bar laid out at the width asked for (the widget draws
    it when the width is still that), the panel's figures when asked for (else None: computed when the
    panel needs them), and the what-if it was planned with."""

    path: Sequence[Entry]
    timeline: Timeline
    layout: BarLayout | None
    samples: list[Sample] | None
    breakdown: tuple[ContextBreakdown | None] | None
    what_if: tuple[tuple[int, int] | None, str | None]


def read_path(path: PathSource) -> Sequence[Entry]:
    return path() if callable(path) else path


def samples_of(timeline: Timeline, path: Sequence[Entry]) -> list[Sample]:
    """Each reply's context size and each compaction on the path (the chart's points)."""
    from tui.export.chart import context_series

    # The timeline knows each compaction's size after it: no context rebuilt per compaction.
    return context_series(path, {c.entry_id: c.tokens_after for c in timeline.compactions})


def build(
    path: PathSource,
    options: Mapping[str, Any],
    breakdown_source: BreakdownSource | None,
    *,
    figures: bool,
    width: int = 0,
) -> BuiltTimeline:
    """The timeline of ``path`` with ``build_timeline``'s ``options``, its bar ``width`` cells wide (none
    for 0); with ``figures``, the panel's figures too."""
    from tui.compaction.timeline import build_timeline  # loaded with the first session, not at start

    entries = read_path(path)
    timeline = build_timeline(entries, **options)
    layout = BarLayout(timeline, width) if width > 0 else None
    samples = breakdown = None
    if figures:
        samples = samples_of(timeline, entries)
        breakdown = (breakdown_source() if breakdown_source is not None else None,)
    what_if = (options.get("what_if"), options.get("what_if_strategy"))
    return BuiltTimeline(entries, timeline, layout, samples, breakdown, what_if)
