"""Retry, overflow and auth handling of the provider, through litellm against the loopback server."""

from __future__ import annotations

import asyncio

import pytest

from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tui.agent.errors import AuthError, ContextOverflowError, RetryableError
from tui.agent.provider import Provider
from tui.agent.retry import RetryPolicy
from tui.agent.stream_events import Done, RetryFinished, RetryScheduled, TextDelta

MODEL = "openai/fake"
USER = [{"role": "user", "content": "hello"}]
FAST = RetryPolicy(enabled=True, max_retries=3, base_delay_ms=1, max_retry_delay_ms=20)


def make_provider(server: FakeOpenAI, retry: RetryPolicy = FAST) -> Provider:
    return Provider(models={MODEL: {"apiBase": server.api_base}}, env={}, retry=retry)


async def collect(provider: Provider, model: str = MODEL) -> list:
    return [event async for event in provider.stream(USER, model=model)]


async def test_rate_limit_then_success_is_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.rate_limited(), Reply.text_reply("second time lucky"))
    events = await collect(make_provider(fake_openai))
    assert fake_openai.hit_count == 2
    (scheduled,) = [e for e in events if isinstance(e, RetryScheduled)]
    assert (scheduled.attempt, scheduled.max_attempts, scheduled.delay_ms) == (1, 3, 1)
    assert "Rate limit" in scheduled.error_message
    assert RetryFinished(success=True, attempt=1) in events
    done = events[-1]
    assert done.error is None and done.message["stopReason"] == "stop"
    assert done.message["content"] == [{"type": "text", "text": "second time lucky"}]
    # Both requests carried the same body.
    assert fake_openai.requests[0] == fake_openai.requests[1]


async def test_retry_after_header_is_honoured_up_to_max_retry_delay(fake_openai: FakeOpenAI) -> None:
    # pi 0.73.1 (delta A.12): a delay within retry.provider.maxRetryDelayMs is waited for; a longer one
    # fails at once (it used to be waited for, cut down to the cap), so the third reply is never asked for.
    fake_openai.queue(
        Reply.rate_limited(retry_after=0.015), Reply.rate_limited(retry_after=30), Reply.text_reply("unused")
    )
    events = await collect(make_provider(fake_openai))
    assert [e.delay_ms for e in events if isinstance(e, RetryScheduled)] == [15]
    assert fake_openai.hit_count == 2
    done = events[-1]
    assert isinstance(done.error, RetryableError) and done.message["stopReason"] == "error"
    assert "retry.provider.maxRetryDelayMs" in done.message["errorMessage"]
    assert "30 s" in done.message["errorMessage"] and "Rate limit" in done.message["errorMessage"]


async def test_max_retry_delay_zero_accepts_any_finite_delay(fake_openai: FakeOpenAI) -> None:
    policy = RetryPolicy(enabled=True, max_retries=3, base_delay_ms=1, max_retry_delay_ms=0)
    fake_openai.queue(Reply.rate_limited(retry_after=0.04), Reply.text_reply("waited"))
    events = await collect(make_provider(fake_openai, policy))
    assert [e.delay_ms for e in events if isinstance(e, RetryScheduled)] == [40]
    assert events[-1].error is None


async def test_server_errors_are_retried_up_to_max_retries_then_fail(fake_openai: FakeOpenAI) -> None:
    policy = RetryPolicy(enabled=True, max_retries=2, base_delay_ms=1, max_retry_delay_ms=50)
    fake_openai.queue(*(Reply.server_error() for _ in range(5)))
    events = await collect(make_provider(fake_openai, policy))
    assert fake_openai.hit_count == 3
    assert [e.delay_ms for e in events if isinstance(e, RetryScheduled)] == [1, 2]
    finished = [e for e in events if isinstance(e, RetryFinished)]
    assert finished == [RetryFinished(success=False, attempt=2, final_error=finished[0].final_error)]
    assert "server had an error" in finished[0].final_error
    done = events[-1]
    assert isinstance(done, Done) and isinstance(done.error, RetryableError)
    assert done.error.status == 500
    assert done.message["stopReason"] == "error"
    assert done.message["errorMessage"] == done.error.message


@pytest.mark.parametrize("status", [502, 503, 504])
async def test_gateway_errors_are_retried(fake_openai: FakeOpenAI, status: int) -> None:
    fake_openai.queue(Reply.server_error(status), Reply.text_reply("fine"))
    events = await collect(make_provider(fake_openai))
    assert fake_openai.hit_count == 2
    assert events[-1].error is None


async def test_disabled_retries_fail_on_the_first_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.server_error(), Reply.text_reply("unused"))
    events = await collect(make_provider(fake_openai, RetryPolicy(enabled=False)))
    assert fake_openai.hit_count == 1
    assert not [e for e in events if isinstance(e, RetryScheduled | RetryFinished)]
    assert isinstance(events[-1].error, RetryableError)


async def test_context_overflow_is_classified_and_not_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.context_overflow(), Reply.text_reply("unused"))
    events = await collect(make_provider(fake_openai))
    assert fake_openai.hit_count == 1
    done = events[-1]
    assert isinstance(done.error, ContextOverflowError)
    assert done.message["stopReason"] == "error"
    assert "maximum context length is 128000 tokens" in done.message["errorMessage"]


async def test_unauthorized_names_the_env_var(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(Reply.unauthorized())
    events = await collect(make_provider(fake_openai))
    error = events[-1].error
    assert isinstance(error, AuthError)
    assert error.env_var == "OPENAI_API_KEY"
    assert "OPENAI_API_KEY" in str(error)
    assert fake_openai.hit_count == 1


async def test_missing_anthropic_key_names_its_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    events = await collect(Provider(env={}, retry=FAST), model="anthropic/claude-sonnet-4-5")
    error = events[-1].error
    assert isinstance(error, AuthError)
    assert error.env_var == "ANTHROPIC_API_KEY"
    assert "ANTHROPIC_API_KEY" in error.message


async def test_missing_openai_key_is_an_auth_error_not_a_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    events = await collect(Provider(env={}, retry=FAST), model="openai/gpt-4o-mini")
    assert not [e for e in events if isinstance(e, RetryScheduled)]
    assert isinstance(events[-1].error, AuthError)
    assert "OPENAI_API_KEY" in events[-1].error.message


async def test_connection_refused_is_retryable() -> None:
    async with FakeOpenAI() as server:
        api_base = server.api_base
    provider = Provider(
        models={MODEL: {"apiBase": api_base}}, env={}, retry=RetryPolicy(max_retries=1, base_delay_ms=1)
    )
    events = await collect(provider)
    assert [e.attempt for e in events if isinstance(e, RetryScheduled)] == [1]
    assert isinstance(events[-1].error, RetryableError)


async def test_cancel_during_the_backoff_sleep(fake_openai: FakeOpenAI) -> None:
    slow = RetryPolicy(enabled=True, max_retries=3, base_delay_ms=60_000, max_retry_delay_ms=60_000)
    fake_openai.queue(Reply.rate_limited(), Reply.text_reply("unused"))
    scheduled = asyncio.Event()
    seen: list = []

    async def consume() -> None:
        async for event in make_provider(fake_openai, slow).stream(USER, model=MODEL):
            seen.append(event)
            if isinstance(event, RetryScheduled):
                scheduled.set()

    task = asyncio.create_task(consume())
    await scheduled.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert fake_openai.hit_count == 1
    assert not [e for e in seen if isinstance(e, TextDelta | Done)]
