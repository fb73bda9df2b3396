"""What the user is told when a turn ends at a compaction: the iteration budget spent before the
auto-continue, and an overflowed request whose compaction found nothing to compact (AgentSession and
the loopback server)."""

from __future__ import annotations

from pathlib import Path

from tests.agent_helpers import Recorder, make_session, make_settings
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tests.test_agent_session import SMALL_WINDOW, fake_summarize
from tui.agent.events import CompactionEnd, Notice
from tui.agent.session import AUTO_CONTINUE_TYPE


async def test_a_spent_budget_says_why_the_auto_continue_did_not_run(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    settings = make_settings(
        fake_openai,
        context_window=SMALL_WINDOW,
        compaction={"keepRecentTokens": 20, "autoContinue": True},
        agent={"maxIterations": 1},
    )
    session = make_session(tmp_path, settings, summarize=fake_summarize)
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.text_reply("answer one", usage=(1000, 50)))
    await session.prompt("first task: " + "details " * 400)
    fake_openai.queue(Reply.text_reply("answer two", usage=(3700, 50)))

    await session.prompt("second task")

    assert [e.outcome for e in events.of(CompactionEnd)] == ["result"]
    assert not [e for e in session.store.entries if e.get("customType") == AUTO_CONTINUE_TYPE]
    (notice,) = [n for n in events.of(Notice) if "iteration budget" in n.text]
    assert notice.level == "warning" and "1 of 1" in notice.text and "/continue" in notice.text


async def test_an_overflow_with_nothing_to_compact_says_the_request_failed(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    settings = make_settings(
        fake_openai, context_window=SMALL_WINDOW, compaction={"autoContinue": False}, retry={"enabled": False}
    )
    session = make_session(tmp_path, settings, summarize=fake_summarize)
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.context_overflow())

    await session.prompt("one huge first message")

    assert [e.outcome for e in events.of(CompactionEnd)] == ["skip"]
    errors = [n.text for n in events.of(Notice) if n.level == "error"]
    assert any("overflowed the context window of openai/fake and could not be recovered" in t for t in errors)
