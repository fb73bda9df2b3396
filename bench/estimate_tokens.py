"""How long estimating one million tokens of messages takes (target: under 50 ms).

Builds a realistic message mix (user prompts, assistant replies with tool calls and thinking,
large tool outputs, a little non-ASCII text) adding up to about 1M estimated tokens, then times
``estimate_tokens`` over all of it and ``estimate_context_tokens`` on the list. Prints figures only.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui.compaction.tokens import estimate_context_tokens, estimate_tokens

TARGET_TOKENS = 1_000_000


def build_messages(min_words: int, max_words: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "def", "return", "import", "naïve", "données", "日本語"]
    messages: list[dict] = []
    total = 0
    n = 0
    while total < TARGET_TOKENS:
        text = " ".join(rng.choice(words) for _ in range(rng.randint(min_words, max_words)))
        kind = n % 4
        if kind == 0:
            msg = {"role": "user", "content": [{"type": "text", "text": text}]}
        elif kind == 1:
            msg = {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": text[:300]},
                    {"type": "text", "text": text},
                    {
                        "type": "toolCall",
                        "id": f"c{n}",
                        "name": "bash",
                        "arguments": {"command": f"grep -rn {text[:40]!r} src/", "timeout": 30},
                    },
                ],
                "stopReason": "toolUse",
                "usage": {
                    "input": total,
                    "output": 50,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": total + 50,
                },
            }
        else:
            output = "\n".join(
                f"src/mod_{i}.py:{i}: {text[:80]}" for i in range(rng.randint(1, max(2, max_words // 4)))
            )
            msg = {
                "role": "toolResult",
                "toolCallId": f"c{n}",
                "toolName": "bash",
                "content": [{"type": "text", "text": output}],
                "isError": False,
            }
        messages.append(msg)
        total += estimate_tokens(msg)
        n += 1
    return messages


def measure(label: str, messages: list[dict]) -> None:
    tokens = sum(estimate_tokens(m) for m in messages)
    runs = []
    for _ in range(15):
        began = time.perf_counter()
        sum(estimate_tokens(m) for m in messages)
        runs.append((time.perf_counter() - began) * 1000)
    no_usage = [m for m in messages if m["role"] != "assistant"]
    context_runs = []
    for _ in range(15):
        began = time.perf_counter()
        estimate_context_tokens(no_usage)
        context_runs.append((time.perf_counter() - began) * 1000)
    print(f"{label}: {len(messages):,} messages, {tokens:,} estimated tokens")
    print(
        f"  estimate_tokens over all: median {statistics.median(runs):.1f} ms, best {min(runs):.1f} ms"
        " (target < 50 ms)"
    )
    print(
        f"  estimate_context_tokens, no usage (every message estimated): "
        f"median {statistics.median(context_runs):.1f} ms"
    )


def main() -> None:
    measure("large messages", build_messages(20, 400))
    measure("pi-fixture density (~140 tokens a message)", build_messages(8, 70))
    measure("stress: tiny messages (~27 tokens a message)", build_messages(2, 12))


if __name__ == "__main__":
    main()
