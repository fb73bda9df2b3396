"""New session files from a branch: pi's JSONL export, /fork and /clone (pi 0.73.1, delta A.9/A.10).

The files are checked by kompakt and, when Node and ``@mariozechner/pi-coding-agent@0.73.1`` are
installed in ``KOMPAKT_PI_DIR``, opened with pi's own ``SessionManager`` (``bench/pi_open.mjs``); without
them that part is skipped and says why.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from bench.compaction_vs_pi import pi_dir_problem
from tests import factories as f
from tui.session.branching import (
    branch_jsonl_entries,
    create_branched_session,
    export_branch_jsonl,
    fork_session,
    user_messages_for_forking,
)
from tui.session.entries import LEAF_CUSTOM_TYPE, is_custom
from tui.session.store import SessionStore

PI_DIR = os.environ.get("KOMPAKT_PI_DIR")
PI_PROBLEM = pi_dir_problem(PI_DIR)
OLD_LABEL_TIME = "2024-03-01T10:00:00.000Z"


def source_session(tmp_path: Path) -> tuple[SessionStore, dict[str, str]]:
    """u1 a1 u2 a2 (labelled in 2024) then a branch from a1: u3 a3 (the leaf), plus a leaf marker."""
    entries = f.chain(
        [
            f.user("first question"),
            f.assistant("first answer"),
            f.user("second question"),
            f.assistant("second answer"),
        ]
    )
    label = f.label(entries[1]["id"], "checkpoint")
    label.update(id="lab00001", parentId=entries[-1]["id"], timestamp=OLD_LABEL_TIME)
    header = {
        "type": "session",
        "version": 3,
        "id": str(uuid.uuid4()),
        "timestamp": OLD_LABEL_TIME,
        "cwd": "/w",
    }
    directory = tmp_path / "sessions"
    directory.mkdir()
    path = directory / "2024-03-01T10-00-00-000Z_source.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in (header, *entries, label)))
    store = SessionStore.open(path)
    ids = {name: e["id"] for name, e in zip(("u1", "a1", "u2", "a2"), entries, strict=True)}
    store.branch(ids["a1"])  # a kompakt leaf marker in the file
    ids["u3"] = store.append_message(f.user("third question")["message"])["id"]
    ids["a3"] = store.append_message(f.assistant("third answer")["message"])["id"]
    return store, ids


def open_in_pi(paths: list[Path], tmp_path: Path) -> list[dict[str, Any]]:
    spec = tmp_path / "pi-open.json"
    spec.write_text(json.dumps([str(p) for p in paths]))
    script = Path(__file__).parent.parent / "bench" / "pi_open.mjs"
    env = {**os.environ, "KOMPAKT_PI_DIR": str(PI_DIR)}
    done = subprocess.run(
        ["node", str(script), str(spec)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def texts(store: SessionStore) -> list[tuple[str, str]]:
    from tui.session.context import message_text

    return [(m["role"], message_text(m)) for m in store.build_context().messages]


# --- JSONL export ---------------------------------------------------------------------------------------
def test_jsonl_export_is_the_branch_re_chained_with_the_sessions_id(tmp_path: Path) -> None:
    store, ids = source_session(tmp_path)
    lines = branch_jsonl_entries(store)
    header, *entries = lines
    assert header["type"] == "session" and header["id"] == store.session_id and header["cwd"] == "/w"
    assert "parentSession" not in header
    assert [e["id"] for e in entries] == [ids["u1"], ids["a1"], ids["u3"], ids["a3"]]  # no leaf marker
    assert [e["parentId"] for e in entries] == [None, ids["u1"], ids["a1"], ids["u3"]]
    out = export_branch_jsonl(store, tmp_path / "out" / "branch.jsonl")
    with SessionStore.open(out, read_only=True) as exported:
        assert texts(exported) == texts(store) and exported.leaf_id == ids["a3"]
    with pytest.raises(FileExistsError):
        export_branch_jsonl(store, store.path)  # never over the session itself


def test_cli_export_jsonl(tmp_path: Path) -> None:
    from tui.cli import main

    store, ids = source_session(tmp_path)
    store.close()
    out = tmp_path / "cli.jsonl"
    assert main(["export", str(store.path), "--jsonl", "-o", str(out), "--leaf", ids["a2"]]) == 0
    with SessionStore.open(out, read_only=True) as exported:
        assert [e["id"] for e in exported.entries] == [ids["u1"], ids["a1"], ids["u2"], ids["a2"]]
    assert main(["export", str(store.path), "--jsonl"]) == 0
    assert (store.path.parent / f"{store.path.stem}.branch.jsonl").exists()


# --- clone and fork -------------------------------------------------------------------------------------
def test_clone_copies_the_branch_with_parent_session_and_original_label_times(tmp_path: Path) -> None:
    store, ids = source_session(tmp_path)
    cloned = create_branched_session(store, ids["a3"])
    session_id = cloned.path.name.split("_", 1)[1].removesuffix(".jsonl")
    assert cloned.path.parent == store.path.parent and uuid.UUID(session_id).version == 7
    with SessionStore.open(cloned.path, read_only=True) as clone:
        assert clone.session_id == session_id  # one id for file name and header (B.4)
        assert clone.header["parentSession"] == str(store.path.resolve())
        assert clone.header["cwd"] == "/w"
        real = [e for e in clone.entries if e["type"] != "label"]
        assert [e["id"] for e in real if not is_custom(e, LEAF_CUSTOM_TYPE)] == [
            ids["u1"],
            ids["a1"],
            ids["u3"],
            ids["a3"],
        ]
        (label,) = [e for e in clone.entries if e["type"] == "label"]
        assert label["timestamp"] == OLD_LABEL_TIME and label["parentId"] == ids["a3"]
        assert clone.tree.label(ids["a1"]) == "checkpoint"
        assert clone.tree.label_time(ids["a1"]) == OLD_LABEL_TIME
        assert texts(clone) == texts(store)


def mid_branch_label_session(tmp_path: Path) -> tuple[SessionStore, list[str]]:
    """u1 a1, a label on u1 set after a1 (so it is a1's child), then u2 a2 continuing from the label."""
    store = SessionStore.create(tmp_path / "mid-label.jsonl", cwd=str(tmp_path))
    ids = [store.append_message(f.user("first question")["message"])["id"]]
    ids.append(store.append_message(f.assistant("first answer")["message"])["id"])
    label = store.append_label(ids[0], "start")
    ids.append(store.append_message(f.user("second question")["message"])["id"])
    ids.append(store.append_message(f.assistant("second answer")["message"])["id"])
    assert store.get(ids[2])["parentId"] == label["id"]
    return store, ids


def test_clone_re_links_an_entry_whose_parent_was_a_label_so_the_whole_path_survives(tmp_path: Path) -> None:
    store, ids = mid_branch_label_session(tmp_path)
    cloned = create_branched_session(store, ids[-1]).path
    with SessionStore.open(cloned, read_only=True) as clone:
        assert [e["id"] for e in clone.get_branch(clone.leaf_id) if e["type"] == "message"] == ids
        assert clone.get(ids[2])["parentId"] == ids[1]  # was the label's id, which the clone drops
        assert clone.get(ids[1]) == store.get(ids[1])  # the others are copied unchanged
        assert clone.tree.label(ids[0]) == "start"
        assert texts(clone) == texts(store)


def test_fork_starts_before_a_user_message_and_hands_back_its_text(tmp_path: Path) -> None:
    store, ids = source_session(tmp_path)
    assert [i for i, _ in user_messages_for_forking(store)] == [ids["u1"], ids["u2"], ids["u3"]]
    forked = fork_session(store, ids["u2"])
    assert forked.prompt_text == "second question"
    with SessionStore.open(forked.path, read_only=True) as fork:
        assert [e["id"] for e in fork.entries if e["type"] == "message"] == [ids["u1"], ids["a1"]]
        assert fork.header["parentSession"] == str(store.path.resolve())
        assert fork.tree.label_time(ids["a1"]) == OLD_LABEL_TIME
    root = fork_session(store, ids["u1"])  # from the first message: an empty session
    assert root.prompt_text == "first question"
    with SessionStore.open(root.path, read_only=True) as empty:
        assert empty.entries == [] and empty.header["parentSession"] == str(store.path.resolve())
    with pytest.raises(ValueError, match="user message"):
        fork_session(store, ids["a1"])


@pytest.mark.skipif(PI_PROBLEM is not None, reason=f"opening the files in pi 0.73.1 skipped: {PI_PROBLEM}")
def test_pi_opens_the_exported_cloned_and_forked_files(tmp_path: Path) -> None:
    store, ids = source_session(tmp_path)
    exported = export_branch_jsonl(store, tmp_path / "export.jsonl")
    cloned = create_branched_session(store, ids["a3"]).path
    forked = fork_session(store, ids["u3"]).path
    export_seen, clone_seen, fork_seen = open_in_pi([exported, cloned, forked], tmp_path)

    assert export_seen["sessionId"] == store.session_id
    assert export_seen["branch"] == [ids["u1"], ids["a1"], ids["u3"], ids["a3"]]
    assert export_seen["context"] == ["user", "assistant", "user", "assistant"]

    with SessionStore.open(cloned, read_only=True) as clone:
        assert clone_seen["sessionId"] == clone.session_id == clone_seen["header"]["id"]
        assert clone_seen["header"]["parentSession"] == str(store.path.resolve())
        assert clone_seen["leafId"] == clone.leaf_id and clone_seen["entries"] == len(clone.entries)
    assert clone_seen["labels"] == {ids["a1"]: ["checkpoint", OLD_LABEL_TIME]}
    assert clone_seen["context"] == ["user", "assistant", "user", "assistant"]

    assert fork_seen["header"]["parentSession"] == str(store.path.resolve())
    assert fork_seen["context"] == ["user", "assistant"]
    assert fork_seen["labels"] == {ids["a1"]: ["checkpoint", OLD_LABEL_TIME]}


@pytest.mark.skipif(PI_PROBLEM is not None, reason=f"opening the files in pi 0.73.1 skipped: {PI_PROBLEM}")
def test_pi_sees_the_whole_path_of_a_clone_made_across_a_mid_branch_label(tmp_path: Path) -> None:
    store, ids = mid_branch_label_session(tmp_path)
    (seen,) = open_in_pi([create_branched_session(store, ids[-1]).path], tmp_path)
    assert seen["context"] == ["user", "assistant", "user", "assistant"]
    assert [i for i in seen["branch"] if i in ids] == ids
