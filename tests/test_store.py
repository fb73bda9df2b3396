"""Session store: pi's append/branch/label semantics, durability, migration, locking and following."""

from __future__ import annotations

import json
import os
from pathlib import Path

import orjson
import pytest

from tui.session.entries import LEAF_CUSTOM_TYPE
from tui.session.errors import (
    EntryNotFoundError,
    ReadOnlySessionError,
    SessionFormatError,
    SessionLockedError,
)
from tui.session.store import SessionStore


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str) -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": "openai",
        "model": "gpt-4o-mini",
        "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
        "stopReason": "stop",
        "timestamp": 2,
    }


@pytest.fixture
def store(tmp_path: Path):
    s = SessionStore.create(tmp_path / "s.jsonl", cwd="/w")
    yield s
    s.close()


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_appends_chain_and_leaf_follows(store: SessionStore) -> None:
    a = store.append_message(user("hi"))
    b = store.append_thinking_level_change("high")
    c = store.append_message(assistant("yo"))
    assert [a["parentId"], b["parentId"], c["parentId"]] == [None, a["id"], b["id"]]
    assert store.leaf_id == c["id"]
    assert all(len(e["id"]) == 8 for e in (a, b, c))
    on_disk = lines(store.path)
    assert on_disk[0]["type"] == "session" and on_disk[0]["version"] == 3
    assert [e["id"] for e in on_disk[1:]] == [a["id"], b["id"], c["id"]]


def test_empty_session_has_no_branch_tree_or_leaf(store: SessionStore) -> None:
    assert store.get_branch() == [] and store.tree.roots == [] and store.leaf_id is None
    assert store.build_context().messages == []


def test_branch_creates_siblings_and_context_follows_leaf(store: SessionStore) -> None:
    m1 = store.append_message(user("1"))
    m2 = store.append_message(assistant("2"))
    store.append_message(user("3"))
    store.branch(m2["id"])
    m4 = store.append_message(user("4"))
    assert len(store.tree.children[m2["id"]]) == 2
    ctx = store.build_context()
    assert [m["content"][0]["text"] for m in ctx.messages] == ["1", "2", "4"]
    assert m4["parentId"] == m2["id"]
    assert store.tree.common_ancestor(m4["id"], store.tree.children[m2["id"]][0]) == m2["id"]
    assert store.tree.branch_points() == [m2["id"]]
    assert m1["id"] in store.tree.roots


def test_branch_to_missing_entry_raises(store: SessionStore) -> None:
    with pytest.raises(EntryNotFoundError, match="Entry nonexistent not found"):
        store.branch("nonexistent")
    with pytest.raises(EntryNotFoundError, match="Entry nonexistent not found"):
        store.branch_with_summary("nonexistent", "x")
    with pytest.raises(EntryNotFoundError, match="Entry non-existent not found"):
        store.append_label("non-existent", "x")


def test_branch_with_summary_attaches_under_target(store: SessionStore) -> None:
    m1 = store.append_message(user("1"))
    store.append_message(assistant("2"))
    summary = store.branch_with_summary(m1["id"], "what happened")
    assert store.leaf_id == summary["id"] and summary["parentId"] == m1["id"]
    assert summary["fromId"] == m1["id"]
    root_summary = store.branch_with_summary(None, "from root")
    assert root_summary["parentId"] is None and root_summary["fromId"] == "root"


def test_labels_last_wins_and_clear(store: SessionStore) -> None:
    m1 = store.append_message(user("1"))
    store.append_label(m1["id"], "first")
    store.append_label(m1["id"], "second")
    assert store.label_of(m1["id"]) == "second"
    store.append_label(m1["id"], None)
    assert store.label_of(m1["id"]) is None


def test_session_name_latest_wins_trimmed_and_empty_clears(store: SessionStore) -> None:
    # pi 0.73.1 (delta A.8): the latest session_info counts whatever its name; empty is a clear.
    store.append_session_info("one")
    store.append_session_info("  two  ")
    assert store.name == "two"
    assert store.entries[-1]["name"] == "two"  # trimmed on write, as appendSessionInfo does
    store.append_session_info("   ")
    assert store.name is None
    reopened_path = store.path
    store.close()
    with SessionStore.open(reopened_path, read_only=True) as again:
        assert again.name is None


