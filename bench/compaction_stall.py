"""Benchmark: how long a compaction blocks the event loop at most, on a 100k-entry session.

A 10 ms ticker runs on the loop while ``compact_session`` compacts a private copy of the session with the
deterministic summary (no model); its longest gap is how long a key or a repaint waited at worst. The plan,
the summary and the figures walk the whole path; they run on a thread, so what is left on the loop is the
write and the bookkeeping. The same run on a 1k-entry session is the baseline. The context the store keeps
is built before the clock starts, as the app has it by then; the first look at the context after the
compaction (the status bar's, the next turn's) is timed on its own and is part of the stall. A ratio takes
1 ms as the least baseline (the 1k session's look takes a tenth of that).

Run ``python -m bench.compaction_stall [--entries 100000] [--baseline 1000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from bench.session_big import TICK_S, private_copy, session_file


async def measure(path: Path) -> tuple[float, float, float, str]:
    """(longest stall ms, wall ms, context-after ms, outcome) of one compaction of ``path``."""
    from tui.compaction.engine import compact_session
    from tui.config import Settings
    from tui.session.store import SessionStore

    store = SessionStore.open(path)
    store.branch_context()
    longest, stop = 0.0, False

    async def tick() -> None:
        nonlocal longest
        while not stop:
            started = time.perf_counter()
            await asyncio.sleep(TICK_S)
            longest = max(longest, time.perf_counter() - started - TICK_S)

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(TICK_S * 3)
    longest = 0.0
    begin = time.perf_counter()
    result = await compact_session(
        store,
        reason="manual",
        settings=Settings(),
        summarize=None,
        context_window=128_000,
        max_output_tokens=16_000,
    )
    wall = time.perf_counter() - begin
    begin = time.perf_counter()
    store.branch_context()
    after = time.perf_counter() - begin
    await asyncio.sleep(TICK_S * 3)
    stop = True
    await ticker
    store.close()
    return longest * 1000, wall * 1000, after * 1000, type(result).__name__


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--baseline", type=int, default=1_000)
    args = parser.parse_args()
    big, small = session_file(args.entries), session_file(args.baseline)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        asyncio.run(measure(private_copy(small, folder)))  # warm: imports, page cache
        base = asyncio.run(measure(private_copy(small, folder)))
        figures = asyncio.run(measure(private_copy(big, folder)))
    print(
        f"compaction of {args.entries:,} entries against {args.baseline:,}, same run (deterministic summary)"
    )
    print(f"{'':<10}{'longest stall ms':>18}{'wall ms':>10}{'context after ms':>18}  outcome")
    for name, (stall, wall, after, outcome) in (("baseline", base), ("session", figures)):
        print(f"{name:<10}{stall:>18.0f}{wall:>10.0f}{after:>18.1f}  {outcome}")
    ratios = (figures[i] / max(base[i], 1) for i in range(3))
    print("ratio     {:>18.1f}{:>10.1f}{:>18.1f}".format(*ratios))


if __name__ == "__main__":
    main()
