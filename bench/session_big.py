"""Benchmark: open a 100k-entry session in the real app and measure how long the event loop is blocked at most.

A 10 ms ticker runs on the app's event loop from before the app starts; its longest gap between two ticks
is how long a key, a repaint or a timer waited at worst. The app opens the session as ``kompakt FILE`` does
(headless, driven by Textual's Pilot), then the script goes through four phases, each measured apart:

- first frame: the file is read and parsed before it (by design: the chat comes with the first frame);
- start-up: after the first frame until the timeline's bar and the status bar's figures are drawn (the
  tree index, the agent, the timeline and the context size, the last two on worker threads for a long
  session);
- appends: five user messages appended one after another, each until the timeline and the status bar
  show it (what a watched writer causes);
- prompt: a message sent to the offline model, until its reply is stored and drawn (the agent's turn:
  the context built for the request, the reply streamed, the threshold checked);
- panel: Space on the timeline until its chart is drawn (a long path's chart and breakdown come from the
  worker too).

The session is copied (and synced) to a temporary folder first, so the runs leave bench/out as it was.

A 1k-entry session opened the same way in the same run is the baseline: each figure is printed with its
ratio to it. Run ``python -m bench.session_big [--entries 100000] [--baseline 1000]``; the sessions are
kept in bench/out (a 100k one takes about a minute to generate).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.gen_session import generate
from bench.pilot_session import isolate_home, until

OUT = Path(__file__).parent / "out"
SIZE = (160, 50)
TICK_S = 0.01
APPENDS = 5


class Ticker:
    """The longest gap between ticks of a ``TICK_S`` ticker on the running loop, per phase."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(TICK_S)
            self.longest = max(self.longest, time.perf_counter() - started - TICK_S)

    async def phase_end(self) -> float:
        """The longest stall of the phase that ends now, in ms (after one more tick, which notes the last)."""
        await asyncio.sleep(TICK_S * 3)
        longest, self.longest = self.longest, 0.0
        return longest * 1000

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


@dataclass
class Figures:
    """Per phase: wall ms until it was done and the longest stall in it (ms)."""

    wall: dict[str, float] = field(default_factory=dict)
    stall: dict[str, float] = field(default_factory=dict)


def session_file(entries: int) -> Path:
    """A generated session whose stored cwd is bench/out, so opening it asks nothing."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"session-big-{entries // 1000}k.jsonl"
    if not path.exists():
        generate(path, entries=entries, seed=1, cwd=str(OUT.resolve()))
    return path


def private_copy(path: Path, folder: Path) -> Path:
    """A copy of ``path`` in ``folder``, on disk before the clock starts (its first fsync would flush it)."""
    copy = folder / path.name
    shutil.copyfile(path, copy)
    with copy.open("rb+") as handle:
        os.fsync(handle.fileno())
    return copy


async def measure(path: Path) -> Figures:
    from tui.app import KompaktApp
    from tui.config.loader import load_settings
    from tui.launch import Launch
    from tui.screens.main import MainScreen

    figures, ticker = Figures(), Ticker()
    started = time.perf_counter()
    first_frame: list[float] = []

    class Timed(KompaktApp):
        async def _after_first_frame(self) -> None:
            first_frame.append(time.perf_counter())
            await super()._after_first_frame()

    from tui.agent.litellm_loader import load_litellm

    load_litellm()  # the offline model answers the prompt through litellm; the app loads it in the background
    app = Timed(
        Launch("open", path, OUT.resolve()),  # the cwd the session names
        load_result=load_settings(None, None, env={}),
        start_background=False,
    )
    ticker.start()
    async with app.run_test(size=SIZE) as pilot:

        async def phase(name: str, begin: float, done: Callable[[], Any]) -> None:
            await until(pilot, done)
            figures.wall[name] = (time.perf_counter() - begin) * 1000
            figures.stall[name] = await ticker.phase_end()

        await phase("first frame", started, lambda: first_frame)
        screen = app.main
        assert isinstance(screen, MainScreen)
        timeline = screen.timeline

        def drawn(path_length: int = 0) -> bool:
            """The timeline (of a path of at least ``path_length``) and the status figures are shown."""
            shown = timeline.timeline
            return (
                shown is not None
                and not timeline.building
                and shown.path_length >= path_length
                and screen.status.context_tokens is not None
            )

        await phase("start-up", first_frame[0], drawn)
        assert screen.agent is not None and timeline.timeline is not None
        store = screen.agent.store
        walls, stalls = [], []
        for turn in range(APPENDS):
            begin = time.perf_counter()
            length, tokens = timeline.timeline.path_length, screen.status.context_tokens
            text = f"appended message {turn}"
            store.append_message(
                {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}
            )
            await until(
                pilot,
                lambda length=length, tokens=tokens: (
                    drawn(length + 1) and screen.status.context_tokens != tokens
                ),
            )
            walls.append((time.perf_counter() - begin) * 1000)
            stalls.append(await ticker.phase_end())
        figures.wall["append"], figures.stall["append"] = statistics.median(walls), max(stalls)
        agent = screen.agent
        count = len(store.entries)
        screen.prompt.focus()
        screen.prompt.text = "hello"
        begin = time.perf_counter()
        await pilot.press("enter")
        await phase(
            "prompt", begin, lambda: len(store.entries) >= count + 2 and not agent.is_busy and drawn()
        )
        timeline.focus()
        begin = time.perf_counter()
        await pilot.press("space")
        await phase("panel", begin, lambda: timeline.expanded and timeline.context_samples())
    ticker.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--baseline", type=int, default=1_000)
    args = parser.parse_args()
    big, small = session_file(args.entries), session_file(args.baseline)
    with tempfile.TemporaryDirectory() as tmp:
        isolate_home(Path(tmp))
        folder = Path(tmp)
        asyncio.run(measure(private_copy(small, folder)))  # warm: imports, page cache
        base = asyncio.run(measure(private_copy(small, folder)))
        figures = asyncio.run(measure(private_copy(big, folder)))
    print(
        f"session: {args.entries:,} entries ({big.stat().st_size / 1e6:.0f} MB); baseline "
        f"{args.baseline:,} entries, same run; ticker every {TICK_S * 1000:.0f} ms"
    )
    print(f"{'phase':<12}{'longest stall ms':>18}{'× baseline':>12}{'done after ms':>16}{'× baseline':>12}")
    for name in figures.wall:
        stall, wall = figures.stall[name], figures.wall[name]
        print(
            f"{name:<12}{stall:>18.0f}{stall / max(base.stall[name], 1):>12.1f}"
            f"{wall:>16.0f}{wall / max(base.wall[name], 1):>12.1f}"
        )
    print("(append: the median time to drawn and the longest stall of the five appends)")


if __name__ == "__main__":
    main()
