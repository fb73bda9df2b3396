"""Error classification (reference pi-compaction §8.4, §8.5) and the retry policy arithmetic."""

from __future__ import annotations

import email.utils
import time

import httpx
import pytest

from tui.agent.errors import (
    UNBOUNDED_DELAY_MS,
    AuthError,
    ContextOverflowError,
    FatalError,
    RetryableError,
    classify,
    is_context_overflow,
    is_overflow_text,
    is_retryable_text,
    key_env_var,
    retry_after_ms,
)
from tui.agent.litellm_loader import load_litellm
from tui.agent.retry import RetryPolicy

OVERFLOW_MESSAGES = [
    "prompt is too long: 213462 tokens > 200000 maximum",
    "Input is too long for requested model.",
    "Your input exceeds the context window of this model.",
    "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
    "Please reduce the length of the messages or completion.",
    "This endpoint's maximum context length is 128000 tokens. However, you requested about 200000 tokens",
    "prompt token count of 130000 exceeds the limit of 128000",
    "the request exceeds the available context size, try increasing it",
    "The number of tokens to keep from the initial prompt is greater than the context length",
    "invalid params, context window exceeds limit (2013)",
    "Your request exceeded model token limit: 262144 (requested: 291351)",
    "Prompt contains 40000 tokens, too large for model with 32768 maximum context length",
    "model_context_window_exceeded",
    "context_length_exceeded",
    "context length exceeded",
    "Too many tokens in the request",
    "token limit exceeded for this request",
    "requested tokens (9000) exceed context window of 8192",
    "context size exceeded",
    "the input is too long for the context (n_ctx)",
    "requested tokens 9000 greater than n_ctx 8192",
    "request_too_large",
    "400 status code (no body)",
    "413 status code (no body)",
    "400 (no body)",
]


@pytest.mark.parametrize("text", OVERFLOW_MESSAGES)
def test_overflow_patterns_are_recognised(text: str) -> None:
    assert is_overflow_text(text)
    assert is_overflow_text(text.upper())
    assert not is_retryable_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "429 status code (no body)",
        "429 Too Many Requests",
        "Rate limit reached for gpt-4o",
        "500 internal server error",
        "Incorrect API key provided",
        "the 400 status code (no body) is not at the start",
    ],
)
def test_non_overflow_messages(text: str) -> None:
    assert not is_overflow_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "Overloaded",
        "rate limit exceeded",
        "Rate-limit hit",
        "Too Many Requests",
        "429 status code (no body)",
        "HTTP 500",
        "502 Bad Gateway",
        "503 Service Unavailable",
        "504 gateway timeout",
        "service unavailable",
        "server error",
        "internal error",
        "Connection error.",
        "connection refused",
        "other side closed",
        "fetch failed",
        "upstream connect error",
        "reset before headers",
        "terminated",
        "retry delay exceeded",
        "Request timed out.",
        # pi 0.73.1's additions (delta A.6), matched anywhere, without word boundaries
        "Provider returned error",
        "network error",
        "connection lost",
        "WebSocket closed before the reply",
        "websocket error",
        "socket hang up",
        "stream ended without a finish",
        "http2 request did not get a response",
        "ETIMEDOUT: timeout",
        "status5030",
    ],
)
def test_retryable_patterns(text: str) -> None:
    assert is_retryable_text(text)


# "usage limit" was on the old list; pi 0.73.1 dropped it (a plan's quota does not come back in seconds).
@pytest.mark.parametrize("text", ["", "invalid tool schema", "model not found", "usage limit reached"])
def test_not_retryable(text: str) -> None:
    assert not is_retryable_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "Throttling error: Too many tokens, please wait before trying again.",
        "Service unavailable: prompt is too long for the current load",
        "rate limit: too many tokens per minute",
        "Too Many Requests: the context window exceeds limit of this tier",
        "request_too_large, rate limit exceeded",
    ],
)
def test_throttling_texts_are_never_overflow(text: str) -> None:
    # Delta A.5: the exclusion runs before the patterns, whatever else the text says.
    assert not is_overflow_text(text)
    assert not is_context_overflow({"role": "assistant", "stopReason": "error", "errorMessage": text})


