"""AgentSession through litellm and the loopback server: automatic compaction (threshold, autoContinue,
overflow recovery with its one-attempt guard, pi behaviours 65–69), manual compaction, abort, retries,
user shell commands, model changes, context usage, navigation and the offline model end to end."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.agent_helpers import Recorder, assert_no_orphans, make_session, make_settings, messages_on_path
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tui.agent.events import (
    BranchSummaryEnd,
    BranchSummaryStart,
    BudgetUpdate,
    CompactionEnd,
    CompactionProgress,
    CompactionStart,
    Notice,
    RetryFinished,
    RetryScheduled,
    StateChange,
)
from tui.agent.offline import OFFLINE_MODEL, offline_reply
from tui.agent.session import AUTO_CONTINUE_TYPE, AgentBusyError, AgentSession
from tui.compaction.engine import CompactionResult, CompactionSkip
from tui.compaction.tokens import estimate_context_tokens, sum_tokens
from tui.config.model import Settings
from tui.hooks import HookRunner
from tui.session.context import message_text
from tui.session.entries import now_ms
from tui.session.store import SessionStore

SUMMARY = "SUMMARY: the user asked for two things and both were answered."
SMALL_WINDOW = 20_000  # threshold 20,000 − 16,384 = 3,616
BIG_WINDOW = 200_000  # threshold 183,616, as in pi's tests


async def fake_summarize(system_prompt: str, prompt: str, max_tokens: int) -> str:
    return SUMMARY


def compaction_settings(server: FakeOpenAI, window: int, **compaction: Any) -> Settings:
    return make_settings(
        server,
        context_window=window,
        compaction={"keepRecentTokens": 20, "autoContinue": False, **compaction},
    )


def compactions(session: AgentSession) -> list[dict]:
    return [e for e in session.store.entries if e["type"] == "compaction"]


def _usage(total: int) -> dict:
    cost = {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.0}
    return {"input": total, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total, "cost": cost}


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": now_ms()}


def reply(text: str, total: int, timestamp: int, stop: str = "stop") -> dict:
    """A stored assistant reply from the session's model (openai/fake)."""
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "litellm-completions",
        "provider": "openai",
        "model": "fake",
        "usage": _usage(total),
        "stopReason": stop,
        "timestamp": timestamp,
    }


# --- threshold compaction and autoContinue ------------------------------------------------------
async def test_threshold_compaction_appends_an_entry_and_rebuilds_the_context(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, compaction_settings(fake_openai, SMALL_WINDOW), summarize=fake_summarize)
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.text_reply("answer one", usage=(1000, 50)))
    await session.prompt("first task")
    assert compactions(session) == []  # 1,050 tokens: under the threshold

    fake_openai.queue(Reply.text_reply("answer two", usage=(3700, 50)))
    await session.prompt("second task")

    (entry,) = compactions(session)
    assert session.store.get_branch()[-1] is entry  # the compaction is the new leaf
    assert entry["summary"].startswith(SUMMARY)
    assert entry["firstKeptEntryId"] in session.store.tree.by_id and entry["tokensBefore"] > 0
    (start,) = events.of(CompactionStart)
    (end,) = events.of(CompactionEnd)
    assert start.reason == "threshold" and end.reason == "threshold"
    assert end.outcome == "result" and not end.will_retry and isinstance(end.result, CompactionResult)
    assert end.tokens_before == entry["tokensBefore"] and end.tokens_after is not None
    assert next(p.phase for p in events.of(CompactionProgress)) == "pruning"
    assert StateChange(False, True) in events.events and StateChange(False, False) in events.events

    context = session.store.build_context().messages
    assert context[0]["role"] == "compactionSummary" and SUMMARY in context[0]["summary"]
    assert fake_openai.hit_count == 2  # autoContinue is off

    fake_openai.queue(Reply.text_reply("answer three", usage=(400, 5)))
    await session.prompt("third task")
    sent = fake_openai.requests[-1]["messages"]
    assert SUMMARY in sent[1]["content"] and sent[-1] == {"role": "user", "content": "third task"}
    assert len(compactions(session)) == 1  # the pre-prompt check saw only stale usage


