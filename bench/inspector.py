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

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.gen_session import generate

SIZE = (160, 50)


async def _until(pilot: Any, predicate: Callable[[], Any]) -> None:
    deadline = time.monotonic() + 120
    while not predicate():
        assert time.monotonic() < deadline, f"the app never got there ({predicate.__code__.co_firstlineno})"
        await pilot.pause(0.005)


async def _timed(pilot: Any, start: Callable[[], Any], done: Callable[[], Any]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = start()
    if asyncio.iscoroutine(result):
        await result
    await _until(pilot, done)
    await pilot.pause()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


async def run(path: Path, rounds: int) -> None:
    from textual.widgets import DataTable

    from tui.app import KompaktApp
    from tui.config.loader import load_settings
    from tui.launch import Launch
    from tui.screens.dialogs import ConfirmDialog
    from tui.screens.inspector import CompactionInspector
    from tui.screens.main import MainScreen

    app = KompaktApp(
        Launch("open", path, path.parent),
        load_result=load_settings(None, None, env={}),
        start_background=False,
    )
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: any(isinstance(s, MainScreen) for s in app.screen_stack))
        screen = next(s for s in app.screen_stack if isinstance(s, MainScreen))
        await _until(pilot, lambda: screen.agent is not None and screen.timeline.timeline is not None)
        await pilot.pause(0.2)
        if isinstance(app.screen, ConfirmDialog):  # the generated session's cwd does not exist here
            await pilot.press("y")
            await _until(pilot, lambda: app.screen is screen)
        tree: list[tuple[float, float]] = []
        inspector: list[tuple[float, float]] = []
        rows = 0
        for _ in range(rounds):
            tree.append(
                await _timed(
                    pilot,
                    lambda: pilot.press("f2"),
                    lambda: screen.tree_pane.view.selector is not None and screen.tree_pane.view.has_focus,
                )
            )
            await pilot.press("f2")
            await _until(pilot, lambda: not screen.tree_pane.display)

            def opened() -> bool:
                current = app.screen
                if not isinstance(current, CompactionInspector):
                    return False
                return current.query_one("#inspector-summarised", DataTable).row_count == len(
                    current.inspection.summarised
                )

            inspector.append(await _timed(pilot, lambda: screen.compaction_flow("inspect", None), opened))
            rows = len(app.screen.inspection.summarised) + len(app.screen.inspection.kept)
            await pilot.press("escape")
            await _until(pilot, lambda: app.screen is screen)
    print(f"inspector rows (summarised + kept): {rows}")
    for name, data in (("tree pane (F2)", tree), ("inspector", inspector)):
        first, rest = data[0], data[1:] or data
        print(
            f"{name:<16} first {first[0]:7.1f} ms wall {first[1]:7.1f} ms cpu   "
            f"then median {statistics.median(w for w, _ in rest):7.1f} ms wall "
            f"{statistics.median(c for _, c in rest):7.1f} ms cpu"
        )
    first_ratio = inspector[0][0] / tree[0][0]
    warm_ratio = statistics.median(w for w, _ in inspector[1:] or inspector) / statistics.median(
        w for w, _ in tree[1:] or tree
    )
    print(f"ratio inspector / tree pane: first {first_ratio:.2f}, warm {warm_ratio:.2f} (wall)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in ("KOMPAKT_HOME", "KOMPAKT_CONFIG_DIR", "KOMPAKT_PI_SESSIONS"):
            os.environ[name] = str(root / name.lower())
        (root / "kompakt_config_dir").mkdir()
        path = generate(root / "bench.jsonl", entries=args.entries)
        print(f"session: {args.entries} entries, {path.stat().st_size / 1e6:.0f} MB")
        asyncio.run(run(path, args.rounds))


if __name__ == "__main__":
    main()
