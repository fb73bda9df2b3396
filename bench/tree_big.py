"""Benchmark the tree pane on a 100k-entry session against a 10k one, and the worker against building inline.

For each size the pane is shown in a Pilot-driven app and the script times what a user waits for and how
long the event loop is blocked meanwhile (the longest lateness of a 20 ms ticker: a key, a repaint or the
cursor cannot be served during it). Each change is measured twice in the same run: with the rows built on
a worker thread (what a tree of ``SessionTreeView.background_from`` entries or more does) and inline on
the event loop (what every tree did before). The views kept by the selector are dropped before each
change, so every figure is a real walk (entry texts stay cached, as after the first search).
Prints, per change: time to rows and longest stall for 10k and 100k, the 100k/10k ratios (a linear cost
gives ~10) and the worker's stall as a ratio of the inline one at 100k (the goal: far below 1). Cursor
moves: CPU per press and its 100k/10k ratio (goal ~1: O(1) in the size).
Run ``python -m bench.tree_big [--entries 100000] [--runs 3]``; the sessions are kept in bench/out.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.app import App, ComposeResult
from textual.pilot import Pilot

from bench.gen_session import generate
from tui.session.store import SessionStore
from tui.session.tree import TreeIndex
from widgets.session_tree import SessionTreeView
from widgets.session_tree_pane import SessionTreePane

OUT = Path(__file__).with_name("out")
SIZE = (160, 45)
TICK_S = 0.02  # coarse: each tick takes the GIL from a building worker thread


def session(entries: int) -> Path:
    OUT.mkdir(exist_ok=True)
    path = OUT / f"bench-{entries // 1000}k.jsonl"
    if not path.exists():
        generate(path, entries=entries, seed=1)
    return path


class _Host(App[None]):
    def __init__(self, tree: TreeIndex, leaf_id: str | None) -> None:
        super().__init__()
        self.session_tree, self.leaf_id = tree, leaf_id
        self.stall = 0.0  # the longest gap between ticks since the last reset

    def compose(self) -> ComposeResult:
        yield SessionTreePane()

    def on_mount(self) -> None:
        asyncio.get_running_loop().create_task(self._ticker())

    async def _ticker(self) -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(TICK_S)
            self.stall = max(self.stall, time.perf_counter() - started - TICK_S)

    @property
    def view(self) -> SessionTreeView:
        return self.query_one(SessionTreeView)


async def _until_rows(pilot: Pilot, app: _Host) -> None:
    view = app.view
    while view.selector is None or view.busy or not view.selector.has_view:
        await pilot.pause(0.05)


async def _measure(pilot: Pilot, app: _Host, change: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    """Milliseconds until the change's rows are shown, and the longest stall of the loop meanwhile."""
    selector = app.view.selector
    if selector is not None:
        selector._views.clear()  # a real walk, not a view kept from before
        selector._last_built = None
    await pilot.pause()
    app.stall = 0.0
    started = time.perf_counter()
    await change()
    await _until_rows(pilot, app)
    elapsed = time.perf_counter() - started
    await asyncio.sleep(TICK_S * 2)  # the ticker notes a stall when it next runs
    return elapsed * 1000, app.stall * 1000


async def _run(path: Path, inline: bool, runs: int) -> dict[str, tuple[float, float]]:
    store = SessionStore.open(path, read_only=True)
    tree, leaf = store.tree, store.leaf_id
    # As in the app once litellm is imported (tui/agent/litellm_loader.py): what is loaded is frozen,
    # so the collector's full passes do not walk the session's entries.
    gc.collect()
    gc.freeze()
    SessionTreeView.background_from = 10**12 if inline else 1
    app = _Host(tree, leaf)
    figures: dict[str, list[tuple[float, float]]] = {}
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        pane = app.query_one(SessionTreePane)

        async def show() -> None:
            pane.set_session(tree, leaf)
            app.view.focus()

        def press(*keys: str) -> Callable[[], Awaitable[object]]:
            return lambda: pilot.press(*keys)

        for run in range(runs):
            figures.setdefault("show rows (F2)", []).append(await _measure(pilot, app, show))
            if run == 0:  # warm the search texts once, as the first search of a session does
                await pilot.press("x")
                await _until_rows(pilot, app)
                await pilot.press("backspace")
                await _until_rows(pilot, app)
            for name, keys in (
                ("filter ^U (user only)", ("ctrl+u",)),
                ("filter ^U back", ("ctrl+u",)),
                ("filter ^A (all)", ("ctrl+a",)),
                ("search 'turn 4' typed", ("t", "u", "r", "n", "space", "4")),
                ("Esc clears the search", ("escape",)),
                ("filter ^A back", ("ctrl+a",)),
            ):
                figures.setdefault(name, []).append(await _measure(pilot, app, press(*keys)))
        moves: list[float] = []
        for key in ["up"] * 20 + ["down"] * 20:
            started = time.process_time()
            await pilot.press(key)
            moves.append((time.process_time() - started) * 1000)
    store.close()
    gc.unfreeze()
    result = {
        name: (statistics.median(t for t, _ in f), statistics.median(s for _, s in f))
        for name, f in figures.items()
    }
    result["cursor move (cpu ms)"] = (statistics.median(moves), 0.0)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    small, big = session(10_000), session(args.entries)
    label = f"{args.entries // 1000}k"
    worker_small = asyncio.run(_run(small, False, args.runs))
    worker_big = asyncio.run(_run(big, False, args.runs))
    inline_big = asyncio.run(_run(big, True, args.runs))
    print(f"medians of {args.runs} runs; ms to rows / longest event-loop stall, worker build unless said")
    print(
        f"{'change':<24}{'10k':>16}{label:>18}{'ratio ' + label + '/10k':>20}"
        f"{'inline ' + label:>18}{'stall worker/inline':>22}"
    )
    for name, (small_ms, small_stall) in worker_small.items():
        big_ms, big_stall = worker_big[name]
        inline_ms, inline_stall = inline_big[name]
        if name.startswith("cursor"):
            print(f"{name:<24}{small_ms:>16.2f}{big_ms:>18.2f}{big_ms / small_ms:>20.2f}{inline_ms:>18.2f}")
            continue
        print(
            f"{name:<24}{small_ms:>8.0f} /{small_stall:>5.0f}{big_ms:>10.0f} /{big_stall:>5.0f}"
            f"{big_ms / small_ms:>11.1f} /{big_stall / max(small_stall, 0.1):>6.1f}"
            f"{inline_ms:>10.0f} /{inline_stall:>5.0f}{big_stall / max(inline_stall, 0.1):>22.2f}"
        )


if __name__ == "__main__":
    main()
