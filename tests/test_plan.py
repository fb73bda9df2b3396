"""prepare_compaction: pi §4.4 with omp's calibration and DESIGN.md deviations 2, 3 and 4."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tests import factories as f
from tests.path_strategies import paths
from tui.compaction.boundary import compaction_input_message
from tui.compaction.plan import (
    SKIP_ALREADY_COMPACTED,
    SKIP_NOTHING_TO_SUMMARIZE,
    SKIP_TOO_SMALL,
    CompactionPlan,
    PlanSkip,
    calibrate_keep_recent_tokens,
    prepare_compaction,
    threshold,
)
from tui.compaction.tokens import estimate_tokens
from tui.session.context import entry_to_message
from tui.session.entries import PRUNE_CUSTOM_TYPE

T100 = "x" * 400  # 100 tokens


def _plan(path, keep, **kw) -> CompactionPlan:
    plan = prepare_compaction(path, keep_recent_tokens=keep, calibrate=False, **kw)
    assert isinstance(plan, CompactionPlan), plan
    return plan


def _texts(messages):
    out = []
    for m in messages:
        content = m.get("content")
        out.append(content if isinstance(content, str) else m.get("summary", ""))
    return out


def test_threshold_is_window_minus_reserve():
    assert threshold(200_000) == 183_616
    assert threshold(100_000, 10_000) == 90_000


def test_last_entry_compaction_is_a_skip_not_an_error():  # deviation 4
    path = f.chain([f.user(T100), f.assistant(T100), f.compaction("s", 0)])
    result = prepare_compaction(path)
    assert result == PlanSkip(SKIP_ALREADY_COMPACTED)
    assert result.to_json()["skip"] is True
    assert "already" in result.message


def test_empty_path_is_too_small():
    assert prepare_compaction([]) == PlanSkip(SKIP_TOO_SMALL)


def test_everything_within_budget_is_nothing_to_summarize():  # deviation 4, pi's empty-summary edge
    path = f.chain([f.user(T100), f.assistant(T100, usage=f.usage(input=300, output=10))])
    result = prepare_compaction(path, keep_recent_tokens=20_000)
    assert result == PlanSkip(SKIP_NOTHING_TO_SUMMARIZE, tokens_before=310)
    assert result.to_json()["tokensBefore"] == 310


def test_basic_plan_summarises_the_oldest_turns():
    path = f.chain([f.user("u1" + T100), f.assistant("a1"), f.user("u2" + T100), f.assistant(T100)])
    plan = _plan(path, 150)
    assert plan.first_kept_entry_id == path[2]["id"]
    assert (plan.first_kept_index, plan.is_split_turn, plan.turn_start_id) == (2, False, None)
    assert plan.summarize_entry_ids == [path[0]["id"], path[1]["id"]]
    assert plan.messages_to_summarize == [path[0]["message"], path[1]["message"]]
    assert plan.turn_prefix_messages == [] and plan.turn_prefix_entry_ids == []
    assert plan.kept_entry_ids == [path[2]["id"], path[3]["id"]]
    assert plan.recent_messages == [path[2]["message"], path[3]["message"]]
    assert plan.previous_summary is None and plan.previous_compaction_id is None
    assert plan.entry_tokens == {e["id"]: estimate_tokens(e["message"]) for e in path}
    assert plan.summarized_tokens == 101 + 1
    assert plan.kept_tokens == 101 + 100
    assert plan.keep_recent_tokens == plan.requested_keep_recent_tokens == 150
    assert plan.tokens_before == 303  # no usage: the estimate of every message
    assert plan.reserve_tokens == 16_384


def test_split_turn_gives_a_turn_prefix():
    path = f.chain(
        [
            f.user("old" + T100),
            f.assistant(T100),
            f.user("go"),
            f.assistant("step 1", tool_calls=[f.tool_call("read", {"path": "a.py"}, "c1")]),
            f.tool_result("c1", "read", T100),
            f.assistant(T100, tool_calls=[f.tool_call("edit", {"path": "b.py"}, "c2")]),
            f.tool_result("c2", "edit", T100),
            f.assistant("done"),
        ]
    )
    plan = _plan(path, 150)
    assert (plan.first_kept_index, plan.turn_start_index, plan.is_split_turn) == (5, 2, True)
    assert plan.turn_start_id == path[2]["id"]
    assert plan.history_end == 2
    assert plan.summarize_entry_ids == [path[0]["id"], path[1]["id"]]
    assert plan.turn_prefix_entry_ids == [e["id"] for e in path[2:5]]
    assert plan.turn_prefix_messages == [e["message"] for e in path[2:5]]
    assert plan.turn_prefix_tokens == sum(plan.entry_tokens[e["id"]] for e in path[2:5])
    assert not plan.history_empty
    # Files from the summarised history and the prefix; the kept edit of b.py is not listed yet.
    assert plan.file_ops.read == {"a.py"} and plan.file_ops.edited == set()


def test_boundary_starts_at_the_previous_compactions_first_kept_entry():  # pi 0.73.1, #2608
    path = f.chain(
        [
            f.user("u1" + T100),
            f.assistant("a1" + T100),
            f.user("u2" + T100),
            f.assistant("a2" + T100),
            f.compaction("OLD SUMMARY", 2, details={"readFiles": ["r.py"], "modifiedFiles": ["m.py"]}),
            f.user("u3" + T100),
            f.assistant("a3" + T100),
            f.user("u4" + T100),
            f.assistant("a4" + T100),
        ]
    )
    plan = _plan(path, 150)
    assert plan.boundary_start == 2  # u2, the entry the previous compaction kept (0.58.3: 5)
    assert plan.previous_summary == "OLD SUMMARY"
    assert plan.previous_compaction_id == path[4]["id"]
    assert plan.first_kept_entry_id == path[7]["id"]
    # The old kept region (u2, a2) is summarised again; the compaction entry itself gives no message.
    assert plan.summarize_entry_ids == [path[i]["id"] for i in (2, 3, 5, 6)]
    assert [m["role"] for m in plan.messages_to_summarize] == ["user", "assistant"] * 2
    assert set(plan.entry_tokens) == {e["id"] for e in path[2:]}
    assert plan.entry_tokens[path[4]["id"]] == 0
    assert plan.file_ops.read == {"r.py"} and plan.file_ops.edited == {"m.py"}
    assert plan.to_json()["readFiles"] == ["r.py"] and plan.to_json()["modifiedFiles"] == ["m.py"]


def test_files_of_the_kept_region_enter_the_lists_at_the_next_compaction():  # delta A.14
    path = f.chain(
        [
            f.user("u1" + T100),
            f.assistant("a1" + T100),
            f.user("u2"),
            f.assistant(tool_calls=[f.tool_call("edit", {"path": "kept.py"}, "c1")]),
            f.tool_result("c1", "edit", "ok"),
            f.compaction("OLD", 2, details={"readFiles": [], "modifiedFiles": []}),
            f.user("u3" + T100),
            f.assistant("a3" + T100),
            f.user("u4" + T100),
        ]
    )
    plan = _plan(path, 150)
    assert plan.file_ops.edited == {
        "kept.py"
    }  # 0.58.3 never listed it: its turn was neither summarised nor kept
    assert plan.to_json()["modifiedFiles"] == ["kept.py"]


def test_a_clear_after_the_compaction_starts_the_range_afresh():  # omp 18 reset_boundary (delta C)
    path = f.chain(
        [
            f.user("u1" + T100),
            f.assistant("a1" + T100),
            f.compaction("OLD SUMMARY", 0),
            f.user("u2" + T100),
            {"type": "reset_boundary", "id": None, "parentId": None, "timestamp": None},
            f.user("u3" + T100),
            f.assistant("a3" + T100),
            f.user("u4" + T100),
        ]
    )
    plan = _plan(path, 150)
    # What the user cleared is neither summarised again nor carried forward as the previous summary.
    assert plan.boundary_start == 5
    assert plan.previous_summary is None and plan.previous_compaction_id is None
    assert plan.summarize_entry_ids + plan.turn_prefix_entry_ids == [path[5]["id"]]
    # Before the latest compaction a clear changes nothing: the compaction's kept entry starts the range.
    earlier = f.chain(
        [
            f.user("u0" + T100),
            {"type": "reset_boundary", "id": None, "parentId": None, "timestamp": None},
            f.user("u1" + T100),
            f.assistant("a1" + T100),
            f.compaction("OLD SUMMARY", 2),
            f.user("u3" + T100),
            f.assistant("a3" + T100),
        ]
    )
    plan = _plan(earlier, 150)
    assert plan.boundary_start == 2 and plan.previous_summary == "OLD SUMMARY"


def test_hook_compaction_details_are_not_carried():
    path = f.chain(
        [
            f.user(T100),
            f.compaction("S", 0, details={"readFiles": ["r.py"], "modifiedFiles": []}, from_hook=True),
            f.user(T100),
            f.assistant(T100),
            f.user(T100),
        ]
    )
    plan = _plan(path, 150)
    assert plan.file_ops.read == set()


def test_tokens_before_is_measured_over_the_rebuilt_context():  # pi 0.73.1 (delta A.3)
    path = f.chain(
        [
            f.user(T100),
            f.assistant(T100, usage=f.usage(input=50_000, output=100)),
            f.compaction("x" * 40, 0),
            f.user(T100),
            f.assistant(T100),
            f.user(T100),
        ]
    )
    # The compaction kept u1 and a1, so a1's usage counts, plus the three messages after it
    # (0.58.3 measured from the compaction entry on: the summary + three messages, 310).
    assert _plan(path, 150).tokens_before == 50_100 + 300
    not_kept = f.chain(
        [
            f.user(T100),
            f.assistant(T100, usage=f.usage(input=50_000, output=100)),
            f.user(T100),
            f.compaction("x" * 40, 2),
            f.user(T100),
            f.assistant(T100),
            f.user(T100),
        ]
    )
    # a1 is not in the context any more: the summary (10) + u2 and the three messages after, no usage.
    assert _plan(not_kept, 150).tokens_before == 10 + 400
    no_compaction = f.chain(
        [f.user(T100), f.assistant(T100, usage=f.usage(input=50_000, output=100)), f.user(T100), f.user(T100)]
    )
    assert _plan(no_compaction, 150).tokens_before == 50_100 + 200


def test_tokens_before_counts_a_kept_reply_from_before_the_compaction():  # the delta's A.3 example
    path = f.chain(
        [
            f.user("u1"),
            f.assistant("a1", usage=f.usage(input=1400, output=100)),
            f.user("u2"),
            f.assistant("a2", usage=f.usage(input=5400, output=100)),
            f.compaction("s", 2),
            f.user("x" * 3200),
            f.assistant("", stop_reason="aborted"),
        ]
    )
    assert _plan(path, 1).tokens_before == 5500 + 800  # 0.58.3: 808


def test_usage_after_the_compaction_is_used_for_tokens_before():
    path = f.chain(
        [
            f.user(T100),
            f.compaction("summary", 0),
            f.user(T100),
            f.assistant(T100, usage=f.usage(input=7000, output=30)),
            f.tool_result("c", "bash", T100),
            f.user(T100),
        ]
    )
    assert _plan(path, 150).tokens_before == 7030 + 200


def test_custom_messages_and_branch_summaries_are_summarised_as_context_messages():
    path = f.chain(
        [
            f.branch_summary("BRANCH"),
            f.custom_message("note", "NOTE" + T100),
            f.user("u" + T100),
            f.assistant(T100),
            f.user(T100),
            f.assistant(T100),
        ]
    )
    plan = _plan(path, 150)
    roles = [m["role"] for m in plan.messages_to_summarize]
    assert roles == ["branchSummary", "custom", "user", "assistant"]
    assert plan.messages_to_summarize[1]["content"] == "NOTE" + T100


def test_metadata_is_pulled_into_the_kept_region():
    path = f.chain(
        [
            f.user(T100),
            f.assistant(T100),
            f.model_change("openai", "gpt-4"),
            f.label("00000001", "x"),
            f.user(T100),
        ]
    )
    plan = _plan(path, 50)
    assert plan.first_kept_entry_id == path[2]["id"]
    assert plan.kept_entry_ids == [path[4]["id"]]  # metadata contributes no message
    assert plan.entry_tokens[path[2]["id"]] == 0


def test_deviation_2_oversized_tail_still_summarises_older_turns():
    path = f.chain(
        [
            f.user("old" + T100),
            f.assistant(T100),
            f.user("now"),
            f.assistant(tool_calls=[f.tool_call("bash", {"command": "cat big"}, "c1")]),
            f.tool_result("c1", "bash", "y" * 80_000),
        ]
    )
    plan = _plan(path, 5000)
    assert plan.tail_over_budget
    assert plan.first_kept_entry_id == path[3]["id"]
    assert plan.summarize_entry_ids == [path[0]["id"], path[1]["id"]]
    assert plan.turn_prefix_entry_ids == [path[2]["id"]]
    assert plan.kept_tokens >= 5000
    assert plan.to_json()["tailOverBudget"] is True


def test_deviation_3_split_turn_without_history_keeps_the_previous_summary():
    # The previous compaction kept the open turn from its prompt on; the new cut splits it again.
    path = f.chain(
        [
            f.user(T100),
            f.assistant(T100),
            f.user("go"),
            f.assistant(T100, tool_calls=[f.tool_call("write", {"path": "w.py"}, "c1")]),
            f.compaction("EARLIER WORK", 2),
            f.tool_result("c1", "write", T100),
            f.assistant(T100),
        ]
    )
    plan = _plan(path, 150)
    assert plan.is_split_turn and plan.messages_to_summarize == []
    assert plan.history_empty
    assert plan.previous_summary == "EARLIER WORK"
    assert plan.turn_prefix_entry_ids == [path[2]["id"], path[3]["id"], path[5]["id"]]
    assert plan.file_ops.written == {"w.py"}
    assert plan.to_json()["historyEmpty"] is True


def test_calibration_scales_keep_by_the_usage_ratio():
    # The large-session fixture's figures: a prompt of 177,604 real tokens for 124,661 estimated.
    last = f.assistant("ok", usage=f.usage(output=53, cache_read=176_585, cache_write=1019, total=0))
    path = f.chain([f.user("x" * (124_660 * 4)), last])
    keep, ratio = calibrate_keep_recent_tokens(path, 20_000)  # the path estimates 124,661
    assert keep == 14_038
    assert abs(ratio - 177_604 / 124_661) < 1e-12
    result = prepare_compaction(path, keep_recent_tokens=20_000)
    assert isinstance(result, PlanSkip)  # a single user turn: nothing before the kept region
    assert result.tokens_before == 177_657


def test_calibration_applies_in_the_plan_only_when_real_exceeds_estimate():
    def session(input_tokens):
        return f.chain(
            [
                f.user("x" * 40_000),
                f.assistant("a" * 40_000),
                f.user("y" * 40_000),
                f.assistant("b" * 40_000, usage=f.usage(input=input_tokens)),
            ]
        )

    hot = prepare_compaction(session(80_000), keep_recent_tokens=15_000)
    assert hot.calibration_ratio == 2.0 and hot.keep_recent_tokens == 7_500
    assert hot.first_kept_index == 3 and hot.is_split_turn
    cold = prepare_compaction(session(20_000), keep_recent_tokens=15_000)
    assert cold.calibration_ratio == 0.5 and cold.keep_recent_tokens == 15_000
    assert cold.first_kept_index == 2
    off = prepare_compaction(session(80_000), keep_recent_tokens=15_000, calibrate=False)
    assert off.calibration_ratio is None and off.first_kept_index == 2
    none = prepare_compaction(f.chain([f.user("x" * 40_000), f.user("y" * 40_000)]), keep_recent_tokens=5_000)
    assert none.calibration_ratio is None and none.keep_recent_tokens == 5_000


def test_pruned_outputs_are_planned_at_their_pruned_size():
    entries = [
        f.user("go"),
        f.assistant(tool_calls=[f.tool_call("bash", {"command": "x"}, "c1")]),
        f.tool_result("c1", "bash", "z" * 200_000),
        f.user(T100),
        f.assistant(T100),
    ]
    path = f.chain(
        [*entries, f.custom(PRUNE_CUSTOM_TYPE, {"entries": {"00000003": 50_000}, "tokensSaved": 1})]
    )
    plan = _plan(path, 150)
    assert plan.entry_tokens["00000003"] == estimate_tokens(
        {"role": "toolResult", "content": [{"type": "text", "text": "[Output truncated - 50000 tokens]"}]}
    )
    assert plan.messages_to_summarize[2]["content"][0]["text"] == "[Output truncated - 50000 tokens]"
    assert path[2]["message"]["content"][0]["text"] == "z" * 200_000  # the session itself is untouched


def test_to_json_is_serialisable_and_complete():
    path = f.chain([f.user("u" + T100), f.assistant("a"), f.user(T100), f.assistant(T100)])
    data = _plan(path, 150).to_json()
    json.dumps(data)
    for key in (
        "firstKeptEntryId",
        "isSplitTurn",
        "turnStartId",
        "tokensBefore",
        "summarizeEntryIds",
        "turnPrefixEntryIds",
        "entryTokens",
        "keepRecentTokens",
        "keptTokens",
        "summarizedTokens",
        "fileOps",
    ):
        assert key in data
    assert data["firstKeptEntryId"] == path[2]["id"] and data["skip"] is False


def test_fixture_like_session_with_two_compactions():
    entries = []
    for segment in range(3):
        for turn in range(12):
            entries.append(f.user(f"s{segment}t{turn} " + T100))
            for call in range(3):
                cid = f"s{segment}t{turn}c{call}"
                entries.append(
                    f.assistant("x" * 80, tool_calls=[f.tool_call("edit", {"path": f"f{call}.py"}, cid)])
                )
                entries.append(f.tool_result(cid, "edit", "r" * 3000))
            entries.append(f.assistant("y" * 200, usage=f.usage(input=150_000 + turn, output=50)))
        if segment < 2:
            entries.append(
                f.compaction(
                    f"summary {segment}",
                    len(entries) - 9,
                    details={"readFiles": [], "modifiedFiles": ["f0.py"]},
                )
            )
    entries.append(f.thinking_change("off"))
    path = f.chain(entries)
    plan = _plan(path, 20_000)
    compactions = [i for i, e in enumerate(path) if e["type"] == "compaction"]
    kept_by_latest = path[compactions[-1]]["firstKeptEntryId"]
    assert plan.boundary_start == next(i for i, e in enumerate(path) if e["id"] == kept_by_latest)
    assert plan.boundary_start < compactions[-1]
    assert plan.previous_summary == "summary 1"
    assert plan.tokens_before == 150_011 + 50  # the last usage, then only a settings entry follows
    assert entry_to_message(path[plan.first_kept_index])["role"] in ("user", "assistant")
    # pi moved the cut past the tool result where the budget was reached: it sits just before.
    crossing = path[plan.first_kept_index - 1]
    assert crossing["message"]["role"] == "toolResult"
    assert plan.kept_tokens < 20_000 <= plan.kept_tokens + plan.entry_tokens[crossing["id"]]
    assert plan.file_ops.edited >= {"f0.py", "f1.py", "f2.py"}


def _message_ids(entries):
    return [e["id"] for e in entries if compaction_input_message(e) is not None]


@settings(max_examples=300, deadline=None)
@given(paths(min_chunks=1), st.integers(min_value=1, max_value=30_000), st.booleans())
def test_property_plan_partitions_the_boundary_range(path, keep, calibrate):
    plan = prepare_compaction(path, keep_recent_tokens=keep, calibrate=calibrate)
    if isinstance(plan, PlanSkip):
        assert plan.reason in (SKIP_ALREADY_COMPACTED, SKIP_TOO_SMALL, SKIP_NOTHING_TO_SUMMARIZE)
        return
    start, end = plan.boundary_start, plan.boundary_end
    assert end == len(path)
    previous = max((i for i, e in enumerate(path) if e["type"] == "compaction"), default=-1)
    if previous < 0:
        assert start == 0
    elif path[start]["id"] != path[previous]["firstKeptEntryId"]:
        assert start == previous + 1  # pi's fallback when the kept entry is not on the path
    turn_start = plan.turn_start_index if plan.is_split_turn else plan.first_kept_index
    assert start <= plan.history_end == turn_start <= plan.first_kept_index < end
    ordered = plan.summarize_entry_ids + plan.turn_prefix_entry_ids + plan.kept_entry_ids
    assert ordered == _message_ids(path[start:end])  # in order, no overlap, nothing lost
    assert plan.messages_to_summarize or plan.turn_prefix_messages
    assert plan.history_empty == (plan.is_split_turn and not plan.messages_to_summarize)
    first_kept = path[plan.first_kept_index]
    assert not (first_kept["type"] == "message" and first_kept["message"]["role"] == "toolResult")
    assert plan.summarized_tokens + plan.turn_prefix_tokens + plan.kept_tokens == sum(
        plan.entry_tokens.values()
    )


@settings(max_examples=300, deadline=None)
@given(paths(min_chunks=1), st.integers(min_value=1, max_value=30_000))
def test_property_kept_plus_preceding_tool_results_hold_the_budget(path, keep):
    plan = prepare_compaction(path, keep_recent_tokens=keep, calibrate=False)
    if not isinstance(plan, CompactionPlan):
        return
    counted = [e for e in path[plan.boundary_start :] if e["type"] == "message"]
    if sum(estimate_tokens(e["message"]) for e in counted) < keep:
        return
    j = plan.first_kept_index
    while j > plan.boundary_start and (
        # Since pi 0.73.1 the range can hold the previous compaction entry: not a cut point either.
        path[j - 1]["type"]
        in ("label", "custom", "model_change", "thinking_level_change", "session_info", "compaction")
        or path[j - 1].get("message", {}).get("role") == "toolResult"
    ):
        j -= 1
    tail = sum(estimate_tokens(e["message"]) for e in path[j:] if e["type"] == "message")
    assert tail >= keep
