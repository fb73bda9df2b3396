"""Chat pane: its far-jump window and backfill against work that runs at the same time on the event loop
(the timeline's point job, the agent's and the follow's workers and the backfill worker are separate
tasks that interleave at their awaits). Each test checks the pane's own invariant: the mounted message
widgets are exactly the children after the top bar, and they are the window's ``items[first:]``."""

from __future__ import annotations

import asyncio

from tests import factories as f
from tests.pages import screen_settled
from tests.test_tui_chat import ChatHost, long_path
from widgets.chat_messages import ChatMessage
from widgets.chat_pane import ChatPane


def _check(pane: ChatPane) -> None:
    mounted = pane.message_widgets
    children = [w for w in pane.children if isinstance(w, ChatMessage)]
    orphans = [w.entry_id for w in children if w not in mounted]
    assert not orphans, f"{len(orphans)} widgets shown that the pane does not know: {orphans[:3]}"
    assert children == mounted, "the widgets are not in the pane's order"
    assert len(mounted) == len(pane._items) - pane.first_loaded, "mounted != items[first:]"


async def _long_chat(pilot, app: ChatHost) -> list[dict]:
    """200 turns loaded (the newest mounted) and drawn."""
    path = long_path(200)
    await app.pane.load_messages(path)
    await screen_settled(pilot)
    return path


async def test_a_far_jump_during_a_backfill_keeps_the_window_consistent() -> None:
    """The backfill set the pane's first index after its mount from the value before it (a far jump in
    between left _first=361 with 31 items)."""
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        path = await _long_chat(pilot, app)
        pane = app.pane
        backfill = asyncio.create_task(pane.load_earlier())
        await asyncio.sleep(0)
        jumped = await pane.scroll_to_entry(path[10]["id"])  # the timeline points far back
        await backfill
        await screen_settled(pilot)
        _check(pane)
        assert jumped, "the jump said the entry cannot be shown"


async def test_an_append_during_a_far_jump_is_not_lost() -> None:
    """The jump copied the items before it waited for the old widgets' removal: an entry appended
    meanwhile disappeared from the items and its widget stayed as an orphan."""
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        path = await _long_chat(pilot, app)
        pane = app.pane
        jump = asyncio.create_task(pane.scroll_to_entry(path[10]["id"]))  # the timeline-point job
        await asyncio.sleep(0)  # the jump waits for the old widgets' removal
        new = f.chain([*path, f.user("a followed entry")])[-1]
        await pane.add_message(new)  # the follow or agent worker appends meanwhile
        await jump
        await screen_settled(pilot)
        assert pane.shows_entry(new["id"]), "the appended entry is gone from the chat's items"
        _check(pane)


async def test_end_during_a_backfill_in_a_far_jump_window_shows_the_latest() -> None:
    """The backfill's widgets (30 old messages) were what End left on screen, not the latest."""
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        path = await _long_chat(pilot, app)
        pane = app.pane
        assert await pane.scroll_to_entry(path[40]["id"])
        await screen_settled(pilot)
        backfill = asyncio.create_task(pane.load_earlier())  # scrolled to the window's top
        await asyncio.sleep(0)
        pane.action_scroll_end()  # End: back to the latest
        await backfill
        await screen_settled(pilot)
        await app.workers.wait_for_complete()
        await screen_settled(pilot)
        _check(pane)
        assert pane.message_widgets and pane.message_widgets[-1].entry_id == path[-1]["id"]
