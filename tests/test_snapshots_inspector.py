"""Snapshots of the compaction inspector on the demo session's latest compaction, at 120×40 and 80×24.

The host is tests/snap_apps/main_app.py (fixed directories, no settings, the offline model); ``/inspect``
opens the inspector, whose figures all come from the demo's stored compaction, so every frame is the same.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.snap_apps.main_app import ENV, SNAP_DIR, main_snap_app, settle, still, wait_for
from tui.screens.inspector import CompactionInspector
from widgets.streamed_text import StreamedText


async def inspector_open(pilot: Any) -> None:
    screen = await settle(pilot)
    screen.compaction_flow("inspect", None)
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, CompactionInspector))
    await pilot.pause()
    still(pilot.app)
    await pilot.pause()


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_inspector_snapshot(snap_compare, monkeypatch, size: tuple[int, int]) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    app = main_snap_app()
    monkeypatch.chdir(SNAP_DIR)
    assert snap_compare(app, terminal_size=size, run_before=inspector_open)


async def preview_streaming(pilot: Any) -> None:
    """A preview whose summary is still being written: the streamed notes and short summary so far."""
    await settle(pilot)
    view = CompactionInspector(None, preview=True)
    await pilot.app.push_screen(view)
    view.stream("summary", "## Goal\nQuarantine torn JSONL lines instead of crashing.\n\n## Progress\n- ")
    view.stream("summary", "The loader skips a torn last line and keeps its bytes")
    view.stream("short summary", "The loader now quarantines torn lines.")
    await wait_for(pilot, lambda: any("keeps its bytes" in w.text for w in view.query(StreamedText)))
    still(pilot.app)
    await pilot.pause()


def test_inspector_streaming_preview_snapshot(snap_compare, monkeypatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    app = main_snap_app()
    monkeypatch.chdir(SNAP_DIR)
    assert snap_compare(app, terminal_size=(120, 40), run_before=preview_streaming)
