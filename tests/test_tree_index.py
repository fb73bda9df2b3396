"""Tree index: roots and orphans as pi defines them, timestamp order, incremental updates, cycles."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.session.store import SessionStore
from tui.session.tree import TreeIndex


def entry(entry_id: str, parent: str | None, ts: str = "2030-01-01T00:00:00.000Z") -> dict:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": ts,
        "message": {"role": "user", "content": entry_id},
    }


def test_roots_include_self_parented_and_orphans() -> None:
    tree = TreeIndex([entry("a", None), entry("b", "b"), entry("c", "missing")])
    assert sorted(tree.roots) == ["a", "b", "c"]


def test_orphan_is_adopted_when_its_parent_arrives() -> None:
    tree = TreeIndex([entry("child", "late")])
    assert tree.roots == ["child"]
    tree.add(entry("late", None))
    assert tree.roots == ["late"] and tree.children["late"] == ["child"]


def test_children_sorted_by_timestamp_not_file_order() -> None:
    tree = TreeIndex(
        [
            entry("r", None),
            entry("new", "r", "2030-01-02T00:00:00.000Z"),
            entry("old", "r", "2030-01-01T00:00:00.000Z"),
        ]
    )
    assert tree.children["r"] == ["old", "new"]


def test_parent_cycle_does_not_hang() -> None:
    tree = TreeIndex([entry("c1", "c2"), entry("c2", "c1")])
    assert tree.roots  # something is still reachable
    reachable = set(tree.roots)
    for root in tree.roots:
        reachable.update(tree.descendants(root))
    assert reachable == {"c1", "c2"}
    assert tree.path_ids("c2")[-1] == "c2"


def test_a_repeated_id_is_placed_once_where_its_last_line_puts_it() -> None:
    # c1 again after the c1/c2 cycle: the damaged file once made descendants() walk forever.
    tree = TreeIndex([entry("c1", "c2"), entry("c2", "c1"), entry("c1", "c2")])
    walked = [i for root in tree.roots for i in (root, *tree.descendants(root))]
    assert sorted(walked) == ["c1", "c2"]
    tree = TreeIndex([entry("r", None), entry("a", "r"), entry("b", "r"), entry("a", "b")])
    assert (
        tree.children["r"] == ["b"] and tree.children["b"] == ["a"] and tree.path_ids("a") == ["r", "b", "a"]
    )


def test_paths_leaves_and_common_ancestor() -> None:
    tree = TreeIndex([entry("1", None), entry("2", "1"), entry("3", "2"), entry("4", "2"), entry("5", "4")])
    assert tree.path_ids("5") == ["1", "2", "4", "5"]
    assert tree.common_ancestor("3", "5") == "2"
    assert tree.common_ancestor("2", "5") == "2"
    assert sorted(tree.leaves()) == ["3", "5"] and tree.branch_points() == ["2"]
    assert list(tree.descendants("2")) == ["3", "4", "5"]


message_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("user"), message_text),
        st.tuples(st.just("label"), st.one_of(st.none(), message_text)),
        st.tuples(st.just("branch"), st.integers(0, 50)),
        st.tuples(st.just("reset"), st.none()),
        st.tuples(st.just("summary"), message_text),
        st.tuples(
            st.just("custom"),
            st.dictionaries(
                st.text(max_size=5),
                st.integers(-(2**53), 2**53)
                | st.floats(allow_nan=False, allow_infinity=False)
                | message_text,
                max_size=3,
            ),
        ),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_load_of_write_is_identity(tmp_path: Path, ops: list) -> None:
    path = tmp_path / "prop.jsonl"
    path.unlink(missing_ok=True)
    with SessionStore.create(path) as store:
        for kind, arg in ops:
            ids = [e["id"] for e in store.entries if e.get("type") != "custom"]
            if kind == "user":
                store.append_message({"role": "user", "content": arg, "timestamp": 0})
            elif kind == "label" and ids:
                store.append_label(ids[-1], arg)
            elif kind == "branch" and ids:
                store.branch(ids[arg % len(ids)])
            elif kind == "reset":
                store.reset_leaf()
            elif kind == "summary" and ids:
                store.branch_with_summary(ids[0], arg)
            elif kind == "custom":
                store.append_custom("test", arg)
        written = (
            store.header,
            list(store.entries),
            store.leaf_id,
            dict(store.tree.labels),
            {k: list(v) for k, v in store.tree.children.items()},
        )
        context = store.build_context().messages
    with SessionStore.open(path) as loaded:
        assert (
            loaded.header,
            loaded.entries,
            loaded.leaf_id,
            loaded.tree.labels,
            loaded.tree.children,
        ) == written
        assert loaded.build_context().messages == context
