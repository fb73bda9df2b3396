"""The invariant that matters (issue 11, pi #2608): repeated compactions never drop a message.

Hypothesis builds random session trees on a real session file and runs kompakt's own engine on them
with the deterministic offline summary: 1-5 compactions (threshold and manual, either strategy,
budgets small enough to split turns), with navigation to random entries in between (with or without
a branch summary). After every step, each ``message`` entry on the active path is either in the
context the model is sent or was part of the input of a compaction summary on that path (for
head-tail, the head and pinned messages it copies into its summary count as input). The inputs are
what the engine itself planned, read from the ``session_before_compact`` hook.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import factories as f
from tests.compaction_helpers import compaction_settings, msg
from tui.agent.navigation import navigate_tree
from tui.compaction.context_size import context_size
from tui.compaction.engine import CompactionResult, compact_session, compaction_due
from tui.compaction.head_tail import HeadTailPlan
from tui.hooks import SESSION_BEFORE_COMPACT, HookRunner
from tui.session.store import SessionStore

_sizes = st.integers(min_value=0, max_value=6_000)


def _text(chars: int, fill: str) -> str:
    return f.text_of(max(1, chars), fill)


@st.composite
def _turn(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A user prompt, then 0-3 tool rounds, then a reply; usage on some replies."""
    out = [msg(f.user(_text(draw(_sizes), "u")))]
    for n in range(draw(st.integers(0, 3))):
        call = f"c{n}"
        tool = draw(st.sampled_from(["read", "edit", "bash"]))
        out.append(
            msg(f.assistant(_text(draw(_sizes) // 8, "t"), [f.tool_call(tool, {"path": f"f{n}.py"}, call)]))
        )
        out.append(msg(f.tool_result(call, tool, _text(draw(_sizes), "r"))))
    usage = draw(st.one_of(st.none(), st.integers(100, 60_000)))
    out.append(msg(f.assistant(_text(draw(_sizes), "a"), usage=f.usage(input=usage) if usage else None)))
    return out


_compact = st.tuples(
    st.just("compact"),
    st.integers(min_value=1, max_value=12_000),  # keepRecentTokens
    st.sampled_from(["keep-recent", "keep-recent", "head-tail"]),
)
_other = st.one_of(
    st.tuples(st.just("turns"), st.lists(_turn(), min_size=1, max_size=4)),
    st.tuples(st.just("bash"), _sizes),
    st.tuples(st.just("navigate"), st.floats(0, 1), st.booleans()),
)


@st.composite
def programs(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    """Steps with 1-5 compaction attempts, each after at least one turn; navigation anywhere between."""
    steps: list[tuple[Any, ...]] = []
    for _ in range(draw(st.integers(1, 5))):
        steps.append(("turns", draw(st.lists(_turn(), min_size=1, max_size=4))))
        steps += draw(st.lists(_other, max_size=3))
        steps.append(draw(_compact))
        steps += draw(st.lists(st.one_of(_other, _compact), max_size=2))
    return steps


def _dropped(store: SessionStore, inputs: dict[str, set[str]]) -> list[str]:
    """Message entries on the active path that are neither in the context nor any summary's input."""
    path = store.get_branch()
    covered = set(store.build_context().entry_ids)
    for entry in path:
        if entry["type"] == "compaction":
            covered |= inputs.get(entry["id"], set())
    return [e["id"] for e in path if e["type"] == "message" and e["id"] not in covered]


async def _run(directory: Path, steps: list[tuple[Any, ...]]) -> tuple[int, list[str]]:
    store = SessionStore.create(directory / "s.jsonl", cwd=str(directory))
    hooks = HookRunner()
    planned: list[Any] = []
    hooks.on(SESSION_BEFORE_COMPACT, lambda event: planned.append(event["plan"]))
    inputs: dict[str, set[str]] = {}
    compactions = 0
    window = 24_000
    try:
        for step in steps:
            kind = step[0]
            if kind == "turns":
                for turn in step[1]:
                    for message in turn:
                        store.append_message(message)
            elif kind == "bash":
                store.append_message(msg(f.bash("ls", _text(step[1], "b"))))
            elif kind == "navigate":
                targets = [e for e in store.entries if e["type"] != "custom"]
                if not targets:
                    continue
                target = targets[min(int(step[1] * len(targets)), len(targets) - 1)]
                await navigate_tree(
                    store,
                    target["id"],
                    summarize=step[2],
                    summarize_fn=None,
                    settings=compaction_settings(),
                    context_window=window,
                )
            else:
                _, keep, strategy = step
                config = compaction_settings(keep=keep, reserve=4_000, strategy=strategy)
                path = store.get_branch()
                due = compaction_due(path, config, window, context_size(path).tokens)
                result = await compact_session(
                    store,
                    reason="threshold" if due else "manual",
                    settings=config,
                    summarize=None,
                    context_window=window,
                    max_output_tokens=4_000,
                    hooks=hooks,
                )
                if isinstance(result, CompactionResult):
                    compactions += 1
                    plan = planned[-1]
                    ids = {*plan.summarize_entry_ids, *getattr(plan, "turn_prefix_entry_ids", ())}
                    if isinstance(plan, HeadTailPlan):
                        ids |= {*plan.head_entry_ids, *plan.pinned_entry_ids}
                    inputs[result.entry["id"]] = ids
            dropped = _dropped(store, inputs)
            if dropped:
                return compactions, dropped
        return compactions, []
    finally:
        store.close()


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(programs())
def test_repeated_compactions_never_drop_a_message_on_the_active_path(steps):
    with tempfile.TemporaryDirectory() as directory:
        _, dropped = asyncio.run(_run(Path(directory), steps))
    assert dropped == []


def test_the_invariant_catches_the_0_58_3_boundary(tmp_path):
    """The scenario of pi #2608 through the engine: two compactions, the first one's kept turn survives."""
    turn_a = [msg(f.user(_text(4_000, "u"))), msg(f.assistant(_text(4_000, "a")))]
    turn_b = [msg(f.user(_text(4_000, "v"))), msg(f.assistant(_text(4_000, "b")))]
    turn_c = [msg(f.user(_text(4_000, "w"))), msg(f.assistant(_text(4_000, "c")))]
    steps = [
        ("turns", [turn_a, turn_b]),
        ("compact", 1_500, "keep-recent"),  # summarises turn a, keeps turn b
        ("turns", [turn_c]),
        ("compact", 1_500, "keep-recent"),  # 0.58.3 started after the compaction and lost turn b
    ]
    compactions, dropped = asyncio.run(_run(tmp_path, steps))
    assert compactions == 2 and dropped == []
