"""Branch summaries (pi §7): which entries, the token budget filled newest first, the prompt and the text."""

from __future__ import annotations

import prompts
from tests import factories as f
from tests.compaction_helpers import T100, RecordingSummarizer, msg, new_store
from tui.compaction.branch_summary import (
    BranchPreparation,
    collect_entries_for_branch_summary,
    generate_branch_summary,
    prepare_branch_entries,
)
from tui.compaction.file_ops import FileOps
from tui.compaction.tokens import estimate_tokens
from tui.session.context import entry_to_message


def fork(tmp_path):
    """u1 → a1 → {u2 → a2 (old leaf), u3 (target)}; returns the store and the entries by name."""
    store = new_store(tmp_path, [])
    e = {"u1": store.append_message(msg(f.user("one"))), "a1": store.append_message(msg(f.assistant("A1")))}
    e["u2"] = store.append_message(msg(f.user("two")))
    e["a2"] = store.append_message(msg(f.assistant("A2")))
    store.branch(e["a1"]["id"])
    e["u3"] = store.append_message(msg(f.user("three")))
    store.branch(e["a2"]["id"])
    return store, e


def test_collects_from_the_old_leaf_to_the_common_ancestor(tmp_path):
    store, e = fork(tmp_path)
    branch = collect_entries_for_branch_summary(store.tree, e["a2"]["id"], e["u3"]["id"])
    assert branch.common_ancestor_id == e["a1"]["id"]
    assert [x["id"] for x in branch.entries] == [e["u2"]["id"], e["a2"]["id"]]  # chronological


def test_target_on_the_old_path_is_its_own_ancestor_and_no_leaf_means_nothing(tmp_path):
    store, e = fork(tmp_path)
    branch = collect_entries_for_branch_summary(store.tree, e["a2"]["id"], e["u2"]["id"])
    assert branch.common_ancestor_id == e["u2"]["id"] and [x["id"] for x in branch.entries] == [e["a2"]["id"]]
    empty = collect_entries_for_branch_summary(store.tree, None, e["u2"]["id"])
    assert empty.entries == [] and empty.common_ancestor_id is None


def test_leaf_markers_are_not_collected(tmp_path):
    store, e = fork(tmp_path)  # fork() wrote leaf markers while branching
    store.append_message(msg(f.assistant("after the marker")))
    branch = collect_entries_for_branch_summary(store.tree, store.leaf_id, e["u3"]["id"])
    assert all(x["type"] == "message" for x in branch.entries)


def test_prepare_skips_tool_results_and_keeps_file_ops_of_calls():
    entries = f.chain(
        [
            f.user("start"),
            f.assistant("", [f.tool_call("write", {"path": "w.py"}, "c1")]),
            f.tool_result("c1", "write", "written " * 50),
            f.custom("kompakt.leaf"),
            f.custom_message("note", "a note"),
        ]
    )
    prepared = prepare_branch_entries(entries)
    assert [m["role"] for m in prepared.messages] == ["user", "assistant", "custom"]
    assert prepared.file_ops.written == {"w.py"}
    assert prepared.total_tokens == sum(estimate_tokens(m) for m in prepared.messages)


def test_budget_is_filled_newest_first_and_the_breaking_message_still_counts_its_files():
    entries = f.chain(
        [
            f.user("old " + T100),
            f.assistant("", [f.tool_call("read", {"path": "old.py"}, "c1")]),
            f.user("new " + T100),
            f.assistant("newest " + T100),
        ]
    )
    tokens = [estimate_tokens(entry_to_message(e)) for e in entries]
    two_newest = tokens[2] + tokens[3]
    prepared = prepare_branch_entries(entries, token_budget=two_newest + tokens[1] - 1)
    assert [m["role"] for m in prepared.messages] == ["user", "assistant"]
    assert prepared.messages[0]["content"].startswith("new ")
    assert prepared.total_tokens == two_newest
    assert prepared.file_ops.read == {"old.py"}  # read from the call that broke the budget
    roomy = prepare_branch_entries(entries, token_budget=sum(tokens) - 1)
    assert len(roomy.messages) == 3 and roomy.messages[0]["role"] == "assistant"


