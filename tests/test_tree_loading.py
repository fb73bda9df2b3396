"""F2 on a big session: the tree pane says it is loading until its rows arrive, never an empty ``(0/0)``."""

from __future__ import annotations

from bench.gen_session import generate
from tests.app_e2e_helpers import offline_app_on, ready, screen_text, wait_until
from tests.test_tui_uncompact import SIZE
from tui.screens.tree_actions import toggle_tree
from widgets.session_tree import LOADING_FOOTER, LOADING_TEXT


def _painted(screen) -> str:
    return "\n".join(strip.text for strip in screen._compositor.render_strips())


def _footer(screen) -> str:
    return str(screen.tree_pane.query_one("#tree-footer").content)


def big_session(tmp_path):
    """A generated 3,000-entry session recorded in ``tmp_path`` (the generator's default directory does not
    exist here, and the question about it would sit over the screen whose frames these tests read)."""
    return generate(tmp_path / "big.jsonl", entries=3_000, big_output_lines=5, cwd=str(tmp_path))


async def test_f2_shows_the_loading_line_until_the_rows_arrive(tmp_path, monkeypatch):
    path = big_session(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        pane, view = screen.tree_pane, screen.tree_pane.view
        assert not pane.display and view.selector is None
        painted: list[tuple[bool, str]] = []

        def look() -> None:
            # The first frame that shows the pane (a refresh already pending may come before it, on a
            # loaded machine): what the screen showed before the rows, or the rows if they came first.
            frame = _painted(screen)
            if "Session Tree" not in frame and view.selector is None:
                screen.call_after_refresh(look)
                return
            painted.append((view.selector is None, frame))

        # Queued before F2's own deferred build, so it runs after the same repaint, just before the build.
        screen.call_after_refresh(look)
        toggle_tree(screen)  # what F2 runs
        assert pane.display and view.selector is None
        assert _footer(screen) == LOADING_FOOTER != "(0/0)"
        await wait_until(pilot, lambda: painted, "the first frame")
        [(no_rows_yet, frame)] = painted
        assert no_rows_yet and LOADING_TEXT in frame and LOADING_FOOTER in frame and "(0/0)" not in frame
        await wait_until(pilot, lambda: view.selector is not None and view.selector.rows, "the rows")
        selector = view.selector
        assert selector.selected_id == screen.agent.store.leaf_id  # on the leaf, as before
        await wait_until(pilot, lambda: _footer(screen) == selector.footer(), "the footer")
        assert _footer(screen).startswith(f"({selector.selected_index + 1}/{len(selector.rows)})")
        assert view.has_focus
        await wait_until(pilot, lambda: LOADING_TEXT not in screen_text(app), "the rows on screen")
        await pilot.press("f2", "f2")  # hidden and shown again: the rows are kept, no second load
        assert view.selector is selector and _footer(screen) != LOADING_FOOTER


async def test_f3_shows_the_loading_line_before_the_rows_are_built(tmp_path, monkeypatch):
    """The full-screen /tree, like F2's pane: its first frame says it is loading, never an empty tree."""
    from tui.screens.tree_screen import TreeScreen
    from widgets.session_tree_pane import SessionTreePane

    path = big_session(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, path)
    built = SessionTreePane.set_session
    painted: list[str] = []

    def watched_build(pane, *args, **kwargs):  # what the full screen showed when its rows were built
        if isinstance(pane.screen, TreeScreen):
            painted.append(_painted(pane.screen))
        return built(pane, *args, **kwargs)

    monkeypatch.setattr(SessionTreePane, "set_session", watched_build)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, TreeScreen), "the full-screen tree")
        tree = app.screen
        await wait_until(pilot, lambda: tree.pane.view.selector is not None, "the rows")
        [frame] = painted
        assert LOADING_TEXT in frame and LOADING_FOOTER in frame and "(0/0)" not in frame
        assert tree.pane.view.selector.selected_id == screen.agent.store.leaf_id
        await wait_until(pilot, lambda: LOADING_TEXT not in _painted(tree), "the rows on screen")
        assert tree.pane.view.has_focus
