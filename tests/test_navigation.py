"""navigate_tree: pi's "After Enter" (behaviours 77–84), labels, tree hooks and aborts."""

from __future__ import annotations

import asyncio

import pytest

import prompts
from tests import factories as f
from tests.compaction_helpers import RecordingSummarizer, compaction_settings, msg, new_store
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tui.agent.navigation import navigate_tree
from tui.agent.provider import Provider
from tui.agent.retry import RetryPolicy
from tui.agent.summary_model import provider_summarize_fn
from tui.compaction.errors import SummaryError
from tui.hooks import HookRunner
from tui.session.entries import LEAF_CUSTOM_TYPE, is_custom
from tui.session.store import SessionStore


def linear(tmp_path):
    """u1 → a1 → u2 → a2 → u3 → a3 (leaf), a2 reading r.py and writing w.py."""
    store = new_store(tmp_path, [])
    e = {}
    e["u1"] = store.append_message(msg(f.user("first question")))
    e["a1"] = store.append_message(msg(f.assistant("first answer")))
    e["u2"] = store.append_message(
        msg(f.user([{"type": "text", "text": "second "}, {"type": "text", "text": "question"}]))
    )
    e["a2"] = store.append_message(
        msg(
            f.assistant(
                "",
                [f.tool_call("read", {"path": "r.py"}, "c1"), f.tool_call("write", {"path": "w.py"}, "c2")],
            )
        )
    )
    e["u3"] = store.append_message(msg(f.user("third question")))
    e["a3"] = store.append_message(msg(f.assistant("third answer")))
    return store, e


def real_entries(store: SessionStore) -> list[dict]:
    return [x for x in store.entries if not is_custom(x, LEAF_CUSTOM_TYPE)]


async def navigate(store, target_id, *, summarize=False, summarize_fn=None, **kwargs):
    return await navigate_tree(
        store,
        target_id,
        summarize=summarize,
        summarize_fn=summarize_fn,
        settings=compaction_settings(),
        context_window=kwargs.pop("context_window", 100_000),
        **kwargs,
    )


async def test_root_user_message_without_summary_resets_the_leaf(tmp_path):  # behaviour 77
    store, e = linear(tmp_path)
    before = real_entries(store)
    result = await navigate(store, e["u1"]["id"])
    assert result.editor_text == "first question"
    assert result.new_leaf_id is None and store.leaf_id is None
    assert result.summary_entry is None and not result.cancelled
    assert real_entries(store) == before
    assert SessionStore.open(store.path, read_only=True).leaf_id is None  # deviation 1


async def test_assistant_target_becomes_the_leaf(tmp_path):  # behaviour 78
    store, e = linear(tmp_path)
    result = await navigate(store, e["a1"]["id"])
    assert result.editor_text is None and result.new_leaf_id == store.leaf_id == e["a1"]["id"]


async def test_summary_to_the_root_user_message_is_a_new_root(tmp_path):  # behaviour 79
    store, e = linear(tmp_path)
    fake = RecordingSummarizer(reply=lambda p: "NOTES")
    result = await navigate(store, e["u1"]["id"], summarize=True, summarize_fn=fake)
    entry = result.summary_entry
    assert entry["type"] == "branch_summary" and entry["parentId"] is None and entry["fromId"] == "root"
    assert store.leaf_id == entry["id"] == result.new_leaf_id
    assert result.editor_text == "first question"
    # The target itself is the common ancestor: everything after it is summarised, not the target.
    prompt = fake.calls[0].prompt
    assert "first question" not in prompt and "first answer" in prompt and "third answer" in prompt


async def test_summary_to_a_nested_user_message_hangs_from_its_parent(tmp_path):  # behaviour 80
    store, e = linear(tmp_path)
    fake = RecordingSummarizer(reply=lambda p: "NOTES")
    result = await navigate(store, e["u2"]["id"], summarize=True, summarize_fn=fake)
    entry = result.summary_entry
    assert entry["parentId"] == e["a1"]["id"]
    assert store.tree.children[e["a1"]["id"]] == [e["u2"]["id"], entry["id"]]
    assert result.editor_text == "second question"
    prompt = fake.calls[0].prompt
    assert "third question" in prompt and "second question" not in prompt  # u2 is the common ancestor
    assert entry["summary"].startswith(prompts.load("branch_summary_preamble") + "\n\nNOTES")
    assert entry["details"] == {"readFiles": ["r.py"], "modifiedFiles": ["w.py"]}
    assert "<modified-files>\nw.py\n</modified-files>" in entry["summary"]
    assert "fromHook" not in entry
    # The context at the new leaf ends with the summary.
    assert store.build_context().messages[-1]["role"] == "branchSummary"


async def test_summary_to_an_assistant_entry_hangs_from_it(tmp_path):  # behaviour 81
    store, e = linear(tmp_path)
    result = await navigate(store, e["a1"]["id"], summarize=True, summarize_fn=RecordingSummarizer())
    assert result.summary_entry["parentId"] == e["a1"]["id"] and store.leaf_id == result.summary_entry["id"]
    assert result.editor_text is None


