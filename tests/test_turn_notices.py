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
    # QA issue 13 F5: the skip's own sentence inside the notice ended "(… budget.)." (a doubled stop).
    (text,) = [t for t in errors if "could not be recovered" in t]
    assert "nothing to make room with (everything fits in the recent budget). Start" in text
    assert ".)" not in text and ".." not in text


async def test_a_reply_over_the_window_with_nothing_to_compact_gets_the_advice_not_everything_fits(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """QA (D10): a 2 MB paste answered with a usage of 389 % of the window said "Nothing to compact:
    everything fits in the recent budget", twice. It says why nothing could be summarised, once."""
    settings = make_settings(
        fake_openai, context_window=SMALL_WINDOW, compaction={"autoContinue": False}, retry={"enabled": False}
    )
    session = make_session(tmp_path, settings, summarize=fake_summarize)
    events = Recorder()
    session.subscribe(events)
    fake_openai.queue(Reply.text_reply("read it", usage=(77_800, 20)))  # 389 % of 20,000

    await session.prompt("a huge paste: " + "x" * 311_000)
    fake_openai.queue(Reply.text_reply("still here", usage=(77_900, 20)))
    await session.prompt("and then?")

    texts = [n.text for n in events.of(Notice)]
    assert not any("everything fits in the recent budget" in t for t in texts)
    (advice,) = [t for t in texts if "found nothing to summarise" in t]  # once, not after every turn
    assert (
        "77,820 tokens" in advice
        and "the newest turn (the last user message and the 1 message after it)" in advice
    )
    assert "more than keepRecentTokens (20,000)" in advice


# --- D10 (issue 13): over the threshold with nothing to summarise -------------------------------
def test_the_skip_advice_names_the_cause_with_the_figures() -> None:
    from tests import factories as fx
    from tui.compaction.plan import SKIP_NOTHING_TO_SUMMARIZE
    from tui.compaction.skip_advice import explain_skip

    big = fx.chain([fx.user("hi"), fx.assistant("yo"), fx.user("x" * 260_000)])  # 65,000 tokens
    text = explain_skip(
        big, SKIP_NOTHING_TO_SUMMARIZE, context_tokens=70_123, threshold=60_000, keep_recent_tokens=20_000
    )
    assert "the newest message alone is about 65,000 tokens" in text
    assert "70,123" in text and "60,000" in text and "keepRecentTokens" in text and "/compact" in text
    small = fx.chain([fx.user("a" * 400), fx.assistant("b" * 400)])
    text = explain_skip(
        small, SKIP_NOTHING_TO_SUMMARIZE, context_tokens=61_000, threshold=60_000, keep_recent_tokens=20_000
    )
    assert "the 2 messages since the last compaction (about 200 tokens by estimate)" in text
