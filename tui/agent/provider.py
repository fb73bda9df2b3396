"""The model provider: one streamed chat completion through litellm, as events and a pi assistant message.

:meth:`Provider.stream` converts pi-format messages (after ``convert_to_llm``) to the OpenAI chat format,
calls ``litellm.acompletion(stream=True)`` with usage reporting on, and yields deltas as they arrive. A
transient failure (rate limit, 5xx, timeout, connection, a stream silent for longer than the idle timeout,
a response without any reply) is retried with the :class:`RetryPolicy` backoff, also after part of the
reply had streamed (the partial reply travels with the retry notice); a server that asks to wait longer
than ``maxRetryDelayMs`` fails at once. litellm's own retries are off and the SDK's are off unless
``retry.provider.maxRetries`` asks for them, so that the policy decides. Every stream ends with
:class:`Done`; a failure does not raise, it ends with ``stopReason: "error"`` and the classified error.
Cancelling the consuming task closes the HTTP stream at once. litellm is awaited from the background
import (and its first-call set-up, :attr:`Provider.warm_up`), so a stream never blocks the event loop
while litellm loads; the synchronous helpers
(``context_window``, ``new_builder``) load it on the spot.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

import prompts
from tui.agent import model_info
from tui.agent.assistant_builder import AssistantBuilder
from tui.agent.errors import UNBOUNDED_DELAY_MS, ProviderError, RetryableError, classify
from tui.agent.litellm_loader import load_litellm_async, warm_up_litellm
from tui.agent.offline import is_offline, register_offline_provider
from tui.agent.openai_format import to_openai_messages, to_openai_tools
from tui.agent.retry import RetryPolicy
from tui.agent.stream_events import (
    Done,
    RetryFinished,
    RetryScheduled,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    UsageUpdate,
)
from tui.session.content import content_text
from tui.session.redact import MIN_SECRET_VALUE_CHARS, Scrubber, secret_env_values


class Provider:
    """Streams completions for any litellm model, with kompakt's retry policy and model overrides."""

    def __init__(
        self,
        *,
        retry: RetryPolicy | None = None,
        models: model_info.Overrides | None = None,
        env: Mapping[str, str] | None = None,
        warm_up: Callable[[], Awaitable[None]] = warm_up_litellm,
    ) -> None:
        self.retry = retry or RetryPolicy()
        self.models: model_info.Overrides = models or {}
        self.env = os.environ if env is None else env
        # litellm's import and first-call set-up; every stream awaits it, and whoever times a request
        # (a MoA reference's timeout) awaits it first, so that the set-up is not counted against the request.
        self.warm_up = warm_up

    def context_window(self, model: str) -> int:
        return model_info.context_window(model, self.models)

    def max_output_tokens(self, model: str) -> int:
        return model_info.max_output_tokens(model, self.models)

    def new_builder(self, model: str) -> AssistantBuilder:
        """A builder for ``model``; pass it to :meth:`stream` to keep the partial message on cancel."""
        provider, model_id = model_info.split_model(model)
        return AssistantBuilder(provider, model_id)

    async def stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        model: str,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
        reasoning_effort: str | None = None,
        builder: AssistantBuilder | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream one assistant turn; always ends with :class:`Done` unless the task is cancelled."""
        litellm = await load_litellm_async()
        await self.warm_up()
        request = self._request(messages, tools, model, system_prompt, max_tokens, reasoning_effort)
        builder = builder or self.new_builder(model)
        attempt = 0
        while True:
            builder.reset()
            yielded = False
            try:
                async for event in self._attempt(litellm, request, builder):
                    yielded = True
                    yield event
            except Exception as exc:  # CancelledError is a BaseException and passes straight through
                error = _redacted(classify(exc, model), request)
            else:
                if attempt:
                    yield RetryFinished(success=True, attempt=attempt)
                yield Done(builder.finish())
                return
            retry = isinstance(error, RetryableError) and self.retry.allows(attempt + 1)
            if retry and self.retry.refuses_delay(error.retry_after_ms):
                error = RetryableError(
                    prompts.render(
                        "error_retry_delay",
                        error=error.message,
                        delay=_seconds(error.retry_after_ms),
                        limit=_seconds(self.retry.max_retry_delay_ms),
                    ),
                    status=error.status,
                    retry_after_ms=error.retry_after_ms,
                )
                retry = False
            if retry:
                attempt += 1
                delay_ms = self.retry.delay_ms(attempt, error.retry_after_ms)
                # pi 0.73.1 retries after output too (delta B.2): the partial reply is handed over with the
                # notice, so that it is kept as a failed reply and the retry starts a fresh one.
                partial = builder.finish("error", error.message) if yielded else None
                builder.reset()  # an abort during the wait must not store the partial a second time
                yield RetryScheduled(attempt, self.retry.max_retries, delay_ms, error.message, partial)
                await asyncio.sleep(delay_ms / 1000)
                continue
            if attempt:
                yield RetryFinished(success=False, attempt=attempt, final_error=error.message)
            yield Done(builder.finish("error", error.message), error)
            return

    async def complete(
        self, system: str, user_text: str, *, model: str, max_tokens: int | None = None
    ) -> str:
        """The text of one answer to ``user_text`` (for summaries); raises :class:`ProviderError` on failure."""
        await load_litellm_async()  # the output limit below comes from litellm's model map
        limit = self.max_output_tokens(model)
        messages = [{"role": "user", "content": [{"type": "text", "text": user_text}]}]
        events = self.stream(
            messages, model=model, system_prompt=system, max_tokens=min(max_tokens or limit, limit)
        )
        done = [event async for event in events if isinstance(event, Done)][-1]
        if done.error is not None:
            raise done.error
        return content_text(done.message["content"])

    def _request(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        model: str,
        system_prompt: str | None,
        max_tokens: int | None,
        reasoning_effort: str | None,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": model,
            "messages": to_openai_messages(system_prompt, messages),
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self.retry.request_timeout_s,
            **model_info.call_options(model, self.models, self.env),
        }
        # The retry policy is ours: no hidden retries in litellm, none in the SDK unless asked for. litellm
        # reads num_retries as the SDK's count when given (and would retry by itself above 0), so it is sent
        # only to switch both off.
        sdk_retries = self.retry.sdk_max_retries or 0
        request["max_retries"] = sdk_retries
        if not sdk_retries:
            request["num_retries"] = 0
        if tools:
            request["tools"] = to_openai_tools(tools)
        if max_tokens:
            request["max_tokens"] = max_tokens
        if reasoning_effort and reasoning_effort != "off":
            request["reasoning_effort"] = reasoning_effort
            request["drop_params"] = True  # models without reasoning simply ignore it
        return request

    async def _attempt(
        self, litellm: Any, request: dict[str, Any], builder: AssistantBuilder
    ) -> AsyncIterator[StreamEvent]:
        model = request["model"]
        if is_offline(model):
            register_offline_provider()
        response = await litellm.acompletion(**request)
        idle_s = self.retry.stream_idle_timeout_s
        chunks = aiter(response)
        heard = False  # whether the server itself sent anything (litellm makes up a final chunk anyway)
        try:
            while True:
                try:
                    async with asyncio.timeout(idle_s):
                        chunk = await anext(chunks)
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise StreamStalledError(
                        prompts.render(
                            "error_stream_idle", seconds=_seconds(self.retry.stream_idle_timeout_ms)
                        )
                    ) from None
                heard = heard or _from_server(chunk)
                for event in self._chunk_events(model, chunk, builder):
                    yield event
                # A fast server's reply is buffered whole and reading it never suspends: give the event
                # loop a turn per chunk, or the TUI freezes until the last one (keys, footer, redraws).
                await asyncio.sleep(0)
        finally:
            # Runs on cancellation too: close the HTTP stream now rather than at garbage collection.
            await response.aclose()
        if not heard:
            # A 200 with an empty body, or a stream cut before its first chunk: no reply, not an empty one.
            raise RetryableError(prompts.render("error_empty_reply"))

    @staticmethod
    def _chunk_events(model: str, chunk: Any, builder: AssistantBuilder) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if chunk.choices:
            choice = chunk.choices[0]
            delta = choice.delta
            reasoning = getattr(delta, "reasoning_content", None)
            if reasoning:
                builder.add_thinking(reasoning)
                events.append(ThinkingDelta(reasoning))
            if delta.content:
                builder.add_text(delta.content)
                events.append(TextDelta(delta.content))
            for call in delta.tool_calls or ():
                function = call.function
                events.extend(builder.tool_delta(call.index, call.id, function.name, function.arguments))
            if choice.finish_reason:
                builder.finish_reason = choice.finish_reason
                events.extend(builder.end_tool_calls())
        usage = getattr(chunk, "usage", None)
        if usage:
            builder.set_usage(model_info.usage_from_litellm(model, usage))
            events.append(UsageUpdate(builder.usage))
        return events


def _from_server(chunk: Any) -> bool:
    """Whether a chunk carries something a server sent: a role, content (even empty), reasoning, tool calls
    or usage. The closing chunk litellm adds to every stream, even an empty one, carries none of these."""
    if getattr(chunk, "usage", None):
        return True
    for choice in chunk.choices or ():
        delta = choice.delta
        if delta is None:
            continue
        if delta.content is not None or getattr(delta, "role", None) or delta.tool_calls:
            return True
        if getattr(delta, "reasoning_content", None):
            return True
    return False


class StreamStalledError(TimeoutError):
    """No chunk arrived within ``retry.provider.streamIdleTimeoutMs``: retried like a dropped connection."""


def _redacted(error: ProviderError, request: Mapping[str, Any]) -> ProviderError:
    """The error with every secret taken out of its text, before it is stored, shown or summarised.

    A provider may echo the key it was sent ("Incorrect API key provided: sk-..."): the exports' scrubber
    removes key shapes and secret-named variables, and the key this request carried is removed too,
    whatever the name of the variable it came from (``apiKeyEnv``).
    """
    secrets = set(secret_env_values())
    sent = request.get("api_key")
    if isinstance(sent, str) and len(sent) >= MIN_SECRET_VALUE_CHARS:
        secrets.add(sent)
    scrub = Scrubber(sorted(secrets, key=len, reverse=True))
    error.message = scrub(error.message)
    error.args = (error.message,)
    return error


def _seconds(ms: int | None) -> str:
    return "unlimited" if ms is None or ms >= UNBOUNDED_DELAY_MS else f"{ms / 1000:g} s"
