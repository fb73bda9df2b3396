"""``fsync = "batch"`` keeps its promise in the app: an append made within half a second of the last fsync
is on disk half a second later, not only with the next append or on close (review: nothing but close
called ``SessionStore.sync``, so a reply appended just after the user's message stayed unsynced while the
user read it)."""

from __future__ import annotations

import os

from tests.app_e2e_helpers import offline_app_on, ready
from tests.pages import wait_until
from tui.session.store import SessionStore


def _user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


async def test_a_batched_append_reaches_the_disk_without_another_append(tmp_path, monkeypatch) -> None:
    with SessionStore.create(tmp_path / "s.jsonl") as store:
        store.append_message(_user("saved"))
    app = offline_app_on(tmp_path, monkeypatch, store.path)
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        await ready(pilot, app)
        opened = app.store
        opened.fsync_mode = "batch"
        opened.append_message(_user("one"))  # an fsync: the first in half a second
        opened.append_message(_user("two"))  # within half a second of it: batched
        assert opened._dirty, "the second append should have been batched"
        before = len(synced)
        await wait_until(pilot, lambda: not opened._dirty, "the batched append synced")
        assert len(synced) > before
