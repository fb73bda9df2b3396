"""Undoing a compaction: the leaf goes back to the compaction's parent; nothing is deleted.

On real session files written by the engine (offline, deterministic summary), read back after the undo.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import factories as f
from tests.compaction_helpers import T100, coding_session, compaction_settings, msg, new_store
from tui.cli import main
from tui.compaction.engine import compact_session
from tui.compaction.inspect import NotACompaction
from tui.compaction.undo import plan_uncompact, uncompact
from tui.session.store import SessionStore


async def compacted(tmp_path: Path) -> tuple[SessionStore, dict, list]:
    store = new_store(tmp_path, coding_session())
    before = store.build_context().messages
    result = await compact_session(
        store,
        reason="manual",
        settings=compaction_settings(),
        summarize=None,
        context_window=100_000,
        max_output_tokens=8000,
    )
    return store, result.entry, before


async def test_undo_makes_the_pre_compaction_context_live_and_keeps_the_compaction(tmp_path):
    store, entry, context_before = await compacted(tmp_path)
    lines_before = store.path.read_bytes()
    plan = plan_uncompact(store)
    assert plan.compaction_id == entry["id"] and plan.target_id == entry["parentId"]
    assert not plan.needs_confirmation and plan.on_active_path

    uncompact(store, plan)

    assert store.leaf_id == entry["parentId"]
    assert store.build_context().messages == context_before
    assert store.path.read_bytes().startswith(lines_before)  # appended only: nothing deleted
    reopened = SessionStore.open(store.path, read_only=True)
    assert reopened.leaf_id == entry["parentId"]  # the move survives a reload
    assert reopened.tree.by_id[entry["id"]]["summary"] == entry["summary"]
    assert reopened.build_context().messages == context_before

    # Redo is an ordinary navigation back to the compaction.
    store.branch(entry["id"])
    assert store.build_context().messages[0]["role"] == "compactionSummary"


async def test_undo_with_later_messages_asks_and_keeps_them_on_the_compactions_branch(tmp_path):
    store, entry, context_before = await compacted(tmp_path)
    later = store.append_message(msg(f.user("after the compaction " + T100)))
    store.append_message(msg(f.assistant("answer " + T100)))
    plan = plan_uncompact(store, entry["id"])
    assert plan.later_messages == 2 and plan.needs_confirmation

    uncompact(store, plan)

    assert store.build_context().messages == context_before
    assert store.tree.parent_of(later["id"]) == entry["id"]  # still there, on that branch
    # A new message now branches from before the compaction.
    fresh = store.append_message(msg(f.user("a new way")))
    assert store.tree.parent_of(fresh["id"]) == entry["parentId"]


async def test_undo_refuses_what_is_not_a_compaction(tmp_path):
    store = new_store(tmp_path, coding_session())
    with pytest.raises(NotACompaction):
        plan_uncompact(store)
    with pytest.raises(NotACompaction):
        plan_uncompact(store, store.leaf_id)


async def test_undo_of_an_older_compaction_off_the_active_path(tmp_path):
    store, entry, _ = await compacted(tmp_path)
    uncompact(store, plan_uncompact(store))
    plan = plan_uncompact(store, entry["id"])  # now on a side branch
    assert not plan.on_active_path and plan.later_messages == 0


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KOMPAKT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


async def test_cli_uncompact(isolated: Path, capsys: pytest.CaptureFixture[str]):
    store, entry, _ = await compacted(isolated)
    store.append_message(msg(f.user("after " + T100)))
    path = store.path
    store.close()
    before = path.read_bytes()

    assert main(["uncompact", str(path)]) == 1  # messages after it: asks for --yes
    assert "--yes" in capsys.readouterr().err
    assert path.read_bytes() == before

    assert main(["uncompact", str(path), "--yes", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {"compactionId": entry["id"], "leafId": entry["parentId"], "laterMessages": 1}
    with SessionStore.open(path, read_only=True) as reopened:
        assert reopened.leaf_id == entry["parentId"]