def test_session_name_from_hand_written_entries_is_trimmed(tmp_path: Path) -> None:
    path = tmp_path / "n.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"},
        {
            "type": "session_info",
            "id": "a1",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "name": "first",
        },
        {
            "type": "session_info",
            "id": "a2",
            "parentId": "a1",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "name": "  padded\t",
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with SessionStore.open(path, read_only=True) as store:
        assert store.name == "padded"


def test_new_session_ids_are_uuid7(tmp_path: Path) -> None:
    import uuid

    from tui.session.entries import uuid7

    ids = [uuid7() for _ in range(50)]
    assert len(set(ids)) == 50
    for value in ids:
        parsed = uuid.UUID(value)
        assert parsed.version == 7 and parsed.variant == uuid.RFC_4122
    with SessionStore.create(tmp_path / "u.jsonl") as s:
        assert uuid.UUID(s.session_id).version == 7


def test_leaf_survives_reload_and_pi_appends_after_marker(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path) as s:
        m1 = s.append_message(user("1"))
        s.append_message(assistant("2"))
        s.branch(m1["id"])
    marker = lines(path)[-1]
    assert marker["type"] == "custom" and marker["customType"] == LEAF_CUSTOM_TYPE
    assert marker["parentId"] == m1["id"]
    with SessionStore.open(path) as s:
        assert s.leaf_id == m1["id"]
        assert [m["content"][0]["text"] for m in s.build_context().messages] == ["1"]
    # pi takes the marker as its leaf and appends under it; kompakt hangs that entry under m1.
    with open(path, "ab") as handle:
        pi_entry = {
            "type": "message",
            "id": "abcdef01",
            "parentId": marker["id"],
            "timestamp": "2030-01-01T00:00:00.000Z",
            "message": user("from pi"),
        }
        handle.write(orjson.dumps(pi_entry) + b"\n")
    with SessionStore.open(path) as s:
        assert s.tree.parent_of("abcdef01") == m1["id"]
        assert "abcdef01" in s.tree.children[m1["id"]]
        assert marker["id"] not in s.tree.children
        texts = [m["content"][0]["text"] for m in s.build_context().messages]
        assert texts == ["1", "from pi"]


def test_reset_leaf_starts_new_root_and_survives_reload(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path) as s:
        s.append_message(user("1"))
        s.reset_leaf()
    with SessionStore.open(path) as s:
        assert s.leaf_id is None
        new_root = s.append_message(user("again"))
        assert new_root["parentId"] is None and len(s.tree.roots) == 2


def test_unknown_types_and_fields_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path) as s:
        s.append_message(user("1"))
    weird = {
        "type": "ttsr_injection",
        "id": "0000beef",
        "parentId": None,
        "timestamp": "2030-01-01T00:00:00Z",
        "injectedRules": ["a"],
        "futureField": {"x": [1, 2.5, None]},
    }
    with open(path, "ab") as handle:
        handle.write(orjson.dumps(weird) + b"\n")
    before = path.read_bytes()
    with SessionStore.open(path) as s:
        assert s.get("0000beef") == weird
        s.append_message(user("2"))
    after = path.read_bytes()
    assert after.startswith(before)  # nothing rewritten, only appended


@pytest.mark.parametrize("content", [b"", b"\n\n"])
def test_empty_file_gets_a_header(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "e.jsonl"
    path.write_bytes(content)
    with SessionStore.open(path) as s:
        session_id = s.session_id
    with SessionStore.open(path) as s:
        assert s.session_id == session_id and len(s) == 0


@pytest.mark.parametrize("content", [b"not json\n", b'{"type":"message","id":"x"}\n', b"[1,2]\n"])
def test_file_without_header_is_a_format_error_and_untouched(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(SessionFormatError, match=r"bad.jsonl:1: not a pi session file"):
        SessionStore.open(path)
    assert path.read_bytes() == content


def test_missing_file_and_directory_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(SessionFormatError, match="no such session file"):
        SessionStore.open(tmp_path / "nope.jsonl")
    with pytest.raises(SessionFormatError, match="is a directory"):
        SessionStore.open(tmp_path)


def test_corrupt_middle_line_is_skipped_reported_and_file_kept(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path) as s:
        s.append_message(user("1"))
        s.append_message(assistant("2"))
    data = path.read_bytes().split(b"\n")
    data.insert(2, b'{"type": "message", broken')
    path.write_bytes(b"\n".join(data))
    original = path.read_bytes()
    with SessionStore.open(path) as s:
        assert len(s) == 2
        assert len(s.problems) == 1 and s.problems[0].line == 3
        assert "invalid JSON" in s.problems[0].reason
    assert path.read_bytes() == original


def test_torn_last_line_moves_to_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path) as s:
        s.append_message(user("1"))
    good = path.read_bytes()
    path.write_bytes(good + b'{"type":"message","id":"dead')
    with SessionStore.open(path) as s:
        assert len(s) == 1
        assert s.recovered_torn_line is not None and s.recovered_torn_line.offset == len(good)
        s.append_message(user("2"))
    corrupt = [json.loads(line) for line in (tmp_path / "s.jsonl.corrupt").read_text().splitlines()]
    assert corrupt[0]["offset"] == len(good) and corrupt[0]["data"] == '{"type":"message","id":"dead'
    with SessionStore.open(path) as s:
        assert [m["content"][0]["text"] for m in s.build_context().messages] == ["1", "2"]
        assert s.problems == []


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path) as s:
        s.append_message(user("1"))
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    with SessionStore.open(path) as s:
        assert len(s) == 1
        s.append_message(user("2"))
    with SessionStore.open(path) as s:
        assert len(s) == 2 and s.problems == []