async def test_abort_during_the_summary_changes_nothing(tmp_path):  # behaviour 82
    store, e = linear(tmp_path)
    count, leaf = len(store.entries), store.leaf_id
    fake = RecordingSummarizer(gate=asyncio.Event())
    abort = asyncio.Event()
    task = asyncio.create_task(navigate(store, e["u2"]["id"], summarize=True, summarize_fn=fake, abort=abort))
    await fake.started.wait()
    abort.set()
    result = await task
    assert result.cancelled and result.aborted and result.summary_entry is None
    assert len(store.entries) == count and store.leaf_id == leaf


async def test_a_cancelled_summary_call_is_an_abort_but_a_cancelled_caller_propagates(tmp_path):
    store, e = linear(tmp_path)
    count = len(store.entries)
    result = await navigate(
        store, e["u2"]["id"], summarize=True, summarize_fn=RecordingSummarizer(fail=asyncio.CancelledError())
    )
    assert result.cancelled and result.aborted
    fake = RecordingSummarizer(gate=asyncio.Event())
    task = asyncio.create_task(navigate(store, e["u2"]["id"], summarize=True, summarize_fn=fake))
    await fake.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(store.entries) == count


async def test_navigating_to_the_current_leaf_is_a_no_op(tmp_path):  # behaviour 83
    store, e = linear(tmp_path)
    count = len(store.entries)
    result = await navigate(store, e["a3"]["id"], summarize=True, summarize_fn=RecordingSummarizer())
    assert not result.cancelled and result.summary_entry is None and result.new_leaf_id == e["a3"]["id"]
    assert len(store.entries) == count


async def test_custom_instructions_become_the_focus(tmp_path):  # behaviour 84
    store, e = linear(tmp_path)
    fake = RecordingSummarizer()
    await navigate(store, e["a1"]["id"], summarize=True, summarize_fn=fake, custom_instructions="the tests")
    assert fake.calls[0].prompt.endswith("\n\nAdditional focus: the tests")


async def test_a_summary_failure_raises_and_leaves_the_session_unchanged(tmp_path):
    store, e = linear(tmp_path)
    count, leaf = len(store.entries), store.leaf_id
    with pytest.raises(SummaryError, match="Branch summary failed: down"):
        await navigate(
            store, e["a1"]["id"], summarize=True, summarize_fn=RecordingSummarizer(fail=OSError("down"))
        )
    assert len(store.entries) == count and store.leaf_id == leaf


async def test_custom_message_target_is_re_edited_from_its_parent(tmp_path):
    store, e = linear(tmp_path)
    note = store.append_custom_message("note", [{"type": "text", "text": "injected"}])
    store.append_message(msg(f.assistant("after")))
    result = await navigate(store, note["id"])
    assert result.editor_text == "injected" and store.leaf_id == e["a3"]["id"]


async def test_label_goes_on_the_summary_or_on_the_target(tmp_path):
    store, e = linear(tmp_path)
    result = await navigate(
        store, e["a1"]["id"], summarize=True, summarize_fn=RecordingSummarizer(), label="tried"
    )
    assert store.label_of(result.summary_entry["id"]) == "tried"
    assert store.entries[-1]["type"] == "label" and store.leaf_id == store.entries[-1]["id"]
    store2, e2 = linear(tmp_path / "b")
    await navigate(store2, e2["a1"]["id"], label="checkpoint")
    assert store2.label_of(e2["a1"]["id"]) == "checkpoint"


async def test_offline_summary_is_deterministic(tmp_path):
    store, e = linear(tmp_path)
    result = await navigate(store, e["a1"]["id"], summarize=True, summarize_fn=None)
    assert "second question" in result.summary_entry["summary"]


# --- tree hooks ------------------------------------------------------------------------------------


async def test_before_tree_hook_can_cancel(tmp_path):
    store, e = linear(tmp_path)
    runner = HookRunner()
    seen = []
    runner.on("session_before_tree", lambda event: seen.append(event) or {"cancel": True})
    fake = RecordingSummarizer()
    count, leaf = len(store.entries), store.leaf_id
    result = await navigate(store, e["u2"]["id"], summarize=True, summarize_fn=fake, hooks=runner, label="x")
    assert result.cancelled and not result.aborted and not fake.calls
    assert len(store.entries) == count and store.leaf_id == leaf
    prep = seen[0]["preparation"]
    assert prep["targetId"] == e["u2"]["id"] and prep["oldLeafId"] == e["a3"]["id"]
    assert prep["commonAncestorId"] == e["u2"]["id"] and prep["userWantsSummary"] is True
    assert [x["id"] for x in prep["entriesToSummarize"]] == [e["a2"]["id"], e["u3"]["id"], e["a3"]["id"]]
    assert prep["label"] == "x"


