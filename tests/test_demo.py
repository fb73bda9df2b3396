"""The --demo session shows every kind of thing kompakt draws, and is a valid pi session."""

from __future__ import annotations

from pathlib import Path

from tui.compaction.plan import CompactionPlan, prepare_compaction
from tui.demo import build_demo
from tui.launch import DEMO_COPIES_KEPT, Launch, demo_copies, open_session
from tui.session.catalog import latest_session, list_sessions, session_roots
from tui.session.store import SessionStore


def test_demo_has_branches_compactions_summaries_and_labels(tmp_path: Path) -> None:
    path = build_demo(tmp_path / "demo.jsonl")
    with SessionStore.open(path) as store:
        kinds = [e["type"] for e in store.entries]
        assert kinds.count("compaction") == 2 and kinds.count("branch_summary") == 1
        assert len(store.tree.branch_points()) == 1 and len(store.tree.labels) == 2
        assert store.problems == [] and store.name
        path_kinds = [e["type"] for e in store.get_branch()]
        assert path_kinds.count("compaction") == 2  # both compactions are on the active path
        context = store.build_context()
        assert context.messages[0]["role"] == "compactionSummary"
        assert isinstance(prepare_compaction(store.get_branch()), CompactionPlan)


def test_demo_is_deterministic(tmp_path: Path) -> None:
    assert build_demo(tmp_path / "a.jsonl").read_bytes() == build_demo(tmp_path / "b.jsonl").read_bytes()


def test_the_demo_copy_names_a_directory_that_exists(tmp_path: Path) -> None:
    # pi refuses (or asks about) a session whose cwd is gone; the copy names a real one.
    assert SessionStore.open(build_demo(tmp_path / "d.jsonl")).header["cwd"] == str(tmp_path)
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    header = SessionStore.open(build_demo(tmp_path / "e.jsonl", str(elsewhere))).header
    assert header["cwd"] == str(elsewhere)


def test_dash_c_demo_resumes_the_latest_copy_and_old_copies_are_pruned(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KOMPAKT_HOME", str(tmp_path / "home"))
    opened = []
    for _ in range(DEMO_COPIES_KEPT + 3):
        session = open_session(Launch("demo", cwd=tmp_path))
        opened.append(session.store.path)
        session.store.close()
    assert len(set(opened)) == len(opened)  # --demo: a fresh copy each time
    assert demo_copies() == sorted(opened, reverse=True)[:DEMO_COPIES_KEPT]  # the oldest ones are gone
    resumed = open_session(Launch("demo", cwd=tmp_path, resume_demo=True))
    assert resumed.store.path == opened[-1] and "latest demo copy" in resumed.notices[0]
    resumed.store.append_message({"role": "user", "content": "still here", "timestamp": 1})
    resumed.store.close()
    again = open_session(Launch("demo", cwd=tmp_path, resume_demo=True))
    assert again.store.get_branch()[-1]["message"]["content"] == "still here"  # the work goes on
    again.store.close()
    assert demo_copies() == sorted(opened, reverse=True)[:DEMO_COPIES_KEPT]  # resuming prunes nothing


def test_pruning_never_deletes_a_demo_copy_in_use_or_written_to(tmp_path, monkeypatch) -> None:
    """QA: six more `kompakt --demo` runs deleted a copy another kompakt had open and was writing, and an
    older one holding the user's /name and messages."""
    monkeypatch.setenv("KOMPAKT_HOME", str(tmp_path / "home"))
    in_use = open_session(Launch("demo", cwd=tmp_path)).store  # stays open: its lock is held
    written = open_session(Launch("demo", cwd=tmp_path)).store
    written.append_session_info("my demo work")
    written.append_message({"role": "user", "content": "my own question", "timestamp": 1})
    written.close()
    untouched = open_session(Launch("demo", cwd=tmp_path)).store
    untouched.close()
    for _ in range(DEMO_COPIES_KEPT + 2):
        open_session(Launch("demo", cwd=tmp_path)).store.close()
    copies = demo_copies()
    assert in_use.path in copies and written.path in copies  # kept, however old
    assert untouched.path not in copies  # an untouched old copy is still pruned
    assert len(copies) == DEMO_COPIES_KEPT + 2
    in_use.append_message({"role": "user", "content": "still writing", "timestamp": 2})
    assert (
        SessionStore.open(in_use.path, read_only=True).get_branch()[-1]["message"]["content"]
        == "still writing"
    )
    in_use.close()


def test_the_session_list_shows_demo_copies_but_dash_c_does_not_continue_them(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KOMPAKT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KOMPAKT_PI_SESSIONS", str(tmp_path / "pi"))
    session = open_session(Launch("demo", cwd=tmp_path))
    session.store.close()
    listed = list_sessions(session_roots(str(tmp_path), demos=True))
    assert [(s.path, s.source) for s in listed] == [(session.store.path, "demo")]
    assert latest_session(str(tmp_path)) is None
