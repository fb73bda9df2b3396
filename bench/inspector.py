"""Benchmark opening the compaction inspector against opening the tree pane, on a 10k-entry session.

The real app opens a generated session (bench/gen_session.py: branches, compactions, large outputs) with
kompakt's home, config and pi directories in a temporary folder and no model (the offline one). Each
round opens the tree pane (F2) and waits for its rows and focus, closes it, then opens the inspector on
the latest compaction (what ``/inspect`` does) and waits for its tables, and closes it. The first round
of each includes building its data (the tree index rows, the inspection); later rounds show a warm open.
Wall times include Pilot's settle floor, the same for both. The ratio inspector / tree pane is the figure
to watch (goal: ≤ 1). Run ``python -m bench.inspector [--entries N] [--rounds N]``.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from bench.pilot_session import Timing, bench_main, open_tree_pane, opened_main, report, timed, until


async def run(path: Path, rounds: int) -> None:
    from textual.widgets import DataTable

    from tui.screens.inspector import CompactionInspector

    async with opened_main(path) as (app, pilot, screen):
        tree: list[Timing] = []
        inspector: list[Timing] = []
        rows = 0
        for _ in range(rounds):
            tree.append(await open_tree_pane(pilot, screen))

            def opened() -> bool:
                current = app.screen
                if not isinstance(current, CompactionInspector):
                    return False
                return current.query_one("#inspector-summarised", DataTable).row_count == len(
                    current.inspection.summarised
                )

            inspector.append(await timed(pilot, lambda: screen.compaction_flow("inspect", None), opened))
            rows = len(app.screen.inspection.summarised) + len(app.screen.inspection.kept)
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is screen)
    print(f"inspector rows (summarised + kept): {rows}")
    for name, data in (("tree pane (F2)", tree), ("inspector", inspector)):
        report(name, data)
    first_ratio = inspector[0][0] / tree[0][0]
    warm_ratio = statistics.median(w for w, _ in inspector[1:] or inspector) / statistics.median(
        w for w, _ in tree[1:] or tree
    )
    print(f"ratio inspector / tree pane: first {first_ratio:.2f}, warm {warm_ratio:.2f} (wall)")


if __name__ == "__main__":
    bench_main(__doc__, run)
