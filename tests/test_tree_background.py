"""A big tree builds its rows on a worker thread: typing and filters stay on the event loop, the latest wins.

``SessionTreeView.background_from`` is lowered so that a generated session of a few thousand entries takes
the path a 100k-entry one takes. To catch a build in the middle, a test holds the selector's views lock,
which every build takes once it has read the tree: the worker waits there, as a slow 100k build would,
while keys arrive. After every change the rows are compared with a selector built from scratch for the
final filter and query (:func:`render_tree`).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest
from textual import events

from bench.gen_session import generate
from tests.pages import HANG_GUARD_S, until, wait_until
from tests.test_tui_tree import TreeHost, lines
from tui.session.store import SessionStore
from tui.session.tree import TreeIndex
from tui.session.tree_view import BuiltView, TreeSelector, render_tree
from widgets.session_tree import BUSY_TAG, BUSY_TEXT, LOADING_FOOTER, LOADING_TEXT, SessionTreeView
from widgets.session_tree_pane import SessionTreePane

SIZE = (120, 40)
_FILES: dict[str, Path] = {}


@pytest.fixture
def big(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> tuple[TreeIndex, str]:
    """A 3,000-entry session that the view treats as a big one."""
    monkeypatch.setattr(SessionTreeView, "background_from", 1)
    if "big" not in _FILES:
        folder = tmp_path_factory.mktemp("big")
        _FILES["big"] = generate(folder / "big.jsonl", entries=3_000, big_output_lines=2)
    with SessionStore.open(_FILES["big"], read_only=True) as store:
        assert store.leaf_id is not None
        return TreeIndex(store.tree.by_id.values()), store.leaf_id


def _ids(selector: TreeSelector) -> list[str]:
    return [row.entry_id for row in selector.rows]


def _expected(selector: TreeSelector) -> list[str]:
    return [
        row.entry_id for row in render_tree(selector.tree, selector.leaf_id, selector.mode, selector.query)
    ]


@contextmanager
def _builds_held(selector: TreeSelector) -> Iterator[None]:
    """Builds wait (on the views lock) until the block ends."""
    with selector._views_lock:
        yield


@asynccontextmanager
async def _build_held_after(pilot, view: SessionTreeView, *keys: str) -> AsyncIterator[None]:
    """Press ``keys``; the build they start waits until the block ends, as a 100k-entry build takes a while."""
    assert view.selector is not None
    with _builds_held(view.selector):
        await pilot.press(*keys)
        await wait_until(pilot, lambda: view._building, f"the build after {keys}")
        yield


def _footer(app: TreeHost) -> str:
    return str(app.query_one("#tree-footer").content)


async def _settled(pilot, view: SessionTreeView) -> TreeSelector:
    await wait_until(
        pilot, lambda: view.selector is not None and not view.busy, "the rows of the last change"
    )
    assert view.selector is not None
    return view.selector


async def test_a_query_typed_in_one_burst_is_built_once_and_shows_its_rows(big) -> None:
    app = TreeHost(*big)
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        selector = await _settled(pilot, view)
        builds = selector.builds
        for character in "turn 4":  # all queued before the view handles the first
            view.post_message(events.Key(character, character))
        await wait_until(pilot, lambda: view.search_query == "turn 4", "the keys")
        selector = await _settled(pilot, view)
        assert selector.query == "turn 4"
        assert selector.builds == builds + 1  # one walk for the burst, not one per key
        assert _ids(selector) == _expected(selector) and selector.rows
        await until(pilot, lambda: not _footer(app).endswith(BUSY_TAG))
        assert not _footer(app).endswith(BUSY_TAG)


async def test_keys_typed_while_a_build_runs_end_with_the_rows_of_the_final_query(big) -> None:
    app = TreeHost(*big)
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        selector = await _settled(pilot, view)
        before = _ids(selector)
        async with _build_held_after(pilot, view, "t"):
            await pilot.press("u", "r", "n", "space", "1")  # typed while the build for "t" waits
            await until(pilot, lambda: _footer(app).endswith(BUSY_TAG))
            assert selector.query == "turn 1" and _footer(app).endswith(BUSY_TAG)
            assert _ids(selector) == before  # the last rows stay, with the indicator, until the build
            assert lines(view)  # never an empty pane meanwhile
        selector = await _settled(pilot, view)
        assert _ids(selector) == _expected(selector) and selector.rows
        await until(pilot, lambda: not _footer(app).endswith(BUSY_TAG))  # the pane hears of it next
        assert not _footer(app).endswith(BUSY_TAG)


async def test_a_filter_change_during_a_running_search_gives_the_rows_of_both(big) -> None:
    app = TreeHost(*big)
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        selector = await _settled(pilot, view)
        async with _build_held_after(pilot, view, *"turn"):
            await pilot.press("ctrl+u")  # user-only while the search builds
            await until(pilot, lambda: "[user]" in _footer(app))
            assert "[user]" in _footer(app) and _footer(app).endswith(BUSY_TAG)
        selector = await _settled(pilot, view)
        assert (selector.mode, selector.query) == ("user-only", "turn")
        assert _ids(selector) == _expected(selector) and selector.rows
        assert all(row.kind == "user" for row in selector.rows)


async def test_cursor_moves_while_a_build_runs_and_the_selection_survives_it(big) -> None:
    app = TreeHost(*big)
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        selector = await _settled(pilot, view)
        async with _build_held_after(pilot, view, "ctrl+t"):
            start = selector.selected_index
            await pilot.press("up", "up")  # on the rows shown, at once
            assert selector.selected_index == start - 2
            moved_to = selector.selected_id
        selector = await _settled(pilot, view)
        assert selector.mode == "no-tools" and _ids(selector) == _expected(selector)
        assert selector.selected_id is not None
        # The entry moved to stays selected when the no-tools view shows it (a user or text reply does).
        if moved_to in selector._index:
            assert selector.selected_id == moved_to


async def test_the_first_rows_of_a_big_tree_come_after_a_loading_line_never_an_empty_pane(big) -> None:
    tree, leaf = big
    app = TreeHost(TreeIndex([]), None)
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        pane = app.query_one("SessionTreePane")
        await _settled(pilot, view)
        pane.set_session(tree, leaf)  # what F2 runs; its build starts once this handler returns
        selector = view.selector
        assert selector is not None and view.busy and not selector.rows
        with _builds_held(selector):  # stands for the second a 100k-entry build takes
            await wait_until(pilot, lambda: view._building, "the first build")
            await until(pilot, lambda: _footer(app) == LOADING_FOOTER and lines(view))
            assert _footer(app) == LOADING_FOOTER
            assert lines(view) == [f"  {LOADING_TEXT}"]
        selector = await _settled(pilot, view)
        assert selector.selected_id == leaf and _ids(selector) == _expected(selector)
        await until(pilot, lambda: _footer(app) != LOADING_FOOTER)
        assert _footer(app).startswith(f"({selector.selected_index + 1}/{len(selector.rows)})")


async def test_a_search_with_no_rows_says_it_is_searching_while_the_next_key_builds(big) -> None:
    app = TreeHost(*big)
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        await _settled(pilot, view)
        await pilot.press(*"zzqx")
        selector = await _settled(pilot, view)
        assert not selector.rows and lines(view) == ["  No entries found"]
        async with _build_held_after(pilot, view, "backspace"):
            await until(pilot, lambda: lines(view) == [f"  {BUSY_TEXT}"])
            assert lines(view) == [f"  {BUSY_TEXT}"]
        selector = await _settled(pilot, view)
        assert selector.query == "zzq" and _ids(selector) == _expected(selector)


async def test_a_session_shown_while_a_build_runs_gets_its_rows_once_that_build_ends(big) -> None:
    """Review item (a): ``set_session`` while a build ran left the new tree on "Loading…" for good: the
    build that ended was the old selector's, and nothing started the new one's."""
    tree, leaf = big
    app = TreeHost(*big)
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        old = await _settled(pilot, view)
        async with _build_held_after(pilot, view, "ctrl+t"):
            app.query_one(SessionTreePane).set_session(tree, leaf)  # F2 after a session switch or a reload
            assert view.selector is not old and view.busy
        selector = await _settled(pilot, view)
        assert selector is not old and selector.has_view
        assert _ids(selector) == _expected(selector) and selector.rows


async def test_a_big_tree_appended_to_while_it_builds_shows_that_build_and_builds_again(big) -> None:
    """Review item (b): a build overtaken by an append (a newer tree version, the leaf moved) was thrown
    away, so a big tree appended to faster than it builds never showed a row. Now it is shown, and the
    next build (held here, as a slow one would be) brings the append."""
    tree, leaf = big
    app = TreeHost(TreeIndex([]), None)
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        pane = app.query_one(SessionTreePane)
        await _settled(pilot, view)
        pane.set_session(tree, leaf)
        selector = view.selector
        assert selector is not None
        first_built, appended, release = threading.Event(), threading.Event(), threading.Event()
        build, calls = selector.build, []

        def held_build() -> BuiltView:
            calls.append(None)
            if len(calls) == 1:
                built = build()  # the tree as it is now
                first_built.set()
                appended.wait(HANG_GUARD_S)  # the append lands before this build ends
                return built
            release.wait(HANG_GUARD_S)
            return build()

        selector.build = held_build  # type: ignore[method-assign]
        try:
            await wait_until(pilot, first_built.is_set, "the first build")
            new = {
                "type": "message",
                "id": "feedbeef",
                "parentId": leaf,
                "timestamp": "2026-12-01T00:00:00.000Z",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": "appended"}],
                    "timestamp": 0,
                },
            }
            tree.add(new)
            pane.refresh_tree("feedbeef")  # what the screen runs after an append
            appended.set()
            await wait_until(pilot, lambda: selector.has_view, "the rows of the overtaken build")
            assert view.busy and len(calls) == 2  # the next build, for the append, runs
            assert selector.rows and "feedbeef" not in selector._index
            assert lines(view) != [f"  {LOADING_TEXT}"]
        finally:
            release.set()
        selector = await _settled(pilot, view)
        assert "feedbeef" in selector._index and _ids(selector) == _expected(selector)
