"""kompakt's tree against pi 0.73.1's on the same 10k-entry file, side by side in one run (ratios, no asserts).

- Tree pane to first rows: :meth:`SessionTreePane.set_session` on an opened session until the frame that
  paints its rows (the build and the first render, what F2 costs once the pane shows its loading line),
  against pi's ``getTree`` + ``TreeSelectorComponent`` + one render of the list (bench/pi_tree_speed.mjs,
  timed inside Node). Goal: ratio ≤ 1.
- ``kompakt tree FILE`` (rich text, as printed to a terminal) as a whole process, against the whole Node
  process that opens the file and renders pi's tree selector. Goal: ratio ≤ 0.5.
Needs Node and ``KOMPAKT_PI_DIR`` (see bench/session_open.py). Run ``python -m bench.tree_speed [--runs N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from textual.app import App, ComposeResult

from bench.session_open import session_file
from tui.session.store import SessionStore
from widgets.session_tree_pane import SessionTreePane

PI_SCRIPT = Path(__file__).with_name("pi_tree_speed.mjs")
SIZE = (160, 50)


class _Host(App[None]):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.store = SessionStore.open(path, read_only=True)
        self.first_rows_ms = 0.0

    def compose(self) -> ComposeResult:
        yield SessionTreePane()

    def on_mount(self) -> None:
        self.call_after_refresh(self._show)

    def _show(self) -> None:
        pane = self.query_one(SessionTreePane)
        started = time.perf_counter()
        pane.set_session(self.store.tree, self.store.leaf_id)

        def painted() -> None:
            self.first_rows_ms = (time.perf_counter() - started) * 1000
            self.exit()

        self.call_after_refresh(painted)  # runs after the frame that drew the rows


def pane_first_rows(path: Path) -> float:
    app = _Host(path)

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            while app.is_running and not app.first_rows_ms:
                await pilot.pause(0.01)

    asyncio.run(run())
    app.store.close()
    return app.first_rows_ms


def pi_once(path: Path) -> tuple[float, dict]:
    started = time.perf_counter()
    out = subprocess.run(
        ["node", str(PI_SCRIPT), str(path)], capture_output=True, text=True, check=True, env=os.environ
    )
    return (time.perf_counter() - started) * 1000, json.loads(out.stdout)


def kompakt_tree_once(path: Path) -> float:
    # FORCE_COLOR: the rich output a terminal gets, though stdout is a pipe here.
    env = {**os.environ, "FORCE_COLOR": "1", "COLUMNS": str(SIZE[0])}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "tui.cli", "tree", str(path)], stdout=subprocess.DEVNULL, check=True, env=env
    )
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not os.environ.get("KOMPAKT_PI_DIR"):
        sys.exit("set KOMPAKT_PI_DIR to a directory with @mariozechner/pi-coding-agent@0.73.1 installed")
    path = session_file()
    pane, pi_tree, pi_proc, ours = [], [], [], []
    for _ in range(args.runs):  # interleaved, so both see the same machine load
        pane.append(pane_first_rows(path))
        wall, inner = pi_once(path)
        pi_proc.append(wall)
        pi_tree.append(inner["treeMs"])
        ours.append(kompakt_tree_once(path))
    med = statistics.median
    print(
        f"session: {path.name}, {path.stat().st_size / 1e6:.0f} MB; medians of {args.runs} interleaved runs"
    )
    print(
        f"tree pane to first rows {med(pane):7.0f} ms   pi tree selector build+render {med(pi_tree):6.0f} ms"
        f"   ratio {med(pane) / med(pi_tree):.2f} (goal ≤ 1)"
    )
    print(
        f"kompakt tree FILE       {med(ours):7.0f} ms   pi open + tree (process)      {med(pi_proc):6.0f} ms"
        f"   ratio {med(ours) / med(pi_proc):.2f} (goal ≤ 0.5)"
    )


if __name__ == "__main__":
    main()
