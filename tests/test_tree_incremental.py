"""Filter and search keystrokes reuse earlier views (cached forests, a search narrowing the last one).

Property: after every keystroke, in any order, the selector's rows are exactly what a selector built from
scratch shows for the same filter, query, folds and leaf (:func:`render_tree` when nothing is folded),
including after entries are appended (a label, a new reply) between keystrokes.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.gen_session import generate
from tests import factories as f
from tui.session.store import SessionStore
from tui.session.tree import TreeIndex
from tui.session.tree_view import FILTER_CYCLE, Row, TreeSelector, render_tree

_FILES: dict[int, Path] = {}


def _tree(tmp: Path, seed: int) -> tuple[TreeIndex, str | None]:
    if seed not in _FILES:
        _FILES[seed] = generate(tmp / f"s{seed}.jsonl", entries=250, seed=seed, big_output_lines=2)
    with SessionStore.open(_FILES[seed], read_only=True) as store:
        return TreeIndex(store.tree.by_id.values()), store.leaf_id


def _shape(rows: list[Row]) -> list[tuple]:
    return [
        (r.entry_id, r.prefix, r.text, r.label, r.on_active_path, r.is_leaf, r.kind, r.foldable, r.folded)
        for r in rows
    ]


def _from_scratch(selector: TreeSelector) -> list[Row]:
    if not selector.folded:
        return render_tree(selector.tree, selector.leaf_id, selector.mode, selector.query)
    fresh = TreeSelector(selector.tree, selector.leaf_id, mode=selector.mode, query=selector.query)
    fresh.folded = set(selector.folded)
    fresh._layout()
    return fresh.rows


KEYS = st.one_of(
    st.sampled_from("trebaskcolmuip e"),  # letters of the generator's words, and a space
    st.sampled_from(["<bs>", "<esc>", "<fold>", "<unfold>", "<down>", "<append>", "<label>", "<tool>"]),
    st.sampled_from([f"<filter:{m}>" for m in FILTER_CYCLE]),
)


def _press(selector: TreeSelector, key: str, step: int) -> None:
    tree = selector.tree
    if len(key) == 1:
        selector.type_text(key)
    elif key == "<bs>":
        selector.backspace()
    elif key == "<esc>":
        selector.escape()
    elif key == "<fold>":
        selector.fold_or_up()
    elif key == "<unfold>":
        selector.unfold_or_down()
    elif key == "<down>":
        selector.move(7)
    elif key.startswith("<filter:"):
        selector.toggle_filter(key[len("<filter:") : -1])  # type: ignore[arg-type]
    else:  # the session grows between keystrokes, as while an agent runs
        target = selector.selected_id or selector.leaf_id
        if key == "<label>" and target is not None:
            entry = f.label(target, f"tree label {step}")
        elif key == "<tool>":  # a call and its result: the result's row names the call
            call = f.assistant(tool_calls=[f.tool_call("read", {"path": f"tree/{step}.py"}, f"call-{step}")])
            call |= {"id": f"call-entry-{step}", "parentId": selector.leaf_id}
            call["timestamp"] = f"2030-01-01T00:00:{step % 60:02d}.000Z"
            tree.add(call)
            entry = f.tool_result(f"call-{step}", "read", "the tree")
            entry["parentId"] = call["id"]
        else:
            entry = f.assistant(f"the tree retry {step}")
            entry["parentId"] = selector.leaf_id
        entry["id"] = f"added-{step}"
        entry["timestamp"] = f"2030-01-01T00:00:{step % 60:02d}.000Z"
        tree.add(entry)
        selector.refresh(selector.leaf_id if key == "<label>" else entry["id"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(1, 3), keys=st.lists(KEYS, min_size=1, max_size=25), deferred=st.booleans())
def test_rows_equal_a_render_from_scratch_after_every_keystroke(tmp_path, seed, keys, deferred) -> None:
    """Also deferred, as a big tree's pane runs it: each change only marks the view stale, then the
    worker's build() is shown."""
    tree, leaf = _tree(tmp_path, seed)
    selector = TreeSelector(tree, leaf, deferred=deferred)
    if deferred:
        assert not selector.rows and selector.stale and selector.show(selector.build())
    for step, key in enumerate(keys):
        _press(selector, key, step)
        if selector.stale:
            assert selector.show(selector.build())
        expected = _from_scratch(selector)
        assert _shape(selector.rows) == _shape(expected), (step, key, selector.mode, selector.query)
        assert selector.selected_id in ({r.entry_id for r in expected} if expected else {None})