@pytest.mark.parametrize(
    "text",
    [
        "prompt too long; exceeded max context length by 1200 tokens",  # Ollama
        "prompt too long; exceeded context length by 9 tokens",
        "request_too_large: Request exceeds the maximum size",  # Anthropic's 413
    ],
)
def test_new_overflow_patterns(text: str) -> None:
    assert is_overflow_text(text)


def test_length_stop_with_nothing_written_and_a_full_window_is_overflow() -> None:
    # Delta A.5 case 3: stopReason "length", no output, input + cacheRead >= 99 % of the window.
    message = {"role": "assistant", "stopReason": "length", "usage": {"input": 95_000, "cacheRead": 4_000}}
    assert is_context_overflow({**message, "usage": {**message["usage"], "output": 0}}, 100_000)
    assert is_context_overflow(message, 100_000)  # a missing output count is no output
    assert not is_context_overflow({**message, "usage": {**message["usage"], "output": 1}}, 100_000)
    assert not is_context_overflow(message, 100_100)  # 99,000 < 0.99 × 100,100
    assert not is_context_overflow(message)  # no window given


def test_stored_error_message_overflow() -> None:
    message = {"role": "assistant", "stopReason": "error", "errorMessage": "prompt is too long"}
    assert is_context_overflow(message)
    assert not is_context_overflow({**message, "errorMessage": "429 Too Many Requests"})


def test_silent_overflow_counts_only_for_stop() -> None:
    usage = {"input": 90_000, "cacheRead": 20_000}
    message = {"role": "assistant", "stopReason": "stop", "usage": usage}
    assert is_context_overflow(message, context_window=100_000)
    assert not is_context_overflow(message, context_window=120_000)
    assert not is_context_overflow({**message, "stopReason": "toolUse"}, context_window=100_000)
    assert not is_context_overflow(message)


def _litellm_error(cls_name: str, message: str, status: int, headers: dict | None = None):
    litellm = load_litellm()
    response = httpx.Response(status, headers=headers or {}, request=httpx.Request("POST", "http://x"))
    cls = getattr(litellm, cls_name)
    if cls_name in ("InternalServerError", "ServiceUnavailableError", "RateLimitError", "BadRequestError"):
        return cls(message=message, llm_provider="openai", model="m", response=response)
    return cls(message=message, llm_provider="openai", model="m")


def test_context_window_exceeded_error_wins_over_bad_request() -> None:
    exc = load_litellm().ContextWindowExceededError(message="boom", model="m", llm_provider="openai")
    assert isinstance(classify(exc), ContextOverflowError)


def test_bad_request_with_an_overflow_text_is_overflow() -> None:
    exc = _litellm_error("BadRequestError", "the request exceeds the available context size", 400)
    assert isinstance(classify(exc), ContextOverflowError)


def test_rate_limit_mentioning_tokens_is_not_overflow() -> None:
    exc = _litellm_error("RateLimitError", "too many tokens per minute", 429, {"retry-after": "2"})
    error = classify(exc)
    assert isinstance(error, RetryableError)
    assert error.retry_after_ms == 2000


def test_plain_bad_request_is_fatal() -> None:
    error = classify(_litellm_error("BadRequestError", "invalid tool schema", 400))
    assert isinstance(error, FatalError)
    assert error.message == "invalid tool schema"


def test_auth_error_names_the_key_for_the_model() -> None:
    exc = load_litellm().AuthenticationError(message="bad key", llm_provider="mistral", model="m")
    error = classify(exc, "mistral/mistral-large-latest")
    assert isinstance(error, AuthError)
    assert error.env_var == "MISTRAL_API_KEY"
    assert "MISTRAL_API_KEY" in error.message and "bad key" in error.message


