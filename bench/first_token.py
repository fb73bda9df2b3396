"""How long the first token takes from the loopback server's socket to the provider's consumer (target ≤ 5 ms).

The fake OpenAI server runs on its own thread and event loop, like a remote server would, and records
the moment it wrote each SSE chunk. The client side streams through ``Provider.stream`` (litellm's real
code path) and records the moment the first :class:`TextDelta` reaches it; the difference is the
latency the UI callback would see. The same is measured for a bare ``litellm.acompletion`` loop, to
show what the provider layer adds. litellm is imported before timing starts. Prints figures only.
Run ``python -m bench.first_token [--runs N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fake_openai import FakeOpenAI, Reply
from tui.agent.litellm_loader import load_litellm
from tui.agent.provider import Provider
from tui.agent.retry import RetryPolicy
from tui.agent.stream_events import TextDelta

MODEL = "openai/bench"
# The first content chunk leaves after this pause, so the client is already waiting on the socket.
FIRST_TOKEN_PAUSE_S = 0.02
REPLY = Reply.text_reply(
    "Streaming tokens to the screen as fast as they arrive. " * 4, delay=FIRST_TOKEN_PAUSE_S
)


def start_server_thread() -> tuple[FakeOpenAI, asyncio.AbstractEventLoop]:
    ready: Future[FakeOpenAI] = Future()
    loop = asyncio.new_event_loop()

    def run() -> None:
        asyncio.set_event_loop(loop)
        server = FakeOpenAI(default=REPLY)
        loop.run_until_complete(server.start())
        ready.set_result(server)
        loop.run_forever()

    threading.Thread(target=run, name="fake-openai", daemon=True).start()
    return ready.result(timeout=30), loop


def first_content_sent(server: FakeOpenAI) -> float:
    # Chunk 0 is the role chunk with empty content; chunk 1 carries the first token.
    return server.hits[-1].chunk_times[1]


async def provider_latency(provider: Provider, server: FakeOpenAI) -> float:
    received = 0.0
    async for event in provider.stream([{"role": "user", "content": "go"}], model=MODEL):
        if isinstance(event, TextDelta) and not received:
            received = time.perf_counter()
    return received - first_content_sent(server)


async def litellm_latency(server: FakeOpenAI) -> float:
    litellm = load_litellm()
    received = 0.0
    response = await litellm.acompletion(
        model=MODEL,
        api_base=server.api_base,
        api_key="x",
        messages=[{"role": "user", "content": "go"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    async for chunk in response:
        if chunk.choices and chunk.choices[0].delta.content and not received:
            received = time.perf_counter()
    return received - first_content_sent(server)


def describe(name: str, samples_s: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples_s)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return (
        f"{name:<22} median {statistics.median(ms):6.2f} ms   p95 {p95:6.2f} ms   "
        f"min {ms[0]:6.2f} ms   max {ms[-1]:6.2f} ms   (n={len(ms)})"
    )


async def main(runs: int) -> None:
    started = time.perf_counter()
    load_litellm()
    print(f"litellm import: {time.perf_counter() - started:.2f} s (not part of the figures)")
    server, loop = start_server_thread()
    provider = Provider(
        models={MODEL: {"apiBase": server.api_base}}, env={}, retry=RetryPolicy(enabled=False)
    )
    for _ in range(3):  # warm-up: connection pool, first-call caches
        await provider_latency(provider, server)
        await litellm_latency(server)
    via_provider = [await provider_latency(provider, server) for _ in range(runs)]
    via_litellm = [await litellm_latency(server) for _ in range(runs)]
    print("delay from the server writing the first token to the consumer receiving it:")
    print(describe("Provider.stream", via_provider))
    print(describe("bare litellm loop", via_litellm))
    added = statistics.median(via_provider) - statistics.median(via_litellm)
    print(f"provider layer adds (median): {added * 1000:+.2f} ms; target for Provider.stream: median <= 5 ms")
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(timeout=30)
    loop.call_soon_threadsafe(loop.stop)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    asyncio.run(main(parser.parse_args().runs))
