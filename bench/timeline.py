"""How long the compaction timeline takes on the 10k-entry bench session (target: under 50 ms).

Opens the bench session (generated on first use), takes its active path and times
``build_timeline`` over it, then a what-if re-plan (``Timeline.with_what_if``) as a ``+`` key press
runs it. Prints medians and the path's shape; no timed asserts anywhere.
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


if __name__ == "__main__":
    main()
