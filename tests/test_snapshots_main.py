"""Snapshots of the real main screen on the demo session at 120×40 and 80×24.

Variants: the main screen as opened, the tree pane open, the expanded timeline, the settings screen (F5),
the "Summarize branch?" dialog (Enter on another entry in the tree pane) and the chat's history view at its
compaction dividers (folded, and the latest fold open: its messages dimmed). The host is
tests/snap_apps/main_app.py: fixed directories, no user settings, no key (the offline model), start-up
notifications cleared and cursors still.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.snap_apps.main_app import ENV, SNAP_DIR, main_snap_app, settle, still, wait_for
from tui.screens.dialogs import SummarizeBranchDialog
from tui.screens.settings_screen import SettingsScreen


async def opened(pilot: Any) -> None:
    screen = await settle(pilot)
    # The chat follows the end of the session once its widgets have settled.
    await pilot.wait_for_scheduled_animations()
    screen.chat.scroll_end(animate=False)
    await pilot.pause()


async def tree_pane(pilot: Any) -> None:
    screen = await settle(pilot)
    await pilot.press("f2")
    await wait_for(
        pilot, lambda: screen.tree_pane.view.selector is not None and screen.tree_pane.view.has_focus
    )
    await pilot.press("up", "up")
    await wait_for(pilot, lambda: screen.tree_pane.detail.entry_id == screen.tree_pane.view.selected_id)


async def timeline_expanded(pilot: Any) -> None:
    screen = await settle(pilot)
    await pilot.press("f4")
    await wait_for(pilot, lambda: screen.timeline.expanded)
    await pilot.pause()


async def settings_screen(pilot: Any) -> None:
    await settle(pilot)
    await pilot.press("f5")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SettingsScreen) and pilot.app.screen.ready)
    await pilot.pause()
    still(pilot.app)


async def history_view(pilot: Any) -> None:
    from tui.screenshot import show_history

    screen = await settle(pilot)
    await show_history(pilot, screen)  # the README's history-view screenshot, at this size
    still(pilot.app)
    await pilot.pause()


async def history_fold_open(pilot: Any) -> None:
    from tui.screenshot import show_history

    screen = await settle(pilot)
    await show_history(pilot, screen, open_latest=True)
    still(pilot.app)
    await pilot.pause()


async def summary_dialog(pilot: Any) -> None:
    await tree_pane(pilot)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SummarizeBranchDialog))
    await pilot.pause()


VARIANTS: dict[str, Callable[[Any], Awaitable[None]]] = {
    "main": opened,
    "tree-pane": tree_pane,
    "timeline": timeline_expanded,
    "settings": settings_screen,
    "summary-dialog": summary_dialog,
    "history-view": history_view,
    "history-fold-open": history_fold_open,
}


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_main_screen_snapshot(snap_compare, monkeypatch, size: tuple[int, int], variant: str) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    app = main_snap_app()
    monkeypatch.chdir(SNAP_DIR)  # no project settings file from wherever the tests run
    assert snap_compare(app, terminal_size=size, run_before=VARIANTS[variant])
