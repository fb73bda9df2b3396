"""The headless CLI: JSON outputs agree with the core functions, and user errors are one clear line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.gen_session import generate
from tui.cli import main
from tui.compaction.plan import prepare_compaction
from tui.session.store import SessionStore


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("cli") / "s.jsonl", entries=600, seed=3, big_output_lines=40)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_plan_json_matches_prepare_compaction(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(
        capsys, "plan", str(session), "--keep-recent-tokens", "3000", "--context-window", "50000"
    )
    with SessionStore.open(session, read_only=True) as store:
        plan = prepare_compaction(store.get_branch(), keep_recent_tokens=3000)
    assert result["firstKeptEntryId"] == plan.first_kept_entry_id
    assert result["isSplitTurn"] == plan.is_split_turn
    assert result["summarizeEntryIds"] == plan.summarize_entry_ids
    assert result["tokensBefore"] == plan.tokens_before
    assert result["threshold"] == 50000 - 16384
    assert result["thresholdCrossed"] == (result["contextTokens"] > result["threshold"])
    assert set(result["entryTokens"]) >= set(result["keptEntryIds"])
    assert "pruning" in result and "tokensSaved" in result["pruning"]


def test_plan_moves_with_keep_recent_tokens(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    small = run_json(capsys, "plan", str(session), "--keep-recent-tokens", "500")
    large = run_json(capsys, "plan", str(session), "--keep-recent-tokens", "8000")
    assert len(large["keptEntryIds"]) > len(small["keptEntryIds"])
    assert large["keptTokens"] > small["keptTokens"]


def test_context_json_has_messages_and_estimate(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(capsys, "context", str(session))
    with SessionStore.open(session, read_only=True) as store:
        expected = len(store.build_context().messages)
    assert len(result["messages"]) == expected
    assert result["estimate"]["tokens"] > 0
    assert {m["role"] for m in result["messages"]} <= {"user", "assistant", "toolResult"}


def test_tree_json_and_filters(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_json(capsys, "tree", str(session))
    assert sum(1 for r in rows if r["leaf"]) == 1
    users = run_json(capsys, "tree", str(session), "--filter", "user-only")
    assert users and all(r["text"].startswith("user: ") for r in users)
    assert len(users) < len(rows)


def test_tree_text_output_and_leaf_option(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with SessionStore.open(session, read_only=True) as store:
        first_user = next(e["id"] for e in store.entries if e.get("type") == "message")
    assert main(["tree", str(session), "--leaf", first_user]) == 0
    out = capsys.readouterr().out
    assert "← active" in out and "rows)" in out


def test_stats(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stats = run_json(capsys, "stats", str(session))
    assert stats["entries"] == sum(stats["byType"].values())
    assert stats["branchPoints"] >= 1 and stats["contextTokens"] > 0


@pytest.mark.parametrize(
    ("content", "expected"),
    [(None, "no such session file"), (b"garbage\n", "not a pi session file")],
)
def test_errors_are_one_line_without_traceback(tmp_path: Path, content: bytes | None, expected: str) -> None:
    path = tmp_path / "x.jsonl"
    if content is not None:
        path.write_bytes(content)
    proc = subprocess.run([sys.executable, "-m", "tui", "plan", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and expected in proc.stderr and "Traceback" not in proc.stderr


def test_unknown_leaf_is_a_clear_error(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["context", str(session), "--leaf", "ffffffff"]) == 2
    assert "Entry ffffffff not found" in capsys.readouterr().err


def test_stats_says_unnamed_for_a_session_without_a_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """QA issue 13 F5: ``kompakt stats`` printed ``name None`` (and an empty session's ``leafId None``)."""
    for turns in (1, 0):
        path = tmp_path / f"s{turns}.jsonl"
        with SessionStore.create(path) as store:
            for _ in range(turns):
                store.append_message({"role": "user", "content": "hi", "timestamp": 0})
        assert main(["stats", str(path)]) == 0
        rows = {
            key: value.strip()
            for key, _, value in (line.partition(" ") for line in capsys.readouterr().out.splitlines())
        }
        assert rows["name"] == "(unnamed)" and "None" not in rows.values()
        assert (rows["leafId"] == "(none)") is (turns == 0)


def test_corrupt_line_is_reported_as_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.jsonl"
    with SessionStore.create(path) as store:
        store.append_message({"role": "user", "content": "hi", "timestamp": 0})
    path.write_bytes(path.read_bytes() + b"{broken\n")
    assert main(["stats", str(path)]) == 0
    assert "line 3" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--keep-recent-tokens", "-5"], "--keep-recent-tokens: -5 is below 0"),
        (["--reserve-tokens", "lots"], "--reserve-tokens: 'lots' is not a whole number"),
        (["--context-window", "0"], "--context-window: 0 is below 1"),
    ],
)
def test_plan_rejects_budgets_the_settings_would_reject(
    session: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["plan", str(session), *argv])
    assert exited.value.code == 2 and expected in capsys.readouterr().err


def test_plan_rejects_a_reserve_that_fills_the_window(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["plan", str(session), "--context-window", "50000", "--reserve-tokens", "50000"])
    assert code == 2
    # The message names where each figure came from (here both flags).
    assert (
        "reserveTokens 50,000 (--reserve-tokens) leaves no room in the 50,000-token context window "
        "(--context-window)" in capsys.readouterr().err
    )


def test_stats_name_is_the_latest_session_info_trimmed_or_cleared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "named.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"}
    ]
    for i, name in enumerate(["First", "  Second  "]):
        lines.append(
            {"type": "session_info", "id": f"i{i}", "parentId": f"i{i - 1}" if i else None,
             "timestamp": f"2025-01-01T00:00:0{i + 1}.000Z", "name": name}
        )  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert run_json(capsys, "stats", str(path))["name"] == "Second"
    with path.open("a") as handle:
        handle.write(json.dumps({**lines[-1], "id": "i9", "parentId": "i1", "name": ""}) + "\n")
    assert run_json(capsys, "stats", str(path))["name"] is None  # an empty name clears it (pi 0.73.1)
