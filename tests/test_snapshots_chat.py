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


async def test_an_expanded_block_makes_its_message_taller_in_the_chat():
    """The chat's stream layout kept a message's old height after one of its blocks expanded: the compaction
    summary stayed one row tall with its eleven rows of body drawn over the next message (most runs)."""
    from tests.pages import wait_until
    from widgets.lazy_collapsible import LazyCollapsible

    app = ChatSnapApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await expand_all(pilot)
        chat = app.query_one("ChatPane")
        for message in chat.children:
            for block in message.query(LazyCollapsible):
                contents = block.query_one(Collapsible.Contents)
                await wait_until(
                    pilot,
                    lambda message=message, contents=contents: message.size.height > contents.size.height > 0,
                    f"{type(message).__name__} as tall as its expanded {type(block).__name__}",
                )
