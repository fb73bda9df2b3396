"""What the Pilot benchmarks share: a generated session opened in the real app, timed steps, the report lines.

``bench_main`` makes a temporary home (kompakt's home, config and pi directories, no model: the offline
one) and a generated session (bench/gen_session.py), then runs the benchmark's coroutine on it;
``opened_main`` opens that session in the app and answers the missing-cwd question the generated
session asks; ``timed`` measures one step from its start to a condition, wall and CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bench.gen_session import generate

SIZE = (160, 50)
Timing = tuple[float, float]  # wall ms, CPU ms


async def until(pilot: Any, predicate: Callable[[], Any]) -> None:
    deadline = time.monotonic() + 120
    while not predicate():
        assert time.monotonic() < deadline, f"the app never got there ({predicate.__code__.co_firstlineno})"
        await pilot.pause(0.005)


async def timed(pilot: Any, start: Callable[[], Any], done: Callable[[], Any]) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    result = start()
    if asyncio.iscoroutine(result):
        await result
    await until(pilot, done)
    await pilot.pause()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


@asynccontextmanager
async def opened_main(path: Path) -> AsyncIterator[tuple[Any, Any, Any]]:
    """The app on ``path``, its main screen ready (agent and timeline there): app, pilot, screen."""
    from tui.app import KompaktApp
    from tui.config.loader import load_settings
    from tui.launch import Launch
    from tui.screens.dialogs import ConfirmDialog
    from tui.screens.main import MainScreen

    app = KompaktApp(
        Launch("open", path, path.parent),
        load_result=load_settings(None, None, env={}),
        start_background=False,
    )
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: any(isinstance(s, MainScreen) for s in app.screen_stack))
        screen = next(s for s in app.screen_stack if isinstance(s, MainScreen))
        await until(pilot, lambda: screen.agent is not None and screen.timeline.timeline is not None)
        await pilot.pause(0.2)
        if isinstance(app.screen, ConfirmDialog):  # the generated session's cwd does not exist here
            await pilot.press("y")
            await until(pilot, lambda: app.screen is screen)
        yield app, pilot, screen


async def open_tree_pane(pilot: Any, screen: Any) -> Timing:
    """F2 until the tree pane has its rows and focus, then F2 again to close it; the opening's timing."""
    timing = await timed(
        pilot,
        lambda: pilot.press("f2"),
        lambda: screen.tree_pane.view.selector is not None and screen.tree_pane.view.has_focus,
    )
    await pilot.press("f2")
    await until(pilot, lambda: not screen.tree_pane.display)
    return timing


def report(name: str, data: list[Timing]) -> None:
    """One line: the first round, then the median of the others (warm)."""
    first, rest = data[0], data[1:] or data
    print(
        f"{name:<16} first {first[0]:7.1f} ms wall {first[1]:7.1f} ms cpu   "
        f"then median {statistics.median(w for w, _ in rest):7.1f} ms wall "
        f"{statistics.median(c for _, c in rest):7.1f} ms cpu"
    )


def isolate_home(root: Path) -> Path:
    """Point kompakt's home, config and pi sessions into ``root`` (no user file reaches the bench); ``root``."""
    for name in ("KOMPAKT_HOME", "KOMPAKT_CONFIG_DIR", "KOMPAKT_PI_SESSIONS"):
        os.environ[name] = str(root / name.lower())
    (root / "kompakt_config_dir").mkdir()
    return root


def bench_main(doc: str | None, run: Callable[[Path, int], Coroutine[Any, Any, None]]) -> None:
    """Parse ``--entries`` and ``--rounds``, make the home and the session, run ``run(path, rounds)``."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = isolate_home(Path(tmp))
        path = generate(root / "bench.jsonl", entries=args.entries)
        print(f"session: {args.entries} entries, {path.stat().st_size / 1e6:.0f} MB")
        asyncio.run(run(path, args.rounds))
