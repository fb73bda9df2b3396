"""Watch mode: another process's appends, truncations and rotations reach a read-only follower."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from tui.session.follow import follow_session
from tui.session.store import RefreshResult, SessionStore


async def wait_until(predicate, timeout: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


def user(text: str) -> dict:
    return {"role": "user", "content": text, "timestamp": 0}


async def test_follower_sees_appends_truncation_and_rotation(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionStore.create(path)
    writer.append_message(user("one"))
    reader = SessionStore.open(path, read_only=True)
    updates: list[RefreshResult] = []
    stop = asyncio.Event()
    task = asyncio.create_task(follow_session(reader, updates.append, stop, idle_check_ms=200))
    try:
        writer.append_message(user("two"))
        await wait_until(lambda: len(reader) == 2)
        assert any(u.new_entries for u in updates)
        writer.append_message(user("three"))
        await wait_until(lambda: len(reader) == 3)
        assert reader.leaf_id == writer.leaf_id
        writer.close()

        # Rotation: a new file takes the old name (as logrotate or an editor would do).
        fresh = tmp_path / "fresh.jsonl"
        with SessionStore.create(fresh) as other:
            other.append_message(user("rotated"))
        os.replace(fresh, path)
        await wait_until(lambda: any(u.reloaded for u in updates) and len(reader) == 1)

        # Truncation to the header only.
        path.write_bytes(path.read_bytes().splitlines(keepends=True)[0])
        await wait_until(lambda: len(reader) == 0)
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
