"""The load checks' fast path for message entries (tui.session.shape.message_passes) says what the full
checks say: whatever it accepts, the nesting limit and entry_problem accept; a well-formed session passes
it whole, so its lines skip the bracket count and the explaining checks."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.gen_session import generate
from tui.session.jsonl import check_line, parse_lines
from tui.session.shape import MAX_NESTING, entry_problem, message_passes, too_deep

ASSISTANT = {
    "type": "message",
    "id": "a1",
    "parentId": "u1",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "message": {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hm"},
            {"type": "text", "text": "hello"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}},
        ],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "m",
        "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
                  "cost": {"input": 0, "output": 0.1, "total": 0.1}},
        "stopReason": "toolUse",
        "timestamp": 1,
    },
}  # fmt: skip
RESULT = {
    "type": "message",
    "id": "r1",
    "parentId": "a1",
    "timestamp": "2026-01-01T00:00:01.000Z",
    "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "isError": False,
                "content": [{"type": "text", "text": "x = 1"}], "timestamp": 2},
}  # fmt: skip
USER = {
    "type": "message",
    "id": "u1",
    "parentId": None,
    "timestamp": "2026-01-01T00:00:00.000Z",
    "message": {"role": "user", "content": "hi", "timestamp": 0},
}
TEMPLATES = [ASSISTANT, RESULT, USER]


def nested(depth: int) -> Any:
    value: Any = "x"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.sampled_from(["", "x", "text"])
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
# Around the limit, where the depth the fast path adds up must be exact.
deep_values = st.integers(MAX_NESTING - 8, MAX_NESTING + 3).map(nested)
values = st.one_of(json_values, deep_values)
KEYS = ["type", "id", "parentId", "timestamp", "message", "role", "content", "usage", "cost", "text",
        "thinking", "arguments", "name", "isError", "toolCallId", "input", "total", "details", "x"]  # fmt: skip


def containers(value: Any) -> list[dict[str, Any] | list[Any]]:
    """Every dict and list in ``value``, itself included."""
    found: list[Any] = []
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            found.append(current)
            stack.extend(current.values())
        elif isinstance(current, list):
            found.append(current)
            stack.extend(current)
    return found


@st.composite
def mutated_entries(draw: st.DrawFn) -> dict[str, Any]:
    entry = copy.deepcopy(draw(st.sampled_from(TEMPLATES)))
    for _ in range(draw(st.integers(1, 3))):
        targets = [c for c in containers(entry) if isinstance(c, dict) and len(json.dumps(c)) < 2000]
        target = draw(st.sampled_from(targets))
        key = draw(st.sampled_from(KEYS))
        if draw(st.booleans()) and key in target:
            del target[key]
        else:
            target[key] = draw(values)
    return entry


def full_checks(entry: dict[str, Any]) -> str | None:
    raw = json.dumps(entry).encode()
    return "nested too deeply" if too_deep(raw, entry) else entry_problem(entry, needs_id=True)


@settings(max_examples=400, deadline=None)
@given(mutated_entries())
def test_what_the_fast_path_accepts_the_full_checks_accept(entry: dict[str, Any]) -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * MAX_NESTING))  # json.dumps of the deep values
    try:
        verdict = full_checks(entry)
    finally:
        sys.setrecursionlimit(limit)
    if message_passes(entry):  # (what it refuses, the full checks explain or accept: it is a shortcut)
        assert verdict is None


def test_a_depth_at_the_limit_passes_and_one_past_it_is_refused() -> None:
    for depth, ok in ((MAX_NESTING, True), (MAX_NESTING + 1, False)):
        entry = copy.deepcopy(ASSISTANT)
        # The entry is level 1, the message 2, content 3, the block 4, the arguments 5.
        entry["message"]["content"][2]["arguments"] = {"deep": nested(depth - 5)}
        raw = json.dumps(entry).encode()
        assert too_deep(raw, entry) is not ok
        assert message_passes(entry) is ok
        entries: list[dict[str, Any]] = []
        assert check_line(raw, entries, needs_id=True) == (None if ok else "nested too deeply")


def test_every_line_of_a_generated_session_takes_the_fast_path(tmp_path: Path) -> None:
    data = generate(tmp_path / "s.jsonl", entries=2_000, seed=3).read_bytes()
    body = data[data.index(b"\n") + 1 :]
    parsed = parse_lines(body)
    assert not parsed.problems
    messages = [e for e in parsed.entries if e["type"] == "message"]
    assert len(messages) > 1_500
    assert all(message_passes(e) for e in messages)
