"""The compaction inspector's core: what a stored compaction summarised and kept, and its header facts.

The compactions are written by the real engine (fake summarizer, or litellm against the loopback server
for the cost), then taken apart by ``inspect_compaction`` from the session file read back.
"""

from __future__ import annotations

import pytest

from tests import factories as f
from tests.compaction_helpers import (
    T100,
    RecordingSummarizer,
    coding_session,
    compaction_settings,
    msg,
    new_store,
)
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tests.test_head_copy import _head as head_copy_head
from tests.test_head_copy import _turns as head_copy_turns
from tui.agent.provider import Provider
from tui.agent.retry import RetryPolicy
from tui.agent.summary_model import provider_summarize_fn
from tui.compaction.engine import CompactionDraft, commit_draft, compact_session, draft_compaction
from tui.compaction.inspect import NotACompaction, compactions_on, inspect_compaction, inspect_draft
from tui.compaction.tokens import estimate_tokens
from tui.session.context import entry_to_message
from tui.session.store import SessionStore


async def compact(store, summarize=None, *, keep=300, **kwargs):
    return await compact_session(
        store,
        reason="manual",
        settings=compaction_settings(keep=keep),
        summarize=summarize,
        context_window=100_000,
        max_output_tokens=8000,
        **kwargs,
    )


async def test_a_compaction_is_taken_apart_into_summarised_summary_and_kept(tmp_path):
    store = new_store(tmp_path, coding_session())
    result = await compact(store, RecordingSummarizer(), summary_model="openai/fake")
    path = SessionStore.open(store.path, read_only=True).get_branch()
    inspection = inspect_compaction(path, result.entry["id"])

    ids = [e["id"] for e in path]
    first_kept = ids.index(result.entry["firstKeptEntryId"])
    compaction_at = ids.index(result.entry["id"])
    assert [m.entry_id for m in inspection.summarised] == ids[:first_kept]
    assert [m.entry_id for m in inspection.kept] == ids[first_kept:compaction_at]
    by_id = {e["id"]: e for e in path}
    for row in [*inspection.summarised, *inspection.kept]:
        assert row.tokens == estimate_tokens(entry_to_message(by_id[row.entry_id]))
    assert inspection.summarised[0].text.startswith("user: Please fix the parser bug")
    assert inspection.summary == result.entry["summary"]
    assert inspection.read_files == ["a.py"] and inspection.modified_files == ["b.py"]
    assert inspection.previous_summary is None

    facts = inspection.facts
    assert facts.tokens_before == result.tokens_before and facts.tokens_after == result.tokens_after
    assert facts.tokens_before_measured is False  # the fixture's replies report no usage
    assert facts.tokens_after_measured is False
    assert facts.reason == "manual" and facts.summary_source == "model" and facts.model == "openai/fake"
    assert facts.keep_recent_tokens == 300 and facts.reserve_tokens == 16384
    assert facts.strategy == "keep-recent" and facts.duration_ms == result.duration_ms
    assert facts.cost_usd is None  # the fake summarizer has no meter

    as_json = inspection.to_json()
    assert as_json["facts"]["tokensBefore"] == result.tokens_before
    assert as_json["summarisedTokens"] == sum(m.tokens for m in inspection.summarised)


async def test_a_second_compaction_shows_the_previous_summary_and_starts_at_its_kept_entry(tmp_path):
    store = new_store(tmp_path, coding_session())
    first = await compact(store, RecordingSummarizer(reply=lambda p: "FIRST NOTES"))
    for text in ("next job " + T100, "done " + T100, "and more " + T100, "ok " + T100):
        store.append_message(
            msg(f.user(text)) if text.startswith(("next", "and")) else msg(f.assistant(text))
        )
    second = await compact(store, RecordingSummarizer(reply=lambda p: "SECOND NOTES"), keep=200)
    path = store.get_branch()
    assert compactions_on(path) == [first.entry["id"], second.entry["id"]]

    inspection = inspect_compaction(path, second.entry["id"])
    assert inspection.previous_compaction_id == first.entry["id"]
    assert inspection.previous_summary.startswith("FIRST NOTES")
    ids = [e["id"] for e in path]
    # pi 0.73.1: the range starts at the first compaction's kept entry; the compaction entry gives no row.
    start = ids.index(first.entry["firstKeptEntryId"])
    end = ids.index(second.entry["firstKeptEntryId"])
    expected = [i for i in ids[start:end] if i != first.entry["id"]]
    assert [m.entry_id for m in inspection.summarised] == expected
    assert all(m.role != "compactionSummary" for m in inspection.summarised + inspection.kept)

    # The first one can be inspected from a path that goes past it.
    assert inspect_compaction(path, first.entry["id"]).summary.startswith("FIRST NOTES")


def test_an_entry_that_is_not_a_compaction_is_refused(tmp_path):
    store = new_store(tmp_path, coding_session())
    with pytest.raises(NotACompaction):
        inspect_compaction(store.get_branch(), store.leaf_id)


