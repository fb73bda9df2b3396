"""Benchmark: the time from F5 to the settings screen's first frame, against a bare screen pushed the same way.

The real app opens a session (the demo, or a generated one: bench/gen_session.py) with kompakt's home,
config and pi directories in a temporary folder and no model (the offline one). Each round pushes a bare
modal screen (a label and the footer: what any screen costs) and then presses F5, each timed from the push
to its first whole frame reaching the terminal (the app's ``_display``, patched here, so the script
measures an older checkout as well), and closes both again. The rounds interleave the two, so the load of
the machine falls on both alike. It prints the medians and the ratio F5 / bare screen; ``--full`` also
waits until every row of the form is mounted and the what-if preview has its timeline.
Run ``python -m bench.settings_open [--entries N | --demo] [--rounds N] [--full]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

from bench.gen_session import generate
from bench.pilot_session import isolate_home, opened_main, until

Clock = tuple[float, float]  # perf_counter(), process_time()


def now() -> Clock:
    return time.perf_counter(), time.process_time()


def frame_clock(app: Any) -> dict[Any, Clock]:
    """Record when each screen's first whole frame reached the terminal: ``{screen: (wall, cpu)}``."""
    from textual._compositor import LayoutUpdate

    shown: dict[Any, Clock] = {}
    display = app._display

    def timed_display(screen: Any, renderable: Any) -> None:
        display(screen, renderable)
        if isinstance(renderable, LayoutUpdate) and screen not in shown:
            shown[screen] = now()

    app._display = timed_display
    return shown


def bare_screen() -> Any:
    from textual.screen import ModalScreen
    from textual.widgets import Label

    from widgets.footer import KompaktFooter

    class Bare(ModalScreen[None]):
        BINDINGS: ClassVar = [("escape", "dismiss", "Close")]

        def compose(self) -> Any:
            yield Label("bare screen")
            yield KompaktFooter()

    return Bare()


def form_complete(screen: Any) -> bool:
    """Every row mounted and the preview filled (on any checkout: no new API needed)."""
    from tui.config import field_docs
    from widgets.settings_form import SettingRow
    from widgets.timeline import CompactionTimeline

    rows = len(screen.query(SettingRow)) == len(field_docs())
    previews = screen.query(CompactionTimeline)
    return rows and all(p.timeline is not None for p in previews)


async def run(path: Path, rounds: int, full: bool) -> None:
    from tui.screens.settings_screen import SettingsScreen

    async with opened_main(path) as (app, pilot, main):
        shown = frame_clock(app)
        bare: list[Clock] = []
        settings: list[Clock] = []
        complete: list[Clock] = []
        for _ in range(rounds):
            start = now()
            bare_one = bare_screen()
            app.push_screen(bare_one)
            await until(pilot, lambda bare_one=bare_one: bare_one in shown)
            bare.append(since(start, shown[bare_one]))
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is main)

            start = now()
            await pilot.press("f5")
            await until(pilot, lambda: isinstance(app.screen, SettingsScreen) and app.screen in shown)
            settings.append(since(start, shown[app.screen]))
            if full:
                await until(pilot, lambda: form_complete(app.screen))
                complete.append(since(start, now()))
            await until(pilot, lambda: app.screen.focused is not None)
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is main)
    report("bare screen, first frame", bare)
    report("F5, first frame", settings)
    if complete:
        report("F5, every row + preview", complete)
    wall = statistics.median(w for w, _ in settings) / statistics.median(w for w, _ in bare)
    cpu = statistics.median(c for _, c in settings) / statistics.median(c for _, c in bare)
    print(
        f"ratio F5 first frame / bare screen: {wall:.2f} wall, {cpu:.2f} cpu "
        f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)"
    )


def since(start: Clock, end: Clock) -> Clock:
    return (end[0] - start[0]) * 1000, (end[1] - start[1]) * 1000


def report(name: str, data: list[Clock]) -> None:
    walls, cpus = [w for w, _ in data], [c for _, c in data]
    print(
        f"{name:<26} median {statistics.median(walls):7.1f} ms wall (min {min(walls):7.1f}, max "
        f"{max(walls):7.1f}), {statistics.median(cpus):7.1f} ms cpu"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--demo", action="store_true", help="the bundled demo session instead")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--full", action="store_true", help="also time until every row and the preview")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = isolate_home(Path(tmp))
        if args.demo:
            from tui.demo import build_demo

            path = build_demo(root / "demo.jsonl", cwd=str(root))
        else:
            path = generate(root / "bench.jsonl", entries=args.entries, cwd=str(root))
        print(f"session: {path.name}, {path.stat().st_size / 1e6:.1f} MB")
        asyncio.run(run(path, args.rounds, args.full))


if __name__ == "__main__":
    main()
