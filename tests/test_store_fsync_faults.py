"""A failed fsync (issue 8, H): entries written since the last good fsync are cut back, never reported stored.

In ``batch`` mode appends return before their fsync; when that fsync fails (EIO: the disk may have
dropped the pages) the entries since the last good one are removed from the file and from the session,
the caller gets the error, and appends stop. The disk fault is injected at the ``os.fsync`` call for the
session file alone (an I/O error on fsync cannot be produced on this machine's filesystems); the store,
the file and the reload are real.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

import tui.session.store as store_module
from tui.session.errors import SessionWriteError
from tui.session.store import SessionStore
from tui.session.tree_view import TreeSelector


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


class FailingFsync:
    """``os.fsync`` that fails with EIO for ``path`` once armed (other files sync normally)."""

    def __init__(self, path: Path) -> None:
        self.path, self.armed, self.failures = path.resolve(), False, 0
        self._fsync = os.fsync

    def __call__(self, fd: int) -> None:
        if self.armed and Path(os.readlink(f"/proc/self/fd/{fd}")) == self.path:
            self.failures += 1
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        self._fsync(fd)


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, FailingFsync]:
    path = tmp_path / "s.jsonl"
    fsync = FailingFsync(path)
    monkeypatch.setattr(os, "fsync", fsync)
    return path, fsync


def reloaded(path: Path) -> list[str]:
    with SessionStore.open(path, read_only=True) as store:
        assert not store.problems
        return [e["message"]["content"][0]["text"] for e in store.entries]


def test_a_failed_batch_sync_removes_what_it_did_not_save(session, monkeypatch) -> None:
    path, fsync = session
    store = SessionStore.create(path, fsync="batch")
    store.append_message(user("saved"))
    store.sync()
    saved_bytes, saved_leaf = path.read_bytes(), store.leaf_id
    monkeypatch.setattr(store_module, "BATCH_FSYNC_SECONDS", 1e9)  # the next appends wait for sync()
    changes: list[int] = []
    store.on_change(lambda: changes.append(store.path_revision))
    returned = [store.append_message(user(f"pending {i}"))["id"] for i in range(3)]
    assert all(entry_id in store.tree.by_id for entry_id in returned)
    fsync.armed = True

    with pytest.raises(SessionWriteError, match="the last 3 entries may not be on disk"):
        store.sync()

    assert [e["message"]["content"][0]["text"] for e in store.entries] == ["saved"]
    assert store.leaf_id == saved_leaf and not any(i in store.tree.by_id for i in returned)
    assert changes  # the screen is told to redraw without them
    assert path.read_bytes() == saved_bytes
    with pytest.raises(SessionWriteError):
        store.append_message(user("after the failure"))
    store.close()  # does not raise, closes the file
    fsync.armed = False
    assert reloaded(path) == ["saved"]


def test_a_failed_periodic_fsync_during_an_append_cuts_back_the_batch(session, monkeypatch) -> None:
    path, fsync = session
    store = SessionStore.create(path, fsync="batch")
    store.append_message(user("saved"))
    store.sync()
    saved_bytes = path.read_bytes()
    monkeypatch.setattr(store_module, "BATCH_FSYNC_SECONDS", 1e9)
    store.append_message(user("pending 1"))
    store.append_message(user("pending 2"))
    monkeypatch.setattr(store_module, "BATCH_FSYNC_SECONDS", 0.0)  # this append's write fsyncs the batch
    fsync.armed = True

    with pytest.raises(SessionWriteError, match="the last 3 entries may not be on disk"):
        store.append_message(user("the one that syncs"))

    assert [e["message"]["content"][0]["text"] for e in store.entries] == ["saved"]
    assert path.read_bytes() == saved_bytes
    store.close()
    fsync.armed = False
    assert reloaded(path) == ["saved"]


def test_a_failed_fsync_in_always_mode_loses_only_that_entry(session) -> None:
    path, fsync = session
    store = SessionStore.create(path)
    store.append_message(user("first"))
    fsync.armed = True

    with pytest.raises(SessionWriteError, match="the last 1 entry may not be on disk"):
        store.append_message(user("second"))

    assert [e["message"]["content"][0]["text"] for e in store.entries] == ["first"]
    store.close()
    fsync.armed = False
    assert reloaded(path) == ["first"]


def test_an_index_held_before_a_failed_fsync_loses_the_removed_entries_too(session) -> None:
    """The tree pane's selector holds the store's tree index: after a failed fsync took entries out of
    the session it must not list them (Enter on one failed with 'Tree navigation failed')."""
    path, fsync = session
    store = SessionStore.create(path, fsync="batch")
    store.append_message(user("saved"))
    store.sync()
    held = TreeSelector(store.tree, store.leaf_id)  # what the tree pane holds
    lost = store.append_message(user("not yet on disk"))
    fsync.armed = True
    with pytest.raises(SessionWriteError):
        store.sync()
    assert lost["id"] not in store.tree.by_id
    held.refresh(store.leaf_id)  # what the screen does on the store's change
    assert [row.entry_id for row in held.rows] == [e["id"] for e in store.entries]
    store.close()
