"""Snapshots of the settings screen at 120×40 and 80×24: as opened, and with an invalid edit in a focused row.

The host app (tests/snap_apps/settings_app.py) shows values from the defaults, a user file, a project file and an
environment variable. The edited variant focuses compaction.keepRecentTokens (its description fills the bottom
panel) and types a value that is not a number, so the error line and the status line show.
"""

from __future__ import annotations

import pytest
from textual.widgets import Input

from tests.settings_ui_helpers import settings_ready
from tests.snap_apps.settings_app import SettingsSnapApp


async def opened(pilot) -> None:
    await settings_ready(pilot, pilot.app)  # the rows after the first frame are there too


async def edit_keep_recent(pilot) -> None:
    await opened(pilot)
    screen = pilot.app.screen
    field = screen.query_one("#setting-compaction-keepRecentTokens", Input)
    field.cursor_blink = False
    field.focus()
    field.value = "-5"
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    # Focus and the new error line both scroll the list, in an order that varies; pin the final position.
    row = screen.query_one("#row-setting-compaction-keepRecentTokens")
    screen.query_one("#settings-form-rows").scroll_to_widget(row, animate=False, top=True)
    await pilot.pause()


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
@pytest.mark.parametrize("edited", [False, True], ids=["opened", "invalid-edit"])
def test_settings_snapshot(snap_compare, size: tuple[int, int], edited: bool) -> None:
    assert snap_compare(
        SettingsSnapApp(), terminal_size=size, run_before=edit_keep_recent if edited else opened
    )
