"""Hermes's ineffective-compaction breaker (#14694/#14695) through AgentSession and the loopback server.

The incompressible floor: whatever kompakt compacts, the provider keeps reporting 52,300 tokens (a
system prompt and tool schemas no summary can shrink) against a threshold of 60,000 − 16,384 = 43,616.
The verdict comes from the next real usage after a compaction, not from the chars/4 estimate; after two
ineffective compactions in a row automatic compaction stops for the session and the user is told why.
Measured on the four turns below: 11 compaction runs, 8 summary calls and 4 auto-continues before;
2 runs (one compaction, then a skip), 2 summary calls and 1 auto-continue after.
"""

from __future__ import annotations

from pathlib import Path

from tests.agent_helpers import Recorder, make_session, make_settings
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tui.agent.events import CompactionEnd, CompactionStart, Notice
from tui.agent.session import AUTO_CONTINUE_TYPE
from tui.compaction.engine import CompactionResult
from tui.compaction.head_tail import made_progress, saved_enough

WINDOW = 60_000
THRESHOLD = WINDOW - 16_384
FLOOR = 52_300


class CountingSummarizer:
    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, system_prompt: str, prompt: str, max_tokens: int) -> str:
        self.calls += 1
        return "SUMMARY: the user pasted long notes and asked about them."


async def test_an_incompressible_floor_stops_automatic_compaction_after_two_strikes(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    settings = make_settings(
        fake_openai, context_window=WINDOW, compaction={"autoContinue": True, "keepRecentTokens": 2_000}
    )
    summarizer = CountingSummarizer()
    session = make_session(tmp_path, settings, summarize=summarizer)
    events = Recorder()
    session.subscribe(events)
    for i in range(3):  # an earlier exchange, well under the threshold, to compact
        fake_openai.queue(
            Reply.text_reply(f"early answer {i} " + "words " * 2_000, chunk_size=4096, usage=(9_000, 500))
        )
        await session.prompt(f"early question {i}: " + "notes " * 4_000)
    # Five replies: the first turn's and its auto-continue's, then one for each of three more turns.
    fake_openai.queue(*(Reply.text_reply(f"answer {i}", usage=(FLOOR - 50, 50)) for i in range(5)))

    for turn in range(4):
        await session.prompt(f"question {turn}: " + "notes " * 4_000)  # 6,000 tokens a turn

    compactions = events.of(CompactionStart)
    continues = [e for e in session.store.entries if e.get("customType") == AUTO_CONTINUE_TYPE]
    # Before the breaker: 11 runs (4 stored compactions), 8 summary calls, 4 auto-continues.
    outcomes = [e.outcome for e in events.of(CompactionEnd)]
    assert outcomes == ["result", "skip"] and len(compactions) == 2
    assert summarizer.calls == 2 and len(continues) == 1
    assert session.breaker.tripped and session.breaker.last == (FLOOR, FLOOR)
    (warning,) = [n for n in events.of(Notice) if "Automatic compaction is off" in n.text]
    assert warning.level == "warning"
    assert f"{FLOOR:,}" in warning.text and f"{THRESHOLD:,}" in warning.text
    for way_out in ("/compact", "keepRecentTokens", "/new", "tree"):
        assert way_out in warning.text

    # Manual /compact still works; a reading under the threshold then turns automatic compaction back on.
    assert isinstance(await session.compact("keep only the last question"), CompactionResult)
    fake_openai.queue(Reply.text_reply("a small answer", usage=(9_000, 50)))
    await session.prompt("a short question")
    assert session.breaker.strikes == 0 and not session.breaker.tripped
    runs = len(events.of(CompactionStart))
    fake_openai.queue(
        Reply.text_reply("big again", usage=(FLOOR - 50, 50)), Reply.text_reply("more", usage=(900, 5))
    )
    await session.prompt("another question: " + "notes " * 4_000)
    assert len(events.of(CompactionStart)) > runs


def test_progress_means_more_than_five_percent() -> None:
    # The rule both strategies' compactions use (Hermes §4.1, §8 #13): exactly 5.00 % is no progress.
    assert not saved_enough(1_000, 950) and not saved_enough(100_000, 95_000)
    assert saved_enough(1_000, 949) and saved_enough(1_000, 940) and not saved_enough(1_000, 970)
    assert not saved_enough(0, 0)
    assert made_progress(10, 5, 1_000, 1_000) and not made_progress(10, 10, 1_000, 950)