async def test_before_tree_fires_without_a_summary_too_and_its_summary_is_then_ignored(tmp_path):
    store, e = linear(tmp_path)
    runner = HookRunner()
    seen = []
    runner.on("session_before_tree", lambda event: seen.append(event) or {"summary": {"summary": "HOOK"}})
    result = await navigate(store, e["a1"]["id"], hooks=runner)
    assert seen and seen[0]["preparation"]["userWantsSummary"] is False
    assert result.summary_entry is None and store.leaf_id == e["a1"]["id"]


async def test_hook_summary_is_stored_from_the_hook(tmp_path):
    store, e = linear(tmp_path)
    runner = HookRunner()
    runner.on(
        "session_before_tree", lambda event: {"summary": {"summary": "HOOK NOTES", "details": {"k": 1}}}
    )
    after = []
    runner.on("session_tree", after.append)
    fake = RecordingSummarizer()
    result = await navigate(store, e["a1"]["id"], summarize=True, summarize_fn=fake, hooks=runner)
    assert not fake.calls
    entry = result.summary_entry
    assert entry["summary"] == "HOOK NOTES" and entry["details"] == {"k": 1} and entry["fromHook"] is True
    assert after == [
        {
            "type": "session_tree",
            "newLeafId": entry["id"],
            "oldLeafId": e["a3"]["id"],
            "summaryEntry": entry,
            "fromExtension": True,
        }
    ]


async def test_hook_overrides_instructions_and_label(tmp_path):
    store, e = linear(tmp_path)
    runner = HookRunner()
    runner.on(
        "session_before_tree",
        lambda event: {
            "customInstructions": "HOOK INSTRUCTIONS",
            "replaceInstructions": True,
            "label": "hooked",
        },
    )
    fake = RecordingSummarizer()
    result = await navigate(
        store, e["a1"]["id"], summarize=True, summarize_fn=fake, hooks=runner, custom_instructions="mine"
    )
    assert fake.calls[0].prompt.endswith("</conversation>\n\nHOOK INSTRUCTIONS")
    assert store.label_of(result.summary_entry["id"]) == "hooked"


async def test_session_tree_without_a_summary_has_no_from_extension(tmp_path):
    store, e = linear(tmp_path)
    runner = HookRunner()
    after = []
    runner.on("session_tree", after.append)
    await navigate(store, e["u1"]["id"], hooks=runner)
    assert after == [
        {"type": "session_tree", "newLeafId": None, "oldLeafId": e["a3"]["id"], "summaryEntry": None}
    ]


async def test_branch_summary_through_litellm(tmp_path, fake_openai: FakeOpenAI):
    fake_openai.queue(Reply.text_reply("## Objective\nTried a cache", chunk_size=5))
    provider = Provider(
        env={}, retry=RetryPolicy(max_retries=0), models={"openai/fake": {"apiBase": fake_openai.api_base}}
    )
    store, e = linear(tmp_path)
    result = await navigate(
        store, e["u2"]["id"], summarize=True, summarize_fn=provider_summarize_fn(provider, "openai/fake")
    )
    assert "\n\n## Objective\nTried a cache\n\n<read-files>" in result.summary_entry["summary"]
    request = fake_openai.requests[0]
    assert request["max_tokens"] == 2048
    assert "third question" in str(request["messages"][1]["content"])


# --- nothing abandoned, nothing written (delta B.1) -------------------------------------------------
async def test_a_descendant_target_with_summarize_only_moves_the_leaf(tmp_path):
    store, e = linear(tmp_path)
    store.branch(e["u2"]["id"])  # the old leaf is an ancestor of the target: nothing is abandoned
    fake = RecordingSummarizer()
    before = len(real_entries(store))
    result = await navigate(store, e["a3"]["id"], summarize=True, summarize_fn=fake)
    assert result.summary_entry is None and not fake.calls
    assert store.leaf_id == e["a3"]["id"] and len(real_entries(store)) == before
    assert not [x for x in store.entries if x["type"] == "branch_summary"]


async def test_an_abandoned_branch_without_messages_writes_no_summary(tmp_path):
    store, e = linear(tmp_path)
    store.branch(e["a1"]["id"])
    store.append_label(e["a1"]["id"], "mark")  # the abandoned segment: this label entry alone
    fake = RecordingSummarizer()
    result = await navigate(store, e["u3"]["id"], summarize=True, summarize_fn=fake)
    assert result.summary_entry is None and not fake.calls
    assert not [x for x in store.entries if x["type"] == "branch_summary"]
    assert store.leaf_id == e["a2"]["id"]  # a user message target: the leaf moves to its parent


async def test_an_empty_hook_summary_is_no_summary(tmp_path):
    store, e = linear(tmp_path)
    runner = HookRunner()
    runner.on("session_before_tree", lambda event: {"summary": {"summary": "   "}})
    fake = RecordingSummarizer(reply=lambda p: "NOTES")
    result = await navigate(store, e["a1"]["id"], summarize=True, summarize_fn=fake, hooks=runner)
    # pi treats an empty hook summary as none and summarises as usual; never an empty entry.
    assert result.summary_entry is not None and "NOTES" in result.summary_entry["summary"]
    assert result.summary_entry.get("fromHook") is None
