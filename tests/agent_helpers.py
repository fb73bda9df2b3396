"""Shared pieces for the agent loop and session tests: settings for the loopback server, a session
factory, an event recorder and a check that the stored session has no orphan tool calls or results.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from tests.fake_openai import FakeOpenAI
from tui.agent.events import AgentEvent
from tui.agent.session import AgentSession
from tui.config.model import Settings
from tui.session.entries import Entry
from tui.session.store import SessionStore

MODEL = "openai/fake"
HANG_GUARD_S = 60.0
E = TypeVar("E")


def make_settings(
    server: FakeOpenAI | None, *, context_window: int | None = None, **sections: Any
) -> Settings:
    """Settings for ``openai/fake`` on the loopback server, with quick retries; ``sections`` merge in."""
    override: dict[str, Any] = {}
    if server is not None:
        override["apiBase"] = server.api_base
    if context_window is not None:
        override["contextWindow"] = context_window
    data: dict[str, Any] = {
        "model": MODEL,
        "models": {MODEL: override},
        "retry": {"baseDelayMs": 1, "provider": {"maxRetryDelayMs": 5}},
        "tools": {"approval": {"bash": "auto", "write": "auto", "edit": "auto"}},
    }
    for key, value in sections.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return Settings.model_validate(data)


def moa_settings(
    server: FakeOpenAI, references: list[str], *, routed: tuple[str, ...] = (), **moa: Any
) -> Settings:
    """MoA on, the references (and ``routed``) on the loopback server, no retries (a 500 fails at once)."""
    return make_settings(
        server,
        models={name: {"apiBase": server.api_base} for name in [*references, *routed]},
        retry={"enabled": False},
        moa={"enabled": True, "referenceModels": references, **moa},
    )


def make_session(tmp_path: Path, settings: Settings, **kwargs: Any) -> AgentSession:
    store = SessionStore.create(tmp_path / "session.jsonl", cwd=str(tmp_path))
    workspace = tmp_path / "work"
    workspace.mkdir(exist_ok=True)
    return AgentSession(store, settings, workspace=workspace, env={}, **kwargs)


class Recorder:
    """Collects every event; ``wait_for`` resolves once an event matching a predicate has arrived."""

    def __init__(self) -> None:
        self.events: list[AgentEvent] = []
        self._waiters: list[tuple[Callable[[AgentEvent], bool], asyncio.Future[AgentEvent]]] = []

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)
        for predicate, future in list(self._waiters):
            if not future.done() and predicate(event):
                future.set_result(event)

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]

    def wait_for(self, predicate: Callable[[AgentEvent], bool]) -> Awaitable[AgentEvent]:
        """The first matching event; the generous limit only keeps a broken test from hanging the suite."""
        future: asyncio.Future[AgentEvent] = asyncio.get_running_loop().create_future()
        for event in self.events:
            if predicate(event):
                future.set_result(event)
                return future
        self._waiters.append((predicate, future))
        return asyncio.wait_for(future, HANG_GUARD_S)


def messages_on_path(store: SessionStore) -> list[dict[str, Any]]:
    return [e["message"] for e in store.get_branch() if e["type"] == "message"]


def assert_no_orphans(entries: list[Entry]) -> None:
    """Every tool call has exactly one result, and every result answers a call (over all stored entries)."""
    calls: list[str] = []
    results: list[str] = []
    for entry in entries:
        if entry["type"] != "message":
            continue
        message = entry["message"]
        if message["role"] == "assistant":
            calls += [b["id"] for b in message["content"] if b["type"] == "toolCall"]
        elif message["role"] == "toolResult":
            results.append(message["toolCallId"])
    assert sorted(calls) == sorted(results)
    assert len(set(results)) == len(results)
