"""Provider streaming through litellm against the loopback OpenAI server: text, thinking, tools, usage, cancel."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from tests.fake_openai import FakeOpenAI, Reply, ToolCall, fake_openai_fixture  # noqa: F401
from tui.agent.errors import RetryableError
from tui.agent.provider import Provider
from tui.agent.retry import RetryPolicy
from tui.agent.stream_events import (
    Done,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageUpdate,
)

MODEL = "openai/fake"
USER = [{"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": 1}]
READ_TOOL = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}


def make_provider(server: FakeOpenAI, **kwargs) -> Provider:
    kwargs.setdefault("retry", RetryPolicy(base_delay_ms=1, max_retry_delay_ms=10))
    kwargs.setdefault("models", {MODEL: {"apiBase": server.api_base}})
    return Provider(env={}, **kwargs)


async def collect(provider: Provider, messages=USER, **kwargs) -> list:
    return [event async for event in provider.stream(messages, model=MODEL, **kwargs)]


async def test_streamed_text_arrives_in_pieces_and_builds_the_message(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.text_reply("The quick brown fox", chunk_size=5, usage=(30, 7)))
    events = await collect(make_provider(fake_openai))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == ["The q", "uick ", "brown", " fox"]
    done = events[-1]
    assert isinstance(done, Done) and done.error is None
    message = done.message
    assert message["role"] == "assistant"
    assert message["content"] == [{"type": "text", "text": "The quick brown fox"}]
    assert message["stopReason"] == "stop"
    assert (message["provider"], message["model"]) == ("openai", "fake")
    assert message["usage"]["input"] == 30 and message["usage"]["output"] == 7
    assert message["usage"]["totalTokens"] == 37
    assert isinstance(message["timestamp"], int) and message["timestamp"] > 1_600_000_000_000
    assert "errorMessage" not in message


async def test_usage_is_requested_and_cached_tokens_are_split_out(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.text_reply("hi", usage=(100, 3), cached_tokens=60))
    events = await collect(make_provider(fake_openai))
    assert fake_openai.requests[0]["stream_options"] == {"include_usage": True}
    (update,) = [e for e in events if isinstance(e, UsageUpdate)]
    assert update.usage["input"] == 40
    assert update.usage["cacheRead"] == 60
    assert update.usage["totalTokens"] == 103
    assert events[-1].message["usage"] == update.usage


async def test_known_model_usage_carries_a_cost(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.text_reply("hi", usage=(1000, 500)))
    provider = Provider(models={"openai/gpt-4o-mini": {"apiBase": fake_openai.api_base}}, env={})
    events = [e async for e in provider.stream(USER, model="openai/gpt-4o-mini")]
    cost = events[-1].message["usage"]["cost"]
    assert cost["input"] == pytest.approx(0.00015)
    assert cost["output"] == pytest.approx(0.0003)
    assert cost["total"] == pytest.approx(0.00045)


async def test_unknown_model_costs_nothing_and_prints_nothing(fake_openai: FakeOpenAI, capsys) -> None:
    fake_openai.queue(Reply.text_reply("hi", usage=(1000, 500)))
    events = await collect(make_provider(fake_openai))
    assert events[-1].message["usage"]["cost"]["total"] == 0
    assert capsys.readouterr().out == ""


async def test_reasoning_content_becomes_thinking(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.text_reply("Answer.", reasoning="Let me think.", chunk_size=100))
    events = await collect(make_provider(fake_openai))
    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["Let me think."]
    assert events[-1].message["content"] == [
        {"type": "thinking", "thinking": "Let me think."},
        {"type": "text", "text": "Answer."},
    ]


async def test_tool_call_deltas_are_assembled(fake_openai: FakeOpenAI) -> None:
    calls = (
        ToolCall("read", {"path": "src/main.py", "limit": 20}, id="call_a"),
        ToolCall("read", {"path": "README.md"}, id="call_b"),
    )
    fake_openai.queue(Reply.tools(*calls, text="Reading both.", pieces=4))
    events = await collect(make_provider(fake_openai), tools=[READ_TOOL])
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.index, s.id, s.name) for s in starts] == [(0, "call_a", "read"), (1, "call_b", "read")]
    pieces = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta) and e.index == 0)
    assert pieces == '{"path": "src/main.py", "limit": 20}'
    assert len([e for e in events if isinstance(e, ToolCallDelta) and e.index == 0]) == 4
    ends = [e.tool_call for e in events if isinstance(e, ToolCallEnd)]
    assert ends == [
        {
            "type": "toolCall",
            "id": "call_a",
            "name": "read",
            "arguments": {"path": "src/main.py", "limit": 20},
        },
        {"type": "toolCall", "id": "call_b", "name": "read", "arguments": {"path": "README.md"}},
    ]
    message = events[-1].message
    assert message["stopReason"] == "toolUse"
    assert message["content"][0] == {"type": "text", "text": "Reading both."}
    assert message["content"][1:] == ends
    sent_tools = fake_openai.requests[0]["tools"]
    assert sent_tools == [{"type": "function", "function": READ_TOOL}]


async def test_malformed_tool_arguments_are_kept_raw(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.tools(ToolCall("read", '{"path": "a', id="call_x")))
    events = await collect(make_provider(fake_openai), tools=[READ_TOOL])
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.tool_call["arguments"] == {"_raw": '{"path": "a'}


async def test_length_finish_reason_maps_to_length(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.text_reply("cut sho", finish_reason="length"))
    events = await collect(make_provider(fake_openai), max_tokens=2)
    assert events[-1].message["stopReason"] == "length"
    assert fake_openai.requests[0]["max_tokens"] == 2


async def test_request_carries_system_prompt_history_tool_results_and_images(fake_openai: FakeOpenAI) -> None:
    history = [
        {"role": "user", "content": "look at this"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "private"},
                {"type": "text", "text": "Reading."},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "x.png"}},
            ],
            "stopReason": "toolUse",
        },
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [
                {"type": "text", "text": "an image"},
                {"type": "image", "data": "QUJD", "mimeType": "image/png"},
            ],
            "isError": False,
        },
        {"role": "user", "content": [{"type": "text", "text": "and?"}]},
    ]
    fake_openai.queue(Reply.text_reply("ok"))
    await collect(make_provider(fake_openai), messages=history, system_prompt="You are terse.")
    sent = fake_openai.requests[0]["messages"]
    assert sent[0] == {"role": "system", "content": "You are terse."}
    assert sent[1] == {"role": "user", "content": "look at this"}
    assert sent[2]["role"] == "assistant" and sent[2]["content"] == "Reading."
    assert sent[2]["tool_calls"][0]["function"] == {"name": "read", "arguments": '{"path": "x.png"}'}
    assert sent[3] == {"role": "tool", "tool_call_id": "c1", "content": "an image"}
    assert sent[4]["role"] == "user"
    assert sent[4]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}}
    assert sent[5] == {"role": "user", "content": "and?"}


async def test_complete_returns_the_text(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.text_reply("## Goal\nShip it."))
    provider = make_provider(
        fake_openai, models={MODEL: {"apiBase": fake_openai.api_base, "maxOutputTokens": 500}}
    )
    text = await provider.complete("Summarise.", "the conversation", model=MODEL, max_tokens=4000)
    assert text == "## Goal\nShip it."
    body = fake_openai.requests[0]
    assert body["max_tokens"] == 500  # capped by the model's output limit
    assert body["messages"] == [
        {"role": "system", "content": "Summarise."},
        {"role": "user", "content": "the conversation"},
    ]


async def test_cancel_mid_stream_closes_the_connection(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.text_reply("x" * 400, chunk_size=1, delay=0.01))
    provider = make_provider(fake_openai)
    builder = provider.new_builder(MODEL)
    first = asyncio.Event()

    async def consume() -> None:
        async for event in provider.stream(USER, model=MODEL, builder=builder):
            if isinstance(event, TextDelta):
                first.set()

    task = asyncio.create_task(consume())
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(fake_openai.client_left.wait(), 10)
    hit = fake_openai.hits[0]
    assert hit.disconnected and not hit.completed
    partial = builder.finish("aborted")
    assert partial["stopReason"] == "aborted"
    text = partial["content"][0]["text"]
    assert 0 < len(text) < 400 and set(text) == {"x"}


async def test_cancel_while_the_server_hangs(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.hang(text="wait"))
    provider = make_provider(fake_openai)
    got_text = asyncio.Event()

    async def consume() -> None:
        async for event in provider.stream(USER, model=MODEL):
            if isinstance(event, TextDelta):
                got_text.set()

    task = asyncio.create_task(consume())
    await got_text.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(fake_openai.client_left.wait(), 10)
    assert fake_openai.disconnects == 1


async def test_server_dropping_the_stream_mid_reply_is_retried(fake_openai: FakeOpenAI) -> None:
    # pi 0.73.1 (delta B.2): a retryable error after part of the reply had streamed is retried too. The
    # partial reply comes with the retry notice, marked as an error, and the retry is a fresh reply.
    fake_openai.queue(Reply.disconnect("partial answer here", after_chunks=2), Reply.text_reply("again"))
    events = await collect(make_provider(fake_openai))
    (scheduled,) = [e for e in events if isinstance(e, RetryScheduled)]
    assert scheduled.error_message == "Connection error."
    partial = scheduled.partial
    assert partial is not None and partial["stopReason"] == "error"
    assert partial["content"] == [{"type": "text", "text": "partial "}]
    assert partial["errorMessage"] == "Connection error."
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(texts) == "partial again"  # the deltas of both attempts, split by the notice
    done = events[-1]
    assert isinstance(done, Done) and done.error is None
    assert done.message["content"] == [{"type": "text", "text": "again"}]
    assert fake_openai.hit_count == 2
    assert fake_openai.requests[0] == fake_openai.requests[1]  # the retry does not carry the partial


async def test_server_dropping_the_stream_without_retries_ends_in_an_error(fake_openai: FakeOpenAI) -> None:
    provider = make_provider(fake_openai, retry=RetryPolicy(enabled=False))
    fake_openai.queue(Reply.disconnect("partial answer here", after_chunks=2), Reply.text_reply("never"))
    events = await collect(provider)
    done = events[-1]
    assert isinstance(done, Done)
    assert done.message["stopReason"] == "error"
    assert done.message["content"] == [{"type": "text", "text": "partial "}]
    assert done.message["errorMessage"] == "Connection error."
    assert isinstance(done.error, RetryableError)
    assert fake_openai.hit_count == 1


async def test_non_streaming_requests_get_json(fake_openai: FakeOpenAI) -> None:
    import litellm

    fake_openai.queue(Reply.tools(ToolCall("read", {"path": "a"}, id="c9"), text="hm", usage=(5, 2)))
    response = await litellm.acompletion(
        model=MODEL, api_base=fake_openai.api_base, api_key="x", messages=[{"role": "user", "content": "q"}]
    )
    message = response.choices[0].message
    assert message.content == "hm"
    assert message.tool_calls[0].id == "c9"
    assert response.usage.prompt_tokens == 5


async def test_a_stream_that_arrives_all_at_once_lets_the_event_loop_run_between_chunks(
    fake_openai: FakeOpenAI,
) -> None:
    """On a fast (loopback, local) server the whole reply is buffered: reading it never suspended, so the
    TUI froze until the last chunk (the preview's inspector drew no footer and ignored F1 for ~20 s on
    the demo). Another task must get a turn between any two chunks."""
    fake_openai.queue(Reply.text_reply("word " * 2000, chunk_size=5))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    other = asyncio.create_task(ticker())
    seen: list[int] = []
    try:
        async for event in make_provider(fake_openai).stream(USER, model=MODEL):
            if isinstance(event, TextDelta):
                seen.append(ticks)
    finally:
        other.cancel()
    assert len(seen) > 50
    starved = sum(1 for a, b in itertools.pairwise(seen) if b == a)
    assert starved == 0, f"{starved} of {len(seen) - 1} chunks followed another with no turn for the loop"