def test_plain_python_errors() -> None:
    assert isinstance(classify(ConnectionResetError("reset")), RetryableError)
    assert isinstance(classify(TimeoutError()), RetryableError)
    assert isinstance(classify(ValueError("nope")), FatalError)
    assert isinstance(classify(RuntimeError("prompt is too long")), ContextOverflowError)


@pytest.mark.parametrize(
    ("model", "env_var"),
    [
        ("gpt-4o-mini", "OPENAI_API_KEY"),
        ("openai/gpt-4o", "OPENAI_API_KEY"),
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("gemini/gemini-2.5-flash", "GEMINI_API_KEY"),
        ("groq/openai/gpt-oss-120b", "GROQ_API_KEY"),
    ],
)
def test_key_env_var(model: str, env_var: str) -> None:
    load_litellm()
    assert key_env_var(model) == env_var


def _with_headers(headers: dict[str, str]) -> Exception:
    exc = Exception("x")
    exc.response = httpx.Response(429, headers=headers)  # type: ignore[attr-defined]
    return exc


def test_retry_after_forms() -> None:
    assert retry_after_ms(_with_headers({"retry-after-ms": "250"})) == 250
    assert retry_after_ms(_with_headers({"retry-after": "3"})) == 3000
    assert retry_after_ms(_with_headers({"x-ratelimit-reset-ms": "40"})) == 40
    assert retry_after_ms(_with_headers({})) is None
    assert retry_after_ms(Exception("no response")) is None
    future = email.utils.formatdate(time.time() + 120, usegmt=True)
    assert 100_000 < retry_after_ms(_with_headers({"retry-after": future})) <= 120_000


def test_backoff_doubles_and_is_capped() -> None:
    policy = RetryPolicy(enabled=True, max_retries=3, base_delay_ms=2000, max_retry_delay_ms=60000)
    assert [policy.delay_ms(n) for n in (1, 2, 3)] == [2000, 4000, 8000]
    assert policy.delay_ms(1, retry_after_ms=10_000) == 10_000
    assert policy.delay_ms(3, retry_after_ms=1_000) == 8000
    # A server delay beyond maxRetryDelayMs is refused (the provider then fails at once), never waited for.
    assert policy.refuses_delay(600_000) and not policy.refuses_delay(60_000)
    assert policy.delay_ms(10) == 60000
    assert policy.delay_ms(10_000) == 60000  # no OverflowError from a huge attempt number
    assert [policy.allows(n) for n in (1, 3, 4)] == [True, True, False]
    assert not RetryPolicy(enabled=False).allows(1)


def test_no_cap_still_refuses_an_infinite_delay() -> None:
    policy = RetryPolicy(max_retry_delay_ms=0)
    assert not policy.refuses_delay(86_400_000)
    assert policy.refuses_delay(retry_after_ms(_with_headers({"retry-after": "inf"})))
    assert policy.delay_ms(100) == 3_600_000  # the backoff's own ceiling


@pytest.mark.parametrize("value", ["inf", "1e400", "Infinity", "-inf", "nan", "1e999999"])
def test_retry_after_extremes_do_not_raise(value: str) -> None:
    delay = retry_after_ms(_with_headers({"retry-after": value}))
    assert delay is None or 0 <= delay <= UNBOUNDED_DELAY_MS
    assert retry_after_ms(_with_headers({"retry-after-ms": value})) in (None, 0, UNBOUNDED_DELAY_MS)


def test_policy_from_settings_table() -> None:
    policy = RetryPolicy.from_settings({"enabled": False, "maxRetries": 5, "baseDelayMs": 10})
    assert policy == RetryPolicy(enabled=False, max_retries=5, base_delay_ms=10, max_retry_delay_ms=60000)
    provider = {"maxRetryDelayMs": 0, "timeoutMs": 1500, "maxRetries": 2, "streamIdleTimeoutMs": 0}
    policy = RetryPolicy.from_settings({"provider": provider})
    assert (policy.max_retry_delay_ms, policy.timeout_ms, policy.sdk_max_retries) == (0, 1500, 2)
    assert policy.request_timeout_s == 1.5 and policy.stream_idle_timeout_s is None