def test_second_writer_is_refused_or_read_only(store: SessionStore) -> None:
    store.append_message(user("1"))
    with pytest.raises(SessionLockedError, match="another kompakt process"):
        SessionStore.open(store.path)
    reader = SessionStore.open(store.path, on_locked="read_only")
    assert reader.read_only and len(reader) == 1
    with pytest.raises(ReadOnlySessionError):
        reader.append_message(user("2"))
    reader.close()


def test_v1_migration_keeps_backup_and_rewrites(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    v1 = [
        {
            "type": "session",
            "id": "sess-1",
            "timestamp": "2025-01-01T00:00:00Z",
            "cwd": "/w",
            "provider": "anthropic",
            "modelId": "claude",
        },
        {"type": "message", "timestamp": "2025-01-01T00:00:01Z", "message": user("u1")},
        {"type": "message", "timestamp": "2025-01-01T00:00:02Z", "message": assistant("a1")},
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:03Z",
            "message": {"role": "hookMessage", "customType": "x", "content": "h"},
        },
        {
            "type": "compaction",
            "timestamp": "2025-01-01T00:00:04Z",
            "summary": "S",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 5,
        },
    ]
    original = b"".join(orjson.dumps(e) + b"\n" for e in v1)
    path.write_bytes(original)
    with SessionStore.open(path) as s:
        assert s.migrated_from == 1 and s.header["version"] == 3
        ids = [e["id"] for e in s.entries]
        assert all(len(i) == 8 for i in ids)
        assert s.entries[0]["parentId"] is None and s.entries[1]["parentId"] == ids[0]
        assert s.entries[2]["message"]["role"] == "custom"
        assert s.entries[3]["firstKeptEntryId"] == ids[1] and "firstKeptEntryIndex" not in s.entries[3]
        s.append_message(user("after"))
    assert (tmp_path / "old.jsonl.v1.bak").read_bytes() == original
    with SessionStore.open(path) as s:
        assert s.migrated_from is None and len(s) == 5
        assert s.entries[0]["id"] == ids[0]


def test_v2_migration_keeps_ids(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    v2 = [
        {"type": "session", "version": 2, "id": "s", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/"},
        {
            "type": "message",
            "id": "aaaaaaaa",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01Z",
            "message": user("u"),
        },
    ]
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in v2))
    with SessionStore.open(path) as s:
        assert s.entries[0]["id"] == "aaaaaaaa" and s.header["version"] == 3
    assert (tmp_path / "v2.jsonl.v2.bak").exists()


