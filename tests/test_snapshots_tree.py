"""Snapshots of the session tree pane, the ``/tree`` screen and the "Summarize branch?" dialog.

The pane shows a generated 300-entry session (seed 5); the screen shows the hand-built sample tree
with a label, two branches, a compaction and literal markup. Sizes: 120×40 and 80×24.
"""

from __future__ import annotations

import pytest

from tests.snap_apps.summary_dialog import SummaryDialogApp
from tests.snap_apps.tree_pane import TreePaneApp
from tests.snap_apps.tree_screen import TreeScreenApp

SIZES = pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])


@SIZES
def test_tree_pane_snapshot(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(TreePaneApp(), terminal_size=size)


@SIZES
def test_tree_screen_snapshot(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(TreeScreenApp(), terminal_size=size)


@SIZES
def test_summary_dialog_snapshot(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(SummaryDialogApp(), terminal_size=size)


def test_summary_dialog_editor_snapshot(snap_compare) -> None:
    async def open_editor(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.pause()
        await pilot.press("down", "down", "enter", *"keep the API notes")
        await pilot.pause()

    assert snap_compare(SummaryDialogApp(), run_before=open_editor, terminal_size=(80, 24))
