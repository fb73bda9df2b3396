"""Benchmark the session tree pane on a 10k-entry session: cursor moves, filters, search, refresh.

Every key goes through Textual's Pilot, as in the tests. Pilot sleeps while it waits for the app to
settle, so the wall time of a press has a fixed floor; the script prints that floor from a bare app
(an Input) beside the tree's figures, and the CPU time of a press (the work the key causes: the
action, the repaint and the compositor). Target: a cursor move ≤ 16 ms median.
Run ``python -m bench.tree_pane [--entries N] [--presses N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Input

from bench.gen_session import generate
from tui.session.store import SessionStore
from tui.session.tree import TreeIndex
from widgets.session_tree import SessionTreeView
from widgets.session_tree_pane import SessionTreePane

SIZE = (160, 50)


class _Bare(App[None]):
    def compose(self) -> ComposeResult:
        yield Input()


class _PaneHost(App[None]):
    def __init__(self, tree: TreeIndex, leaf_id: str | None) -> None:
        super().__init__()
        self.session_tree, self.leaf_id = tree, leaf_id
        self.set_session_s = 0.0

    def compose(self) -> ComposeResult:
        yield SessionTreePane()

    def on_mount(self) -> None:
        started = time.perf_counter()
        self.query_one(SessionTreePane).set_session(self.session_tree, self.leaf_id)
        self.set_session_s = time.perf_counter() - started
        self.query_one(SessionTreeView).focus()


async def _presses(pilot: Pilot, keys: list[str]) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds per key."""
    wall: list[float] = []
    cpu: list[float] = []
    for key in keys:
        w, c = time.perf_counter(), time.process_time()
        await pilot.press(key)
        wall.append((time.perf_counter() - w) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return wall, cpu


def _line(name: str, wall: list[float], cpu: list[float]) -> None:
    print(
        f"{name:<28} cpu median {statistics.median(cpu):6.2f} ms  p90 {sorted(cpu)[int(len(cpu) * 0.9)]:6.2f} ms"
        f"   wall median {statistics.median(wall):6.1f} ms"
    )


async def _bare(presses: int) -> None:
    app = _Bare()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        _line("bare app, typing (floor)", *await _presses(pilot, ["a"] * presses))


async def _pane(tree: TreeIndex, leaf_id: str | None, presses: int) -> None:
    app = _PaneHost(tree, leaf_id)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = app.query_one(SessionTreeView)
        selector = view.selector
        assert selector is not None
        print(f"rows (default filter)        {len(selector.rows)}")
        print(f"set_session                  {app.set_session_s * 1000:6.1f} ms")
        _line("cursor move ↑", *await _presses(pilot, ["up"] * presses))
        _line("cursor move ↓", *await _presses(pilot, ["down"] * presses))
        _line("page ←/→", *await _presses(pilot, ["left", "right"] * (presses // 2)))
        _line("filter toggle ^T", *await _presses(pilot, ["ctrl+t"] * 10))
        _line("search keystroke", *await _presses(pilot, list("turn 4")))
        await pilot.press("escape")
        started = time.perf_counter()
        view.refresh_tree()
        print(f"refresh_tree (after appends) {(time.perf_counter() - started) * 1000:6.1f} ms")
        largest = max(tree.by_id.values(), key=lambda e: len(str(e)))
        pane = app.query_one(SessionTreePane)
        timings: list[float] = []
        for _ in range(5):
            timings.append(await _timed_detail(pilot, lambda: pane.detail.show_entry(largest, tree)))
        print(
            f"detail of the largest entry  {statistics.median(timings):6.1f} ms cpu "
            f"({len(str(largest)) // 1000} kB; shown {pane.detail_delay * 1000:.0f} ms after the cursor rests)"
        )


async def _timed_detail(pilot: Pilot, show: Callable[[], None]) -> float:
    started = time.process_time()
    show()
    await pilot.pause()
    return (time.process_time() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--presses", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = generate(Path(tmp) / "bench.jsonl", entries=args.entries)
        started = time.perf_counter()
        store = SessionStore.open(path, read_only=True)
        print(f"session: {len(store)} entries, opened in {(time.perf_counter() - started) * 1000:.0f} ms")
        asyncio.run(_bare(args.presses))
        asyncio.run(_pane(store.tree, store.leaf_id, args.presses))
        store.close()


if __name__ == "__main__":
    main()
