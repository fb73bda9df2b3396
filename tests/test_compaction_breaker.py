"""Hermes's ineffective-compaction breaker (#14694/#14695) through AgentSession and the loopback server.

The incompressible floor: whatever kompakt compacts, the provider keeps reporting 52,300 tokens (a
system prompt and tool schemas no summary can shrink) against a threshold of 60,000 − 16,384 = 43,616.
The verdict comes from the next real usage after a compaction, not from the chars/4 estimate; after two
ineffective compactions in a row automatic compaction stops for the session and the user is told why.
Measured on the four turns below: 11 compaction runs, 8 summary calls and 4 auto-continues before;
2 runs (one compaction, then a skip), 2 summary calls and 1 auto-continue after.
The count is saved with the session: a reopened file keeps the breaker tripped, or clear.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from bench.compaction_vs_pi import pi_dir_problem
from tests.agent_helpers import Recorder, make_session, make_settings
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tests.test_head_copy import _same_context, _wire
from tui.agent.compaction_breaker import CompactionBreaker, saved_state
from tui.agent.events import CompactionEnd, CompactionStart, Notice
from tui.agent.session import AUTO_CONTINUE_TYPE, AgentSession
from tui.compaction.engine import CompactionResult
from tui.compaction.head_tail import made_progress, saved_enough
from tui.session.entries import LEAF_CUSTOM_TYPE, is_custom
from tui.session.store import SessionStore

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


async def _trip(tmp_path: Path, fake_openai: FakeOpenAI) -> tuple[AgentSession, Recorder]:
    """The floor scenario above, up to the tripped breaker (two turns)."""
    settings = make_settings(
        fake_openai, context_window=WINDOW, compaction={"autoContinue": True, "keepRecentTokens": 2_000}
    )
    session = make_session(tmp_path, settings, summarize=CountingSummarizer())
    for i in range(3):
        fake_openai.queue(
            Reply.text_reply(f"early answer {i} " + "words " * 2_000, chunk_size=4096, usage=(9_000, 500))
        )
        await session.prompt(f"early question {i}: " + "notes " * 4_000)
    fake_openai.queue(*(Reply.text_reply(f"answer {i}", usage=(FLOOR - 50, 50)) for i in range(3)))
    for turn in range(2):
        await session.prompt(f"question {turn}: " + "notes " * 4_000)
    assert session.breaker.tripped
    return session, Recorder()


def _reopen(session: AgentSession, fake_openai: FakeOpenAI, events: Recorder) -> AgentSession:
    path, settings = session.store.path, session.settings
    session.store.close()
    store = SessionStore.open(path)
    reopened = AgentSession(
        store, settings, workspace=session.workspace, env={}, summarize=CountingSummarizer()
    )
    reopened.subscribe(events)
    return reopened


async def test_a_reopened_session_keeps_the_breaker_tripped(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    session, events = await _trip(tmp_path, fake_openai)
    leaf, last = session.store.leaf_id, session.breaker.last
    reopened = _reopen(session, fake_openai, events)
    assert reopened.store.leaf_id == leaf  # the saved state moved nothing
    assert reopened.breaker.tripped and reopened.breaker.last == last == (FLOOR, FLOOR)
    # Another turn on the floor: no compaction, and the reopened session says why (once).
    fake_openai.queue(Reply.text_reply("still big", usage=(FLOOR - 50, 50)))
    await reopened.prompt("question 2: " + "notes " * 4_000)
    assert events.of(CompactionStart) == []
    (warning,) = [n for n in events.of(Notice) if "Automatic compaction is off" in n.text]
    assert f"{FLOOR:,}" in warning.text and f"{THRESHOLD:,}" in warning.text


async def test_a_cleared_breaker_stays_clear_after_reopening(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    session, events = await _trip(tmp_path, fake_openai)
    assert isinstance(await session.compact("keep only the last question"), CompactionResult)
    fake_openai.queue(Reply.text_reply("a small answer", usage=(9_000, 50)))
    await session.prompt("a short question")
    assert not session.breaker.tripped
    reopened = _reopen(session, fake_openai, events)
    assert reopened.breaker.strikes == 0 and not reopened.breaker.tripped
    fake_openai.queue(
        Reply.text_reply("big again", usage=(FLOOR - 50, 50)), Reply.text_reply("more", usage=(900, 5))
    )
    await reopened.prompt("another question: " + "notes " * 4_000)
    assert events.of(CompactionStart)  # automatic compaction is on again


async def test_one_strike_and_the_pending_verdict_survive_a_reopen(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    settings = make_settings(
        fake_openai, context_window=WINDOW, compaction={"autoContinue": False, "keepRecentTokens": 2_000}
    )
    session = make_session(tmp_path, settings, summarize=CountingSummarizer())
    for i in range(3):
        fake_openai.queue(
            Reply.text_reply(f"early answer {i} " + "words " * 2_000, chunk_size=4096, usage=(9_000, 500))
        )
        await session.prompt(f"early question {i}: " + "notes " * 4_000)
    fake_openai.queue(Reply.text_reply("answer", usage=(FLOOR - 50, 50)))
    await session.prompt("question: " + "notes " * 4_000)  # over the threshold: one automatic compaction
    assert session.breaker.pending == FLOOR and session.breaker.strikes == 0
    # The state went in a marker after the compaction, and the leaf is still the compaction.
    compaction = session.store.get(session.store.leaf_id)
    last = json.loads(session.store.path.read_bytes().splitlines()[-1])
    assert compaction["type"] == "compaction" and last["parentId"] == compaction["id"]
    assert last["data"]["breaker"]["pending"] == FLOOR
    reopened = _reopen(session, fake_openai, Recorder())
    assert reopened.store.leaf_id == compaction["id"]
    assert (reopened.breaker.pending, reopened.breaker.strikes) == (FLOOR, 0)
    # The next real usage judges that compaction, in the reopened session: still on the floor, a strike.
    fake_openai.queue(Reply.text_reply("answer", usage=(FLOOR - 50, 50)))
    await reopened.prompt("next")
    assert reopened.breaker.strikes >= 1 and reopened.breaker.last is not None
    assert reopened.breaker.last[1] == FLOOR


def test_a_damaged_saved_state_starts_from_the_defaults() -> None:
    for junk in (None, [], "x", {"strikes": -3}, {"strikes": True}, {"strikes": "2", "last": [1]}):
        breaker = CompactionBreaker.restore(junk)
        assert (breaker.strikes, breaker.pending, breaker.last) == (0, None, None)
    kept = CompactionBreaker.restore(
        {"strikes": 2, "pending": None, "last": [52_300, 52_300], "skippedAt": 7}
    )
    assert kept.tripped and kept.last == (52_300, 52_300) and kept.state()["skippedAt"] == 7
    assert saved_state([{"type": "custom", "customType": LEAF_CUSTOM_TYPE, "data": "junk"}]) is None


PI_DIR = os.environ.get("KOMPAKT_PI_DIR")


@pytest.mark.skipif(pi_dir_problem(PI_DIR) is not None, reason=f"pi 0.73.1 skipped: {pi_dir_problem(PI_DIR)}")
async def test_pi_reads_a_file_with_saved_breaker_states(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    session, _ = await _trip(tmp_path, fake_openai)
    path = session.store.path
    session.store.close()
    with SessionStore.open(path, read_only=True) as store:
        markers = [e for e in store.entries if is_custom(e, LEAF_CUSTOM_TYPE) and "breaker" in e["data"]]
        ours = store.build_context().messages
        leaf = store.leaf_id
    assert len(markers) >= 2  # the pending verdict, then the strikes
    spec = tmp_path / "files.json"
    spec.write_text(json.dumps([str(path)]))
    oracle = Path(__file__).parent.parent / "bench" / "pi_head_tail.mjs"
    run = subprocess.run(
        ["node", str(oracle), str(spec)],
        capture_output=True,
        text=True,
        env={**os.environ, "KOMPAKT_PI_DIR": str(PI_DIR)},
        check=True,
    )
    (pi,) = json.loads(run.stdout)
    # pi takes the last line as the leaf: kompakt's leaf, or a marker hanging off it (pi ignores both).
    last = json.loads(path.read_bytes().splitlines()[-1])
    assert pi["leafId"] == last["id"] and (last["id"] == leaf or last["parentId"] == leaf)
    _same_context(pi["messages"], _wire(ours))