def test_a_pi_written_compaction_has_unknown_facts_not_guesses(tmp_path):
    store = new_store(tmp_path, coding_session())
    kept = store.get_branch()[4]["id"]
    entry = store.append_compaction("pi's summary", kept, 1234)  # no details at all, as pi may write
    facts = inspect_compaction(store.get_branch(), entry["id"]).facts
    assert facts.tokens_before == 1234
    assert facts.tokens_before_measured is None and facts.model is None and facts.cost_usd is None
    assert facts.keep_recent_tokens is None and facts.duration_ms is None
    assert facts.tokens_after > 0  # estimated from the context the compaction builds


def loopback_provider(server: FakeOpenAI) -> Provider:
    return Provider(
        env={},
        retry=RetryPolicy(max_retries=0, base_delay_ms=1, max_retry_delay_ms=5),
        models={"openai/gpt-4o-mini": {"apiBase": server.api_base, "maxOutputTokens": 4000}},
    )


async def test_the_summary_calls_cost_and_usage_are_stored(tmp_path, fake_openai: FakeOpenAI):
    fake_openai.queue(
        Reply.text_reply("## Objective\nFix it", usage=(20_000, 1_000)),
        Reply.text_reply("Fixed.", usage=(500, 20)),
    )
    usage_session = coding_session()
    usage_session[3] = {**usage_session[3], "usage": {"input": 900, "output": 50, "totalTokens": 950}}
    store = new_store(tmp_path, usage_session)
    summarize = provider_summarize_fn(loopback_provider(fake_openai), "openai/gpt-4o-mini")
    result = await compact(store, summarize, keep=200, summary_model="openai/gpt-4o-mini")
    meta = result.entry["details"]["kompakt"]
    assert meta["summaryCalls"] == 2
    assert meta["summaryInputTokens"] == 20_500 and meta["summaryOutputTokens"] == 1_020
    assert meta["costUsd"] > 0
    assert meta["tokensBeforeMeasured"] is True  # a reply on the path reported usage
    facts = inspect_compaction(store.get_branch(), result.entry["id"]).facts
    assert facts.cost_usd == meta["costUsd"] and facts.model == "openai/gpt-4o-mini"


async def test_a_draft_writes_nothing_and_commits_to_the_same_entry(tmp_path):
    store = new_store(tmp_path, coding_session())
    before = store.path.read_bytes()
    summarizer = RecordingSummarizer(reply=lambda p: "DRAFT NOTES")
    draft = await draft_compaction(
        store,
        reason="manual",
        settings=compaction_settings(),
        summarize=summarizer,
        context_window=100_000,
        max_output_tokens=8000,
    )
    assert isinstance(draft, CompactionDraft)
    assert store.path.read_bytes() == before
    calls = len(summarizer.calls)
    result = await commit_draft(store, draft)
    assert len(summarizer.calls) == calls  # no second model call
    assert result.entry["summary"] == draft.summary and result.entry["summary"].startswith("DRAFT NOTES")
    assert result.entry["firstKeptEntryId"] == draft.first_kept_entry_id
    assert result.entry["details"] == draft.details


async def test_a_draft_for_a_session_that_moved_on_is_refused(tmp_path):
    from tui.compaction.engine import StaleDraft

    store = new_store(tmp_path, coding_session())
    draft = await draft_compaction(
        store,
        reason="manual",
        settings=compaction_settings(),
        summarize=None,
        context_window=100_000,
        max_output_tokens=8000,
    )
    store.append_message(msg(f.user("one more " + T100)))
    with pytest.raises(StaleDraft):
        await commit_draft(store, draft)
    assert not [e for e in store.entries if e["type"] == "compaction"]


async def test_head_tails_protected_head_is_its_own_part_not_kept(tmp_path):
    store = new_store(tmp_path, [e["message"] for e in [*head_copy_head(), *head_copy_turns(12)]])
    head_ids = [e["id"] for e in store.get_branch()[:3]]
    common = {
        "reason": "manual",
        "settings": compaction_settings(strategy="head-tail", reserve=0),
        "summarize": RecordingSummarizer(),
        "context_window": 20_000,
        "max_output_tokens": 4_000,
    }
    draft = await draft_compaction(store, **common)
    assert isinstance(draft, CompactionDraft)
    previewed = inspect_draft(store.get_branch(), draft)
    result = await compact_session(store, **common)
    stored = inspect_compaction(store.get_branch(), result.entry["id"])
    for inspection in (previewed, stored):
        assert [m.entry_id for m in inspection.protected] == head_ids
        assert not {m.entry_id for m in inspection.kept} & set(head_ids)
        assert inspection.kept[0].entry_id == inspection.first_kept_entry_id
        assert inspection.protected_tokens == sum(m.tokens for m in inspection.protected) > 0
    assert [m.entry_id for m in stored.kept] == [m.entry_id for m in previewed.kept]
    assert stored.to_json()["protected"][0]["entryId"] == head_ids[0]
    # keep-recent protects nothing.
    plain = new_store(tmp_path, coding_session(), name="k.jsonl")
    plain_result = await compact(plain)
    assert inspect_compaction(plain.get_branch(), plain_result.entry["id"]).protected == []
