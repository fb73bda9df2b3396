"""A real loopback HTTP server that speaks OpenAI chat completions, scripted reply by reply, for tests.

Tests queue :class:`Reply` objects (text, tool calls, HTTP errors, a hang, a mid-stream disconnect or error
event, an empty body, a bare status) and
point litellm at ``server.api_base`` with a model like ``openai/fake``. The server answers
``POST /v1/chat/completions`` with SSE (``data: {...}`` then ``data: [DONE]``) or plain JSON, records every
request body, counts hits and the requests in flight at once, and notices when a client goes away
mid-stream. :meth:`FakeOpenAI.route` answers requests by their content, for calls made in parallel.
Use it as ``async with FakeOpenAI() as server`` or through the fixture: ``from tests.fake_openai import
fake_openai_fixture  # noqa: F401`` in a test module, then take a ``fake_openai`` argument.
``python -m tests.fake_openai --port N`` runs it standalone, answering every request with a default text
reply (for benchmarks).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

# A hang lasts until the client leaves or the server stops; this only bounds a forgotten test.
_HANG_LIMIT_S = 120.0
_HEARTBEAT_S = 0.01


@dataclass
class ToolCall:
    """One scripted tool call; ``arguments`` is sent as a JSON string in ``pieces`` deltas."""

    name: str
    arguments: dict[str, Any] | str
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:12]}")


@dataclass
class Reply:
    """One scripted answer. Build it with the class methods rather than by hand."""

    kind: str = "text"
    text: str = ""
    reasoning: str = ""
    chunk_size: int = 4
    delay: float = 0.0
    tool_calls: list[ToolCall] = field(default_factory=list)
    pieces: int = 3
    finish_reason: str | None = None
    usage: tuple[int, int] | None = None
    cached_tokens: int = 0
    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    chunks_before: int = 0
    # Answer only once this many requests are in flight at the same time (a concurrency proof; after
    # ``hold_limit`` seconds it answers anyway, and ``max_in_flight`` tells the test what happened).
    hold_until_in_flight: int = 0
    hold_limit: float = 30.0

    @classmethod
    def text_reply(
        cls,
        text: str,
        *,
        chunk_size: int = 4,
        delay: float = 0.0,
        tokens_per_second: float | None = None,
        usage: tuple[int, int] | None = None,
        cached_tokens: int = 0,
        reasoning: str = "",
        finish_reason: str = "stop",
        hold_until_in_flight: int = 0,
    ) -> Reply:
        """Streamed ``chunk_size`` characters at a time; a rate overrides ``delay`` (one chunk = one token)."""
        if tokens_per_second:
            delay = 1.0 / tokens_per_second
        return cls(
            text=text,
            chunk_size=chunk_size,
            delay=delay,
            usage=usage,
            cached_tokens=cached_tokens,
            reasoning=reasoning,
            finish_reason=finish_reason,
            hold_until_in_flight=hold_until_in_flight,
        )

    @classmethod
    def tools(
        cls, *calls: ToolCall, text: str = "", pieces: int = 3, usage: tuple[int, int] | None = None
    ) -> Reply:
        """Tool calls streamed as OpenAI deltas, each call's arguments split into ``pieces``."""
        return cls(
            kind="tools",
            text=text,
            tool_calls=list(calls),
            pieces=pieces,
            usage=usage,
            finish_reason="tool_calls",
        )

    @classmethod
    def error(cls, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
        return cls(kind="error", status=status, body=body, headers=headers or {})

    @classmethod
    def rate_limited(cls, retry_after: float | str | None = None) -> Reply:
        """A 429; a string ``retry_after`` is sent as written (``"inf"``, ``"1e400"``)."""
        if retry_after is None:
            headers = {}
        else:
            value = retry_after if isinstance(retry_after, str) else f"{retry_after:g}"
            headers = {"retry-after": value}
        body = _error_body("Rate limit reached for requests. Please try again later.", "rate_limit_exceeded")
        return cls.error(429, body, headers)

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        return cls.error(
            status, _error_body("The server had an error processing your request.", None, "server_error")
        )

    @classmethod
    def context_overflow(cls, limit: int = 128000, requested: int = 150000) -> Reply:
        """The 400 body OpenAI sends when the prompt exceeds the model's context window."""
        message = (
            f"This model's maximum context length is {limit} tokens. However, your messages resulted in "
            f"{requested} tokens. Please reduce the length of the messages."
        )
        return cls.error(400, _error_body(message, "context_length_exceeded", param="messages"))

    @classmethod
    def unauthorized(cls) -> Reply:
        body = _error_body(
            "Incorrect API key provided: x. You can find your API key at the dashboard.", "invalid_api_key"
        )
        return cls.error(401, body)

    @classmethod
    def hang(cls, *, text: str = "", chunk_size: int = 4) -> Reply:
        """Send the headers (and ``text`` if given), then nothing until the client leaves."""
        return cls(kind="hang", text=text, chunk_size=chunk_size)

    @classmethod
    def error_text(cls, status: int, text: str) -> Reply:
        """An error whose body is ``{"error": "<text>"}``, as some OpenAI-compatible servers send it."""
        return cls.error(status, {"error": text})

    @classmethod
    def bare_status(cls, status: int) -> Reply:
        """An HTTP error with no body at all (Cerebras, Mistral, proxies)."""
        return cls(kind="bare", status=status)

    @classmethod
    def empty_body(cls) -> Reply:
        """HTTP 200 with an empty body: no chunk, no ``[DONE]``."""
        return cls(kind="bare", status=200)

    @classmethod
    def no_headers(cls) -> Reply:
        """Accept the request and never answer, not even with headers, until the client leaves."""
        return cls(kind="no_headers")

    @classmethod
    def empty_stream(cls) -> Reply:
        """SSE headers, then the stream ends cleanly before its first chunk."""
        return cls(kind="empty_stream")

    @classmethod
    def stream_error(cls, text: str, message: str, *, after_chunks: int = 2, chunk_size: int = 4) -> Reply:
        """Stream ``after_chunks`` chunks of ``text``, then an SSE ``{"error": {...}}`` event (mid-stream)."""
        return cls(
            kind="stream_error",
            text=text,
            chunk_size=chunk_size,
            chunks_before=after_chunks,
            body=_error_body(message, None, "server_error"),
        )

    @classmethod
    def disconnect(cls, text: str, *, after_chunks: int = 2, chunk_size: int = 4) -> Reply:
        """Stream ``after_chunks`` chunks of ``text``, then drop the connection without ``[DONE]``."""
        return cls(kind="disconnect", text=text, chunk_size=chunk_size, chunks_before=after_chunks)


def _error_body(
    message: str, code: str | None, kind: str = "invalid_request_error", param: str | None = None
) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


@dataclass
class Hit:
    """What one request carried and what became of it."""

    body: dict[str, Any]
    headers: dict[str, str]
    chunk_times: list[float] = field(default_factory=list)
    disconnected: bool = False  # the client left before the reply ended
    completed: bool = False
    # Server-side clock (perf_counter) when the request arrived and when its answer ended either way.
    received_at: float = field(default_factory=time.perf_counter)
    ended_at: float | None = None

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))


