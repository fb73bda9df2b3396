"""Snapshots of the chat pane with every message kind at 120×40 and 80×24, collapsed and expanded.

The host app (tests/snap_apps/chat_app.py) loads one fixed path: a compaction summary, a branch
summary, a user message with markup and ANSI (shown literally), an assistant reply with thinking, a
code fence and two tool calls (one failed), two bash executions, a custom message and a final reply.
"""

from __future__ import annotations

import pytest
from textual.widgets import Collapsible

from tests.pages import screen_settled
from tests.snap_apps.chat_app import ChatSnapApp


async def expand_all(pilot) -> None:
    for collapsible in pilot.app.query(Collapsible):
        collapsible.collapsed = False
    # Expanded Markdown mounts its blocks over a few refreshes; let the heights settle first.
    await pilot.wait_for_scheduled_animations()
    await screen_settled(pilot)
    pilot.app.query_one("ChatPane").scroll_end(animate=False, immediate=True)
    await screen_settled(pilot)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
@pytest.mark.parametrize("expanded", [False, True], ids=["collapsed", "expanded"])
def test_chat_snapshot(snap_compare, size: tuple[int, int], expanded: bool) -> None:
    assert snap_compare(ChatSnapApp(), terminal_size=size, run_before=expand_all if expanded else None)
