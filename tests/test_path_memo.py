"""The kept active path (TreeIndex.path_snapshot) and its context (SessionStore.branch_context).

Each test changes the session one way (an append, a leaf move, a compaction, a prune, a reload, a rewrite
of the index) and checks the kept answers against a fresh walk and a fresh build: a stale memo fails.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import tui.session.store as store_module
from tui.compaction.context_size import pruned_after
from tui.compaction.engine import prunable
from tui.session.context import context_from_path, path_prunes
from tui.session.entries import PRUNE_CUSTOM_TYPE, Entry
from tui.session.store import SessionStore
from tui.session.tree import TreeIndex, path_ids


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def tool_result(text: str) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "bash",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 1,
    }


def fresh_path(store: SessionStore) -> list[Entry]:
    by_id = store.tree.by_id
    return [by_id[i] for i in path_ids(by_id, store.leaf_id)]


def assert_fresh(store: SessionStore) -> None:
    """What the store keeps is what a walk and a build from nothing give now."""
    path = fresh_path(store)
    assert store.get_branch() == path
    assert store.tree.path_ids(store.leaf_id) == [e["id"] for e in path]
    assert store.branch_context() == context_from_path(path)
    assert store.build_context() == context_from_path(path)
    assert store.branch_prunes() == path_prunes(path)
    # What the compaction check computes from the kept prunes is what it computes from the path.
    assert prunable(path, store.branch_prunes().outputs) == prunable(path)
    context = context_from_path(path)
    for entry_id in context.entry_ids:
        kept = pruned_after(path, context, entry_id, store.branch_prunes().indices)
        assert kept == pruned_after(path, context, entry_id)


@pytest.fixture
def store(tmp_path: Path):
    s = SessionStore.create(tmp_path / "s.jsonl", cwd="/w")
    for i in range(4):
        s.append_message(user(f"m{i}"))
    yield s
    s.close()


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the contexts the store builds from a whole path."""
    count: list[int] = []
    real = store_module.context_and_pruned

    def counted(path):  # type: ignore[no-untyped-def]
        count.append(len(path))
        return real(path)

    monkeypatch.setattr(store_module, "context_and_pruned", counted)
    return count


def test_the_same_path_is_built_once_and_an_append_grows_it(store: SessionStore, builds: list[int]) -> None:
    first = store.branch_context()
    assert store.branch_context() == first and store.build_context() == first
    assert builds == [4]
    entry = store.append_message(user("new"))
    assert_fresh(store)
    assert store.branch_context().entry_ids[-1] == entry["id"]
    assert builds == [4]  # grown by the new entry, not built again


def test_entries_appended_between_two_looks_grow_the_kept_context(
    store: SessionStore, builds: list[int]
) -> None:
    """A compaction writes a prune entry and then itself, with no look at the context in between."""
    result = store.append_message(tool_result("z" * 4000))
    store.append_message(user("next"))
    store.branch_context()
    store.append_custom(PRUNE_CUSTOM_TYPE, {"entries": {result["id"]: 1000}, "tokensSaved": 990})
    store.append_compaction("summary", result["id"], 900)
    assert store.branch_context().messages[1]["content"][0]["text"] == "[Output truncated - 1000 tokens]"
    assert builds == [6]
    assert_fresh(store)
    for i in range(store_module.MEMO_GROWTH + 1):  # more than the kept context grows by: built afresh
        store.append_message(user(f"burst {i}"))
    store.branch_context()
    assert builds == [6, 8 + store_module.MEMO_GROWTH + 1]
    assert_fresh(store)


def test_each_call_gets_its_own_copy(store: SessionStore) -> None:
    store.branch_context().messages.clear()
    store.get_branch().clear()
    assert_fresh(store)
    assert len(store.branch_context().messages) == 4


def test_a_leaf_move_and_a_branch_are_seen(store: SessionStore) -> None:
    store.branch_context()
    ids = [e["id"] for e in store.get_branch()]
    store.branch(ids[1])
    assert_fresh(store)
    assert store.branch_context().entry_ids == ids[:2]
    store.append_message(user("other branch"))
    assert_fresh(store)
    store.leaf_id = ids[3]  # back to the first branch without writing
    assert_fresh(store)
    assert store.branch_context().entry_ids == ids
    store.reset_leaf()
    assert_fresh(store)
    assert store.branch_context().messages == []


