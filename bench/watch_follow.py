"""``kompakt watch`` against a writer appending 3,000 entries in 9 seconds: does the screen keep up?

A child process appends user/assistant messages at a steady pace (``--entries`` over ``--seconds``);
the real app in watch mode (headless) follows the file. Printed: the writer's duration (the baseline,
measured in the same run), when the app had shown the last entry, the lag after the writer's end and
the ratio of the app's catch-up time to the writer's duration (1.0 = kept up exactly), plus how many
screen updates the app made (batched: far fewer than entries). Run ``python -m bench.watch_follow``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WRITER = r"""
import sys, time
from tui.session.store import SessionStore
path, count, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
store = SessionStore.open(path, fsync="batch")
start = time.time()
print(start, flush=True)
for i in range(count):
    due = start + seconds * i / count
    if (wait := due - time.time()) > 0:
        time.sleep(wait)
    role = "user" if i % 2 == 0 else "assistant"
    content = [{"type": "text", "text": f"message {i} " + "words " * 20}]
    message = {"role": role, "content": content, "timestamp": i}
    if role == "assistant":
        message |= {"provider": "openai", "model": "m", "stopReason": "stop",
                    "usage": {"input": i, "output": 20, "totalTokens": i + 20}}
    store.append_message(message)
store.close()
print(time.time(), flush=True)
"""


async def follow(path: Path, count: int, seconds: float) -> dict[str, float]:
    from tui.app import KompaktApp
    from tui.launch import Launch
    from tui.screens.main import MainScreen

    updates = 0
    shown_at: float | None = None
    app = KompaktApp(Launch("watch", path), start_background=False)
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        while not (app.screen_stack and isinstance(app.screen_stack[-1], MainScreen)):
            await pilot.pause(0.05)
        screen = app.screen_stack[-1]
        original = screen._followed

        async def counted(result: object) -> None:
            nonlocal updates, shown_at
            await original(result)
            updates += 1
            if len(screen.app.session.store.entries) >= count:
                shown_at = shown_at or time.time()

        screen._followed = counted  # type: ignore[method-assign]
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(count), str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        guard = time.time() + seconds * 20 + 60
        while shown_at is None and time.time() < guard:
            await pilot.pause(0.05)
        out, _ = writer.communicate(timeout=60)
    start, end = (float(x) for x in out.split())
    if shown_at is None:
        raise SystemExit(f"the app did not catch up within {guard - start:.0f} s")
    return {"writer_s": end - start, "shown_s": shown_at - start, "updates": updates}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=3000)
    parser.add_argument("--seconds", type=float, default=9.0)
    args = parser.parse_args()
    from tui.session.store import SessionStore

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KOMPAKT_HOME"] = str(Path(tmp) / "home")
        os.environ["KOMPAKT_CONFIG_DIR"] = str(Path(tmp) / "config")
        path = Path(tmp) / "watched.jsonl"
        SessionStore.create(path).close()
        result = asyncio.run(follow(path, args.entries, args.seconds))
    lag = result["shown_s"] - result["writer_s"]
    print(f"writer: {args.entries:,} entries in {result['writer_s']:.2f} s (baseline)")
    print(f"app showed the last entry at {result['shown_s']:.2f} s: lag {lag:.2f} s after the writer ended")
    print(
        f"catch-up / writer: {result['shown_s'] / result['writer_s']:.2f}x; screen updates: {result['updates']}"
    )


if __name__ == "__main__":
    main()
