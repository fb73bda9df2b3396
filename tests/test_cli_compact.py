"""``kompakt compact``: compacts a session file through AgentSession, offline with the deterministic summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.agent.offline import DEFAULT_MODELS
from tui.cli import main
from tui.session.entries import now_ms
from tui.session.store import SessionStore


def trust_project_file(config_dir: Path, project_file: Path) -> None:
    """Trust a project settings file, as `kompakt trust` does (its apiBase needs it)."""
    from tui.config.loader import content_hash
    from tui.config.trust import trust

    trust(config_dir, project_file, content_hash(project_file.read_bytes()))


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No provider keys, no user settings; the project settings of ``tmp_path`` keep little verbatim."""
    for env_var, _model in DEFAULT_MODELS:
        monkeypatch.delenv(env_var, raising=False)
    monkeypatch.setenv("KOMPAKT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    project = tmp_path / ".kompakt"
    project.mkdir()
    (project / "settings.toml").write_text(
        "[compaction]\nkeepRecentTokens = 200\n\n[retry]\nenabled = false\n"
        '\n[models."openai/nowhere"]\napiBase = "http://127.0.0.1:9/v1"\n'
    )
    trust_project_file(tmp_path / "config", project / "settings.toml")  # apiBase needs the user's trust
    return tmp_path


def write_session(path: Path, turns: int) -> Path:
    store = SessionStore.create(path, cwd=str(path.parent))
    for turn in range(turns):
        store.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"question {turn}: " + "why " * 300}]}
            | {"timestamp": now_ms()}
        )
        store.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {turn}: " + "because " * 300}],
                "provider": "openai",
                "model": "fake",
                "usage": {"input": 500 * (turn + 1), "output": 300, "totalTokens": 500 * (turn + 1) + 300},
                "stopReason": "stop",
                "timestamp": now_ms(),
            }
        )
    store.close()
    return path


