"""Provider fault modes (issue 8 "Providers", pi 0.73.1 delta A.5, A.12, B.2) through litellm against the
loopback server: absurd retry-after values, empty replies, overflow texts in odd bodies, stalled streams,
and a reply that fails mid-stream, each through the provider and, where the stored session matters,
through the agent session writing a real file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent_helpers import Recorder, make_session, make_settings, messages_on_path
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tui.agent.errors import ContextOverflowError, RetryableError, is_context_overflow
from tui.agent.events import MessageEnd, MessageStart
from tui.agent.provider import Provider
from tui.agent.retry import RetryPolicy
from tui.agent.stream_events import Done, RetryScheduled, TextDelta
from tui.session.context import message_text
from tui.session.store import SessionStore

MODEL = "openai/fake"
USER = [{"role": "user", "content": "hello"}]
FAST = RetryPolicy(enabled=True, max_retries=2, base_delay_ms=1, max_retry_delay_ms=50)


def make_provider(server: FakeOpenAI, retry: RetryPolicy = FAST) -> Provider:
    return Provider(models={MODEL: {"apiBase": server.api_base}}, env={}, retry=retry)


async def collect(provider: Provider) -> list:
    return [event async for event in provider.stream(USER, model=MODEL)]


# --- retry-after: inf ---------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["inf", "1e400"])
async def test_infinite_retry_after_fails_at_once_with_an_error(fake_openai: FakeOpenAI, value: str) -> None:
    fake_openai.queue(Reply.rate_limited(retry_after=value), Reply.text_reply("unused"))
    events = await collect(make_provider(fake_openai))  # raised OverflowError before
    done = events[-1]
    assert isinstance(done, Done) and isinstance(done.error, RetryableError)
    assert done.message["stopReason"] == "error"
    assert "unlimited" in done.message["errorMessage"]
    assert "retry.provider.maxRetryDelayMs" in done.message["errorMessage"]
    assert fake_openai.hit_count == 1
    assert not [e for e in events if isinstance(e, RetryScheduled)]


@pytest.mark.parametrize("value", ["inf", "1e400"])
async def test_infinite_retry_after_stores_an_error_entry(
    tmp_path: Path, fake_openai: FakeOpenAI, value: str
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    fake_openai.queue(Reply.rate_limited(retry_after=value))
    outcome = await session.prompt("hi")
    assert outcome is not None and outcome.reason == "error"
    session.store.close()
    # Reloaded from disk: the turn ended with an error entry, not with nothing.
    stored = messages_on_path(SessionStore.open(tmp_path / "session.jsonl"))
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[-1]["stopReason"] == "error" and "Rate limit" in stored[-1]["errorMessage"]


# --- empty replies --------------------------------------------------------------------------------
@pytest.mark.parametrize("fault", [Reply.empty_body, Reply.empty_stream], ids=["empty-200", "no-chunk"])
async def test_a_reply_without_any_chunk_is_a_retryable_error(fake_openai: FakeOpenAI, fault) -> None:
    fake_openai.queue(fault(), Reply.text_reply("a real answer"))
    events = await collect(make_provider(fake_openai))
    (scheduled,) = [e for e in events if isinstance(e, RetryScheduled)]
    assert "without sending a reply" in scheduled.error_message
    assert scheduled.partial is None  # nothing had streamed
    assert events[-1].error is None
    assert events[-1].message["content"] == [{"type": "text", "text": "a real answer"}]
    assert fake_openai.hit_count == 2


@pytest.mark.parametrize("fault", [Reply.empty_body, Reply.empty_stream], ids=["empty-200", "no-chunk"])
async def test_an_empty_reply_without_retries_is_stored_as_an_error(
    tmp_path: Path, fake_openai: FakeOpenAI, fault
) -> None:
    settings = make_settings(fake_openai, retry={"enabled": False})
    session = make_session(tmp_path, settings)
    fake_openai.queue(fault())
    await session.prompt("hi")
    last = messages_on_path(session.store)[-1]
    assert last["role"] == "assistant" and last["stopReason"] == "error"  # was "stop" with no content
    assert "without sending a reply" in last["errorMessage"]


async def test_a_finished_reply_with_no_text_is_still_a_reply(fake_openai: FakeOpenAI) -> None:
    # Only a response with no chunk at all is an error; a model may answer with an empty text.
    fake_openai.queue(Reply.text_reply(""))
    events = await collect(make_provider(fake_openai))
    assert events[-1].error is None and events[-1].message["stopReason"] == "stop"
    assert fake_openai.hit_count == 1


# --- overflow in odd shapes -------------------------------------------------------------------------
async def test_overflow_sent_as_an_error_string_keeps_its_text(fake_openai: FakeOpenAI) -> None:
    text = "prompt is too long: 213462 tokens > 200000 maximum"
    fake_openai.queue(Reply.error_text(400, text))
    events = await collect(make_provider(fake_openai))
    done = events[-1]
    assert isinstance(done.error, ContextOverflowError)
    assert text in done.message["errorMessage"]  # was only "Error code: 400"
    assert is_context_overflow(done.message)
    assert fake_openai.hit_count == 1


async def test_other_error_strings_keep_their_text_too(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.error(400, {"detail": "unknown parameter: frobnicate"}))
    events = await collect(make_provider(fake_openai))
    assert "unknown parameter: frobnicate" in events[-1].message["errorMessage"]


@pytest.mark.parametrize("status", [413, 400])
async def test_a_bare_status_reaches_the_overflow_detector(fake_openai: FakeOpenAI, status: int) -> None:
    fake_openai.queue(Reply.bare_status(status))
    events = await collect(make_provider(fake_openai))
    done = events[-1]
    assert isinstance(done.error, ContextOverflowError)
    assert done.message["errorMessage"] == f"{status} status code (no body)"
    assert is_context_overflow(done.message)  # the stored message is recognised again after a reload


async def test_a_bare_413_compacts_and_retries_in_the_session(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    settings = make_settings(fake_openai, compaction={"keepRecentTokens": 50}).model_copy(
        update={"summary_model": "openai/summarizer"}
    )
    settings.models["openai/summarizer"] = settings.models[MODEL]
    session = make_session(tmp_path, settings)
    fake_openai.queue(Reply.text_reply("first answer " * 40, usage=(900, 40)))
    await session.prompt("first question " * 40)
    fake_openai.script("fake", Reply.bare_status(413), Reply.text_reply("after compaction"))
    # The summary and the short summary (asked for side by side) both come from the summary model.
    fake_openai.script("summarizer", *(Reply.text_reply("## Goal\nthe summary") for _ in range(2)))
    outcome = await session.prompt("second question")
    assert outcome is not None and outcome.message is not None
    assert message_text(outcome.message) == "after compaction"
    branch = session.store.get_branch()
    assert "the summary" in next(e for e in branch if e["type"] == "compaction")["summary"]


# --- stalled streams ----------------------------------------------------------------------------------
async def test_a_stalled_stream_times_out_and_is_retried(fake_openai: FakeOpenAI) -> None:
    policy = RetryPolicy(max_retries=2, base_delay_ms=1, stream_idle_timeout_ms=300)
    fake_openai.queue(Reply.hang(), Reply.text_reply("awake"))  # headers, then only SSE comments
    events = await collect(make_provider(fake_openai, policy))
    (scheduled,) = [e for e in events if isinstance(e, RetryScheduled)]
    assert "streamIdleTimeoutMs" in scheduled.error_message and "0.3 s" in scheduled.error_message
    assert events[-1].error is None
    assert events[-1].message["content"] == [{"type": "text", "text": "awake"}]
    assert fake_openai.hits[0].disconnected  # the stalled connection was closed, not left open


async def test_a_stream_stalling_mid_reply_is_retried_with_the_partial(fake_openai: FakeOpenAI) -> None:
    policy = RetryPolicy(max_retries=1, base_delay_ms=1, stream_idle_timeout_ms=300)
    fake_openai.queue(Reply.hang(text="half an"), Reply.text_reply("whole answer"))
    events = await collect(make_provider(fake_openai, policy))
    (scheduled,) = [e for e in events if isinstance(e, RetryScheduled)]
    assert scheduled.partial is not None and message_text(scheduled.partial) == "half an"
    assert events[-1].message["content"] == [{"type": "text", "text": "whole answer"}]


async def test_a_stalled_stream_without_retries_ends_in_a_stored_error(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    retry = {"enabled": False, "provider": {"streamIdleTimeoutMs": 300}}
    session = make_session(tmp_path, make_settings(fake_openai, retry=retry))
    fake_openai.queue(Reply.hang())
    await session.prompt("hi")
    last = messages_on_path(session.store)[-1]
    assert last["stopReason"] == "error" and "stalled" in last["errorMessage"]


async def test_the_request_timeout_setting_reaches_the_request(fake_openai: FakeOpenAI) -> None:
    # retry.provider.timeoutMs bounds the wait for the reply to start (the server never answers here).
    policy = RetryPolicy(enabled=False, timeout_ms=300)
    fake_openai.queue(Reply.no_headers())
    events = await collect(make_provider(fake_openai, policy))
    done = events[-1]
    assert isinstance(done.error, RetryableError) and "timed out" in done.message["errorMessage"].lower()


async def test_sdk_retries_are_off_unless_asked_for(fake_openai: FakeOpenAI) -> None:
    off = RetryPolicy(enabled=False)
    fake_openai.queue(Reply.error(500, {"error": {"message": "boom"}}, {"retry-after-ms": "1"}))
    await collect(make_provider(fake_openai, off))
    assert fake_openai.hit_count == 1
    # retry.provider.maxRetries = 1: the SDK itself repeats the request once, inside one of our attempts.
    sdk = RetryPolicy(enabled=False, sdk_max_retries=1)
    fake_openai.queue(
        Reply.error(500, {"error": {"message": "boom"}}, {"retry-after-ms": "1"}), Reply.text_reply("sdk")
    )
    events = await collect(make_provider(fake_openai, sdk))
    assert fake_openai.hit_count == 3
    assert events[-1].message["content"] == [{"type": "text", "text": "sdk"}]


# --- a reply failing mid-stream (delta B.2) ---------------------------------------------------------------
@pytest.mark.parametrize(
    "fault",
    [
        lambda: Reply.disconnect("The first half of", after_chunks=3),
        lambda: Reply.stream_error("The first half of", "The server is overloaded", after_chunks=3),
    ],
    ids=["disconnect", "error-event"],
)
async def test_a_reply_failing_mid_stream_is_retried_and_the_partial_is_kept_aside(
    tmp_path: Path, fake_openai: FakeOpenAI, fault
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(fault(), Reply.text_reply("The whole answer."), Reply.text_reply("Next answer."))

    outcome = await session.prompt("question one")

    assert outcome is not None and message_text(outcome.message) == "The whole answer."
    # The partial reply is in the file, marked as an error, before the retried one.
    path = messages_on_path(session.store)
    assert [m["role"] for m in path] == ["user", "assistant", "assistant"]
    partial, answer = path[1], path[2]
    assert partial["stopReason"] == "error" and message_text(partial) == "The first ha"
    assert partial["errorMessage"]
    assert answer["stopReason"] == "stop"
    # The UI was told: the partial ended as its own message, then a new assistant message started.
    ends = [e for e in events.of(MessageEnd) if e.message.get("role") == "assistant"]
    assert [m.message["stopReason"] for m in ends] == ["error", "stop"]
    assert len([e for e in events.of(MessageStart) if e.role == "assistant"]) == 2
    assert "".join(e.text for e in events.of(TextDelta)) == "The first haThe whole answer."

    # Neither the retry nor the next turn sends the partial to the model.
    assert fake_openai.requests[1]["messages"] == fake_openai.requests[0]["messages"]
    await session.prompt("question two")
    sent = [str(m.get("content")) for m in fake_openai.requests[2]["messages"]]
    assert not any("The first ha" in text and "whole" not in text for text in sent)
    assert any("The whole answer." in text for text in sent)

    session.store.close()
    reloaded = messages_on_path(SessionStore.open(tmp_path / "session.jsonl"))
    assert [m.get("stopReason") for m in reloaded if m["role"] == "assistant"] == ["error", "stop", "stop"]