async def test_auto_continue_sends_the_synthetic_prompt(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    settings = compaction_settings(fake_openai, SMALL_WINDOW, autoContinue=True)
    session = make_session(tmp_path, settings, summarize=fake_summarize)
    fake_openai.queue(
        Reply.text_reply("answer one", usage=(1000, 50)),
        Reply.text_reply("answer two", usage=(3700, 50)),
        Reply.text_reply("carrying on", usage=(600, 10)),
    )
    await session.prompt("first task: " + "details " * 400)  # large enough for the summary to save space

    outcome = await session.prompt("second task")

    assert outcome is not None and message_text(outcome.message) == "carrying on"
    assert fake_openai.hit_count == 3
    path = session.store.get_branch()
    assert [e["type"] for e in path[-3:]] == ["compaction", "custom_message", "message"]
    synthetic = path[-2]
    assert synthetic["customType"] == AUTO_CONTINUE_TYPE
    assert fake_openai.requests[-1]["messages"][-1] == {"role": "user", "content": synthetic["content"]}
    assert "carry on" in synthetic["content"]


async def test_disabled_compaction_stops_only_the_automatic_kind(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    settings = compaction_settings(fake_openai, SMALL_WINDOW, enabled=False)
    session = make_session(tmp_path, settings, summarize=fake_summarize)
    fake_openai.queue(
        Reply.text_reply("answer one", usage=(1000, 50)), Reply.text_reply("answer two", usage=(3700, 50))
    )
    await session.prompt("first task")
    await session.prompt("second task")
    assert compactions(session) == []

    result = await session.compact()

    assert isinstance(result, CompactionResult) and len(compactions(session)) == 1


# --- overflow recovery ----------------------------------------------------------------------------
async def test_overflow_drops_the_error_compacts_and_retries_once(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, compaction_settings(fake_openai, SMALL_WINDOW), summarize=fake_summarize)
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.text_reply("answer one", usage=(1000, 50)))
    await session.prompt("first task")
    fake_openai.queue(Reply.context_overflow(), Reply.text_reply("recovered", usage=(900, 10)))
    budget_before = len(events.of(BudgetUpdate))

    outcome = await session.prompt("second task")

    assert outcome is not None and outcome.reason == "stop" and message_text(outcome.message) == "recovered"
    assert fake_openai.hit_count == 3
    (error,) = [
        e
        for e in session.store.entries
        if e["type"] == "message" and e["message"].get("stopReason") == "error"
    ]
    assert "maximum context length" in error["message"]["errorMessage"]
    path = session.store.get_branch()
    assert error not in path  # kept in the file, off the active path
    (entry,) = compactions(session)
    assert entry in path and entry["parentId"] == error["parentId"]
    (end,) = events.of(CompactionEnd)
    assert (end.reason, end.outcome, end.will_retry) == ("overflow", "result", True)
    # The overflowed call was refunded: used 1, back to 0, then 1 for the retry.
    assert [u.used for u in events.of(BudgetUpdate)[budget_before:]] == [1, 0, 1]
    assert not [n for n in events.of(Notice) if n.level == "error"]
    assert "second task" in str(fake_openai.requests[-1]["messages"])

    reloaded = SessionStore.open(session.store.path, read_only=True)
    assert reloaded.leaf_id == session.store.leaf_id


async def test_a_second_overflow_does_not_loop(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    session = make_session(tmp_path, compaction_settings(fake_openai, SMALL_WINDOW), summarize=fake_summarize)
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.text_reply("answer one", usage=(1000, 50)))
    await session.prompt("first task")
    fake_openai.queue(Reply.context_overflow(), Reply.context_overflow(), Reply.text_reply("never sent"))

    outcome = await session.prompt("second task")

    assert outcome is not None and outcome.reason == "error"
    assert fake_openai.hit_count == 3  # one first try, one retry, no third
    assert len(compactions(session)) == 1
    ends = events.of(CompactionEnd)
    assert [(e.outcome, e.will_retry) for e in ends] == [("result", True), ("error", False)]
    assert "one compact-and-retry attempt" in ends[-1].error_message
    assert any(n.level == "error" and "compact-and-retry" in n.text for n in events.of(Notice))
    assert_no_orphans(session.store.entries)


# --- pi behaviours 66–69 --------------------------------------------------------------------------
def seeded(tmp_path: Path, server: FakeOpenAI, window: int, **compaction: Any) -> AgentSession:
    settings = make_settings(
        server,
        context_window=window,
        compaction={"keepRecentTokens": 20, "autoContinue": False, **compaction},
        retry={"enabled": False},
    )
    return make_session(tmp_path, settings, summarize=fake_summarize)


async def test_66_usage_from_before_a_compaction_does_not_compact(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = seeded(tmp_path, fake_openai, BIG_WINDOW)
    first = session.store.append_message(user("old work"))
    session.store.append_message(reply("old answer", 610_000, now_ms() - 60_000))
    session.store.append_compaction("earlier summary", first["id"], 610_000)
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.text_reply("fine", usage=(1000, 10)))

    await session.prompt("new question")

    assert events.of(CompactionStart) == []
    assert len(compactions(session)) == 1


async def test_67_an_error_after_high_usage_compacts_by_estimate(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = seeded(tmp_path, fake_openai, BIG_WINDOW)
    session.store.append_message(user("work"))
    session.store.append_message(reply("big answer", 190_000, now_ms() - 1000))
    session.store.append_message(user("more"))
    events = Recorder()
    session.subscribe(events)
    overloaded = {
        "error": {"message": "529 overloaded", "type": "overloaded_error", "param": None, "code": None}
    }
    fake_openai.queue(Reply.error(529, overloaded))

    outcome = await session.continue_()

    assert outcome is not None and outcome.reason == "error"
    assert [s.reason for s in events.of(CompactionStart)] == ["threshold"]
    assert len(compactions(session)) == 1
    assert any(n.level == "error" and "overloaded" in n.text for n in events.of(Notice))


async def test_68_an_error_with_no_usage_at_all_does_not_compact(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = seeded(tmp_path, fake_openai, 17_000)  # threshold 616
    session.store.append_message(user("x" * 4000))
    session.store.append_message(reply("y" * 4000, 0, now_ms() - 1000, stop="error"))
    session.store.append_message(user("again"))
    assert estimate_context_tokens(session.store.build_context().messages).tokens > 616
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.server_error(503))

    await session.continue_()

    assert events.of(CompactionStart) == [] and compactions(session) == []


async def test_69_only_kept_pre_compaction_usage_does_not_compact(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = seeded(tmp_path, fake_openai, BIG_WINDOW)
    first = session.store.append_message(user("kept question"))
    session.store.append_message(reply("kept answer", 190_000, now_ms() - 60_000))
    session.store.append_compaction("summary", first["id"], 190_000)
    session.store.append_message(user("after the compaction"))
    assert estimate_context_tokens(session.store.build_context().messages).tokens > BIG_WINDOW - 16_384
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.server_error(503))

    await session.continue_()

    assert events.of(CompactionStart) == [] and len(compactions(session)) == 1


# --- manual compaction and abort ------------------------------------------------------------------
async def test_manual_compact_with_nothing_to_compact_is_a_skip(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai), summarize=fake_summarize)
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.text_reply("short", usage=(50, 2)))
    await session.prompt("hello")

    result = await session.compact()

    assert isinstance(result, CompactionSkip)
    (end,) = events.of(CompactionEnd)
    assert (end.reason, end.outcome, end.skip) == ("manual", "skip", result)
    assert next(n for n in events.of(Notice) if n.level == "info").text == result.message
    assert not [n for n in events.of(Notice) if n.level == "error"]
    assert compactions(session) == []


