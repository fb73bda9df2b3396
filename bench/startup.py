"""Benchmark: time from process start to the first interactive frame.

Compares kompakt (an empty new session, and the 10k-entry bench session) with a bare Textual app that
mounts an Input and a Footer, measured the same way in the same run: the parent notes the wall clock
before spawning, the child prints the wall clock when its first frame has been drawn
(``call_after_refresh`` after mount), and exits. Interpreter start-up and imports are included for
both. Targets: empty session ≤ 1.6× the bare app; 10k-entry session ≤ 2.5× the bare app (issue 13:
as a ratio, since no machine here holds an absolute 1.0 s steadily).

``--baseline DIR`` also times another checkout (say a copy of main: ``git archive main | tar -x -C DIR``)
in the same runs, interleaved case by case with this one, so that a change is compared under the same
load. Run ``python -m bench.startup [--runs N] [--baseline DIR]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 9
ROOT = Path(__file__).resolve().parents[1]

BARE = """
import sys, time
from textual.app import App
from textual.widgets import Footer, Input
class Bare(App):
    def compose(self):
        yield Input()
        yield Footer()
    def on_mount(self):
        self.call_after_refresh(self.first_frame)
    def first_frame(self):
        print(time.time(), time.process_time(), "Screen", flush=True)
        self.exit()
Bare().run(headless=True, size=(120, 40))
"""

KOMPAKT = """
import sys, time
from pathlib import Path
from tui.app import KompaktApp
from tui.launch import Launch
class Timed(KompaktApp):
    def _after_first_frame(self):
        print(time.time(), time.process_time(), type(self.screen).__name__, flush=True)
        self.exit()
mode, path = sys.argv[1], (Path(sys.argv[2]) if len(sys.argv) > 2 else None)
Timed(Launch(mode, path)).run(headless=True, size=(120, 40))
"""


Case = tuple[Path, str, tuple[str, ...]]  # the checkout, the child's code, its arguments


def first_frame_seconds(case: Case, env: dict[str, str]) -> tuple[float, float]:
    """The wall time from the spawn to the first frame, and the child's CPU time until then. The child
    runs in the project directory (``$KOMPAKT_HOME/project``) that the 10k session's header names, as a
    user who reopens a session there would: the first frame is then the main screen with the chat, not
    the dialog about a missing or other working directory."""
    root, code, args = case
    # A real file, not -c: Textual resolves an app's CSS_PATH from the file its class is defined in.
    script = Path(env["KOMPAKT_HOME"]) / f"child_{abs(hash(code))}.py"
    script.write_text(code)
    start = time.time()
    out = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(root)},
        cwd=Path(env["KOMPAKT_HOME"]) / "project",
        check=True,
        timeout=120,
    )
    wall, cpu, screen = out.stdout.strip().splitlines()[-1].split()
    if screen not in ("Screen", "MainScreen"):  # a dialog came first: not the case this bench measures
        raise SystemExit(f"{' '.join(args)}: the first frame shows {screen}, not the main screen")
    return float(wall) - start, float(cpu)


def measure(cases: list[Case], env: dict[str, str], runs: int) -> list[list[tuple[float, float]]]:
    """Times of each case, interleaved run by run so that a burst of noise on this machine lands on all
    of them rather than on one."""
    for case in cases:
        first_frame_seconds(case, env)  # warm the page cache (and write the bytecode)
    times: list[list[tuple[float, float]]] = [[] for _ in cases]
    for _ in range(runs):
        for case_times, case in zip(times, cases, strict=True):
            case_times.append(first_frame_seconds(case, env))
    return times


Clock = tuple[float, float]  # the medians of the wall and CPU times


def report(
    name: str, times: list[tuple[float, float]], bare: Clock | None = None, target: float = 0
) -> Clock:
    """One line: the wall median (and min), its ratio to the bare app's, and the same for the CPU time
    (which the load of the machine sways less; the goal is the wall ratio)."""
    wall = statistics.median(w for w, _ in times)
    cpu = statistics.median(c for _, c in times)
    line = f"{name:<36} median {wall * 1000:.0f} ms (min {min(w for w, _ in times) * 1000:.0f})"
    if bare is not None:
        line += f" = {wall / bare[0]:.2f}× bare (target ≤ {target:.2f}×); cpu {cpu / bare[1]:.2f}×"
    else:
        line += f", cpu {cpu * 1000:.0f} ms"
    print(line)
    return wall, cpu


def main() -> None:
    from bench.gen_session import generate

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--baseline", type=Path, help="another checkout, timed in the same runs")
    options = parser.parse_args()
    roots = [("", ROOT)] + ([("baseline ", options.baseline.resolve())] if options.baseline else [])
    with tempfile.TemporaryDirectory() as home:
        # Bytecode caching on, as on a user's machine (this workplace sets PYTHONDONTWRITEBYTECODE, which
        # would make every run compile kompakt from source while textual's bytecode was compiled by pip).
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env = {
            **base,
            "KOMPAKT_HOME": home,
            "KOMPAKT_CONFIG_DIR": str(Path(home) / "config"),
            "KOMPAKT_PI_SESSIONS": str(Path(home) / "pi"),
        }
        project = Path(home, "project").resolve()
        project.mkdir()
        big = generate(Path(home) / "bench-10k.jsonl", entries=10_000, seed=1, cwd=str(project))
        cases: list[Case] = [(ROOT, BARE, ())]
        for _, root in roots:
            cases += [(root, KOMPAKT, ("new",)), (root, KOMPAKT, ("open", str(big)))]
        times = measure(cases, env, options.runs)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    bare = report("bare Textual app (Input + Footer):", times[0])
    for index, (label, _) in enumerate(roots):
        report(f"{label}kompakt, new empty session:", times[1 + 2 * index], bare, 1.6)
        report(f"{label}kompakt, 10k-entry session:", times[2 + 2 * index], bare, 2.5)


if __name__ == "__main__":
    main()