def test_a_longer_search_walks_only_what_the_last_keystroke_showed(tmp_path) -> None:
    tree, leaf = _tree(tmp_path, 1)
    selector = TreeSelector(tree, leaf)
    visits: list[str] = []
    searchable = selector._cache.searchable

    def counting(entry_id: str) -> str:
        visits.append(entry_id)
        return searchable(entry_id)

    selector._cache.searchable = counting  # type: ignore[method-assign]
    selector.type_text("tre")
    shown = set(selector.forest.parent)
    visits.clear()
    selector.type_text("e")
    assert set(visits) <= shown and len(visits) < len(tree)  # not the whole tree again
    assert _shape(selector.rows) == _shape(render_tree(tree, leaf, "default", "tree"))
    before = selector.rows
    selector.backspace()
    visits.clear()
    selector.type_text("e")  # "tree" again: the view built two keystrokes ago, not rebuilt
    assert selector.rows is before and visits == []


def test_a_label_appended_after_a_search_is_found_by_the_same_search(tmp_path) -> None:
    """Searchable texts are kept across appends, except the labelled entry's: its label is searched too."""
    tree, leaf = _tree(tmp_path, 1)
    selector = TreeSelector(tree, leaf)
    selector.type_text("zebra")  # every entry's searchable text is made; none matches
    assert selector.rows == []
    target = next(r.entry_id for r in render_tree(tree, leaf) if r.kind == "user")
    label = f.label(target, "zebra crossing")
    label |= {"id": "added-label", "parentId": leaf, "timestamp": "2030-01-01T00:00:00.000Z"}
    tree.add(label)
    selector.refresh()
    assert [r.entry_id for r in selector.rows] == [target]
    assert _shape(selector.rows) == _shape(render_tree(tree, leaf, "default", "zebra"))


def test_views_kept_are_bounded_by_their_rows_beyond_the_newest_two(tmp_path, monkeypatch) -> None:
    """A 100k-entry tree's views are tens of MB each: a filter toggled back is kept, not eight of them."""
    import tui.session.tree_view as tree_view

    tree, leaf = _tree(tmp_path, 1)
    selector = TreeSelector(tree, leaf)
    monkeypatch.setattr(tree_view, "_ROWS_KEPT", len(selector.rows) + 1)
    for mode in FILTER_CYCLE[1:]:
        selector.set_filter(mode)
    assert len(selector._views) == 2  # the newest two, though together over the budget
    selector.set_filter("labeled-only")  # the one before: still kept
    assert selector.builds == len(FILTER_CYCLE)
    assert _shape(selector.rows) == _shape(render_tree(tree, leaf, "labeled-only"))


def test_a_repeated_id_added_later_shows_as_a_fresh_selector_shows_it() -> None:
    """A followed file repeats an id with other content (the last line wins): the size stays the same,
    and a selector refreshed after it used to keep the old row."""
    entries = f.chain([f.user("first question"), f.assistant("first answer"), f.user("second question")])
    tree = TreeIndex(entries)
    leaf = entries[-1]["id"]
    selector = TreeSelector(tree, leaf)
    assert selector.rows[-1].text.endswith("second question")
    tree.add({**entries[-1], "message": {**entries[-1]["message"], "content": "REPLACED"}})
    selector.refresh()
    assert [r.text for r in selector.rows] == [r.text for r in render_tree(tree, leaf)]
    assert selector.rows[-1].text.endswith("REPLACED")
