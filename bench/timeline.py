"""How long the compaction timeline takes on the 10k-entry bench session (target: under 50 ms).

Opens the bench session (generated on first use), takes its active path and times
``build_timeline`` over it, then a what-if re-plan (``Timeline.with_what_if``) as a ``+`` key press
runs it, then what the expanded panel adds (the chart's samples, the context breakdown) and the
segment look-up a mouse move does, each as a ratio to ``build_timeline``. Prints medians and the
path's shape; no timed asserts anywhere.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.session_open import session_file
from tui.compaction.timeline import build_timeline
from tui.session.store import SessionStore

RUNS = 15
WINDOW = 200_000
RESERVE = 16_384
KEEP = 20_000


def _median_ms(fn) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    store = SessionStore.open(session_file(), read_only=True)
    path = store.get_branch()
    timeline = build_timeline(path, context_window=WINDOW, reserve_tokens=RESERVE, keep_recent_tokens=KEEP)
    build_ms = _median_ms(
        lambda: build_timeline(path, context_window=WINDOW, reserve_tokens=RESERVE, keep_recent_tokens=KEEP)
    )
    what_if_ms = _median_ms(lambda: timeline.with_what_if(path, KEEP + 1_000, RESERVE))
    print(
        f"active path: {len(path)} entries, {len(timeline.segments)} segments, "
        f"{len(timeline.compactions)} compactions, context {timeline.context_tokens:,} tokens "
        f"({timeline.percent:.1f}%), ratio {timeline.ratio or 0:.3f}"
    )
    print(f"build_timeline: {build_ms:.1f} ms median of {RUNS} (target < 50 ms)")
    print(f"what-if re-plan: {what_if_ms:.1f} ms median of {RUNS}")
    # The expanded panel's extras (once per path change) and a pointer look-up (per mouse move),
    # against build_timeline measured above.
    from tui.compaction.breakdown import context_breakdown
    from tui.export.chart import context_series
    from widgets.timeline_layout import BarLayout

    known = {c.entry_id: c.tokens_after for c in timeline.compactions}
    series_ms = _median_ms(lambda: context_series(path, known))
    export_ms = _median_ms(lambda: context_series(path))
    breakdown_ms = _median_ms(lambda: context_breakdown(path, context_window=WINDOW, reserve_tokens=RESERVE))
    layout = BarLayout(timeline, 158)
    lookup_ms = _median_ms(lambda: [layout.segment_at(c) for c in range(158)]) / 158
    print(
        f"chart samples: {series_ms:.1f} ms ({series_ms / build_ms:.2f}× build_timeline; "
        f"{export_ms:.1f} ms without the timeline's compaction sizes)"
    )
    print(f"context breakdown: {breakdown_ms:.1f} ms ({breakdown_ms / build_ms:.2f}× build_timeline)")
    print(
        f"segment under the mouse: {lookup_ms * 1000:.1f} µs per cell ({lookup_ms / build_ms:.5f}× build_timeline)"
    )


if __name__ == "__main__":
    main()
