"""The cut point: pi's findCutPoint (§4.1–4.3, §12 behaviours 8–13, quirks) and deviation 2 (#7201)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests import factories as f
from tests.path_strategies import paths
from tui.compaction.cut_point import CutPoint, find_cut_point, find_turn_start_index, find_valid_cut_points
from tui.compaction.tokens import estimate_tokens


def _role(entry):
    return entry.get("message", {}).get("role") if entry["type"] == "message" else None


def _pairs(n: int, chars: int = 400) -> list[dict]:
    entries = []
    for i in range(n):
        entries += [f.user(f.text_of(chars, str(i % 10))), f.assistant(f.text_of(chars, "a"))]
    return f.chain(entries)


def test_valid_cut_points_exclude_tool_results_and_settings():
    path = f.chain(
        [
            f.user("u"),
            f.assistant(tool_calls=[f.tool_call("bash", {"command": "ls"}, "c")]),
            f.tool_result("c", "bash", "out"),
            f.thinking_change("high"),
            f.bash("ls", "x"),
            f.custom_message("note", "hi"),
            f.branch_summary("went elsewhere"),
            f.custom("ext", {}),
            f.label("00000001", "l"),
            f.model_change("openai", "gpt-4"),
            f.message({"role": "custom", "customType": "x", "content": "c", "display": True}),
        ]
    )
    assert find_valid_cut_points(path, 0, len(path)) == [0, 1, 4, 5, 6, 10]
    assert find_valid_cut_points(path, 2, 5) == [4]


def test_turn_start_is_user_bash_custom_message_or_branch_summary():
    path = f.chain(
        [f.user("u"), f.assistant("a"), f.bash("ls"), f.assistant("b"), f.custom_message("n", "c")]
    )
    assert find_turn_start_index(path, 1, 0) == 0
    assert find_turn_start_index(path, 3, 0) == 2
    assert find_turn_start_index(path, 4, 0) == 4  # inclusive
    assert find_turn_start_index(path, 1, 1) == -1  # never below start


def test_kept_entry_is_user_or_assistant_in_pairs():  # behaviour 8
    path = _pairs(10, 800)  # 200 tokens a message, 4000 in all
    cut = find_cut_point(path, 0, len(path), 2500)
    assert _role(path[cut.first_kept_index]) in ("user", "assistant")
    assert cut.first_kept_index > 0


def test_single_assistant_entry_keeps_index_zero():  # behaviour 9
    path = f.chain([f.assistant(f.text_of(8000))])
    assert find_cut_point(path, 0, 1, 1000) == CutPoint(0, -1, False)


def test_everything_fits_keeps_from_the_first_message():  # behaviour 10
    path = _pairs(2, 40)
    assert find_cut_point(path, 0, len(path), 50_000) == CutPoint(0, -1, False)


def test_cut_on_an_assistant_splits_the_turn():  # behaviour 11
    path = f.chain(
        [
            f.user("x" * 400),
            f.assistant("x" * 400),
            f.user("x" * 400),  # index 2 starts the turn being split
            f.assistant("x" * 400),
            f.assistant("x" * 400),
            f.assistant("x" * 400),
        ]
    )
    cut = find_cut_point(path, 0, len(path), 250)  # crosses at index 3
    assert cut == CutPoint(3, 2, True)


def test_cut_moves_forward_past_a_tool_result():  # behaviour 13
    path = f.chain(
        [
            f.user("x" * 400),
            f.assistant(tool_calls=[f.tool_call("bash", {"command": "ls"}, "c")]),
            f.tool_result("c", "bash", "y" * 4000),  # the crossing lands here
            f.assistant("x" * 400),
            f.user("x" * 400),
        ]
    )
    cut = find_cut_point(path, 0, len(path), 1000)
    # The next cut point at or after the tool result, not the tool result and not its call.
    assert cut.first_kept_index == 3
    assert cut.is_split_turn and cut.turn_start_index == 0
    # pi's rule, kept as is: the kept region then holds less than the budget.
    assert sum(estimate_tokens(e["message"]) for e in path[3:]) < 1000


def test_only_message_entries_count_toward_the_budget():
    path = f.chain(
        [f.user("x" * 400), f.assistant("x" * 400), f.custom_message("note", "z" * 40_000), f.user("u")]
    )
    # Counted, the 10k-token custom message would cross any of these budgets and take the cut.
    assert find_cut_point(path, 0, len(path), 100) == CutPoint(1, 0, True)
    assert find_cut_point(path, 0, len(path), 150) == CutPoint(0, -1, False)


def test_metadata_before_the_cut_is_pulled_into_the_kept_region():
    path = f.chain(
        [
            f.user("x" * 400),
            f.assistant("x" * 400),
            f.label("00000001", "start"),
            f.custom("ext.state", {}),
            f.model_change("openai", "gpt-4"),
            f.user("x" * 400),
            f.assistant("x" * 400),
        ]
    )
    cut = find_cut_point(path, 0, len(path), 200)
    assert cut.first_kept_index == 2


def test_pull_back_stops_at_a_compaction_and_at_start():
    path = f.chain(
        [
            f.user("x" * 400),
            f.compaction("s", 0),
            f.thinking_change("high"),
            f.user("x" * 400),
            f.assistant("x" * 400),
        ]
    )
    assert find_cut_point(path, 2, len(path), 100).first_kept_index == 4
    # The cut lands on the user at 3 and pulls the setting in, but never the compaction.
    assert find_cut_point(path, 0, len(path), 150).first_kept_index == 2
    path2 = f.chain([f.thinking_change("high"), f.user("x" * 400), f.assistant("x" * 400)])
    assert find_cut_point(path2, 1, 3, 150).first_kept_index == 1  # never before start


def test_quirk_settings_entry_before_user_reports_a_split_turn():
    with_settings = f.chain(
        [
            f.user("x" * 400),
            f.assistant("x" * 400),
            f.thinking_change("high"),
            f.user("x" * 400),
            f.assistant("a"),
        ]
    )
    assert find_cut_point(with_settings, 0, 5, 100) == CutPoint(2, 0, True)
    without = f.chain([f.user("x" * 400), f.assistant("x" * 400), f.user("x" * 400), f.assistant("a")])
    assert find_cut_point(without, 0, 4, 100) == CutPoint(2, -1, False)


def test_quirk_cut_on_bash_is_its_own_turn_start():
    path = f.chain([f.user("x" * 400), f.assistant("x" * 400), f.bash("make", "x" * 400), f.assistant("a")])
    assert find_cut_point(path, 0, 4, 100) == CutPoint(2, 2, True)


def test_no_cut_points_keeps_from_start():
    path = f.chain([f.user("u"), f.label("00000001", "l"), f.custom("x")])
    assert find_cut_point(path, 1, 3, 10) == CutPoint(1, -1, False)


def _oversized_tail() -> list[dict]:
    return f.chain(
        [
            f.user("x" * 400),
            f.assistant("x" * 400),
            f.user("x" * 400),
            f.assistant(
                tool_calls=[f.tool_call("bash", {"command": "a"}, "c1"), f.tool_call("bash", {}, "c2")]
            ),
            f.tool_result("c1", "bash", "y" * 40_000),
            f.tool_result("c2", "bash", "y" * 40_000),
        ]
    )


def test_deviation_2_cuts_before_an_oversized_tool_tail():
    path = _oversized_tail()
    cut = find_cut_point(path, 0, len(path), 5000)
    # pi would fall back to cut point 0 and keep everything; kompakt cuts at the last cut point
    # before the crossing (the assistant that made the calls) so the older turns are summarised.
    assert cut == CutPoint(3, 2, True, tail_over_budget=True)
    kept = sum(estimate_tokens(e["message"]) for e in path[cut.first_kept_index :])
    assert kept >= 5000


def test_deviation_2_not_applied_when_pi_finds_a_cut_point():
    path = _oversized_tail()
    assert not find_cut_point(path, 0, len(path), 100_000).tail_over_budget  # never crosses
    small = _pairs(5)
    assert not find_cut_point(small, 0, len(small), 300).tail_over_budget


def test_deviation_2_keeps_pi_fallback_with_a_single_cut_point():
    path = f.chain(
        [
            f.user("go"),
            f.tool_result("c1", "bash", "y" * 40_000),  # orphan results after the only cut point
        ]
    )
    assert find_cut_point(path, 0, 2, 100) == CutPoint(0, -1, False)


def test_fixture_like_session_cut_is_a_conversation_message():  # behaviour 12, on a synthetic session
    entries = []
    for turn in range(60):
        entries.append(f.user(f.text_of(300)))
        if turn % 7 == 0:
            entries.append(f.thinking_change("off"))
        for call in range(4):
            cid = f"t{turn}c{call}"
            args = {"command": "grep -rn foo src"} if call % 2 else {"path": f"src/m{call}.py"}
            name = "bash" if call % 2 else "read"
            entries.append(f.assistant(f.text_of(120), tool_calls=[f.tool_call(name, args, cid)]))
            entries.append(f.tool_result(cid, name, f.text_of(1600)))
        entries.append(f.assistant(f.text_of(500), usage=f.usage(input=1000 * turn)))
    path = f.chain(entries)
    for keep in (2500, 20_000, 50_000):
        cut = find_cut_point(path, 0, len(path), keep)
        assert _role(path[cut.first_kept_index]) in ("user", "assistant")
        assert cut.is_split_turn == (_role(path[cut.first_kept_index]) == "assistant")


def _boundary_start(path):
    return next((i + 1 for i in range(len(path) - 1, -1, -1) if path[i]["type"] == "compaction"), 0)


def _message_tokens(entries):
    return sum(estimate_tokens(e["message"]) for e in entries if e["type"] == "message")


@settings(max_examples=300, deadline=None)
@given(paths(), st.integers(min_value=1, max_value=30_000))
def test_property_cut_is_never_at_a_tool_result(path, keep):
    start = _boundary_start(path)
    cut = find_cut_point(path, start, len(path), keep)
    assert start <= cut.first_kept_index <= len(path)
    if cut.first_kept_index < len(path):
        assert _role(path[cut.first_kept_index]) != "toolResult"
    if cut.is_split_turn:
        assert start <= cut.turn_start_index <= cut.first_kept_index


@settings(max_examples=300, deadline=None)
@given(paths(), st.integers(min_value=1, max_value=30_000))
def test_property_kept_region_reaches_the_budget(path, keep):
    start = _boundary_start(path)
    end = len(path)
    cut = find_cut_point(path, start, end, keep)
    if _message_tokens(path[start:end]) < keep:
        return
    # pi moves a cut that lands on a tool result forward to the next cut point, so the kept region
    # plus the run of tool results (and metadata) right before it holds the budget.
    j = cut.first_kept_index
    while j > start and (_role(path[j - 1]) == "toolResult" or path[j - 1]["type"] not in _COUNTED_OR_CUT):
        j -= 1
    assert _message_tokens(path[j:end]) >= keep
    if cut.tail_over_budget:
        assert _message_tokens(path[cut.first_kept_index : end]) >= keep


_COUNTED_OR_CUT = {"message", "compaction", "custom_message", "branch_summary"}