def test_a_compaction_replaces_the_kept_context(store: SessionStore, builds: list[int]) -> None:
    store.branch_context()
    ids = [e["id"] for e in store.get_branch()]
    compaction = store.append_compaction("summary", ids[2], 100)
    context = store.branch_context()
    assert builds == [4]  # the kept messages come from the kept context, not from a walk of the path
    assert context.entry_ids == [compaction["id"], ids[2], ids[3]]
    assert context.messages[0]["role"] == "compactionSummary"
    assert_fresh(store)
    store.append_message(user("after"))
    assert_fresh(store)
    # A second compaction keeps part of what the first kept, and again needs no walk.
    builds.clear()
    again = store.append_compaction("summary 2", ids[3], 50)
    assert store.branch_context().entry_ids[:2] == [again["id"], ids[3]]
    assert builds == []
    assert_fresh(store)


def _compact_at(store: SessionStore, first_kept: str) -> None:
    """Compact with ``first_kept`` from the kept context, check it against a fresh build, and go back."""
    leaf = store.leaf_id
    store.branch_context()
    store.append_compaction("summary", first_kept, 10)
    assert_fresh(store)
    store.leaf_id = leaf


def test_a_compaction_the_kept_context_cannot_answer_is_built_afresh(
    store: SessionStore, builds: list[int]
) -> None:
    """Each first kept entry the kept context does not hold as a message: a build gives the answer."""
    ids = [e["id"] for e in store.get_branch()]
    model = store.append_model_change("openai", "gpt-4o")  # an entry that adds no message
    store.append_message(user("after the model change"))
    first = store.append_compaction("first", ids[2], 100)
    store.append_message(user("after the first compaction"))
    reset = store.append({"type": "reset_boundary"})
    store.append_message(user("after the reset"))
    for first_kept in (model["id"], ids[0], first["id"], reset["id"], "not-on-the-path", ids[3]):
        builds.clear()
        _compact_at(store, first_kept)
        assert builds, first_kept  # built from the path, not taken from the kept context
    # After a compaction that a reset boundary follows, a kept message after the reset needs no walk.
    after_reset = store.get_branch()[-1]["id"]
    store.branch_context()
    builds.clear()
    _compact_at(store, after_reset)
    assert builds == []


def test_a_prune_entry_and_settings_entries_are_applied(store: SessionStore, builds: list[int]) -> None:
    result = store.append_message(tool_result("x" * 4000))
    store.append_message(user("next"))
    before = store.branch_context()
    assert builds == [6]
    assert before.messages[4]["content"][0]["text"] == "x" * 4000
    assert store.branch_prunes().indices == ()
    store.append_custom(PRUNE_CUSTOM_TYPE, {"entries": {result["id"]: 1000}, "tokensSaved": 990})
    assert_fresh(store)
    assert store.branch_prunes().indices == (6,)
    assert store.branch_prunes().outputs == {result["id"]: 1000}
    assert store.branch_context().messages[4]["content"][0]["text"] == "[Output truncated - 1000 tokens]"
    store.append_thinking_level_change("high")
    assert_fresh(store)
    assert store.branch_context().thinking_level == "high"
    store.append_model_change("openai", "gpt-4o")
    assert_fresh(store)
    assert store.branch_context().model == {"provider": "openai", "modelId": "gpt-4o"}
    # A compaction that keeps the pruned output keeps it pruned, and the settings before it.
    store.append_compaction("summary", result["id"], 500)
    assert_fresh(store)
    kept = store.branch_context()
    assert kept.messages[1]["content"][0]["text"] == "[Output truncated - 1000 tokens]"
    assert kept.thinking_level == "high" and kept.model == {"provider": "openai", "modelId": "gpt-4o"}
    # A second prune of the same output (a newer count) and a reset boundary: still no walk of the path.
    store.append_custom(PRUNE_CUSTOM_TYPE, {"entries": {result["id"]: 900}, "tokensSaved": 10})
    assert_fresh(store)
    assert store.branch_context().messages[1]["content"][0]["text"] == "[Output truncated - 900 tokens]"
    store.append({"type": "reset_boundary"})
    assert_fresh(store)
    assert store.branch_context().messages == []
    assert builds == [6]  # everything after the first look grew the kept context