def test_offline_compact_uses_the_fallback_and_reports_json(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_session(isolated / "s.jsonl", turns=4)

    assert main(["compact", str(path), "--json"]) == 0

    report = json.loads(capsys.readouterr().out)
    with SessionStore.open(path, read_only=True) as store:
        (entry,) = [e for e in store.entries if e["type"] == "compaction"]
        assert store.leaf_id == entry["id"]
    assert report["compacted"] is True
    assert report["entryId"] == entry["id"]
    assert report["firstKeptEntryId"] == entry["firstKeptEntryId"]
    assert report["summarySource"] == "fallback"
    assert report["tokensBefore"] == entry["tokensBefore"] > report["tokensAfter"] > 0
    assert "question 0" in entry["summary"]


def test_compact_prints_before_and_after(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_session(isolated / "s.jsonl", turns=4)

    assert main(["compact", str(path), "--instructions", "keep the answers"]) == 0

    captured = capsys.readouterr()
    assert "→" in captured.out and "firstKeptEntryId" in captured.out
    assert "fallback (deterministic summary)" in captured.out
    assert "offline" in captured.err  # the standing notice says how to configure a provider


def test_nothing_to_compact_is_a_skip_not_an_error(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_session(isolated / "s.jsonl", turns=4)
    assert main(["compact", str(path)]) == 0
    capsys.readouterr()

    assert main(["compact", str(path), "--json"]) == 0  # the last entry is already a compaction

    report = json.loads(capsys.readouterr().out)
    assert report["compacted"] is False and report["message"].startswith("Nothing to compact")
    with SessionStore.open(path, read_only=True) as store:
        assert len([e for e in store.entries if e["type"] == "compaction"]) == 1


def test_a_failing_model_falls_back_and_says_why(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_session(isolated / "s.jsonl", turns=4)

    assert main(["compact", str(path), "--model", "openai/nowhere", "--json"]) == 0

    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["model"] == "openai/nowhere"
    assert report["summarySource"] == "fallback" and report["summaryError"]
    assert "summarizer failed" in captured.err


def test_a_session_in_use_is_a_one_line_error(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_session(isolated / "s.jsonl", turns=4)
    with SessionStore.open(path):
        assert main(["compact", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kompakt: ") and err.count("\n") == 1


def test_dry_run_prints_the_plan_and_summary_and_leaves_the_file_byte_identical(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_session(isolated / "s.jsonl", turns=4)
    before = path.read_bytes()
    names_before = sorted(p.name for p in isolated.iterdir())

    assert main(["compact", str(path), "--dry-run", "--json", "--keep-recent-tokens", "700"]) == 0

    report = json.loads(capsys.readouterr().out)
    assert path.read_bytes() == before
    assert sorted(p.name for p in isolated.iterdir()) == names_before  # no lock, backup or sidecar left
    assert report["compacted"] is False and report["dryRun"] is True
    assert report["summarySource"] == "fallback" and "question 0" in report["summary"]
    assert report["details"]["kompakt"]["keepRecentTokens"] == 700
    assert report["tokensBefore"] > report["tokensAfter"] > 0
    assert "shortSummary" in report

    # The real compaction with the same flags writes that very summary and boundary.
    assert main(["compact", str(path), "--json", "--keep-recent-tokens", "700"]) == 0
    written = json.loads(capsys.readouterr().out)
    with SessionStore.open(path, read_only=True) as store:
        (entry,) = [e for e in store.entries if e["type"] == "compaction"]
    assert written["firstKeptEntryId"] == report["firstKeptEntryId"] == entry["firstKeptEntryId"]
    assert entry["summary"] == report["summary"]
    assert entry["tokensBefore"] == report["tokensBefore"]


def test_dry_run_budget_flags_move_the_boundary_like_plan(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_session(isolated / "s.jsonl", turns=6)
    before = path.read_bytes()
    firsts = []
    for keep in ("300", "2000"):
        assert (
            main(
                ["compact", str(path), "--dry-run", "--json", "--keep-recent-tokens", keep, "--no-calibrate"]
            )
            == 0
        )
        dry = json.loads(capsys.readouterr().out)
        args = ["plan", str(path), "--json", "--keep-recent-tokens", keep, "--no-calibrate"]
        assert main(args) == 0
        plan = json.loads(capsys.readouterr().out)
        assert dry["firstKeptEntryId"] == plan["firstKeptEntryId"]
        assert dry["tokensBefore"] == plan["tokensBefore"]
        firsts.append(dry["firstKeptEntryId"])
    assert firsts[0] != firsts[1]
    assert path.read_bytes() == before


def test_dry_run_text_names_what_it_would_write(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_session(isolated / "s.jsonl", turns=4)
    before = path.read_bytes()

    assert (
        main(["compact", str(path), "--dry-run", "--reserve-tokens", "4000", "--context-window", "64000"])
        == 0
    )

    out = capsys.readouterr().out
    assert path.read_bytes() == before
    assert "nothing was written" in out and "firstKeptEntryId" in out
    assert "reserveTokens 4,000" in out
    assert "summary it would write" in out and "question 0" in out


def test_dry_run_rejects_a_reserve_that_fills_the_window(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_session(isolated / "s.jsonl", turns=2)
    args = ["compact", str(path), "--dry-run", "--reserve-tokens", "9000", "--context-window", "8000"]
    assert main(args) == 2
    assert "leaves no room" in capsys.readouterr().err


def test_inspect_shows_what_the_compaction_did(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_session(isolated / "s.jsonl", turns=4)
    assert main(["compact", str(path), "--json"]) == 0
    entry_id = json.loads(capsys.readouterr().out)["entryId"]

    assert main(["inspect", str(path), "--json"]) == 0
    latest = json.loads(capsys.readouterr().out)
    assert main(["inspect", str(path), entry_id, "--json"]) == 0
    named = json.loads(capsys.readouterr().out)
    assert latest == named and latest["compactionId"] == entry_id
    assert latest["summarised"][0]["text"].startswith("user: question 0")
    assert latest["facts"]["reason"] == "manual" and latest["facts"]["keepRecentTokens"] == 200
    assert latest["facts"]["tokensBeforeMeasured"] is True  # the replies report usage

    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "measured" in out and "── summarised" in out and "── kept" in out


def test_inspect_without_a_compaction_is_a_user_error(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_session(isolated / "s.jsonl", turns=1)
    assert main(["inspect", str(path)]) == 2
    assert "no compaction" in capsys.readouterr().err


def test_a_session_whose_working_directory_is_gone_is_a_clear_error(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # pi 0.73.1's non-interactive modes stop too; kompakt never falls back silently.
    project = isolated / "gone"
    project.mkdir()
    path = write_session(project / "s.jsonl", turns=4)
    moved = isolated / "s.jsonl"
    path.rename(moved)
    project.rmdir()
    before = moved.read_bytes()
    assert main(["compact", str(moved)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kompakt: ") and err.count("\n") == 1
    assert f"working directory does not exist: {project}" in err and str(moved) in err
    assert moved.read_bytes() == before
