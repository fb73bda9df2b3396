"""omp's pruning before every compaction check, driven through AgentSession and the loopback server,
and what the CLI, the context size, the timeline and the entry detail make of a standalone prune.

The session: the model runs 17 shell commands with outputs of 5,000 tokens each (85,000), then a
reply reports 120,000 tokens in a 120,000-token window (threshold 120,000 − 16,384 = 103,616). Pruning protects the newest
40,000 tokens of outputs (8 of them) and prunes the 9 older ones: about 45,000 tokens saved, 75,000 left.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent_helpers import Recorder, make_session, make_settings
from tests.fake_openai import FakeOpenAI, Reply, ToolCall, fake_openai_fixture  # noqa: F401
from tui.agent.events import CompactionStart, Notice
from tui.agent.session import AgentSession
from tui.cli import main
from tui.compaction.context_size import context_size
from tui.compaction.timeline import build_timeline
from tui.session.entries import PRUNE_CUSTOM_TYPE
from tui.session.store import SessionStore
from tui.session.tree import TreeIndex
from widgets.entry_detail import describe_entry

WINDOW = 120_000
THRESHOLD = WINDOW - 16_384
OUTPUT_TOKENS = 5_000
OUTPUTS = 17


class CountingSummarizer:
    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, system_prompt: str, prompt: str, max_tokens: int) -> str:
        self.calls += 1
        return "SUMMARY of the old work."


def _outputs(server: FakeOpenAI, usage: int) -> None:
    """The model runs 17 shell commands (outputs of 20,000 chars, 5,000 tokens), then answers with
    ``usage`` prompt tokens: the request that reported it carried every output whole."""
    calls = [
        ToolCall(
            "bash", {"command": f"printf %04d {i}; head -c {OUTPUT_TOKENS * 4 - 4} /dev/zero | tr '\\0' l"}
        )
        for i in range(OUTPUTS)
    ]
    server.queue(Reply.tools(*calls), Reply.text_reply("read them all", usage=(usage - 50, 50)))


def _session(tmp_path: Path, server: FakeOpenAI, summarizer: CountingSummarizer) -> AgentSession:
    settings = make_settings(server, context_window=WINDOW, compaction={"autoContinue": False})
    return make_session(tmp_path, settings, summarize=summarizer)


def _of_type(session: AgentSession, kind: str) -> list[dict]:
    return [e for e in session.store.entries if e["type"] == kind]


def _prunes(store: SessionStore) -> list[dict]:
    return [e for e in store.entries if e.get("customType") == PRUNE_CUSTOM_TYPE]


async def test_pruning_alone_brings_the_session_under_the_threshold(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    summarizer = CountingSummarizer()
    session = _session(tmp_path, fake_openai, summarizer)
    events = Recorder()
    session.subscribe(events)
    _outputs(fake_openai, 120_000)

    await session.prompt("what do the logs say?")

    (prune,) = _prunes(session.store)
    assert len(prune["data"]["entries"]) == 9
    saved = prune["data"]["tokensSaved"]
    assert 44_000 < saved < 45_000
    assert _of_type(session, "compaction") == [] and events.of(CompactionStart) == []
    assert summarizer.calls == 0
    assert any("Pruned 9 old tool outputs" in n.text for n in events.of(Notice))
    # The context size subtracts what the prune saved from the reply's 120,000.
    usage = session.context_usage()
    assert usage is not None and usage.tokens == 120_000 - saved < THRESHOLD
    assert context_size(session.store.get_branch()).tokens == usage.tokens


async def test_still_over_the_threshold_after_pruning_compacts(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    summarizer = CountingSummarizer()
    session = _session(tmp_path, fake_openai, summarizer)
    _outputs(fake_openai, 150_000)

    await session.prompt("what do the logs say?")

    (prune,) = _prunes(session.store)
    (compaction,) = _of_type(session, "compaction")
    assert compaction["parentId"] == prune["id"] and summarizer.calls >= 1


async def test_plan_cuts_on_the_pruned_path_as_compact_does(
    tmp_path: Path, fake_openai: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = make_settings(fake_openai, context_window=WINDOW, compaction={"enabled": False})
    session = make_session(tmp_path, settings, summarize=CountingSummarizer())
    fake_openai.queue(Reply.text_reply("a" * 120_000, chunk_size=8192, usage=(30_100, 30_000)))
    await session.prompt("an earlier question")  # a 30,000-token answer before the logs
    _outputs(fake_openai, 150_000)
    await session.prompt("what do the logs say?")
    assert not _prunes(session.store)  # automatic compaction (and so pruning) is off
    path = str(session.store.path)
    # Keeping 60,000 tokens reaches past the 40,000 that pruning protects: the prune moves the cut.
    args = ["plan", path, "--keep-recent-tokens", "60000", "--context-window", str(WINDOW), "--json"]
    assert main(args) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["pruning"]["entries"]  # the prune is due: the plan assumes it

    result = await session.compact(keep_recent_tokens=60_000)

    assert result is not None and _prunes(session.store)
    assert planned["firstKeptEntryId"] == result.entry["firstKeptEntryId"]
    assert planned["tokensBefore"] == result.entry["tokensBefore"]


async def test_plan_tests_the_threshold_after_pruning_as_the_agent_does(
    tmp_path: Path, fake_openai: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    # The file of the first test before its check ran: 120,000 reported, 75,000 once pruned.
    settings = make_settings(fake_openai, context_window=WINDOW, compaction={"enabled": False})
    session = make_session(tmp_path, settings, summarize=CountingSummarizer())
    _outputs(fake_openai, 120_000)
    await session.prompt("what do the logs say?")
    assert not _prunes(session.store)
    path = str(session.store.path)

    assert main(["plan", path, "--context-window", str(WINDOW), "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    saved = planned["pruning"]["tokensSaved"]
    assert 44_000 < saved < 45_000
    # The agent prunes, subtracts the savings and does not compact (the first test): plan agrees.
    assert planned["contextTokens"] == 120_000 - saved < THRESHOLD == planned["threshold"]
    assert planned["thresholdCrossed"] is False
    # Without the prune it is the stored context: over the threshold.
    assert main(["plan", path, "--context-window", str(WINDOW), "--json", "--no-prune"]) == 0
    unpruned = json.loads(capsys.readouterr().out)
    assert unpruned["contextTokens"] == 120_000 and unpruned["thresholdCrossed"] is True
    assert main(["plan", path, "--context-window", str(WINDOW)]) == 0
    assert "not crossed" in capsys.readouterr().out


async def test_timeline_and_entry_detail_show_the_pruned_outputs(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = _session(tmp_path, fake_openai, CountingSummarizer())
    _outputs(fake_openai, 120_000)
    await session.prompt("what do the logs say?")
    before = build_timeline(
        [e for e in session.store.get_branch() if e.get("customType") != PRUNE_CUSTOM_TYPE],
        context_window=WINDOW,
        reserve_tokens=16_384,
        keep_recent_tokens=20_000,
    )
    after = build_timeline(
        session.store.get_branch(), context_window=WINDOW, reserve_tokens=16_384, keep_recent_tokens=20_000
    )
    (prune,) = _prunes(session.store)
    saved = prune["data"]["tokensSaved"]
    assert before.context_tokens == 120_000 and after.context_tokens == 120_000 - saved
    assert after.context_end < before.context_end - 40_000  # the bar shrinks
    assert len(after.pruned) == 9 and sum(s.saved for s in after.pruned) == saved

    pruned_id = next(iter(prune["data"]["entries"]))
    tree = TreeIndex(session.store.entries)
    text = describe_entry(session.store.tree.by_id[pruned_id], tree).plain
    assert "pruned, 4,992 tokens saved" in text
    assert f"9 tool outputs, {saved:,} tokens saved" in describe_entry(prune, tree).plain
