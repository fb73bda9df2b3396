"""Stream a long reply into the chat pane at a fixed token rate and print how far rendering lags behind.

A timed producer feeds ~20k tokens (~80 KB of Markdown: paragraphs, lists and code fences) through
``ChatPane.begin_assistant()`` at 2,000 tokens/s inside a headless Textual app, as the agent loop would.
The lag is the time from the last delta being written to the pane having rendered all of it (the
Markdown holds the whole text, its stream is drained and a screen refresh has happened); the target is
under 250 ms. It also reports whether the rendered source equals what was sent, before and after
``finish``. Run ``python -m bench.stream_render [--tokens N] [--rate R]``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from textual.app import App, ComposeResult

from bench.gen_session import WORDS
from widgets.chat_pane import ChatPane
from widgets.chunked_markdown import ChunkedMarkdown


def reply_tokens(count: int, seed: int = 7) -> list[str]:
    """About ``count`` tokens of Markdown, each a word with its leading space or a piece of syntax."""
    rng = random.Random(seed)
    tokens: list[str] = []
    while len(tokens) < count:
        kind = rng.random()
        if kind < 0.6:
            tokens += [f" {rng.choice(WORDS)}" for _ in range(rng.randint(30, 90))] + [".\n\n"]
        elif kind < 0.8:
            for _ in range(rng.randint(2, 6)):
                tokens += ["- "] + [f"{rng.choice(WORDS)} " for _ in range(rng.randint(3, 10))] + ["\n"]
            tokens.append("\n")
        else:
            tokens += ["```", "python", "\n"]
            for _ in range(rng.randint(3, 15)):
                tokens += ["    ", rng.choice(WORDS), " = ", rng.choice(WORDS), "(", "x", ")", "\n"]
            tokens += ["```", "\n\n"]
    return tokens[:count]


class BenchApp(App):
    def compose(self) -> ComposeResult:
        yield ChatPane()


async def next_refresh(app: App) -> None:
    done = asyncio.Event()
    app.call_after_refresh(done.set)
    await done.wait()


async def run(count: int, rate: float) -> None:
    tokens = reply_tokens(count)
    sent = "".join(tokens)
    app = BenchApp()
    async with app.run_test(size=(120, 40)):
        pane = app.query_one(ChatPane)
        stream = pane.begin_assistant()
        start = time.perf_counter()
        written = 0
        while written < len(tokens):
            due = min(len(tokens), int((time.perf_counter() - start) * rate) + 1)
            for token in tokens[written:due]:
                await stream.append_text(token)
            written = due
            await asyncio.sleep(0.001)
        last_write = time.perf_counter()
        markdown = stream.widget.query_one(ChunkedMarkdown)
        while markdown.source != sent:
            await asyncio.sleep(0.001)
        await markdown.rendered()  # the last append has parsed and mounted its blocks
        await next_refresh(app)
        lag = time.perf_counter() - last_write
        streamed_ok = markdown.source == sent
        final = {"role": "assistant", "content": [{"type": "text", "text": sent}], "stopReason": "stop"}
        finish_start = time.perf_counter()
        await stream.finish(final)
        await next_refresh(app)
        finish_time = time.perf_counter() - finish_start
        final_ok = stream.widget.query_one(ChunkedMarkdown).source == sent
        folded = len(markdown.folds)
        chunks = len(markdown.chunks) + folded
    duration = last_write - start
    print(f"tokens:            {len(tokens):,} ({len(sent.encode()):,} bytes)")
    print(f"producer:          {duration:.2f} s ({len(tokens) / duration:,.0f} tok/s, target {rate:,.0f})")
    print(f"lag at the end:    {lag * 1000:.0f} ms (target < 250 ms)")
    print(f"finish():          {finish_time * 1000:.0f} ms")
    print(f"identical text:    streamed {streamed_ok}, after finish {final_ok}")
    print(f"markdown chunks:   {chunks} ({folded} folded off-screen)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--rate", type=float, default=2000.0)
    args = parser.parse_args()
    asyncio.run(run(args.tokens, args.rate))


if __name__ == "__main__":
    main()