class _ClientGone(Exception):
    """The client closed the connection while we were writing."""


class FakeOpenAI:
    """The scripted server. ``replies`` is consumed in order; an empty queue gives ``default``.

    :meth:`script` queues replies for one model name (as the request names it, e.g. ``ref-a`` for
    ``openai/ref-a``); they answer that model's requests first, whatever order parallel requests arrive in.
    """

    def __init__(self, *replies: Reply, default: Reply | None = None, model: str = "fake") -> None:
        self.replies: deque[Reply] = deque(replies)
        self.default = default or Reply.text_reply("ok")
        self.model = model
        self.model_replies: dict[str, deque[Reply]] = {}
        self.routes: list[tuple[str, deque[Reply]]] = []
        self.hits: list[Hit] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._flight = asyncio.Condition()
        self.client_left = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0

    # -- scripting and inspection ------------------------------------------------------------------

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def script(self, model: str, *replies: Reply) -> None:
        """Queue replies for the requests that name ``model``; the others keep using the shared queue."""
        self.model_replies.setdefault(model, deque()).extend(replies)

    def route(self, contains: str, *replies: Reply) -> None:
        """Queue replies for the requests whose messages contain ``contains``, whatever order they come in."""
        self.routes.append((contains, deque(replies)))

    def hits_for(self, model: str) -> list[Hit]:
        return [hit for hit in self.hits if hit.model == model]

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received, in order."""
        return [hit.body for hit in self.hits]

    @property
    def hit_count(self) -> int:
        return len(self.hits)

    @property
    def disconnects(self) -> int:
        return sum(hit.disconnected for hit in self.hits)

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self, port: int = 0) -> FakeOpenAI:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/chat/completions", self._handle)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # the OS picked it when port == 0
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAI:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- request handling --------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        async with self._flight:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._flight.notify_all()
        try:
            return await self._answer(request)
        finally:
            async with self._flight:
                self.in_flight -= 1
                self._flight.notify_all()

    async def _hold(self, reply: Reply) -> None:
        async with self._flight:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._flight.wait_for(lambda: self.max_in_flight >= reply.hold_until_in_flight),
                    reply.hold_limit,
                )

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        hit = Hit(body=body, headers=dict(request.headers))
        self.hits.append(hit)
        reply = self._next_reply(hit.model, json.dumps(body.get("messages")))
        if reply.hold_until_in_flight:
            await self._hold(reply)
        if reply.kind == "error":
            hit.ended_at = time.perf_counter()
            return web.json_response(reply.body, status=reply.status, headers=reply.headers)
        if reply.kind == "no_headers":
            deadline = time.monotonic() + _HANG_LIMIT_S
            while time.monotonic() < deadline and request.transport and not request.transport.is_closing():
                await asyncio.sleep(_HEARTBEAT_S)
            self._client_gone(hit)
            return web.Response(status=504)
        if reply.kind == "bare":
            hit.ended_at = time.perf_counter()
            return web.Response(status=reply.status, headers={"Content-Type": "text/event-stream"})
        if not body.get("stream"):
            hit.completed = True
            hit.ended_at = time.perf_counter()
            return web.json_response(self._completion(reply, body))
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        try:
            await self._stream(reply, body, request, response, hit)
        except asyncio.CancelledError:
            self._client_gone(hit)
            raise
        except (_ClientGone, ConnectionError):
            self._client_gone(hit)
        hit.ended_at = time.perf_counter()
        return response

    def _next_reply(self, model: str, messages: str = "") -> Reply:
        for contains, routed in self.routes:
            if routed and contains in messages:
                return routed.popleft()
        scripted = self.model_replies.get(model)
        if scripted:
            return scripted.popleft()
        return self.replies.popleft() if self.replies else self.default

    def _client_gone(self, hit: Hit) -> None:
        hit.disconnected = True
        hit.ended_at = time.perf_counter()
        self.client_left.set()

    async def _stream(
        self, reply: Reply, body: dict, request: web.Request, response: web.StreamResponse, hit: Hit
    ) -> None:
        stream_id = f"chatcmpl-{uuid.uuid4().hex[:16]}"
        send = _Sender(response, request, stream_id, self.model, hit)
        if reply.kind == "disconnect":
            for piece in _split(reply.text, reply.chunk_size)[: reply.chunks_before]:
                await send.delta({"content": piece})
            assert request.transport is not None
            request.transport.close()  # abrupt: no final chunk, no [DONE]
            return
        if reply.kind == "empty_stream":
            return
        if reply.kind == "stream_error":
            for piece in _split(reply.text, reply.chunk_size)[: reply.chunks_before]:
                await send.delta({"content": piece})
            await send.event(reply.body or {})
            await send.done()
            return
        if reply.kind == "hang":
            for piece in _split(reply.text, reply.chunk_size):
                await send.delta({"content": piece})
            await send.wait_for_client_to_leave()
            return
        await send.delta({"role": "assistant", "content": ""})
        for piece in _split(reply.reasoning, reply.chunk_size):
            await send.delta({"reasoning_content": piece}, reply.delay)
        for piece in _split(reply.text, reply.chunk_size):
            await send.delta({"content": piece}, reply.delay)
        for index, call in enumerate(reply.tool_calls):
            await self._stream_tool_call(send, index, call, reply.pieces, reply.delay)
        await send.finish(reply.finish_reason or "stop")
        if (body.get("stream_options") or {}).get("include_usage"):
            await send.usage(_usage(reply, body))
        await send.done()
        hit.completed = True

    @staticmethod
    async def _stream_tool_call(send: _Sender, index: int, call: ToolCall, pieces: int, delay: float) -> None:
        arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        size = max(1, -(-len(arguments) // max(1, pieces)))
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        await send.delta({"tool_calls": [head]}, delay)
        for piece in _split(arguments, size):
            await send.delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}, delay)

    def _completion(self, reply: Reply, body: dict) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.arguments
                        if isinstance(call.arguments, str)
                        else json.dumps(call.arguments),
                    },
                }
                for call in reply.tool_calls
            ]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason or "stop"}],
            "usage": _usage(reply, body),
        }


class _Sender:
    """Writes SSE chunks of one stream and records when each left the server."""

    def __init__(
        self, response: web.StreamResponse, request: web.Request, stream_id: str, model: str, hit: Hit
    ):
        self.response = response
        self.request = request
        self.base = {
            "id": stream_id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }
        self.hit = hit

    async def _write(self, payload: bytes) -> None:
        transport = self.request.transport
        if transport is None or transport.is_closing():
            raise _ClientGone
        await self.response.write(payload)

    async def event(self, data: dict[str, Any]) -> None:
        await self._write(b"data: " + json.dumps(data).encode() + b"\n\n")
        self.hit.chunk_times.append(time.perf_counter())

    async def delta(self, delta: dict[str, Any], delay: float = 0.0) -> None:
        if delay:
            await asyncio.sleep(delay)
        await self.event({**self.base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})

    async def finish(self, reason: str) -> None:
        await self.event({**self.base, "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})

    async def usage(self, usage: dict[str, Any]) -> None:
        await self.event({**self.base, "choices": [], "usage": usage})

    async def done(self) -> None:
        await self._write(b"data: [DONE]\n\n")

    async def wait_for_client_to_leave(self) -> None:
        # SSE comment lines are ignored by clients; writing them is how a closed socket shows itself.
        deadline = time.monotonic() + _HANG_LIMIT_S
        while time.monotonic() < deadline:
            await asyncio.sleep(_HEARTBEAT_S)
            await self._write(b": waiting\n\n")


def _split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(1, size))]


def _usage(reply: Reply, body: dict) -> dict[str, Any]:
    if reply.usage is not None:
        prompt, completion = reply.usage
    else:
        # A rough stand-in for a tokenizer: four characters per token.
        prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
        completion = max(1, (len(reply.text) + len(reply.reasoning)) // 4)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if reply.cached_tokens:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    return usage


@pytest.fixture(name="fake_openai")
async def fake_openai_fixture() -> AsyncIterator[FakeOpenAI]:
    """A started server on a random port, stopped after the test."""
    async with FakeOpenAI() as server:
        yield server


async def _serve(port: int, text: str) -> None:
    server = FakeOpenAI(default=Reply.text_reply(text))
    await server.start(port)
    print(f"fake OpenAI server on {server.api_base}", flush=True)
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.Event().wait()
    await server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default="Hello from the loopback server. " * 8)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args.port, args.text))


if __name__ == "__main__":
    main()
