"""``kompakt plan`` with the head-tail strategy shows what ``kompakt compact`` then writes (issue 10): the
strategy from a flag, the project file, the environment or the session's own settings; the head, the
pinned request, the middle and the tail; pi's ``tokensBefore`` and Hermes's estimate; and the threshold of
the strategy in force (Hermes's trigger on its own estimate, not pi's window − reserve)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import test_cli_compact
from tests.test_cli_compact import write_session
from tests.test_cli_plan_settings import tool_heavy_session
from tui.agent.session_settings import SESSION_SETTINGS_TYPE, entry_data
from tui.cli import main
from tui.compaction.head_tail import HeadTailConfig, context_size
from tui.session.store import SessionStore

isolated = test_cli_compact.isolated  # no keys, no user settings, a project settings file

BUDGET = ["--context-window", "60000", "--reserve-tokens", "1000"]


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _choose_head_tail(
    source: str, root: Path, path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], str]:
    """Make head-tail the strategy through ``source``; the flags to pass and the source plan should name."""
    if source == "flag":
        return ["--strategy", "head-tail"], "--strategy"
    if source == "project":
        project = root / ".kompakt" / "settings.toml"
        project.write_text(
            project.read_text().replace("[compaction]\n", '[compaction]\nstrategy = "head-tail"\n')
        )
        return [], f"project file {project}"
    if source == "env":
        monkeypatch.setenv("KOMPAKT_COMPACTION__STRATEGY", "head-tail")
        return [], "env KOMPAKT_COMPACTION__STRATEGY"
    with SessionStore.open(path) as store:
        entry = store.append_custom(SESSION_SETTINGS_TYPE, entry_data({"strategy": "head-tail"}))
    return [], f"session (entry {entry['id']})"


@pytest.mark.parametrize("source", ["flag", "project", "env", "session"])
def test_plan_shows_the_head_tail_compaction_compact_writes(
    isolated: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    path = tool_heavy_session(isolated / "t.jsonl")  # old bash outputs are pruned first, by both
    flags, named = _choose_head_tail(source, isolated, path, monkeypatch)
    plan = _json(capsys, "plan", str(path), *flags, *BUDGET)
    assert plan["strategy"] == "head-tail" and plan["settingsSources"]["compaction.strategy"] == named
    assert plan["headEntryIds"] and plan["summarizeEntryIds"] and plan["pruning"]["entries"]
    dry = _json(capsys, "compact", str(path), *flags, *BUDGET, "--dry-run")
    compacted = _json(capsys, "compact", str(path), *flags, *BUDGET)
    assert compacted["compacted"] is True
    assert compacted["prunedToolOutputs"] == len(plan["pruning"]["entries"])

    with SessionStore.open(path, read_only=True) as store:
        entry = store.get(compacted["entryId"])
    stored = entry["details"]["kompakt"]
    for written in (stored, dry["details"]["kompakt"]):
        assert written["strategy"] == "head-tail"
        assert written["headEntryIds"] == plan["headEntryIds"]
        assert written["pinnedEntryIds"] == plan["pinnedEntryIds"]
        assert written["middleEntryIds"] == plan["summarizeEntryIds"]
        assert written["tailStartId"] == plan["firstKeptEntryId"]
        assert written["protectedRanges"]["tail"][1] == plan["keptEntryIds"][-1]
        assert written["thresholdTokens"] == plan["thresholdTokens"] == plan["threshold"]
        assert written["tailBudget"] == plan["tailBudget"]
        assert written["estimatedTokensBefore"] == plan["estimatedTokens"] == plan["contextTokens"]
    assert entry["firstKeptEntryId"] == dry["firstKeptEntryId"] == plan["firstKeptEntryId"]
    assert entry["tokensBefore"] == dry["tokensBefore"] == plan["tokensBefore"]


def test_plan_judges_the_threshold_by_the_strategy_in_force(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 8,000-token window, reserve 1,000: pi's threshold is 7,000 and the path's usage says 5,300, but
    # Hermes's estimate is 9,250 against its threshold of 5,950, so the agent would compact.
    path = write_session(isolated / "s.jsonl", turns=10)
    small = ["--context-window", "8000", "--reserve-tokens", "1000"]
    keep_recent = _json(capsys, "plan", str(path), *small)
    assert (keep_recent["threshold"], keep_recent["contextTokens"], keep_recent["thresholdCrossed"]) == (
        7_000,
        5_300,
        False,
    )
    head_tail = _json(capsys, "plan", str(path), *small, "--strategy", "head-tail")
    with SessionStore.open(path, read_only=True) as store:
        estimate = context_size(store.get_branch())[1]
    threshold = HeadTailConfig().threshold(8_000, 1_000).threshold_tokens
    assert (head_tail["threshold"], head_tail["contextTokens"]) == (threshold, estimate) == (5_950, 9_250)
    assert head_tail["thresholdCrossed"] is True
    assert head_tail["contextTokensMeasure"] == "head-tail estimate"
    # The table says the same, and names the rule.
    assert main(["plan", str(path), *small, "--strategy", "head-tail"]) == 0
    table = capsys.readouterr().out
    assert "9,250 / 8,000 tokens (head-tail estimate" in table
    assert "5,950 (head-tail's trigger" in table and ": crossed" in table
    assert "3 messages" in table and "reproduced in the summary" in table


def test_plan_after_a_head_tail_compaction_is_the_second_one_compact_writes(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The second compaction: the head has decayed, the previous notes are merged, the earlier head and
    # middle are summarised again from the previous firstKeptEntryId on (pi #2608).
    path = write_session(isolated / "s.jsonl", turns=10)
    flags = ["--strategy", "head-tail", "--context-window", "8000", "--reserve-tokens", "1000"]
    first = _json(capsys, "compact", str(path), *flags)
    assert first["compacted"] is True
    extra = write_session(isolated / "more.jsonl", turns=8)
    with SessionStore.open(extra, read_only=True) as more, SessionStore.open(path) as store:
        for entry in more.entries:
            store.append_message(entry["message"])
    plan = _json(capsys, "plan", str(path), *flags)
    assert plan["previousCompactionId"] == first["entryId"] and plan["headEntryIds"] == []
    assert plan["previousSummary"]
    compacted = _json(capsys, "compact", str(path), *flags)
    with SessionStore.open(path, read_only=True) as store:
        entry = store.get(compacted["entryId"])
    stored = entry["details"]["kompakt"]
    assert (stored["headEntryIds"], stored["pinnedEntryIds"]) == (
        plan["headEntryIds"],
        plan["pinnedEntryIds"],
    )
    assert stored["middleEntryIds"] == plan["summarizeEntryIds"]
    assert entry["firstKeptEntryId"] == plan["firstKeptEntryId"]
    assert entry["tokensBefore"] == plan["tokensBefore"]
    assert stored["estimatedTokensBefore"] == plan["estimatedTokens"]
