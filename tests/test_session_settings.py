"""Compaction settings for one session only: a ``kompakt.settings`` custom entry the agent applies.

The agent runs against the loopback OpenAI server; the session file is written and read back for real.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent_helpers import make_session, make_settings
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tui.agent.session import AgentSession
from tui.agent.session_settings import SESSION_SETTINGS_TYPE, read_overrides
from tui.session.store import SessionStore

SUMMARY = "SESSION SUMMARY"
WINDOW = 20_000  # the files' threshold: 20,000 − 16,384 = 3,616


async def fake_summarize(system_prompt: str, prompt: str, max_tokens: int) -> str:
    return SUMMARY


def settings(server: FakeOpenAI):
    return make_settings(
        server, context_window=WINDOW, compaction={"keepRecentTokens": 20, "autoContinue": False}
    )


def compactions(session: AgentSession) -> list[dict]:
    return [e for e in session.store.entries if e["type"] == "compaction"]


async def test_a_session_reserve_moves_the_threshold_of_automatic_compaction(
    tmp_path: Path, fake_openai: FakeOpenAI
):
    session = make_session(tmp_path, settings(fake_openai), summarize=fake_summarize)
    overrides = session.set_session_overrides({"reserveTokens": 2_000, "strategy": "keep-recent"})
    assert overrides.values == {"reserveTokens": 2_000, "strategy": "keep-recent"}
    assert session.settings.compaction.reserve_tokens == 2_000  # threshold now 18,000
    assert session.base_settings.compaction.reserve_tokens == 16_384
    assert session.store.build_context().messages == []  # the entry is not part of the context

    fake_openai.queue(Reply.text_reply("answer", usage=(3_700, 50)))
    await session.prompt("a task")
    assert compactions(session) == []  # 3,750 is over the files' threshold, under the session's

    session.set_session_overrides(None)  # cleared: the files' values are back
    assert not session.session_overrides and session.settings.compaction.reserve_tokens == 16_384
    fake_openai.queue(Reply.text_reply("answer two", usage=(3_800, 50)))
    await session.prompt("another task")
    assert compactions(session)  # over the threshold again (the check before the prompt already sees it)


async def test_the_overrides_survive_a_reload_and_follow_settings_reloads(
    tmp_path: Path, fake_openai: FakeOpenAI
):
    session = make_session(tmp_path, settings(fake_openai))
    session.set_session_overrides({"keepRecentTokens": 7_000})
    path = session.store.path
    session.store.close()

    store = SessionStore.open(path)
    (entry,) = [e for e in store.entries if e.get("customType") == SESSION_SETTINGS_TYPE]
    assert entry["type"] == "custom" and entry["data"] == {"compaction": {"keepRecentTokens": 7_000}}
    again = AgentSession(store, settings(fake_openai), env={})
    assert again.settings.compaction.keep_recent_tokens == 7_000
    # A settings reload changes the files' layer; the session's key still wins, the others follow.
    reloaded = make_settings(
        fake_openai, context_window=WINDOW, compaction={"keepRecentTokens": 50, "reserveTokens": 1_000}
    )
    again.update_settings(reloaded)
    assert again.settings.compaction.keep_recent_tokens == 7_000
    assert again.settings.compaction.reserve_tokens == 1_000
    store.close()


def test_a_bad_entry_is_ignored_and_reported(tmp_path: Path, fake_openai: FakeOpenAI):
    store = SessionStore.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    store.append_custom(SESSION_SETTINGS_TYPE, {"compaction": {"reserveTokens": -5}})
    overrides = read_overrides(store.entries)
    assert not overrides and "reserveTokens" in (overrides.problem or "")
    store.append_custom(SESSION_SETTINGS_TYPE, {"compaction": {"colour": "red"}})
    assert "unknown keys: colour" in (read_overrides(store.entries).problem or "")
    session = AgentSession(store, settings(fake_openai), env={})
    assert session.settings.compaction.reserve_tokens == 16_384
    assert any("are ignored" in n.text for n in session.standing_notices)
    with pytest.raises(ValueError):
        session.set_session_overrides({"strategy": "middle-out"})
    assert read_overrides(store.entries).problem  # nothing new was written
