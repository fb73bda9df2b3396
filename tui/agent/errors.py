"""Classify provider failures: context overflow, retryable, auth or fatal (reference pi-compaction §8.4, §8.5).

litellm maps many providers' overflow errors to ``ContextWindowExceededError``; for the others (Ollama,
vLLM, llama.cpp behind a generic endpoint) the message text is matched against the known overflow
patterns. Overflow is decided first, so an overflow is never retried as if it were a server hiccup.
Auth errors carry the name of the environment variable to set. Everything here works on exceptions
and on stored assistant messages alike, and never imports litellm unless litellm is already loaded.
"""

from __future__ import annotations

import email.utils
import math
import re
import sys
import time
from collections.abc import Mapping
from typing import Any

import prompts

OVERFLOW_PATTERNS = (
    r"prompt is too long",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"model_context_window_exceeded",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    r"requested tokens?.*exceed.*context (window|length|size)",
    r"context (window|length|size).*(exceeded|overflow|too small)",
    r"(prompt|input).*(too long|too large).*(context|n_ctx)",
    r"requested tokens?.*(exceeds?|greater than).*(n_ctx|context)",
    r"request_too_large",
    r"prompt too long; exceeded (max )?context length",
)
_OVERFLOW = re.compile("|".join(f"(?:{p})" for p in OVERFLOW_PATTERNS), re.IGNORECASE)
# Cerebras and Mistral report an overflow as a bare 400/413 with no body.
_NO_BODY_OVERFLOW = re.compile(r"^4(00|13)\s*(status code)?\s*\(no body\)", re.IGNORECASE)
# pi 0.73.1: a throttling or rate-limit text is never an overflow, whatever else it says (delta A.5).
_NOT_OVERFLOW = re.compile(
    r"^(Throttling error|Service unavailable):|rate limit|too many requests", re.IGNORECASE
)
# pi 0.73.1's list (delta A.6): case-insensitive, anywhere in the text, no word boundaries.
RETRYABLE_PATTERNS = (
    r"overloaded",
    r"provider.?returned.?error",
    r"rate.?limit",
    r"too many requests",
    r"429",
    r"500",
    r"502",
    r"503",
    r"504",
    r"service.?unavailable",
    r"server.?error",
    r"internal.?error",
    r"network.?error",
    r"connection.?error",
    r"connection.?refused",
    r"connection.?lost",
    r"websocket.?closed",
    r"websocket.?error",
    r"other side closed",
    r"fetch failed",
    r"upstream.?connect",
    r"reset before headers",
    r"socket hang up",
    r"ended without",
    r"http2 request did not get a response",
    r"timed? out",
    r"timeout",
    r"terminated",
    r"retry delay",
)
_RETRYABLE = re.compile("|".join(f"(?:{p})" for p in RETRYABLE_PATTERNS), re.IGNORECASE)
# Some SDKs fail before sending, with a 500-coded "missing credentials" error rather than a 401.
_MISSING_KEY = re.compile(
    r"missing credentials|missing \w+ api key|no (api )?key is set|incorrect api key|invalid.?api.?key",
    re.IGNORECASE,
)

# Used when litellm cannot tell (or is not loaded yet): provider prefix → the key it reads.
KEY_ENV_VARS = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "xai": "XAI_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "cohere": "COHERE_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
}