def test_read_only_migrates_in_memory_only(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    original = orjson.dumps({"type": "session", "id": "x", "timestamp": "t"}) + b"\n"
    path.write_bytes(original)
    with SessionStore.open(path, read_only=True) as s:
        assert s.header["version"] == 3
    assert path.read_bytes() == original and not (tmp_path / "old.jsonl.v1.bak").exists()


def test_refresh_follows_appends_truncation_and_rotation(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionStore.create(path)
    writer.append_message(user("1"))
    reader = SessionStore.open(path, read_only=True)
    assert len(reader) == 1
    writer.append_message(assistant("2"))
    result = reader.refresh()
    assert [e["message"]["content"][0]["text"] for e in result.new_entries] == ["2"]
    assert reader.leaf_id == writer.leaf_id
    # A partial line in flight is not consumed until it is complete.
    with open(path, "ab") as handle:
        handle.write(b'{"type":"message","id":"cafe0001","parentId":null,')
    assert reader.refresh().new_entries == []
    with open(path, "ab") as handle:
        handle.write(b'"timestamp":"2030-01-01T00:00:00Z","message":{"role":"user","content":"x"}}\n')
    assert [e["id"] for e in reader.refresh().new_entries] == ["cafe0001"]
    writer.close()
    # Rotation: the file is replaced by another one.
    rotated = tmp_path / "other.jsonl"
    with SessionStore.create(rotated) as other:
        other.append_message(user("rotated"))
    os.replace(rotated, path)
    result = reader.refresh()
    assert result.reloaded and len(reader) == 1
    # Truncation: the file shrinks.
    path.write_bytes(path.read_bytes().splitlines(keepends=True)[0])
    result = reader.refresh()
    assert result.reloaded and len(reader) == 0
    reader.close()


def test_batch_fsync_mode_writes_every_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path, fsync="batch") as s:
        for i in range(20):
            s.append_message(user(str(i)))
    with SessionStore.open(path) as s:
        assert len(s) == 20


def test_unrepresentable_entry_is_a_clear_error_and_nothing_is_written(store: SessionStore) -> None:
    from tui.session.entries import EntryError

    before = store.path.read_bytes()
    with pytest.raises(EntryError, match="not representable as JSON"):
        store.append_custom("x", {"big": 2**70})
    assert store.path.read_bytes() == before and len(store) == 0


def test_deferred_create_writes_nothing_until_the_first_append(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "new.jsonl"
    store = SessionStore.create(path, defer=True)
    assert not path.exists() and not store.exists_on_disk
    assert store.build_context().messages == [] and store.leaf_id is None
    store.append_message(user("first"))
    assert path.exists() and store.exists_on_disk
    store.close()
    with SessionStore.open(path) as reopened:
        assert reopened.session_id == store.session_id and len(reopened) == 1
    with pytest.raises(FileExistsError):
        SessionStore.create(path, defer=True)


def test_label_edit_stamps_the_label_with_the_current_time(store: SessionStore) -> None:
    from datetime import UTC, datetime

    from tui.session.entries import iso_to_ms

    m1 = store.append_message(user("1"))
    before = int(datetime.now(UTC).timestamp() * 1000) - 1
    entry = store.append_label(m1["id"], "mark")
    assert store.tree.label_time(m1["id"]) == entry["timestamp"]
    assert iso_to_ms(entry["timestamp"]) >= before
    store.append_label(m1["id"], None)
    assert store.tree.label_time(m1["id"]) is None


def test_a_reopened_store_builds_its_tree_on_first_use_and_gives_the_same_answers(tmp_path: Path) -> None:
    """Start-up leaves the tree index for after the first frame: the active path and the name come from
    the entries alone until then, equal to what the index says, and entries read from the file meanwhile
    are in the index exactly once when it is built."""
    path = tmp_path / "t.jsonl"
    with SessionStore.create(path, cwd="/w") as s:
        a = s.append_message(user("one"))
        b = s.append_message(assistant("two"))
        s.append_session_info("first name")
        s.branch(a["id"])
        s.append_message(user("other way"))
        s.append_session_info("second name")
        s.append_message(assistant("reply"))
        s.append_label(b["id"], "kept")
    with SessionStore.open(path) as writer, SessionStore.open(path, read_only=True) as lazy:
        writer.index_tree()
        assert not lazy.tree_built and writer.tree_built
        assert lazy.name == writer.name == "second name"
        assert [e["id"] for e in lazy.get_branch()] == [e["id"] for e in writer.get_branch()]
        assert [e["id"] for e in lazy.get_branch(b["id"])] == [a["id"], b["id"]]
        assert not lazy.tree_built
        added = writer.append_message(user("read before the index"))
        assert lazy.refresh().new_entries == [added]
        assert lazy.tree_built  # the refresh asked it whether the path grew
        assert lazy.leaf_id == added["id"]
        assert lazy.tree.by_id.keys() == writer.tree.by_id.keys()
        assert lazy.tree.children == writer.tree.children and lazy.tree.roots == writer.tree.roots
        assert len(lazy.tree) == len(writer.tree)
        assert lazy.tree.label(b["id"]) == "kept"


def test_a_prefetched_read_is_used_only_while_the_file_is_unchanged(tmp_path: Path) -> None:
    """The app reads the file it opens on a thread while Textual starts (tui.session.prefetch); the store
    takes those bytes only if the file is still the same after its lock, else it reads the file itself."""
    import os

    from tui.session.prefetch import Prefetch

    path = tmp_path / "p.jsonl"
    with SessionStore.create(path, cwd="/w") as s:
        s.append_message(user("one"))
        s.append_message(assistant("two"))
    with SessionStore.open(path, read_only=True) as plain:
        expected = ([e["id"] for e in plain.entries], plain.leaf_id, plain._offset, plain._lines)

    prefetch = Prefetch(path)
    with SessionStore.open(path, prefetch=prefetch) as taken:
        assert ([e["id"] for e in taken.entries], taken.leaf_id, taken._offset, taken._lines) == expected
    assert prefetch.take() is None  # taken once

    stale = Prefetch(path)
    stale._thread.join()
    with SessionStore.open(path) as writer:
        added = writer.append_message(user("written after the prefetch"))
    with SessionStore.open(path, prefetch=stale) as fresh:
        assert fresh.entries[-1]["id"] == added["id"] and fresh.leaf_id == added["id"]

    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    assert Prefetch(fifo).take() is None  # never blocks on a FIFO; the store reports it
    with pytest.raises(SessionFormatError):
        SessionStore.open(fifo, prefetch=Prefetch(fifo))