def test_a_reload_after_the_file_is_replaced_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionStore.create(path, cwd="/w")
    writer.append_message(user("one"))
    writer.close()
    reader = SessionStore.open(path, read_only=True)
    assert [m["content"][0]["text"] for m in reader.branch_context().messages] == ["one"]
    replacement = tmp_path / "other.jsonl"
    other = SessionStore.create(replacement, cwd="/w")
    other.append_message(user("two"))
    other.append_message(user("three"))
    other.close()
    replacement.replace(path)
    assert reader.refresh().reloaded
    assert_fresh(reader)
    assert [m["content"][0]["text"] for m in reader.branch_context().messages] == ["two", "three"]
    # And lines another writer appends to the followed file are picked up.
    writer = SessionStore.open(path)
    writer.append_message(user("four"))
    writer.close()
    assert reader.refresh().new_entries
    assert_fresh(reader)
    assert reader.branch_context().messages[-1]["content"][0]["text"] == "four"
    reader.close()


def test_a_reload_of_a_file_with_the_same_ids_is_seen(tmp_path: Path) -> None:
    """Another program rewrote the file with the same entries but other text: the leaf id is the same."""
    path = tmp_path / "s.jsonl"
    writer = SessionStore.create(path, cwd="/w")
    writer.append_message(user("before"))
    writer.close()
    reader = SessionStore.open(path, read_only=True)
    leaf = reader.leaf_id
    assert reader.branch_context().messages[-1]["content"][0]["text"] == "before"
    rewritten = tmp_path / "rewritten.jsonl"
    rewritten.write_bytes(path.read_bytes().replace(b'"before"', b'"after!"'))
    rewritten.replace(path)
    assert reader.refresh().reloaded
    assert reader.leaf_id == leaf
    assert_fresh(reader)
    assert reader.branch_context().messages[-1]["content"][0]["text"] == "after!"
    reader.close()


def test_the_index_being_rebuilt_drops_the_kept_path(store: SessionStore) -> None:
    """A failed fsync takes entries out (TreeIndex.reset): the kept path must not outlive them."""
    store.branch_context()
    entries = list(store.entries)
    store.tree.reset(entries[:2])
    store.leaf_id = entries[1]["id"]
    assert_fresh(store)
    assert len(store.branch_context().messages) == 2


def _entry(entry_id: str, parent: str | None, text: str = "m") -> Entry:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": user(text),
    }


def test_the_kept_path_follows_a_missing_parent_that_turns_up_and_a_replaced_entry() -> None:
    tree = TreeIndex([_entry("b", "a"), _entry("c", "b")])
    assert tree.path_ids("c") == ["b", "c"]  # "a" is missing: the walk stops at "b"
    tree.add(_entry("a", None))
    assert tree.path_ids("c") == ["a", "b", "c"]
    replacement = _entry("b", "a", "replaced")
    tree.add(replacement)  # a repeated id in a damaged file: the last line wins
    assert tree.path("c")[1] is replacement
    tree.add(_entry("d", "c"))
    assert tree.path_ids("d") == ["a", "b", "c", "d"]
    assert tree.path_ids("b") == ["a", "b"]


def test_a_replaced_leaf_is_not_served_from_the_kept_path() -> None:
    tree = TreeIndex([_entry("a", None), _entry("b", "a")])
    assert tree.path_ids("b") == ["a", "b"]
    replacement = _entry("b", "a", "replaced")
    tree.add(replacement)  # no children: nothing else walks the path meanwhile
    assert tree.path("b")[1] is replacement


def test_a_child_that_closes_a_cycle_is_not_grown_onto_the_path() -> None:
    # A damaged file whose two entries name each other as parents.
    tree = TreeIndex([_entry("a", "b"), _entry("b", "a")])
    assert tree.path_ids("b") == ["a", "b"]
    assert tree.path_ids("a") == path_ids(tree.by_id, "a") == ["b", "a"]
    tree.add(_entry("x", "b"))
    assert tree.path_ids("x") == path_ids(tree.by_id, "x")


def test_a_generated_session_gives_the_same_answers_kept_or_fresh(tmp_path: Path) -> None:
    from bench.gen_session import generate

    path = tmp_path / "gen.jsonl"
    generate(path, entries=300, seed=3, cwd="/w")
    store = SessionStore.open(path)
    assert_fresh(store)
    last = orjson.loads(path.read_bytes().splitlines()[-1])
    assert store.leaf_id in (last.get("id"), (last.get("data") or {}).get("leafId"))
    for entry in list(store.entries)[-40::7]:
        if entry["id"] in store.tree and not store.tree.is_marker(entry["id"]):
            store.branch(entry["id"])
            assert_fresh(store)
            store.append_message(user("branched"))
            assert_fresh(store)
    store.close()


