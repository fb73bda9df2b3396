"""Benchmark: open a 10k-entry (~35 MB) session, build its context and plan a compaction.

Prints kompakt's median time and peak RSS, and the ratio against baselines measured in the same run:
pi 0.73.1 itself (Node) when ``KOMPAKT_PI_DIR`` points at a directory where
``npm install @mariozechner/pi-coding-agent@0.73.1`` was run, and always a plain-Python floor
(``json.loads`` of every line, nothing else). Target: ≤ 0.5× pi; RSS < 4× the file size.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.gen_session import generate

OUT = Path(__file__).parent / "out"
RUNS = 7


def session_file() -> Path:
    path = OUT / "bench-10k.jsonl"
    if not path.exists():
        generate(path, entries=10_000, seed=1)
    return path


def kompakt_once(path: Path) -> tuple[float, dict]:
    from tui.compaction.plan import prepare_compaction
    from tui.session.store import SessionStore

    start = time.perf_counter()
    store = SessionStore.open(path, read_only=True)
    context = store.build_context()
    plan = prepare_compaction(store.get_branch())
    elapsed = time.perf_counter() - start
    info = {"messages": len(context.messages), "firstKept": getattr(plan, "first_kept_entry_id", None)}
    store.close()
    return elapsed, info


def stdlib_floor_once(path: Path) -> float:
    start = time.perf_counter()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            json.loads(line)
    return time.perf_counter() - start


def peak_rss_mb(path: Path) -> float:
    """Peak RSS (VmHWM, KiB) of fresh processes: open + context + plan once, and the imports alone.

    ru_maxrss is not used: on Linux it carries the parent's peak across fork + exec.
    """
    hwm = "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))"
    code = (
        "import sys; from pathlib import Path; from bench.session_open import kompakt_once; "
        f"kompakt_once(Path(sys.argv[1])); {hwm}"
    )
    base = f"import tui.session.store, tui.compaction.plan; {hwm}"
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    with_file = int(subprocess.check_output([sys.executable, "-c", code, str(path)], env=env, cwd=root))
    without = int(subprocess.check_output([sys.executable, "-c", base], env=env, cwd=root))
    return with_file / 1024, without / 1024


def pi_baseline(path: Path) -> tuple[float, dict] | None:
    pi_dir = os.environ.get("KOMPAKT_PI_DIR")
    if not pi_dir or not shutil.which("node"):
        return None
    script = Path(__file__).with_name("pi_baseline.mjs")
    result = subprocess.run(
        ["node", str(script), str(path), str(RUNS)],
        capture_output=True,
        text=True,
        env={**os.environ, "KOMPAKT_PI_DIR": pi_dir},
        check=True,
    )
    return json.loads(result.stdout)["median_ms"] / 1000, json.loads(result.stderr.strip().splitlines()[-1])


def main() -> None:
    path = session_file()
    size_mb = path.stat().st_size / 1e6
    entries = path.read_bytes().count(b"\n") - 1
    print(f"session: {path} ({size_mb:.1f} MB, {entries} entries)")
    kompakt_once(path)  # warm the page cache and imports
    times, info = [], {}
    for _ in range(RUNS):
        elapsed, info = kompakt_once(path)
        times.append(elapsed)
    ours = statistics.median(times)
    floor = statistics.median(stdlib_floor_once(path) for _ in range(3))
    print(
        f"kompakt open+context+plan: median {ours * 1000:.0f} ms (min {min(times) * 1000:.0f} ms) "
        f"→ {info['messages']} messages, firstKeptEntryId {info['firstKept']}"
    )
    print(f"stdlib json.loads floor:   median {floor * 1000:.0f} ms; kompakt/floor = {ours / floor:.2f}×")
    pi = pi_baseline(path)
    if pi is None:
        print("pi baseline: skipped (set KOMPAKT_PI_DIR to a dir with @mariozechner/pi-coding-agent@0.73.1)")
    else:
        pi_time, pi_info = pi
        same = "same" if pi_info.get("firstKept") == info["firstKept"] else "DIFFERENT"
        print(
            f"pi 0.73.1 (node):          median {pi_time * 1000:.0f} ms → {pi_info['messages']} messages, "
            f"{same} firstKeptEntryId; kompakt/pi = {ours / pi_time:.2f}× (target ≤ 0.50×)"
        )
    rss, base = peak_rss_mb(path)
    print(
        f"peak RSS: {rss:.0f} MB ({base:.0f} MB interpreter + imports); "
        f"session data {rss - base:.0f} MB = {(rss - base) / size_mb:.2f}× file size, "
        f"total {rss / size_mb:.2f}× (target < 4×)"
    )


if __name__ == "__main__":
    main()
