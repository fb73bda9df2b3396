"""``kompakt plan`` and ``kompakt compact`` agree (issue 11 item 4): the same settings layers, model,
context window, pruning and planner, the same flags; every option's help names its default and source."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

import tui
from tests import test_cli_compact
from tests.test_cli_compact import write_session
from tui.agent.session_settings import SESSION_SETTINGS_TYPE, entry_data
from tui.cli import build_parser, main
from tui.session.entries import now_ms
from tui.session.store import SessionStore

isolated = test_cli_compact.isolated  # no keys, no user settings, a project settings file


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _copy(path: Path, name: str) -> Path:
    target = path.with_name(name)
    target.write_bytes(path.read_bytes())
    return target


def tool_heavy_session(path: Path, turns: int = 12) -> Path:
    """Turns with big bash outputs: compact prunes the old ones first, which moves the cut."""
    store = SessionStore.create(path, cwd=str(path.parent))
    for turn in range(turns):
        store.append_message(
            {"role": "user", "content": f"step {turn} " + "go " * 1_300, "timestamp": now_ms()}
        )
        call = {"type": "toolCall", "id": f"c{turn}", "name": "bash", "arguments": {"command": "make"}}
        store.append_message(
            {
                "role": "assistant",
                "content": [call],
                "provider": "openai",
                "model": "fake",
                "stopReason": "toolUse",
                "timestamp": now_ms(),
            }
        )
        store.append_message(
            {
                "role": "toolResult",
                "toolCallId": f"c{turn}",
                "toolName": "bash",
                "isError": False,
                "content": [{"type": "text", "text": "log line\n" * 4_000}],
                "timestamp": now_ms(),
            }
        )
        store.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "done " * 40}],
                "provider": "openai",
                "model": "fake",
                "stopReason": "stop",
                "timestamp": now_ms(),
            }
        )
    store.close()
    return path


@pytest.mark.parametrize(
    "flags",
    [[], ["--keep-recent-tokens", "700"], ["--keep-recent-tokens", "900", "--reserve-tokens", "9000"]],
    ids=["settings", "keep-flag", "both-flags"],
)
def test_plan_predicts_the_cut_compact_makes(
    isolated: Path,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
) -> None:
    path = write_session(isolated / "s.jsonl", turns=6)
    plan = _json(capsys, "plan", str(path), *flags)
    compacted = _json(capsys, "compact", str(path), *flags)
    assert compacted["compacted"] is True
    assert compacted["firstKeptEntryId"] == plan["firstKeptEntryId"]
    assert compacted["tokensBefore"] == plan["tokensBefore"]


def test_plan_prunes_first_as_compact_does(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tool_heavy_session(isolated / "t.jsonl")
    # The newest 40k tokens of outputs are protected; a keep budget beyond them reaches pruned ones.
    flags = ["--keep-recent-tokens", "55000"]
    plan = _json(capsys, "plan", str(path), *flags)
    as_stored = _json(capsys, "plan", str(path), *flags, "--no-prune")
    assert plan["pruning"]["entries"]  # old outputs are pruned before the cut is chosen...
    assert plan["firstKeptEntryId"] != as_stored["firstKeptEntryId"]  # ...which moves it
    compacted = _json(capsys, "compact", str(path), *flags)
    assert compacted["prunedToolOutputs"] == len(plan["pruning"]["entries"])
    assert compacted["firstKeptEntryId"] == plan["firstKeptEntryId"]


def test_plan_takes_every_budget_from_the_settings_layers(
    isolated: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = write_session(isolated / "s.jsonl", turns=6)
    project = isolated / ".kompakt" / "settings.toml"
    project.write_text(
        'model = "openai/nowhere"\n[compaction]\nkeepRecentTokens = 200\nreserveTokens = 5000\ncalibrate = false\n'
        '[models."openai/nowhere"]\napiBase = "http://127.0.0.1:9/v1"\ncontextWindow = 50000\n'
    )
    plan = _json(capsys, "plan", str(path))
    assert (plan["requestedKeepRecentTokens"], plan["reserveTokens"], plan["calibrate"]) == (200, 5000, False)
    assert plan["calibrationRatio"] is None
    assert plan["model"] == "openai/nowhere" and plan["contextWindow"] == 50_000
    assert plan["contextWindowSource"] == 'settings models."openai/nowhere".contextWindow'
    assert plan["threshold"] == 45_000
    sources = plan["settingsSources"]
    assert sources["compaction.keepRecentTokens"] == f"project file {project}"
    assert sources["compaction.strategy"] == "default"
    # The environment beats the files, a flag beats the environment.
    monkeypatch.setenv("KOMPAKT_COMPACTION__KEEPRECENTTOKENS", "900")
    plan = _json(capsys, "plan", str(path))
    assert plan["requestedKeepRecentTokens"] == 900
    assert (
        plan["settingsSources"]["compaction.keepRecentTokens"] == "env KOMPAKT_COMPACTION__KEEPRECENTTOKENS"
    )
    plan = _json(
        capsys, "plan", str(path), "--keep-recent-tokens", "300", "--calibrate", "--context-window", "60000"
    )
    assert plan["requestedKeepRecentTokens"] == 300 and plan["calibrate"] is True
    assert plan["settingsSources"]["compaction.keepRecentTokens"] == "--keep-recent-tokens"
    assert (plan["contextWindow"], plan["contextWindowSource"]) == (60_000, "--context-window")
    # compact reads the same layers: the same cut with no flags at all.
    plan = _json(capsys, "plan", str(path))
    assert _json(capsys, "compact", str(path))["firstKeptEntryId"] == plan["firstKeptEntryId"]


def test_plan_follows_the_strategy_setting(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_session(isolated / "s.jsonl", turns=8)
    head_tail = _json(
        capsys,
        "plan",
        str(_copy(path, "h.jsonl")),
        "--strategy",
        "head-tail",
        "--context-window",
        "8000",
        "--reserve-tokens",
        "1000",
    )
    assert head_tail["strategy"] == "head-tail" and "headEntryIds" in head_tail
    compacted = _json(
        capsys, "compact", str(_copy(path, "h.jsonl")), "--strategy", "head-tail", "--reserve-tokens", "1000"
    )
    assert compacted["firstKeptEntryId"] == head_tail["firstKeptEntryId"]
    assert compacted["tokensBefore"] == head_tail["tokensBefore"]  # pi's figure for both strategies


def _options(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.Action]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += [(f"{name} {a.dest}", a) for a in sub._actions]
        else:
            found.append((action.dest, action))
    return found


def test_every_option_documents_its_default() -> None:
    undocumented = [
        name
        for name, action in _options(build_parser())
        if action.option_strings
        and not isinstance(action, argparse._HelpAction | argparse._VersionAction)
        and "default" not in (action.help or "")
        and action.dest not in ("html", "md")  # the required choice between the two formats
    ]
    assert undocumented == []


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert (
        capsys.readouterr().out.strip()
        == f"kompakt {tui.__version__} (pi session format v3, follows pi 0.73.1)"
    )
    pyproject = (Path(tui.__file__).parents[1] / "pyproject.toml").read_text()
    assert f'version = "{tui.__version__}"' in pyproject


def test_session_settings_sit_between_the_files_and_the_flags(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "Apply to this session" in the timeline stores keepRecentTokens in the file: compact (AgentSession)
    # uses it, so plan must too; a flag still beats it, for both commands.
    path = write_session(isolated / "s.jsonl", turns=6)
    with SessionStore.open(path) as store:
        entry = store.append_custom(SESSION_SETTINGS_TYPE, entry_data({"keepRecentTokens": 700}))
    plan = _json(capsys, "plan", str(path))
    assert plan["requestedKeepRecentTokens"] == 700
    assert plan["settingsSources"]["compaction.keepRecentTokens"] == f"session (entry {entry['id']})"
    flagged = _json(capsys, "plan", str(path), "--keep-recent-tokens", "1500")
    assert flagged["requestedKeepRecentTokens"] == 1500
    assert flagged["firstKeptEntryId"] != plan["firstKeptEntryId"]
    compacted = _json(capsys, "compact", str(_copy(path, "a.jsonl")))
    assert compacted["firstKeptEntryId"] == plan["firstKeptEntryId"]
    compacted = _json(capsys, "compact", str(_copy(path, "b.jsonl")), "--keep-recent-tokens", "1500")
    assert compacted["firstKeptEntryId"] == flagged["firstKeptEntryId"]


@pytest.mark.parametrize("command", ["plan", "compact"])
def test_help_names_each_flags_default_from_the_settings_model(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.config.model import CompactionSettings

    defaults = CompactionSettings()
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"compaction.keepRecentTokens, {defaults.keep_recent_tokens} if no layer sets it" in text
    assert f"compaction.reserveTokens, {defaults.reserve_tokens} if no layer sets it" in text
    assert f"compaction.strategy, {defaults.strategy} if no layer sets it" in text
    assert "<default>" not in text