def test_a_prune_after_the_last_usage_is_subtracted_with_the_kept_prunes(store: SessionStore) -> None:
    result = store.append_message(tool_result("y" * 8000))
    reply = store.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "provider": "openai",
            "model": "gpt-4o-mini",
            "usage": {"input": 3000, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3005},
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    path, context = store.get_branch(), store.branch_context()
    assert pruned_after(path, context, reply["id"], store.branch_prunes().indices) == 0
    store.append_custom(PRUNE_CUSTOM_TYPE, {"entries": {result["id"]: 2000}, "tokensSaved": 1990})
    assert_fresh(store)
    path, context = store.get_branch(), store.branch_context()
    saved = pruned_after(path, context, reply["id"], store.branch_prunes().indices)
    assert saved == pruned_after(path, context, reply["id"]) > 0


def test_the_compactions_token_count_uses_the_kept_context_only_for_the_active_path(
    store: SessionStore, builds: list[int]
) -> None:
    from tui.compaction.engine import _branch_tokens, _context_tokens

    path = store.get_branch()
    assert _branch_tokens(store, path) == _context_tokens(path)
    assert builds == [4]  # the store's context, kept for the next look
    store.append_message(user("x" * 400))  # the path that was read is no longer the active one
    assert _branch_tokens(store, path) == _context_tokens(path) < _context_tokens(store.get_branch())


def test_a_reader_thread_and_appends_on_the_loop_leave_the_kept_answers_right(store: SessionStore) -> None:
    import threading

    seen: list[list[str | None]] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.append(store.branch_context().entry_ids)
            store.tree.path(store.leaf_id)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(120):
            store.append_message(user(f"a{i}"))
            if i % 40 == 25:
                store.branch(store.get_branch()[-3]["id"])
    finally:
        done.set()
        reader.join(timeout=60)
    assert_fresh(store)
    assert seen
    for ids in seen:  # each answer was the context of a path the store had: its ids are on a path
        assert ids == [e["id"] for e in store.tree.path(ids[-1])] if ids else True


def test_compactions_on_a_generated_session_give_the_same_context_kept_or_fresh(tmp_path: Path) -> None:
    """A compaction appended at many leaves of a generated session, keeping from each entry on the path
    in turn (every kind of entry, before and after earlier compactions and prunes)."""
    from bench.gen_session import generate

    path = tmp_path / "gen.jsonl"
    generate(path, entries=400, seed=5, cwd="/w")
    store = SessionStore.open(path)
    leaves = [
        e["id"]
        for e in list(store.entries)[::37]
        if e["id"] in store.tree and not store.tree.is_marker(e["id"])
    ]
    checked = 0
    for leaf in leaves:
        store.leaf_id = leaf
        for entry in store.get_branch()[::3]:
            _compact_at(store, entry["id"])
            checked += 1
    assert checked > 100
    store.close()


def test_the_kept_path_grows_by_several_new_entries_without_a_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    import tui.session.tree as tree_module

    walks: list[str | None] = []
    real = tree_module.path_ids

    def counted(by_id, entry_id):  # type: ignore[no-untyped-def]
        walks.append(entry_id)
        return real(by_id, entry_id)

    monkeypatch.setattr(tree_module, "path_ids", counted)
    tree = TreeIndex([_entry("a", None), _entry("b", "a")])
    assert tree.path_ids("b") == ["a", "b"] and walks == ["b"]
    tree.add(_entry("c", "b"))
    tree.add(_entry("d", "c"))
    assert tree.path_ids("d") == ["a", "b", "c", "d"] and walks == ["b"]
    tree.add(_entry("x", "c"))  # a sibling of the kept leaf: not below it, walked
    assert tree.path_ids("x") == ["a", "b", "c", "x"] and walks == ["b", "x"]
    parent = "x"
    for i in range(tree_module.PATH_GROWTH + 1):  # further below than the kept path grows by: walked
        tree.add(_entry(f"n{i}", parent))
        parent = f"n{i}"
    assert tree.path_ids(parent) == real(tree.by_id, parent) and walks[-1] == parent


def test_new_entries_that_name_each_other_are_walked_not_grown() -> None:
    tree = TreeIndex([_entry("a", None)])
    assert tree.path_ids("a") == ["a"]
    tree.add(_entry("p", "q"))  # a damaged file: two new entries that are each other's parent
    tree.add(_entry("q", "p"))
    assert tree.path_ids("q") == path_ids(tree.by_id, "q") == ["p", "q"]
