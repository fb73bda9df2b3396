"""The context breakdown: categories that add up to the context size the rest of kompakt shows.

Core tests on built paths (every category, a usage-measured context, after a compaction), a property
test that a message's parts always add up to its estimate, and ``kompakt context --breakdown`` on real
session files (the demo and one written by the store).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests import factories as f
from tui.cli import main
from tui.compaction.breakdown import (
    ASSISTANT_TEXT,
    BRANCH_SUMMARIES,
    COMPACTION_SUMMARIES,
    CUSTOM_MESSAGES,
    FREE_SPACE,
    PROVIDER_OVERHEAD,
    RESERVE,
    SHELL_COMMANDS,
    SYSTEM_PROMPT,
    THINKING,
    TOOL_CALLS,
    TOOL_DEFINITIONS,
    TOOL_RESULTS,
    USER_TEXT,
    context_breakdown,
    message_categories,
)
from tui.compaction.context_size import context_size
from tui.compaction.tokens import estimate_tokens, sum_tokens
from tui.demo import build_demo
from tui.session.context import context_from_path

TOOLS = [{"type": "function", "function": {"name": "read", "description": "x" * 396, "parameters": {}}}]


def every_kind() -> list[dict]:
    return f.chain(
        [
            f.user("u" * 400),
            f.assistant("a" * 800, [f.tool_call("read", {"path": "p" * 100}, "c1")], thinking="t" * 1200),
            f.tool_result("c1", "read", "r" * 2000, images=1),
            f.bash("ls", "o" * 398),
            f.custom_message("note", "c" * 40),
            f.branch_summary("b" * 80),
        ]
    )


def by_name(breakdown) -> dict[str, int]:
    return {c.name: c.tokens for c in breakdown.categories}


def test_every_category_is_counted_and_the_total_is_the_context_size():
    path = every_kind()
    breakdown = context_breakdown(
        path, context_window=10_000, reserve_tokens=1_000, system_prompt="s" * 800, tool_definitions=TOOLS
    )
    rows = by_name(breakdown)
    reply = estimate_tokens(path[1]["message"])  # (800 + 1200 + 4 + 111 chars) / 4, rounded up
    assert rows[USER_TEXT] == 100 and rows[ASSISTANT_TEXT] + rows[THINKING] + rows[TOOL_CALLS] == reply == 529
    assert rows[THINKING] == 300 and rows[ASSISTANT_TEXT] == 200
    assert rows[TOOL_RESULTS] == (2000 + 4800) // 4  # an image counts 4800 chars, as pi does
    assert rows[SHELL_COMMANDS] == 100 and rows[CUSTOM_MESSAGES] == 10 and rows[BRANCH_SUMMARIES] == 20
    assert rows[SYSTEM_PROMPT] == 200 and rows[TOOL_DEFINITIONS] > 100
    # No reply reported usage: like pi, the size is the messages' estimate; the preamble is not counted.
    assert not breakdown.measured and PROVIDER_OVERHEAD not in rows
    assert breakdown.total == context_size(path).tokens == sum_tokens(context_from_path(path).messages)
    counted = {c.name: c.counted for c in breakdown.categories}
    assert counted[SYSTEM_PROMPT] is False and counted[USER_TEXT] is True
    rows_drawn = [r.name for r in breakdown.rows()]
    assert rows_drawn[-2:] == [FREE_SPACE, RESERVE]
    assert breakdown.free_tokens == 10_000 - 1_000 - breakdown.total


def test_with_usage_the_unexplained_part_is_the_provider_overhead():
    path = f.chain(
        [
            f.user("u" * 4000),
            f.assistant("a" * 4000, usage=f.usage(input=3_000, output=1_000)),
            f.user("later " + "v" * 394),
        ]
    )
    breakdown = context_breakdown(
        path, context_window=50_000, reserve_tokens=1_000, system_prompt="s" * 400, tool_definitions=TOOLS
    )
    rows = by_name(breakdown)
    assert breakdown.measured
    explained_by_reply = rows[SYSTEM_PROMPT] + rows[TOOL_DEFINITIONS] + 1000 + 1000
    assert rows[PROVIDER_OVERHEAD] == 4_000 - explained_by_reply
    assert breakdown.total == context_size(path).tokens == 4_000 + 100
    assert all(c.counted for c in breakdown.categories)


def test_a_breakdown_on_the_offline_models_usage_says_that_usage_is_an_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """It read '(usage + estimate)' and 'usage of the last reply' though the offline model guessed it."""
    path = f.chain(
        [
            f.user("u" * 4000),
            f.assistant(
                "a" * 400, usage=f.usage(input=3_000, output=100), provider="kompakt-offline", model="echo"
            ),
        ]
    )
    breakdown = context_breakdown(path, context_window=50_000, reserve_tokens=1_000)
    assert breakdown.measured and breakdown.usage_estimated  # structured on the usage, marked a guess
    assert breakdown.to_json()["usageEstimated"] is True
    file = tmp_path / "s.jsonl"
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"}
    file.write_text("\n".join(json.dumps(e) for e in [header, *path]) + "\n")
    assert main(["context", str(file), "--breakdown"]) == 0
    out = capsys.readouterr().out
    assert "offline model" in out and "usage of the last reply + estimate" not in out, out


def test_estimates_above_the_usage_are_not_called_a_negative_provider_overhead():
    """QA: the timeline showed "provider overhead -894" (the estimates exceeded the reported usage)."""
    path = f.chain([f.user("u" * 40_000), f.assistant("a" * 400, usage=f.usage(input=2_000, output=100))])
    breakdown = context_breakdown(
        path, context_window=50_000, reserve_tokens=1_000, system_prompt="s" * 400, tool_definitions=TOOLS
    )
    (overhead,) = [c for c in breakdown.rows() if c.name == PROVIDER_OVERHEAD]
    # QA issue 13 F5: "estimates above usage -81.2k" put a negative figure under "above".
    assert overhead.tokens < 0 and overhead.label == "usage below the estimates"
    positive = context_breakdown(
        f.chain([f.user("u" * 40), f.assistant("a", usage=f.usage(input=9_000, output=10))]),
        context_window=50_000,
        reserve_tokens=1_000,
        system_prompt="s",
        tool_definitions=TOOLS,
    )
    assert [c.label for c in positive.rows() if c.name == PROVIDER_OVERHEAD] == [PROVIDER_OVERHEAD]


def test_after_a_compaction_the_summary_is_its_own_category_and_stale_usage_is_ignored():
    path = f.chain(
        [
            f.user("u" * 4000),
            f.assistant("a" * 4000, usage=f.usage(input=90_000)),
            f.user("kept " + "k" * 395),
            f.compaction("S" * 400, 2, 90_000),
        ]
    )
    breakdown = context_breakdown(path, context_window=100_000, reserve_tokens=10_000)
    rows = by_name(breakdown)
    assert rows[COMPACTION_SUMMARIES] == estimate_tokens(context_from_path(path).messages[0])
    assert not breakdown.measured  # the only usage predates the compaction
    assert breakdown.total == context_size(path).tokens == rows[COMPACTION_SUMMARIES] + 100


texts = st.text(alphabet=st.sampled_from("ab é😀"), max_size=60)


@given(
    st.lists(
        st.one_of(
            st.builds(
                lambda t, th, a: f.assistant(t, [f.tool_call("x", {"a": a})], thinking=th),
                texts,
                texts,
                texts,
            ),
            st.builds(f.user, texts),
            st.builds(lambda t, n: f.tool_result("c", "read", t, images=n), texts, st.integers(0, 2)),
        ),
        max_size=8,
    )
)
def test_the_parts_of_messages_add_up_to_their_estimates(entries):
    messages = [e["message"] for e in entries]
    assert sum(message_categories(messages).values()) == sum_tokens(messages)


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KOMPAKT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    return build_demo(tmp_path / "demo.jsonl")


def test_cli_breakdown_total_equals_the_context_estimate(demo: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["context", str(demo), "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)["estimate"]["tokens"]
    assert main(["context", str(demo), "--breakdown", "--json", "--reserve-tokens", "20000"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["total"] == estimate
    assert report["total"] == sum(c["tokens"] for c in report["categories"] if c["counted"])
    assert report["reserveTokens"] == 20_000 and report["freeTokens"] == report["threshold"] - estimate
    names = [c["name"] for c in report["categories"]]
    assert names[:2] == [SYSTEM_PROMPT, TOOL_DEFINITIONS] and PROVIDER_OVERHEAD in names
    before = demo.read_bytes()

    assert main(["context", str(demo), "--breakdown", "--context-window", "150000"]) == 0
    out = capsys.readouterr().out
    assert "tool results" in out and "free space" in out and "reserve" in out and f"{estimate:,}" in out
    assert demo.read_bytes() == before


def test_cli_breakdown_on_every_leaf_of_the_demo(demo: Path, capsys: pytest.CaptureFixture[str]):
    from tui.session.store import SessionStore

    with SessionStore.open(demo, read_only=True) as store:
        leaves = [leaf["id"] if isinstance(leaf, dict) else leaf for leaf in store.tree.leaves()]
    assert len(leaves) > 1
    for leaf in leaves:
        assert main(["context", str(demo), "--leaf", leaf, "--json"]) == 0
        estimate = json.loads(capsys.readouterr().out)["estimate"]["tokens"]
        assert main(["context", str(demo), "--leaf", leaf, "--breakdown", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["total"] == estimate
