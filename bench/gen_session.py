"""Generate realistic pi-format sessions: tool calls, large outputs, branches, compactions, summaries.

Deterministic for a seed. Used by the benchmarks (a 10k-entry, ~30 MB file), the tests and the demo.
Run ``python -m bench.gen_session OUT.jsonl --entries 10000`` to write one.
"""

from __future__ import annotations

import argparse
import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

WORDS = [
    "the",
    "parser",
    "cache",
    "token",
    "budget",
    "branch",
    "compaction",
    "summary",
    "context",
    "window",
    "leaf",
    "tree",
    "entry",
    "file",
    "test",
    "refactor",
    "module",
    "function",
    "error",
    "retry",
    "stream",
    "model",
    "tool",
    "output",
    "path",
    "settings",
    "widget",
    "layout",
]
FILES = [
    "src/app.py",
    "src/tree.py",
    "src/store.py",
    "tests/test_store.py",
    "README.md",
    "src/compaction.py",
    "src/widgets/timeline.py",
    "pyproject.toml",
]


class _Writer:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[bytes] = []
        self.clock = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
        self.ids: set[str] = set()
        self.leaf: str | None = None
        self.path: list[dict[str, Any]] = []  # the active path, for compactions
        self.count = 0

    def _ts(self) -> tuple[str, int]:
        self.clock += timedelta(seconds=self.rng.randint(1, 40))
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z"), int(
            self.clock.timestamp() * 1000
        )

    def new_id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def add(self, fields: dict[str, Any]) -> dict[str, Any]:
        iso, _ = self._ts()
        entry = {
            "type": fields.pop("type"),
            "id": self.new_id(),
            "parentId": self.leaf,
            "timestamp": iso,
            **fields,
        }
        self.lines.append(orjson.dumps(entry))
        self.leaf = entry["id"]
        self.path.append(entry)
        self.count += 1
        return entry

    def message(self, message: dict[str, Any]) -> dict[str, Any]:
        _, ms = self._ts()
        message.setdefault("timestamp", ms)
        return self.add({"type": "message", "message": message})


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _code(rng: random.Random, lines: int) -> str:
    return "\n".join(
        f"{i:4d}  def {rng.choice(WORDS)}_{i}(x):  # {_words(rng, 6)}" for i in range(1, lines + 1)
    )


def generate(
    path: Path,
    entries: int = 10_000,
    seed: int = 1,
    big_output_lines: int = 120,
    model: tuple[str, str] = ("anthropic", "claude-sonnet-4-5"),
    cwd: str = "/home/user/project",
) -> Path:
    """Write a session of about ``entries`` entries to ``path`` and return it. ``cwd`` is the directory
    its header records (the default does not exist on most machines, so kompakt asks about it)."""
    rng = random.Random(seed)
    w = _Writer(rng)
    header = {
        "type": "session",
        "version": 3,
        "id": str(uuid.UUID(int=rng.getrandbits(128))),
        "timestamp": "2026-11-01T09:00:00.000Z",
        "cwd": cwd,
    }
    w.add({"type": "model_change", "provider": model[0], "modelId": model[1]})
    w.add({"type": "session_info", "name": "Synthetic session"})
    context_tokens = 2_000
    call_no = 0
    turn = 0
    while w.count < entries:
        turn += 1
        user = w.message(
            {"role": "user", "content": [{"type": "text", "text": f"Turn {turn}: {_words(rng, 30)}"}]}
        )
        if turn % 37 == 0:
            w.add({"type": "label", "targetId": user["id"], "label": f"checkpoint {turn // 37}"})
        for _ in range(rng.randint(1, 4)):
            call_no += 1
            tool = rng.choice(["read", "bash", "edit", "read", "bash"])
            target = rng.choice(FILES)
            args: dict[str, Any] = {"path": target}
            if tool == "bash":
                args = {"command": f"pytest -q {target} -k {rng.choice(WORDS)}"}
            elif tool == "edit":
                args = {"path": target, "oldText": _words(rng, 8), "newText": _words(rng, 10)}
            call_id = f"call_{call_no}"
            context_tokens += 60 + len(str(args)) // 4
            w.message(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": _words(rng, rng.randint(5, 40))}
                        if rng.random() < 0.4
                        else {"type": "thinking", "thinking": _words(rng, 20)},
                        {"type": "toolCall", "id": call_id, "name": tool, "arguments": args},
                    ],
                    "api": "anthropic-messages",
                    "provider": model[0],
                    "model": model[1],
                    "usage": {
                        "input": 50,
                        "output": 120,
                        "cacheRead": context_tokens,
                        "cacheWrite": 300,
                        "totalTokens": context_tokens + 470,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                    },
                    "stopReason": "toolUse",
                }
            )
            size = rng.choice([big_output_lines // 4, big_output_lines, big_output_lines * 3])
            output = _code(rng, size) if tool != "edit" else f"Edited {target}"
            context_tokens += int(len(output) / 4 * 1.15)
            w.message(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": tool,
                    "content": [{"type": "text", "text": output}],
                    "isError": rng.random() < 0.05,
                }
            )
        w.message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"Done with turn {turn}. " + _words(rng, 60)}],
                "api": "anthropic-messages",
                "provider": model[0],
                "model": model[1],
                "usage": {
                    "input": 40,
                    "output": 200,
                    "cacheRead": context_tokens,
                    "cacheWrite": 100,
                    "totalTokens": context_tokens + 340,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                },
                "stopReason": "stop",
            }
        )
        context_tokens += 400
        if context_tokens > 170_000:
            _compact(w, rng, context_tokens)
            context_tokens = 25_000
        elif turn % 11 == 0 and len(w.path) > 20:
            _branch(w, rng)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(header) + b"\n" + b"\n".join(w.lines) + b"\n")
    return path


def _compact(w: _Writer, rng: random.Random, tokens_before: int) -> None:
    users = [e for e in w.path[-60:] if e["type"] == "message" and e["message"]["role"] == "user"]
    first_kept = users[len(users) // 2] if users else w.path[-1]
    summary = "## Goal\n" + _words(rng, 30) + "\n\n## Progress\n### Done\n- [x] " + _words(rng, 12)
    summary += (
        "\n\n<read-files>\nsrc/app.py\n</read-files>\n\n<modified-files>\nsrc/store.py\n</modified-files>"
    )
    w.add(
        {
            "type": "compaction",
            "summary": summary,
            "firstKeptEntryId": first_kept["id"],
            "tokensBefore": tokens_before,
            "details": {"readFiles": ["src/app.py"], "modifiedFiles": ["src/store.py"]},
        }
    )


def _branch(w: _Writer, rng: random.Random) -> None:
    """Go back to an earlier user turn on the active path and leave a branch summary there."""
    candidates = [
        i
        for i, e in enumerate(w.path[:-8])
        if e["type"] == "message"
        and e["message"]["role"] == "assistant"
        and e["message"].get("stopReason") == "stop"
    ]
    if not candidates:
        return
    index = rng.choice(candidates[-6:])
    target = w.path[index]
    w.path = w.path[: index + 1]
    w.leaf = target["id"]
    if rng.random() < 0.5:
        w.add(
            {
                "type": "branch_summary",
                "fromId": target["id"],
                "summary": "The user explored a different approach.\n\n" + _words(rng, 40),
            }
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    path = generate(args.out, args.entries, args.seed)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
