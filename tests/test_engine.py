"""The compaction engine: pruning, planning, hooks, summaries, one stored entry (pi §8.1, Hermes §4.1).

The fake summarizer covers the contracts; the litellm tests run the real provider against the loopback
OpenAI server, and the remote-endpoint tests against a small aiohttp server on loopback.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

import prompts
from tests import factories as f
from tests.compaction_helpers import (
    T100,
    RecordingSummarizer,
    coding_session,
    compaction_settings,
    is_short_summary_prompt,
    msg,
    new_store,
    scripted,
)
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tui.agent.provider import Provider
from tui.agent.retry import RetryPolicy
from tui.agent.summary_model import provider_summarize_fn
from tui.compaction.boundary import tokens_before
from tui.compaction.engine import CompactionResult, CompactionSkip, compact_session
from tui.compaction.errors import CompactionCancelled, SummaryError
from tui.compaction.summarizer import end_marker
from tui.compaction.summary_sources import remote_summarize_fn
from tui.hooks import HookRunner
from tui.session.entries import PRUNE_CUSTOM_TYPE
from tui.session.store import SessionStore

MODEL = "openai/fake"


async def run(store, summarize, *, settings=None, **kwargs):
    return await compact_session(
        store,
        reason=kwargs.pop("reason", "manual"),
        settings=settings or compaction_settings(),
        summarize=summarize,
        context_window=kwargs.pop("context_window", 100_000),
        max_output_tokens=kwargs.pop("max_output_tokens", 8000),
        **kwargs,
    )


def compactions(store: SessionStore) -> list[dict]:
    return [e for e in store.entries if e["type"] == "compaction"]


async def test_manual_compaction_appends_one_entry_and_the_context_starts_with_it(tmp_path):  # behaviour 73
    store = new_store(tmp_path, coding_session())
    phases: list[str] = []
    result = await run(store, RecordingSummarizer(reply=scripted()), on_progress=phases.append)
    assert isinstance(result, CompactionResult)
    assert phases == ["pruning", "summarizing", "writing"]
    (entry,) = compactions(store)
    assert entry is result.entry and store.leaf_id == entry["id"]
    assert isinstance(entry["firstKeptEntryId"], str) and entry["firstKeptEntryId"] in store.tree
    assert entry["tokensBefore"] == result.tokens_before > 0
    assert entry["summary"].startswith("HISTORY NOTES") and entry["summary"].endswith(end_marker())
    assert entry["shortSummary"] == "SHORT"
    assert "fromHook" not in entry
    assert entry["details"]["readFiles"] == ["a.py"] and entry["details"]["modifiedFiles"] == ["b.py"]
    meta = entry["details"]["kompakt"]
    assert meta["reason"] == "manual" and meta["summarySource"] == "model"
    assert meta["tokensAfter"] == result.tokens_after < result.tokens_before
    assert meta["durationMs"] == result.duration_ms >= 0
    assert not result.no_progress and result.message is None

    context = store.build_context().messages
    assert context[0]["role"] == "compactionSummary" and context[0]["summary"] == entry["summary"]
    reopened = SessionStore.open(store.path, read_only=True)
    assert reopened.build_context().messages[0]["summary"] == entry["summary"]


async def test_second_compaction_updates_the_first_summary(tmp_path):
    store = new_store(tmp_path, coding_session())
    await run(store, RecordingSummarizer(reply=scripted(history="FIRST NOTES")))
    for text in ("next job " + T100, "done " + T100, "and more " + T100, "ok " + T100):
        store.append_message(
            msg(f.user(text)) if text.startswith(("next", "and")) else msg(f.assistant(text))
        )
    fake = RecordingSummarizer(reply=scripted(history="SECOND NOTES"))
    result = await run(store, fake, settings=compaction_settings(keep=200))  # cuts at the last user message
    (update,) = [
        p
        for p in fake.prompts_containing("<previous-summary>\nFIRST NOTES")
        if not is_short_summary_prompt(p)
    ]
    assert end_marker() not in update
    assert update.endswith(prompts.load("summary_update"))
    assert result.entry["summary"].startswith("SECOND NOTES")
    assert len(compactions(store)) == 2
    # The files of the first compaction are carried forward.
    assert result.entry["details"]["readFiles"] == ["a.py"]


async def test_second_compaction_summarises_what_the_first_one_kept(tmp_path):  # pi #2608, delta A.1-A.3
    store = new_store(tmp_path, coding_session())
    first = await run(store, RecordingSummarizer(reply=scripted(history="FIRST NOTES")))
    path = store.get_branch()
    kept_from = next(i for i, e in enumerate(path) if e["id"] == first.entry["firstKeptEntryId"])
    kept_by_first = [e["id"] for e in path[kept_from:-1]]
    assert kept_by_first  # the first compaction kept the last turn
    for text in ("next job " + T100, "done " + T100, "and more " + T100, "ok " + T100):
        store.append_message(
            msg(f.user(text)) if text.startswith(("next", "and")) else msg(f.assistant(text))
        )
    expected_before = tokens_before(store.get_branch())
    fake = RecordingSummarizer(reply=scripted(history="SECOND NOTES"))
    result = await run(store, fake, settings=compaction_settings(keep=200))
    (update,) = [
        p
        for p in fake.prompts_containing("<previous-summary>\nFIRST NOTES")
        if not is_short_summary_prompt(p)
    ]
    # The messages the first compaction kept are in the second one's input (0.58.3 dropped them).
    assert "Finally, run the tests" in update and "All green." in update
    assert "SECOND NOTES" in result.entry["summary"]
    context_ids = set(store.build_context().entry_ids)
    assert not context_ids & set(kept_by_first)  # summarised now, not kept
    # The stored tokensBefore is measured over the context the path built before this compaction.
    assert result.entry["tokensBefore"] == expected_before


async def test_summarizer_failure_falls_back_to_the_deterministic_summary(tmp_path):  # deviation 5
    store = new_store(tmp_path, coding_session())
    result = await run(store, RecordingSummarizer(fail=RuntimeError("model exploded")))
    assert result.summary_source == "fallback"
    assert "model exploded" in result.summary_error
    summary = result.entry["summary"]
    assert "Please fix the parser bug in /work/src/parser.py" in summary  # the goal
    assert "- read: a.py" in summary and "- b.py" in summary  # tools and files
    assert "Now update b.py" in summary  # the last compacted request
    assert summary.endswith(end_marker())
    assert result.entry["details"]["kompakt"]["summarySource"] == "fallback"


async def test_abort_mode_raises_and_writes_nothing(tmp_path):
    store = new_store(tmp_path, coding_session())
    count = len(store.entries)
    with pytest.raises(SummaryError, match="model exploded"):
        await run(
            store,
            RecordingSummarizer(fail=RuntimeError("model exploded")),
            settings=compaction_settings(on_summary_failure="abort"),
        )
    assert len(store.entries) == count


async def test_without_a_summarizer_the_fallback_is_used(tmp_path):  # offline
    store = new_store(tmp_path, coding_session())
    result = await run(store, None)
    assert result.summary_source == "fallback" and "shortSummary" not in result.entry
    assert "Please fix the parser bug" in result.entry["summary"]


async def test_cancel_mid_summary_leaves_no_entry_and_propagates(tmp_path):
    store = new_store(tmp_path, coding_session())
    count = len(store.entries)
    fake = RecordingSummarizer(gate=asyncio.Event())
    task = asyncio.create_task(run(store, fake))
    await fake.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(store.entries) == count
    assert SessionStore.open(store.path, read_only=True).entries == store.entries


async def test_nothing_to_compact_is_a_skip(tmp_path):  # deviation 4
    store = new_store(tmp_path, [msg(f.user("hi")), msg(f.assistant("hello"))])
    result = await run(store, RecordingSummarizer())
    assert isinstance(result, CompactionSkip) and result.reason == "nothing_to_summarize"
    assert not compactions(store)
    store = new_store(tmp_path, coding_session(), name="b.jsonl")
    await run(store, RecordingSummarizer())
    again = await run(store, RecordingSummarizer())
    assert isinstance(again, CompactionSkip) and again.reason == "already_compacted"
    assert "already" in again.message


async def test_a_compaction_that_saves_little_is_reported_as_no_progress(tmp_path):
    store = new_store(tmp_path, coding_session())
    result = await run(store, RecordingSummarizer(reply=lambda p: "w" * 40_000))
    assert result.no_progress and "no real progress" in result.message
    assert result.tokens_after > 0.95 * 1000  # the notes alone are about 10,000 tokens
    assert len(compactions(store)) == 1  # reported once, never retried here


async def test_old_tool_outputs_are_pruned_in_the_same_run(tmp_path):
    big = "o" * 120_000  # 30,000 tokens each
    messages = [msg(f.user("start"))]
    for i in range(4):
        messages += [
            msg(f.assistant("", [f.tool_call("bash", {"command": f"cat log{i}"}, f"b{i}")])),
            msg(f.tool_result(f"b{i}", "bash", big)),
        ]
    messages += [msg(f.user("next " + T100)), msg(f.assistant("done " + T100))]
    store = new_store(tmp_path, messages)
    result = await run(store, RecordingSummarizer(reply=scripted()))
    assert result.pruned_count == 2
    prune, compaction = store.entries[-2:]
    assert prune["customType"] == PRUNE_CUSTOM_TYPE and len(prune["data"]["entries"]) == 2
    assert compaction["type"] == "compaction" and compaction["parentId"] == prune["id"]


async def test_pruning_alone_is_applied_when_the_plan_is_a_skip(tmp_path):
    big = "o" * 120_000
    messages = [msg(f.user("start"))]
    for i in range(4):
        messages += [
            msg(f.assistant("", [f.tool_call("bash", {"command": "x"}, f"b{i}")])),
            msg(f.tool_result(f"b{i}", "bash", big)),
        ]
    store = new_store(tmp_path, messages)
    result = await run(store, RecordingSummarizer(), settings=compaction_settings(keep=10_000_000))
    assert isinstance(result, CompactionSkip) and result.pruned_count == 2
    assert store.entries[-1]["customType"] == PRUNE_CUSTOM_TYPE


# --- hooks (behaviours 74–76, omp's session.compacting) -------------------------------------------


def runner_with(event: str, handler) -> HookRunner:
    runner = HookRunner()
    runner.on(event, handler)
    return runner


async def test_hook_cancel_raises_and_no_session_compact_fires(tmp_path):  # behaviour 74
    store = new_store(tmp_path, coding_session())
    runner = runner_with("session_before_compact", lambda event: {"cancel": True})
    seen = []
    runner.on("session_compact", seen.append)
    fake = RecordingSummarizer()
    with pytest.raises(CompactionCancelled, match="Compaction cancelled"):
        await run(store, fake, hooks=runner)
    assert not seen and not fake.calls and not compactions(store)


async def test_hook_compaction_is_stored_as_given(tmp_path):  # behaviour 75
    store = new_store(tmp_path, coding_session())
    events = []

    def before(event):
        events.append(event)
        preparation = event["preparation"]  # pi's CompactionPreparation, camelCase (delta B.3)
        return {
            "compaction": {
                "summary": "Custom summary",
                "firstKeptEntryId": preparation["firstKeptEntryId"],
                "tokensBefore": 999,
            }
        }

    runner = runner_with("session_before_compact", before)
    after = []
    runner.on("session_compact", after.append)
    fake = RecordingSummarizer()
    result = await run(store, fake, hooks=runner, custom_instructions="focus")
    assert not fake.calls
    assert result.entry["summary"] == "Custom summary" and result.entry["tokensBefore"] == 999
    assert result.entry["fromHook"] is True and result.summary_source == "hook"
    assert after[0]["fromExtension"] is True and after[0]["compactionEntry"] is result.entry
    assert (
        events[0]["customInstructions"] == "focus"
        and events[0]["branchEntries"][-1]["id"] == (result.entry["parentId"])
    )


async def test_session_before_compact_gets_a_pi_shaped_preparation(tmp_path):
    # Delta B.3: the preparation is pi's CompactionPreparation with its camelCase keys, so that a hook
    # ported from pi reads the same fields; kompakt's plan travels beside it as "plan".
    store = new_store(tmp_path, coding_session())
    seen = []
    runner = runner_with("session_before_compact", seen.append)
    await run(store, RecordingSummarizer(), hooks=runner)
    preparation, plan = seen[0]["preparation"], seen[0]["plan"]
    assert isinstance(preparation, dict)
    assert {
        "firstKeptEntryId",
        "messagesToSummarize",
        "turnPrefixMessages",
        "isSplitTurn",
        "tokensBefore",
        "fileOps",
        "settings",
    } <= set(preparation)
    assert preparation["firstKeptEntryId"] == plan.first_kept_entry_id
    assert preparation["messagesToSummarize"] == plan.messages_to_summarize
    assert preparation["turnPrefixMessages"] == plan.turn_prefix_messages
    assert preparation["isSplitTurn"] is plan.is_split_turn
    assert preparation["tokensBefore"] == plan.tokens_before
    assert "previousSummary" not in preparation  # pi leaves it undefined without a compaction
    assert preparation["fileOps"] == {"read": {"a.py"}, "written": set(), "edited": {"b.py"}}
    assert preparation["settings"] == {
        "enabled": True,
        "reserveTokens": plan.reserve_tokens,
        "keepRecentTokens": plan.keep_recent_tokens,
    }
    store.append_message(msg(f.user("one more " + T100)))
    store.append_message(msg(f.assistant("sure " + T100)))
    await run(store, RecordingSummarizer(), hooks=runner)
    assert seen[1]["preparation"]["previousSummary"] == seen[1]["plan"].previous_summary


async def test_a_throwing_hook_gets_the_default_compaction(tmp_path):  # behaviour 76
    store = new_store(tmp_path, coding_session())

    def broken(event):
        raise RuntimeError("hook bug")

    runner = runner_with("session_before_compact", broken)
    after = []
    runner.on("session_compact", after.append)
    result = await run(store, RecordingSummarizer(reply=scripted()), hooks=runner)
    assert result.summary_source == "model" and "fromHook" not in result.entry
    assert after[0]["fromExtension"] is False
    assert "hook bug" in str(runner.errors[0])


async def test_session_compacting_adds_context_replaces_the_prompt_and_preserves_data(tmp_path):
    store = new_store(tmp_path, coding_session())
    seen = []

    async def compacting(event):
        seen.append(event)
        return {"context": ["ticket KP-7 is the goal"], "prompt": "HOOK PROMPT", "preserveData": {"k": 1}}

    fake = RecordingSummarizer(reply=scripted())
    result = await run(
        store, fake, hooks=runner_with("session.compacting", compacting), custom_instructions="db"
    )
    (history,) = fake.prompts_containing("HOOK PROMPT")
    assert "<additional-context>\n- ticket KP-7 is the goal\n</additional-context>" in history
    assert history.endswith("HOOK PROMPT\n\nAdditional focus: db")
    assert result.entry["preserveData"] == {"k": 1}
    assert seen[0]["sessionId"] == store.session_id and seen[0]["messages"]


# --- through litellm and the loopback server ------------------------------------------------------


def loopback_provider(server: FakeOpenAI, max_retries: int = 0) -> Provider:
    return Provider(
        env={},
        retry=RetryPolicy(max_retries=max_retries, base_delay_ms=1, max_retry_delay_ms=5),
        models={MODEL: {"apiBase": server.api_base, "maxOutputTokens": 4000}},
    )


async def test_compaction_through_litellm(tmp_path, fake_openai: FakeOpenAI):
    # The two calls run at once, so each reply goes to the request it answers.
    fake_openai.route("at most three sentences", Reply.text_reply("I fixed the parser."))
    fake_openai.queue(Reply.text_reply("## Objective\nFix the parser", chunk_size=7))
    store = new_store(tmp_path, coding_session())
    summarize = provider_summarize_fn(loopback_provider(fake_openai), MODEL)
    result = await run(store, summarize, settings=compaction_settings(keep=200))  # no split turn
    assert fake_openai.hit_count == 2
    for request in fake_openai.requests:
        assert request["messages"][0] == {"role": "system", "content": prompts.load("summary_system")}
        assert "<conversation>" in str(request["messages"][1]["content"])
    assert sorted(r["max_tokens"] for r in fake_openai.requests) == [512, 4000]  # 13,107 capped at 4,000
    summary = result.entry["summary"]
    assert summary.startswith("## Objective\nFix the parser\n\n<read-files>\na.py")
    assert result.entry["shortSummary"] == "I fixed the parser."
    assert store.build_context().messages[0]["role"] == "compactionSummary"


async def test_the_short_summary_is_requested_while_the_main_one_is_in_flight(
    tmp_path, fake_openai: FakeOpenAI
):
    # Each reply waits until two requests are open at the same time: with the short summary asked for
    # after the main one, the server would see one request at a time (max_in_flight 1).
    fake_openai.route(
        "at most three sentences", Reply.text_reply("I fixed the parser.", hold_until_in_flight=2)
    )
    fake_openai.queue(Reply.text_reply("## Objective\nFix the parser", hold_until_in_flight=2))
    store = new_store(tmp_path, coding_session())
    summarize = provider_summarize_fn(loopback_provider(fake_openai), MODEL)
    result = await run(store, summarize, settings=compaction_settings(keep=200))
    assert fake_openai.max_in_flight == 2
    assert result.entry["summary"].startswith("## Objective")
    assert result.entry["shortSummary"] == "I fixed the parser."
    # A split turn: history, turn prefix and short summary, all three at once.
    fake_openai.hits.clear()
    fake_openai.max_in_flight = 0
    fake_openai.route("at most three sentences", Reply.text_reply("SHORT", hold_until_in_flight=3))
    fake_openai.default = Reply.text_reply("NOTES", hold_until_in_flight=3)
    for message in (f.user("big task " + T100), *(f.assistant(f"step {n} " + T100) for n in range(4))):
        store.append_message(msg(message))
    result = await run(store, summarize, settings=compaction_settings(keep=250))
    assert fake_openai.hit_count == 3 and fake_openai.max_in_flight == 3
    assert result.entry["shortSummary"] == "SHORT"


async def test_a_provider_error_through_litellm_falls_back(tmp_path, fake_openai: FakeOpenAI):
    fake_openai.default = Reply.server_error(500)
    store = new_store(tmp_path, coding_session())
    result = await run(store, provider_summarize_fn(loopback_provider(fake_openai), MODEL))
    assert result.summary_source == "fallback" and result.summary_error.startswith(
        ("Summarization failed", "Turn prefix summarization failed")
    )
    assert "Please fix the parser bug" in result.entry["summary"]


# --- the remote endpoint ---------------------------------------------------------------------------


class RemoteServer:
    def __init__(self) -> None:
        self.bodies: list[dict] = []
        self.answer: tuple[int, object] = (200, {"summary": "REMOTE NOTES", "shortSummary": "REMOTE SHORT"})

    async def handle(self, request: web.Request) -> web.Response:
        self.bodies.append(await request.json())
        status, body = self.answer
        if isinstance(body, str):
            return web.Response(status=status, text=body)
        return web.json_response(body, status=status)


@pytest.fixture
async def remote() -> AsyncIterator[tuple[RemoteServer, str]]:
    server = RemoteServer()
    app = web.Application()
    app.router.add_post("/summarize", server.handle)
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    yield server, f"http://127.0.0.1:{port}/summarize"
    await runner.cleanup()


async def test_remote_endpoint_writes_the_summary(tmp_path, remote):
    server, url = remote
    store = new_store(tmp_path, [*coding_session(), msg(f.user("one more " + T100))])
    fake = RecordingSummarizer()
    result = await run(store, fake, settings=compaction_settings(keep=150, remote_endpoint=url))
    assert not fake.calls  # the remote endpoint replaces the model
    assert result.summary_source == "remote"
    assert result.entry["summary"].startswith("REMOTE NOTES")
    assert result.entry["shortSummary"] == "REMOTE SHORT"
    body = server.bodies[0]
    assert set(body) == {"systemPrompt", "prompt"}
    assert body["systemPrompt"] == prompts.load("summary_system") and "<conversation>" in body["prompt"]


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ((503, {"error": "busy"}), "HTTP 503"),
        ((200, {"shortSummary": "only"}), "without a summary"),
        ((200, "not json"), "did not answer with JSON"),
    ],
)
async def test_remote_endpoint_errors(remote, answer, error):
    server, url = remote
    server.answer = answer
    with pytest.raises(SummaryError, match=error):
        await remote_summarize_fn(url)("sys", "prompt", 100)


async def test_an_unreachable_remote_endpoint_falls_back(tmp_path, remote):
    server, url = remote
    server.answer = (500, {"error": "down"})
    store = new_store(tmp_path, coding_session())
    result = await run(store, None, settings=compaction_settings(remote_endpoint=url))
    assert result.summary_source == "fallback" and "HTTP 500" in result.summary_error


# --- reasoning for summaries (pi behaviours 31–32) -------------------------------------------------


def test_summary_reasoning_follows_the_thinking_level_for_reasoning_models_only():
    # pi 0.73.1 (delta A.4): the session's level, for a reasoning model, and never at "off".
    from tui.agent.summary_model import summary_reasoning_effort

    assert summary_reasoning_effort("openai/o3-mini", "medium") == "medium"
    assert summary_reasoning_effort("openai/o3-mini", "xhigh") == "xhigh"
    assert summary_reasoning_effort("openai/o3-mini", "off") is None
    assert summary_reasoning_effort("openai/o3-mini", None) is None
    assert summary_reasoning_effort("openai/gpt-4o-mini", "high") is None
    assert summary_reasoning_effort("openai/no-such-model", "high") is None


async def test_the_reasoning_option_reaches_the_request(fake_openai: FakeOpenAI):
    fake_openai.queue(Reply.text_reply("a"), Reply.text_reply("b"))
    provider = loopback_provider(fake_openai)
    await provider_summarize_fn(provider, MODEL, reasoning_effort="high")("sys", "p", 100)
    await provider_summarize_fn(provider, MODEL)("sys", "p", 100)
    with_reasoning, without = fake_openai.requests
    assert with_reasoning.get("reasoning_effort") == "high"
    assert "reasoning_effort" not in without


async def test_auto_reasoning_follows_the_model_and_the_thinking_level(fake_openai: FakeOpenAI):
    """The session builds its summarizer with reasoning "auto" and its thinking level (pi 0.73.1)."""
    fake_openai.queue(*(Reply.text_reply(t) for t in "abcd"))
    models = {
        name: {"apiBase": fake_openai.api_base, "maxOutputTokens": 4000}
        for name in ("openai/o3-mini", "openai/gpt-4o-mini")
    }
    provider = Provider(env={}, retry=RetryPolicy(max_retries=0), models=models)
    for model, level in [
        ("openai/o3-mini", "medium"),
        ("openai/o3-mini", "off"),
        ("openai/o3-mini", None),
        ("openai/gpt-4o-mini", "high"),
    ]:
        summarize = provider_summarize_fn(provider, model, reasoning_effort="auto", thinking_level=level)
        await summarize("sys", "p", 100)
    medium, off, unset, plain = fake_openai.requests
    assert medium.get("reasoning_effort") == "medium"
    for request in (off, unset, plain):
        assert "reasoning_effort" not in request


async def test_the_plan_the_fallback_and_the_figures_run_off_the_event_loop(tmp_path, monkeypatch):
    """They walk the whole path (about 1 s at 65k entries), and on the loop they froze the app for it: each
    waits here for the loop to answer, which the loop can only do while the work runs on another thread."""
    import threading

    import tui.compaction.engine as engine

    loop = asyncio.get_running_loop()
    answered: list[str] = []

    def needs_the_loop(name, work):
        def wrapped(*args, **kwargs):
            answer = threading.Event()
            loop.call_soon_threadsafe(answer.set)
            # On the loop's own thread this waits out its guard: the loop cannot run call_soon meanwhile.
            if answer.wait(10) and threading.current_thread() is not threading.main_thread():
                answered.append(name)
            return work(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(
        engine, "prepare_session_compaction", needs_the_loop("plan", engine.prepare_session_compaction)
    )
    monkeypatch.setattr(engine, "_fallback", needs_the_loop("fallback", engine._fallback))
    monkeypatch.setattr(engine, "_context_tokens", needs_the_loop("tokens after", engine._context_tokens))
    store = new_store(tmp_path, coding_session())
    result = await run(store, None)
    assert isinstance(result, CompactionResult) and result.summary_source == "fallback"
    assert answered == ["plan", "fallback", "tokens after"]
