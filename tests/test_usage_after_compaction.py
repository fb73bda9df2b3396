"""Usage figures after a compaction: the context size (CLI, status, timeline) and the keep calibration.

A reply kept from before the latest compaction reports the old, larger context, so the context size
ignores it until a newer reply reports usage. The keepRecentTokens calibration divides a reply's
prompt tokens by the estimate of the context that reply was part of (summary, kept messages, the
messages up to the reply), not by the entries after the compaction only.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from tests import factories as f
from tui.cli import main
from tui.compaction.context_size import context_size, path_context
from tui.compaction.plan import CompactionPlan, calibrate_keep_recent_tokens, prepare_compaction, usage_ratio
from tui.compaction.timeline import build_timeline
from tui.compaction.tokens import ContextEstimate
from tui.session.entries import PRUNE_CUSTOM_TYPE

STALE_TOTAL = 88_299


def compacted(*after: f.Entry, kept_usage: dict | None = None) -> list[f.Entry]:
    """user 1000, assistant 1000 | kept: user 500, assistant 500 | summary 200 | ``after``."""
    return f.chain(
        [
            f.user(f.text_of(4000)),
            f.assistant(f.text_of(4000, "a"), usage=f.usage(input=1000, output=1000)),
            f.user(f.text_of(2000, "u")),
            f.assistant(f.text_of(2000, "b"), usage=kept_usage or f.usage(total=STALE_TOTAL)),
            f.compaction(f.text_of(800, "s"), 2, tokens_before=STALE_TOTAL),
            *after,
        ]
    )


def timeline_of(path: list[f.Entry], keep: int = 20_000):
    return build_timeline(path, context_window=128_000, reserve_tokens=16_384, keep_recent_tokens=keep)


# --- bug 8: the context size after a compaction --------------------------------------------------
def test_usage_from_before_the_compaction_is_ignored():
    # Summary 200 + kept 500 + 500, all estimated: the kept reply's 88,299 measured the old context.
    assert context_size(compacted()) == ContextEstimate(1200, 0, 1200, None)
    assert context_size(compacted(f.user(f.text_of(400)))).tokens == 1300


def test_a_reply_after_the_compaction_reports_the_size_again():
    path = compacted(f.user(f.text_of(400)), f.assistant("ok", usage=f.usage(input=1400, output=10)))
    assert context_size(path) == ContextEstimate(1410, 1410, 0, 4)
    trailing = compacted(*path[5:], f.user(f.text_of(40)))
    assert context_size(trailing) == ContextEstimate(1420, 1410, 10, 4)


def test_without_a_compaction_the_size_is_pis_estimate():
    path = f.chain([f.user("hi"), f.assistant("yo", usage=f.usage(input=900, output=20)), f.user("x" * 40)])
    assert context_size(path) == ContextEstimate(930, 920, 10, 1)


def test_the_timeline_shows_the_same_size():
    for path in (
        compacted(),
        compacted(f.user(f.text_of(400)), f.assistant("ok", usage=f.usage(input=1400))),
    ):
        sized = path_context(path)
        assert timeline_of(path).context_tokens == sized.estimate.tokens
        assert len(sized.context.messages) == len(sized.context.entry_ids)


@pytest.fixture
def compacted_file(tmp_path: Path) -> Path:
    file = tmp_path / "c.jsonl"
    header = {
        "type": "session",
        "version": 3,
        "id": "s1",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/",
    }
    file.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [header, *compacted()]))
    return file


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_context_stats_and_plan_agree_after_a_compaction(
    compacted_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    context = run_json(capsys, "context", str(compacted_file))
    assert context["estimate"] == {
        "tokens": 1200,
        "usageTokens": 0,
        "trailingTokens": 1200,
        "lastUsageIndex": None,
    }
    assert len(context["messages"]) == 3
    assert run_json(capsys, "stats", str(compacted_file))["contextTokens"] == 1200
    assert (
        run_json(capsys, "plan", str(compacted_file), "--context-window", "128000")["contextTokens"] == 1200
    )

    assert main(["context", str(compacted_file)]) == 0
    assert "3 messages, ≈1,200 tokens (usage 0 + estimate 1,200)" in capsys.readouterr().out


# --- bug 7: calibration compares like with like --------------------------------------------------
def fresh_reply_path() -> list[f.Entry]:
    # The last reply's request held summary 200 + kept 1000 + 300 after the compaction, and the reply
    # adds 100: 1600 estimated. Its prompt of 3200 gives a ratio of 2 (over the 400 estimated after
    # the compaction alone it was 8).
    return compacted(
        f.user(f.text_of(400, "q")),
        f.assistant(f.text_of(400, "r")),
        f.user(f.text_of(400, "q")),
        f.assistant(f.text_of(400, "r"), usage=f.usage(input=3200)),
    )


def test_ratio_after_a_compaction_uses_the_whole_context():
    path = fresh_reply_path()
    assert usage_ratio(path) == 2.0
    assert calibrate_keep_recent_tokens(path, 20_000) == (10_000, 2.0)


def test_planner_and_timeline_calibrate_alike_after_a_compaction():
    path = fresh_reply_path()
    plan = prepare_compaction(path, keep_recent_tokens=400)
    assert isinstance(plan, CompactionPlan)
    assert (plan.calibration_ratio, plan.keep_recent_tokens) == (2.0, 200)
    assert plan.first_kept_index == 7 and not plan.is_split_turn  # the budget of 200 keeps the last turn
    timeline = timeline_of(path, keep=400)
    assert timeline.keep_span.keep_tokens == 200
    assert timeline.what_if.plan.keep_recent_tokens == 200
    assert timeline.with_what_if(path, 400, 16_384).what_if.plan.keep_recent_tokens == 200


def test_a_kept_reply_is_measured_against_the_context_it_was_sent_in():
    # The kept reply's prompt of 4500 saw user 1000 + assistant 1000 + user 500, plus its own 500.
    after = (
        f.user(f.text_of(400)),
        f.assistant(f.text_of(400)),
        f.user(f.text_of(400)),
        f.assistant(f.text_of(400)),
    )
    path = compacted(*after, kept_usage=f.usage(input=4500))
    assert usage_ratio(path) == 1.5
    plan = prepare_compaction(path, keep_recent_tokens=400)
    assert isinstance(plan, CompactionPlan) and plan.keep_recent_tokens == 266
    assert timeline_of(path, keep=400).keep_span.keep_tokens == 266


def test_a_later_prune_does_not_shrink_what_an_earlier_request_sent():
    entries = [
        f.user(f.text_of(400)),
        f.assistant(tool_calls=[f.tool_call("read", {"path": "a.py"}, "c1")], stop_reason="toolUse"),
        f.tool_result("c1", "read", f.text_of(4000)),
        f.assistant(f.text_of(400), usage=f.usage(input=2400)),
    ]
    path = f.chain(entries)
    # The request sent user 100 + tool call 5 + output 1000, and the reply adds 100.
    assert usage_ratio(path) == 2400 / 1205
    pruned = f.chain([*entries, f.custom(PRUNE_CUSTOM_TYPE, {"entries": {path[2]["id"]: 1000}})])
    assert usage_ratio(pruned) == 2400 / 1205
    assert timeline_of(pruned, keep=400).keep_span.keep_tokens == calibrate_keep_recent_tokens(path, 400)[0]


def test_no_completed_reply_means_no_calibration():
    path = f.chain([f.user("a"), f.assistant("x", usage=f.usage(input=99), stop_reason="error")])
    assert calibrate_keep_recent_tokens(path, 20_000) == (20_000, None)