class ProviderError(Exception):
    """A classified provider failure; ``str()`` is the message to show and to store."""

    kind = "fatal"

    def __init__(self, message: str, *, status: int | None = None, retry_after_ms: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after_ms = retry_after_ms


class ContextOverflowError(ProviderError):
    kind = "overflow"


class RetryableError(ProviderError):
    kind = "retryable"


class AuthError(ProviderError):
    kind = "auth"

    def __init__(self, message: str, *, env_var: str | None = None, status: int | None = None) -> None:
        super().__init__(message, status=status)
        self.env_var = env_var


class FatalError(ProviderError):
    kind = "fatal"


def is_overflow_text(text: str) -> bool:
    """Whether an error message reads like a context overflow (a throttling or rate-limit text never does)."""
    if _NOT_OVERFLOW.search(text.strip()):
        return False
    return bool(_OVERFLOW.search(text) or _NO_BODY_OVERFLOW.search(text.strip()))


def is_retryable_text(text: str) -> bool:
    """Whether an error message reads like a transient failure; overflow text is never retryable."""
    return bool(text) and not is_overflow_text(text) and bool(_RETRYABLE.search(text))


def is_context_overflow(message: Mapping[str, Any], context_window: int | None = None) -> bool:
    """pi's ``isContextOverflow``: a known overflow error, a success whose input exceeded the window, or
    (pi 0.73.1, case 3) a reply cut at its length limit before writing anything with the window full."""
    stop_reason = message.get("stopReason")
    if stop_reason == "error":
        return is_overflow_text(message.get("errorMessage") or "")
    if not context_window:
        return False
    usage = message.get("usage") or {}
    used = (usage.get("input") or 0) + (usage.get("cacheRead") or 0)
    if stop_reason == "stop":
        return used > context_window
    if stop_reason == "length":
        return (usage.get("output") or 0) == 0 and used >= 0.99 * context_window
    return False


def key_env_var(model: str) -> str | None:
    """The environment variable holding the API key for ``model``'s provider, if one is known."""
    if "/" in model:
        provider = model.split("/", 1)[0]
    else:
        provider = "anthropic" if model.startswith("claude") else "openai"
    known = KEY_ENV_VARS.get(provider)
    litellm = sys.modules.get("litellm")
    if litellm is None:
        return known
    try:
        missing = litellm.validate_environment(model).get("missing_keys") or []
    except Exception:  # litellm raises for names it cannot route; the table still helps
        missing = []
    keys = [str(k) for k in missing if str(k).endswith("_API_KEY")]
    # litellm may list several accepted names (GOOGLE_API_KEY, GEMINI_API_KEY): prefer the usual one.
    if known in keys or not keys:
        return known
    return keys[0]


def auth_message(model: str, detail: str) -> AuthError:
    env_var = key_env_var(model)
    if env_var:
        text = prompts.render("error_auth", model=model, env_var=env_var, detail=detail)
    else:
        text = prompts.render("error_auth_unknown", model=model, detail=detail)
    return AuthError(text, env_var=env_var)


def classify(exc: BaseException, model: str = "") -> ProviderError:
    """Turn any exception from a provider call into one of the four :class:`ProviderError` kinds."""
    if isinstance(exc, ProviderError):
        return exc
    litellm = sys.modules.get("litellm")
    status = _status_of(exc)
    text = provider_text(exc)
    # Overflow first: ContextWindowExceededError is a BadRequestError, and its text may mention 429-like codes.
    if litellm is not None and isinstance(exc, litellm.ContextWindowExceededError):
        return ContextOverflowError(text, status=status)
    # 413 Payload Too Large: the request is too big for the server, which compaction cures.
    if status == 413 or (status != 429 and is_overflow_text(text)):
        return ContextOverflowError(text, status=status)
    is_auth_error = litellm is not None and isinstance(exc, litellm.AuthenticationError)
    if status in (401, 403) or is_auth_error or _MISSING_KEY.search(text):
        error = auth_message(model, text)
        error.status = status
        return error
    if _is_transient(exc, status, litellm) or (status is None and is_retryable_text(text)):
        return RetryableError(text, status=status, retry_after_ms=retry_after_ms(exc))
    return FatalError(text, status=status)


def _is_transient(exc: BaseException, status: int | None, litellm: Any) -> bool:
    if status is not None and (status in (408, 409, 429) or status >= 500):
        return True
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    if litellm is None:
        return False
    transient = (
        litellm.RateLimitError,
        litellm.Timeout,
        litellm.APIConnectionError,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
    )
    return isinstance(exc, transient)


def provider_text(exc: BaseException) -> str:
    """The provider's own words for a failure, never a bare "Error code: 400".

    The openai SDK puts only the status in its message when the body is not ``{"error": {"message": ...}}``;
    an OpenAI-compatible server that sends ``{"error": "<text>"}`` (or ``{"detail": ...}``) has its text in
    the parsed body, and one that sends nothing gets pi's "<status> status code (no body)" wording, which
    the overflow detector knows for 400 and 413.
    """
    text = _clean(str(exc)) or type(exc).__name__
    status = _status_of(exc)
    if status is None or not _BARE_STATUS.fullmatch(text):
        return text
    detail = _body_text(getattr(exc, "body", None))
    if detail is None:
        detail = _response_text(exc)
    if not detail:
        return f"{status} status code (no body)"
    return f"{status} {detail}"


_BARE_STATUS = re.compile(r"(?:\w+Exception - )?Error code: \d{3}", re.IGNORECASE)
_MAX_DETAIL_CHARS = 2000


def _body_text(body: Any) -> str | None:
    """The message in a parsed error body of any common shape; None when the body says nothing."""
    if isinstance(body, str):
        return body.strip()[:_MAX_DETAIL_CHARS] or None
    if isinstance(body, Mapping):
        for key in ("error", "message", "detail", "msg"):
            found = _body_text(body.get(key))
            if found:
                return found
    return None


def _response_text(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    try:
        text = str(response.text).strip() if response is not None else ""
    except Exception:  # a streamed response whose body was never read
        return None
    return None if text in ("", "null", "{}") else text[:_MAX_DETAIL_CHARS]


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _clean(text: str) -> str:
    """Drop litellm's class-name prefixes so the user sees the provider's own words."""
    text = text.split(" Original exception:", 1)[0]  # litellm repeats the same error, prefixed again
    return re.sub(r"^(?:litellm\.\w+:\s*)+(?:\w+Error:\s*)*(?:\w+Exception - )?", "", text.strip())


def retry_after_ms(exc: BaseException) -> int | None:
    """The server's requested delay: ``retry-after-ms``, ``retry-after`` (seconds or HTTP date), or a reset."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    if value := headers.get("retry-after-ms"):
        return _as_ms(value, 1)
    if value := headers.get("retry-after"):
        parsed = _as_ms(value, 1000)
        if parsed is not None:
            return parsed
        try:
            when = email.utils.parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError, OverflowError):
            return None
        return max(0, int((when - time.time()) * 1000))
    if value := headers.get("x-ratelimit-reset-ms"):
        return _as_ms(value, 1)
    return None


# A wait so long it is never honoured: what ``retry-after: inf`` (or ``1e400``) is read as.
UNBOUNDED_DELAY_MS = 2**53


def _as_ms(value: str, scale: int) -> int | None:
    try:
        number = float(value) * scale
    except ValueError:
        return None
    if math.isnan(number):
        return None
    return int(min(max(number, 0.0), UNBOUNDED_DELAY_MS))
