"""Shared pieces for the summary, compaction, branch-summary and navigation tests.

:class:`RecordingSummarizer` is a fake ``SummarizeFn`` that records every prompt and answers from a
script; :func:`new_store` builds a real session file from message dicts, and :func:`compaction_settings`
gives settings with small, deterministic budgets (no calibration).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests import factories as f
from tui.config.model import BranchSummarySettings, CompactionSettings, Settings
from tui.session.store import SessionStore


@dataclass
class Call:
    system: str
    prompt: str
    max_tokens: int


@dataclass
class RecordingSummarizer:
    """Answers with ``reply(prompt)`` (default: a fixed text); ``fail`` raises, ``gate`` blocks until set."""

    reply: Callable[[str], str] = lambda prompt: "NOTES"
    fail: BaseException | None = None
    gate: asyncio.Event | None = None
    calls: list[Call] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, system: str, prompt: str, max_tokens: int) -> str:
        self.calls.append(Call(system, prompt, max_tokens))
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.fail is not None:
            raise self.fail
        return self.reply(prompt)

    def prompts_containing(self, text: str) -> list[str]:
        return [c.prompt for c in self.calls if text in c.prompt]


def is_short_summary_prompt(prompt: str) -> bool:
    return "at most three sentences" in prompt


def scripted(history: str = "HISTORY NOTES", prefix: str = "PREFIX NOTES", short: str = "SHORT") -> Callable:
    """A reply function that tells the three kinds of call apart by their prompts."""

    def reply(prompt: str) -> str:
        if is_short_summary_prompt(prompt):
            return short
        if "opening part of a single long exchange" in prompt:
            return prefix
        return history

    return reply


def compaction_settings(keep: int = 300, reserve: int = 16384, **compaction: Any) -> Settings:
    return Settings(
        compaction=CompactionSettings(
            keep_recent_tokens=keep, reserve_tokens=reserve, calibrate=False, **compaction
        ),
        branch_summary=BranchSummarySettings(reserve_tokens=1000),
    )


def new_store(tmp_path: Path, messages: list[dict[str, Any]], name: str = "s.jsonl") -> SessionStore:
    store = SessionStore.create(tmp_path / name, cwd="/work")
    for message in messages:
        store.append_message(message)
    return store


def msg(entry: dict[str, Any]) -> dict[str, Any]:
    """The message dict of a factories entry."""
    return entry["message"]


T100 = "x" * 400  # 100 estimated tokens


def coding_session() -> list[dict[str, Any]]:
    """Three turns of about 300 tokens each: read a.py, edit b.py, then a question still open."""
    return [
        msg(f.user("Please fix the parser bug in /work/src/parser.py " + T100)),
        msg(f.assistant("Reading it.", [f.tool_call("read", {"path": "a.py"}, "c1")])),
        msg(f.tool_result("c1", "read", "def parse(): pass " + T100)),
        msg(f.assistant("Found it. " + T100)),
        msg(f.user("Now update b.py " + T100)),
        msg(f.assistant("Editing.", [f.tool_call("edit", {"path": "b.py", "old": "a", "new": "b"}, "c2")])),
        msg(f.tool_result("c2", "edit", "Error: old text not found " + T100, is_error=True)),
        msg(f.assistant("Retried and it worked. " + T100)),
        msg(f.user("Finally, run the tests " + T100)),
        msg(f.assistant("All green. " + T100)),
    ]
