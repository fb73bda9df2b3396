"""Tool-output pruning plans (oh-my-pi §5, DESIGN.md deviation 6)."""

from __future__ import annotations

from tests import factories as f
from tui.compaction.pruning import PrunePlan, plan_pruning, prune_entry_data
from tui.session.context import context_from_path
from tui.session.entries import PRUNE_CUSTOM_TYPE


def _turns(sizes: list[int], tool: str = "bash") -> list[dict]:
    """A user prompt then one tool call + result per size (in tokens), oldest first."""
    entries = [f.user("go")]
    for i, tokens in enumerate(sizes):
        entries.append(f.assistant(tool_calls=[f.tool_call(tool, {"command": "x"}, f"c{i}")]))
        entries.append(f.tool_result(f"c{i}", tool, f.text_of(tokens * 4)))
    entries.append(f.assistant("done"))
    return entries


def _result_ids(path: list[dict]) -> list[str]:
    return [e["id"] for e in path if e["type"] == "message" and e["message"]["role"] == "toolResult"]


def _notice_tokens(tokens: int) -> int:
    return -(-len(f"[Output truncated - {tokens} tokens]") // 4)


def test_protects_the_newest_40k_including_the_crossing_result():
    path = f.chain(_turns([10_000, 15_000, 15_000, 30_000, 20_000]))
    ids = _result_ids(path)
    plan = plan_pruning(path)
    # Newest first: 20k (acc 0), 30k (acc 20k) are protected; 15k arrives at 50k and is pruned.
    assert list(plan.entries) == [ids[0], ids[1], ids[2]]
    assert plan.entries == {ids[0]: 10_000, ids[1]: 15_000, ids[2]: 15_000}
    assert plan.tokens_saved == sum(t - _notice_tokens(t) for t in (10_000, 15_000, 15_000))


def test_nothing_below_the_minimum_saving():
    path = f.chain(_turns([19_000, 40_000]))
    assert plan_pruning(path) == PrunePlan()
    assert not plan_pruning(path)
    assert plan_pruning(path, minimum_savings=10_000).entries == {_result_ids(path)[0]: 19_000}


def _call(tool: str, tokens: int, call_id: str) -> list[dict]:
    return [
        f.assistant(tool_calls=[f.tool_call(tool, {"path": "p"}, call_id)]),
        f.tool_result(call_id, tool, f.text_of(tokens * 4)),
    ]


def test_read_and_skill_outputs_are_never_pruned_but_still_count():
    protected = [*_call("read", 30_000, "r"), *_call("skill", 30_000, "s"), *_call("bash", 45_000, "b")]
    assert plan_pruning(f.chain([f.user("go"), *protected])) == PrunePlan()
    path = f.chain([f.user("go"), *_call("bash", 25_000, "old"), *protected])
    assert plan_pruning(path).entries == {path[2]["id"]: 25_000}


def test_constants_are_parameters():
    path = f.chain(_turns([3_000, 3_000, 3_000]))
    ids = _result_ids(path)
    plan = plan_pruning(path, protect_tokens=3_000, minimum_savings=1_000, protected_tools=frozenset())
    assert list(plan.entries) == ids[:2]


def test_already_pruned_outputs_count_at_their_pruned_size_and_are_not_listed_again():
    entries = _turns([30_000, 30_000, 30_000, 30_000])
    path = f.chain(entries)
    ids = _result_ids(path)
    first = plan_pruning(path)
    assert list(first.entries) == ids[:2]
    pruned = f.chain([*entries, f.custom(PRUNE_CUSTOM_TYPE, prune_entry_data(first, pruned_at_ms=1))])
    assert plan_pruning(pruned) == PrunePlan()
    # A new large output makes the old protected ones prunable; the pruned ones stay out of the plan.
    more = f.chain([*entries, f.custom(PRUNE_CUSTOM_TYPE, prune_entry_data(first, 1)), *_turns([45_000])[1:]])
    assert list(plan_pruning(more).entries) == ids[2:4]


def test_only_outputs_still_in_context_are_considered():
    old = _turns([30_000, 30_000])
    new = _turns([45_000])[1:]
    path = f.chain([*old, f.compaction("summary", len(old)), *new])
    # The old outputs were compacted away: pruning them would save nothing.
    assert plan_pruning(path) == PrunePlan()
    kept = f.chain([*old, f.compaction("summary", 0), *new])
    assert list(plan_pruning(kept).entries) == _result_ids(kept)[:2]


def test_prune_entry_data_shape_is_what_the_context_builder_reads():
    path = f.chain(_turns([30_000, 30_000, 30_000]))
    plan = plan_pruning(path)
    data = prune_entry_data(plan, pruned_at_ms=1234)
    assert data == {"entries": plan.entries, "tokensSaved": plan.tokens_saved, "prunedAt": 1234}
    assert isinstance(prune_entry_data(plan)["prunedAt"], int)
    with_entry = f.chain([*path, f.custom(PRUNE_CUSTOM_TYPE, data)])
    context = context_from_path(with_entry)
    texts = [m["content"][0]["text"] for m in context.messages if m["role"] == "toolResult"]
    assert texts[0] == "[Output truncated - 30000 tokens]"
    assert texts[-1] == f.text_of(120_000)
    assert plan.to_json() == {"entries": plan.entries, "tokensSaved": plan.tokens_saved}
