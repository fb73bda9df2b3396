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


def test_picker_name_is_the_latest_session_info_anywhere_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "pi" / encode_cwd("/w") / "long.jsonl"
    with SessionStore.create(path, cwd="/w") as store:
        store.append_message(
            {"role": "user", "content": [{"type": "text", "text": "mentions session_info"}], "timestamp": 0}
        )
        store.append_session_info("early name")
        for i in range(200):  # push the rename past the 64 KiB head that the listing parses
            store.append_message(
                {"role": "user", "content": [{"type": "text", "text": f"{i} " + "x" * 500}], "timestamp": 0}
            )
        store.append_session_info("  late name ")
        store.append_message(
            {"role": "user", "content": [{"type": "text", "text": '"session_info" in text'}], "timestamp": 0}
        )
    assert path.stat().st_size > 64 * 1024
    assert read_summary(path, "pi").name == "late name"
    with SessionStore.open(path) as store:
        store.append_session_info("")
    assert read_summary(path, "pi").name is None  # an empty name clears it (pi 0.73.1)


def test_new_session_file_name_carries_the_header_id(tmp_path: Path) -> None:
    import uuid

    from tui.launch import Launch, open_session

    opened = open_session(Launch("new", cwd=tmp_path))
    store = opened.store
    store.append_message({"role": "user", "content": "hi", "timestamp": 0})
    stamp, _, rest = store.path.name.partition("_")
    assert rest == f"{store.session_id}.jsonl"
    assert uuid.UUID(store.session_id).version == 7
    assert stamp == store.header["timestamp"].replace(":", "-").replace(".", "-")
    assert store.path.parent.name == encode_cwd(str(tmp_path))
    store.close()


def test_empty_or_missing_roots() -> None:
    assert list_sessions() == [] and latest_session("/w") is None


def test_read_summary_rejects_headerless(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text('{"type":"message"}\n')
    assert read_summary(path, "pi") is None


# --- pi's configured session directory (--session-dir > PI_CODING_AGENT_SESSION_DIR > sessionDir) ---------
def test_pi_session_dir_precedence_and_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from tui.session.catalog import pi_session_dir

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    agent = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    project = tmp_path / "project"
    assert pi_session_dir(str(project)) is None
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"sessionDir": "~/from-user-settings"}))
    assert pi_session_dir(str(project)) == tmp_path / "home" / "from-user-settings"
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.json").write_text(json.dumps({"sessionDir": "/from/project"}))
    assert pi_session_dir(str(project)) == Path("/from/project")
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", "~/from-env")
    assert pi_session_dir(str(project)) == tmp_path / "home" / "from-env"
    assert pi_session_dir(str(project), "~/from-flag") == tmp_path / "home" / "from-flag"
    (agent / "settings.json").write_text("{broken")
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR")
    (project / ".pi" / "settings.json").unlink()
    assert pi_session_dir(str(project)) is None  # a broken settings.json is no setting


def test_continue_and_the_session_list_search_pis_configured_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui.session.catalog import session_roots

    flat = tmp_path / "pi-flat"
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(flat))
    own = make(new_session_path("/w", tmp_path / "kh" / "sessions"), "kompakt question")
    os.utime(own, (1, 1))
    # pi writes flat files there, whatever their cwd, and pi's -c takes the newest of them.
    theirs = make(flat / "2026-01-01T00-00-00-000Z_x.jsonl", "asked in pi elsewhere")
    assert latest_session("/w") == theirs
    listed = list_sessions(session_roots("/w"))
    assert [s.path for s in listed] == [theirs, own] and listed[0].source == "pi"
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR")
    assert latest_session("/w") == own


def test_session_dir_flag_stores_new_sessions_there_and_continue_finds_them(tmp_path: Path) -> None:
    from tui.launch import Launch, open_session

    flat = tmp_path / "chosen"
    opened = open_session(Launch("new", cwd=tmp_path, session_dir=flat))
    opened.store.append_message({"role": "user", "content": "hi", "timestamp": 0})
    opened.store.close()
    assert opened.store.path.parent == flat
    again = open_session(Launch("continue", cwd=tmp_path / "elsewhere", session_dir=flat))
    assert again.store.path == opened.store.path
    again.store.close()
