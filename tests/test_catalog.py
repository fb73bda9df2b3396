"""Session discovery: pi's directory naming, newest valid session, summaries from file heads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui.session.catalog import encode_cwd, latest_session, list_sessions, new_session_path, read_summary
from tui.session.store import SessionStore


@pytest.fixture(autouse=True)
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOMPAKT_HOME", str(tmp_path / "kh"))
    monkeypatch.setenv("KOMPAKT_PI_SESSIONS", str(tmp_path / "pi"))


def test_encode_cwd_as_pi() -> None:
    assert encode_cwd("/home/a/b") == "--home-a-b--"
    assert encode_cwd("C:\\x\\y") == "--C--x-y--"


def make(path: Path, first: str, name: str | None = None) -> Path:
    with SessionStore.create(path, cwd="/w") as store:
        store.append_message({"role": "user", "content": [{"type": "text", "text": first}], "timestamp": 0})
        if name:
            store.append_session_info(name)
    return path


def test_list_and_latest_ignore_invalid_files(tmp_path: Path) -> None:
    older = make(new_session_path("/w", tmp_path / "kh" / "sessions"), "first question")
    newer = make(tmp_path / "pi" / encode_cwd("/w") / "x.jsonl", "pi question\nline two", name="Named")
    os.utime(older, (1, 1))
    (tmp_path / "pi" / encode_cwd("/w") / "bad.jsonl").write_text("not json\n")
    (tmp_path / "pi" / encode_cwd("/w") / "notes.txt").write_text("x")
    sessions = list_sessions(cwd="/w")
    assert [s.path for s in sessions] == [newer, older]
    assert sessions[0].source == "pi" and sessions[0].name == "Named"
    assert sessions[0].first_message == "pi question line two"
    assert latest_session("/w") == newer
    assert latest_session("/elsewhere") is None


def test_empty_or_missing_roots() -> None:
    assert list_sessions() == [] and latest_session("/w") is None


def test_read_summary_rejects_headerless(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text('{"type":"message"}\n')
    assert read_summary(path, "pi") is None