async def test_abort_during_compaction_leaves_no_entry(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    async def never(system_prompt: str, prompt: str, max_tokens: int) -> str:
        await asyncio.Event().wait()
        return "unreachable"

    session = make_session(tmp_path, compaction_settings(fake_openai, BIG_WINDOW), summarize=never)
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.text_reply("one", usage=(100, 5)), Reply.text_reply("two", usage=(100, 5)))
    await session.prompt("first task")
    await session.prompt("second task")
    entries_before = len(session.store.entries)

    running = asyncio.create_task(session.compact("focus on tests"))
    await events.wait_for(lambda e: isinstance(e, CompactionProgress) and e.phase == "summarizing")
    assert session.is_compacting
    session.abort()

    assert await running is None
    assert len(session.store.entries) == entries_before and compactions(session) == []
    assert events.of(CompactionEnd)[-1].outcome == "aborted"
    assert not session.is_compacting and not session.is_busy


async def test_manual_compact_aborts_a_running_turn_first(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    session = make_session(tmp_path, compaction_settings(fake_openai, BIG_WINDOW), summarize=fake_summarize)
    fake_openai.queue(Reply.text_reply("one", usage=(100, 5)), Reply.hang(text="still going"))
    events = Recorder()
    session.subscribe(events)
    await session.prompt("first task")
    running = asyncio.create_task(session.prompt("second task"))
    await events.wait_for(lambda e: type(e).__name__ == "TextDelta" and e.text == "stil")

    result = await session.compact()

    assert await running is None
    assert isinstance(result, CompactionResult)
    assert messages_on_path(session.store)[-1]["stopReason"] == "aborted"
    assert session.store.get_branch()[-1]["type"] == "compaction"


# --- retries, shell commands, model, usage, cost --------------------------------------------------
async def test_provider_retries_are_surfaced(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.server_error(503), Reply.text_reply("second time lucky"))

    outcome = await session.prompt("hi")

    assert message_text(outcome.message) == "second time lucky"
    (scheduled,) = events.of(RetryScheduled)
    assert scheduled.attempt == 1
    assert events.of(RetryFinished) == [RetryFinished(success=True, attempt=1)]


async def test_run_bash_appends_a_bash_execution_and_double_bang_stays_out(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    shown = await session.run_bash("echo visible-output")
    hidden = await session.run_bash("echo hidden-output; exit 3", exclude_from_context=True)

    assert shown["role"] == "bashExecution" and "visible-output" in shown["output"]
    assert shown["exitCode"] == 0 and not shown["cancelled"] and "excludeFromContext" not in shown
    assert hidden["excludeFromContext"] is True and hidden["exitCode"] == 3
    assert [m["role"] for m in messages_on_path(session.store)] == ["bashExecution", "bashExecution"]

    await session.prompt("what did you see?")
    sent = str(fake_openai.requests[-1]["messages"])
    assert "echo visible-output" in sent and "hidden-output" not in sent


async def test_a_failing_shell_command_stores_its_exit_code_once_as_pi_does(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    # pi states the exit code from the message's exitCode; a "[Exit code N]" in the output doubled it.
    session = make_session(tmp_path, make_settings(fake_openai))
    failed = await session.run_bash("echo partial; exit 3")
    assert failed["output"] == "partial" and failed["exitCode"] == 3
    stored = messages_on_path(session.store)[-1]
    assert stored["output"] == "partial"
    await session.prompt("why did it fail?")
    sent = str(fake_openai.requests[-1]["messages"])
    assert "Exit code" not in sent and sent.count("exited with code 3") == 1


async def test_abort_stops_a_user_shell_command(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    running = asyncio.create_task(session.run_bash("echo started; sleep 30"))
    while not session.is_busy:
        await asyncio.sleep(0)
    await asyncio.sleep(0.2)
    session.abort()
    message = await running
    assert message["cancelled"] is True and message["exitCode"] is None


async def test_set_model_records_a_model_change(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    session.set_model("openai/other-model")
    entry = session.store.get_branch()[-1]
    assert (entry["type"], entry["provider"], entry["modelId"]) == ("model_change", "openai", "other-model")
    assert session.model == "openai/other-model"


async def test_context_usage_is_estimated_right_after_a_compaction(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, compaction_settings(fake_openai, SMALL_WINDOW), summarize=fake_summarize)
    fake_openai.queue(Reply.text_reply("answer one", usage=(1000, 50)))
    await session.prompt("first")
    usage = session.context_usage()
    assert usage is not None and usage.tokens == 1050 and usage.context_window == SMALL_WINDOW
    assert usage.percent == pytest.approx(1050 / SMALL_WINDOW * 100) and not usage.estimated

    fake_openai.queue(Reply.text_reply("answer two", usage=(3700, 50)))
    await session.prompt("second")
    # pi says None until a reply reports; kompakt shows the estimate the timeline and the CLI show.
    estimate = sum_tokens(session.store.build_context().messages)
    assert session.store.get_branch()[-1]["type"] == "compaction" and 0 < estimate < 3750
    compaction_id = session.store.get_branch()[-1]["id"]
    assert session.context_usage() == (
        estimate,
        SMALL_WINDOW,
        estimate / SMALL_WINDOW * 100,
        True,
        compaction_id,
        None,  # the main model's window (no MoA aggregator)
    )

    fake_openai.queue(Reply.text_reply("answer three", usage=(500, 20)))
    await session.prompt("third")
    assert session.context_usage()[::3] == (520, False)


async def test_cost_total_adds_up_every_reply(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    priced = "openai/gpt-4o-mini"
    settings = Settings.model_validate(
        {"model": priced, "models": {priced: {"apiBase": fake_openai.api_base}}}
    )
    session = make_session(tmp_path, settings)
    fake_openai.queue(Reply.text_reply("a", usage=(1000, 500)), Reply.text_reply("b", usage=(1000, 500)))
    await session.prompt("one")
    await session.prompt("two")
    assert session.cost_total == pytest.approx(0.0009)


# --- navigation -----------------------------------------------------------------------------------
async def test_navigate_with_a_summary_and_refusal_while_busy(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai), summarize=fake_summarize)
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.text_reply("answer one"), Reply.text_reply("answer two"))
    await session.prompt("first")
    await session.prompt("second")
    first_answer = session.store.get_branch()[1]

    result = await session.navigate(first_answer["id"], True, label="checkpoint")

    assert result is not None and result.summary_entry is not None
    summary = result.summary_entry
    assert summary["type"] == "branch_summary" and summary["parentId"] == first_answer["id"]
    assert SUMMARY in summary["summary"]
    assert events.of(BranchSummaryStart) == [BranchSummaryStart(first_answer["id"])]
    (end,) = events.of(BranchSummaryEnd)
    assert end.outcome == "done" and end.result is result

    fake_openai.queue(Reply.hang(text="busy"))
    running = asyncio.create_task(session.prompt("third"))
    await events.wait_for(lambda e: type(e).__name__ == "TextDelta" and e.text == "busy")
    with pytest.raises(AgentBusyError):
        await session.navigate(first_answer["id"], False)
    session.abort()
    assert await running is None


# --- the offline model ----------------------------------------------------------------------------
async def test_offline_model_end_to_end(tmp_path: Path) -> None:
    settings = Settings.model_validate({"compaction": {"keepRecentTokens": 50}})
    session = make_session(tmp_path, settings)
    events = Recorder()
    session.subscribe(events)

    assert session.model == OFFLINE_MODEL and session.is_offline
    (notice,) = events.of(Notice)
    assert notice.level == "warning" and "offline" in notice.text and "OPENAI_API_KEY" in notice.text

    for question in ("hello?", "anyone there?", "still offline?"):
        outcome = await session.prompt(question)
        assert outcome is not None and message_text(outcome.message) == offline_reply()

    result = await session.compact()

    assert isinstance(result, CompactionResult) and result.summary_source == "fallback"
    assert "hello?" in result.entry["summary"]
    assert session.store.build_context().messages[0]["role"] == "compactionSummary"


async def test_a_hook_cancel_during_auto_compaction_is_reported_as_aborted(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    hooks = HookRunner()
    heard: list[dict] = []
    hooks.on("session_before_compact", lambda event: {"cancel": True})
    hooks.on("compaction_start", heard.append)
    hooks.on("compaction_end", heard.append)
    session = make_session(
        tmp_path, compaction_settings(fake_openai, SMALL_WINDOW), summarize=fake_summarize, hooks=hooks
    )
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(
        Reply.text_reply("answer one", usage=(1000, 50)), Reply.text_reply("answer two", usage=(3700, 50))
    )
    await session.prompt("first task")
    await session.prompt("second task")

    assert compactions(session) == []
    (end,) = events.of(CompactionEnd)
    assert (end.reason, end.outcome, end.error_message) == ("threshold", "aborted", "Compaction cancelled")
    assert [(h["type"], h.get("reason"), h.get("aborted")) for h in heard] == [
        ("compaction_start", "threshold", None),
        ("compaction_end", "threshold", True),
    ]
    assert heard[1]["result"] is None and "errorMessage" not in heard[1]


async def test_manual_compaction_fires_the_compaction_hooks_with_a_pi_result(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    # pi 0.73.1 (delta A.7): compaction_start / compaction_end for manual compactions too.
    hooks = HookRunner()
    heard: list[dict] = []
    hooks.on("compaction_start", heard.append)
    hooks.on("compaction_end", heard.append)
    session = make_session(
        tmp_path, compaction_settings(fake_openai, BIG_WINDOW), summarize=fake_summarize, hooks=hooks
    )
    fake_openai.queue(Reply.text_reply("answer one"), Reply.text_reply("answer two"))
    await session.prompt("first task " * 30)
    await session.prompt("second task " * 30)
    result = await session.compact()
    assert isinstance(result, CompactionResult)
    start, end = heard
    assert (start["type"], start["reason"]) == ("compaction_start", "manual")
    assert (end["type"], end["reason"], end["aborted"], end["willRetry"]) == (
        "compaction_end",
        "manual",
        False,
        False,
    )
    assert end["result"]["firstKeptEntryId"] == result.entry["firstKeptEntryId"]
    assert end["result"]["tokensBefore"] == result.entry["tokensBefore"]
    assert SUMMARY in end["result"]["summary"] and "errorMessage" not in end


async def test_a_committed_draft_fires_the_compaction_hooks_too(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    hooks = HookRunner()
    heard: list[dict] = []
    hooks.on("compaction_start", heard.append)
    hooks.on("compaction_end", heard.append)
    session = make_session(
        tmp_path, compaction_settings(fake_openai, BIG_WINDOW), summarize=fake_summarize, hooks=hooks
    )
    fake_openai.queue(Reply.text_reply("answer one"), Reply.text_reply("answer two"))
    await session.prompt("first task " * 30)
    await session.prompt("second task " * 30)
    draft = await session.draft_compaction()
    assert heard == []  # a draft writes nothing and is no compaction yet
    result = await session.commit_draft(draft)
    assert [(h["type"], h["reason"]) for h in heard] == [
        ("compaction_start", "manual"),
        ("compaction_end", "manual"),
    ]
    assert heard[1]["result"]["firstKeptEntryId"] == result.entry["firstKeptEntryId"]


async def test_a_failed_manual_compaction_reports_the_error_and_raises_it(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    from tui.compaction.errors import CompactionFailed, SummaryError

    async def failing(system_prompt: str, prompt: str, max_tokens: int) -> str:
        raise SummaryError("the model is down")

    hooks = HookRunner()
    heard: list[dict] = []
    hooks.on("compaction_end", heard.append)
    settings = compaction_settings(fake_openai, BIG_WINDOW, onSummaryFailure="abort")
    session = make_session(tmp_path, settings, summarize=failing, hooks=hooks)
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.text_reply("answer one"), Reply.text_reply("answer two"))
    await session.prompt("first task " * 30)
    await session.prompt("second task " * 30)
    with pytest.raises(CompactionFailed, match=r"^Compaction failed: .*the model is down"):
        await session.compact()
    (end,) = heard
    assert end["aborted"] is False and end["result"] is None
    assert (
        end["errorMessage"].startswith("Compaction failed: ") and "the model is down" in end["errorMessage"]
    )
    (ended,) = events.of(CompactionEnd)
    assert ended.outcome == "error" and ended.error_message == end["errorMessage"]
    assert compactions(session) == []


def test_the_old_auto_compaction_hook_names_say_what_replaced_them() -> None:
    hooks = HookRunner()
    with pytest.raises(ValueError, match="'compaction_start'"):
        hooks.on("auto_compaction_start", lambda event: None)
    with pytest.raises(ValueError, match="'compaction_end'"):
        hooks.on("auto_compaction_end", lambda event: None)


async def test_compact_now_with_what_if_overrides_cuts_where_the_plan_said(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    from tui.compaction.plan import prepare_compaction

    session = make_session(tmp_path, make_settings(fake_openai), summarize=fake_summarize)
    for i in range(6):
        fake_openai.queue(Reply.text_reply(f"answer {i} " + "words " * 400, usage=(500 + i, 5)))
        await session.prompt(f"question {i} " + "detail " * 300)
    expected = prepare_compaction(session.store.get_branch(), keep_recent_tokens=900, reserve_tokens=4000)

    result = await session.compact(keep_recent_tokens=900, reserve_tokens=4000)

    assert result.entry["firstKeptEntryId"] == expected.first_kept_entry_id
    assert session.settings.compaction.keep_recent_tokens == 20000  # the override was for this call only


async def test_update_settings_applies_to_the_next_operations(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    changed = make_settings(fake_openai, retry={"maxRetries": 7}, tools={"approval": {"bash": "deny"}})
    session.update_settings(changed)
    assert session.provider.retry.max_retries == 7
    assert session.tool_context.approval["bash"] == "deny"
    assert session.settings is changed


async def test_head_tail_strategy_compacts_on_its_own_trigger(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """The server under-reports usage, so pi's rule never fires; head-tail's estimate-based trigger does."""
    window = 12_000
    for strategy, expected in (("keep-recent", 0), ("head-tail", 1)):
        settings = compaction_settings(fake_openai, window, strategy=strategy, reserveTokens=1000)
        session = make_session(tmp_path / strategy, settings, summarize=fake_summarize)
        for i in range(5):
            fake_openai.queue(Reply.text_reply(f"answer {i} " + "words " * 900, usage=(100, 5)))
            await session.prompt(f"question {i} " + "detail " * 900)
        assert len(compactions(session)) >= expected, strategy
        if expected == 0:
            assert compactions(session) == []
        else:
            assert compactions(session)[0]["details"]["kompakt"]["strategy"] == "head-tail"


# --- summary requests: reasoning level and headers (pi 0.73.1, delta A.4 and B.6) ---------------------
async def test_summary_reasoning_follows_the_session_thinking_level_and_headers_go_everywhere(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    reasoning_model = "openai/o3-mini"  # litellm knows it reasons; the loopback server answers for it
    settings = Settings.model_validate(
        {
            "model": reasoning_model,
            "models": {
                reasoning_model: {
                    "apiBase": fake_openai.api_base,
                    "maxOutputTokens": 4000,
                    "headers": {"X-Kompakt-Test": "on every call"},
                }
            },
            "retry": {"baseDelayMs": 1, "provider": {"maxRetryDelayMs": 5}},
            "compaction": {"keepRecentTokens": 20, "autoContinue": False},
        }
    )
    session = make_session(tmp_path, settings)
    session.store.append_thinking_level_change("medium")
    fake_openai.queue(Reply.text_reply("answer one"), Reply.text_reply("answer two"))
    await session.prompt("first question " * 20)
    await session.prompt("second question " * 20)
    first_answer = session.store.get_branch()[2]

    fake_openai.queue(Reply.text_reply("## Goal\nnotes"), Reply.text_reply("short"))
    assert isinstance(await session.compact(), CompactionResult)
    summary_calls = fake_openai.hits[2:]
    assert summary_calls and all(h.body.get("reasoning_effort") == "medium" for h in summary_calls)

    session.store.append_thinking_level_change("off")
    fake_openai.queue(Reply.text_reply("answer three"), Reply.text_reply("## Goal\nagain"))
    await session.prompt("third question " * 20)
    before = len(fake_openai.hits)
    await session.compact()
    assert all("reasoning_effort" not in h.body for h in fake_openai.hits[before:])

    session.store.append_thinking_level_change("high")
    before = len(fake_openai.hits)
    fake_openai.queue(Reply.text_reply("the branch summary"))
    result = await session.navigate(first_answer["id"], True)
    assert result is not None and result.summary_entry is not None
    (branch_call,) = fake_openai.hits[before:]
    assert "reasoning_effort" not in branch_call.body  # branch summaries never reason
    assert all(h.headers.get("x-kompakt-test") == "on every call" for h in fake_openai.hits)