def test_a_summary_entry_beyond_the_budget_still_goes_in_below_ninety_percent():
    summary = f.branch_summary("S" * 800)  # 200 tokens
    entries = f.chain([summary, f.user("u " + T100)])
    user_tokens = estimate_tokens(entry_to_message(entries[1]))
    within_90 = prepare_branch_entries(entries, token_budget=user_tokens + 100)
    assert [m["role"] for m in within_90.messages] == ["branchSummary", "user"]
    # Over 90 % already used: the summary is left out.
    over_90 = prepare_branch_entries(entries, token_budget=int(user_tokens / 0.95))
    assert [m["role"] for m in over_90.messages] == ["user"]
    # A plain message that breaks the budget never goes in.
    plain = prepare_branch_entries(
        f.chain([f.user("p " * 400), f.user("u " + T100)]), token_budget=user_tokens + 100
    )
    assert len(plain.messages) == 1


def test_file_ops_are_seeded_from_branch_summaries_not_written_by_hooks():
    entries = f.chain(
        [
            f.branch_summary("s1", details={"readFiles": ["r.py"], "modifiedFiles": ["m.py"]}),
            f.branch_summary("s2", details={"readFiles": ["hook.py"]}, from_hook=True),
            f.compaction("c", 0, details={"readFiles": ["compacted.py"]}),
        ]
    )
    ops = prepare_branch_entries(entries).file_ops
    assert ops.read == {"r.py"} and ops.edited == {"m.py"}


async def test_no_messages_gives_no_summary_and_no_call():
    # Delta B.1: never a "No content to summarize" summary (it would be sent on every later turn).
    fake = RecordingSummarizer()
    assert await generate_branch_summary(BranchPreparation([]), fake) is None
    assert await generate_branch_summary(BranchPreparation([]), None) is None
    assert not fake.calls


async def test_summary_is_preamble_notes_and_file_tags():
    ops = FileOps(read={"r.py"}, edited={"e.py"})
    fake = RecordingSummarizer(reply=lambda p: "BRANCH NOTES")
    result = await generate_branch_summary(BranchPreparation([msg(f.user("try x"))], ops), fake)
    assert result.summary == (
        prompts.load("branch_summary_preamble")
        + "\n\nBRANCH NOTES\n\n<read-files>\nr.py\n</read-files>\n\n<modified-files>\ne.py\n</modified-files>"
    )
    assert (result.read_files, result.modified_files) == (["r.py"], ["e.py"])
    (call,) = fake.calls
    assert call.max_tokens == 2048 and call.system == prompts.load("summary_system")
    assert call.prompt == "<conversation>\n[User]: try x\n</conversation>\n\n" + prompts.load(
        "branch_summary"
    )


async def test_custom_instructions_are_a_focus_or_replace_the_prompt():  # behaviour 84
    prepared = BranchPreparation([msg(f.user("x"))])
    fake = RecordingSummarizer()
    await generate_branch_summary(prepared, fake, "the API changes")
    assert fake.calls[0].prompt.endswith(
        prompts.load("branch_summary") + "\n\nAdditional focus: the API changes"
    )
    await generate_branch_summary(prepared, fake, "Only list the files.", replace_instructions=True)
    assert fake.calls[1].prompt.endswith("</conversation>\n\nOnly list the files.")
    assert prompts.load("branch_summary") not in fake.calls[1].prompt


async def test_without_a_summarizer_the_notes_are_deterministic():
    prepared = BranchPreparation([msg(f.user("explore the cache idea"))])
    result = await generate_branch_summary(prepared, None)
    assert result.summary.startswith(prompts.load("branch_summary_preamble"))
    assert "explore the cache idea" in result.summary
