"""Start-up work for the first frame (issue 13): what runs before it, and what is left for after it."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Collapsible

from tests.pages import wait_until
from tui.app import KompaktApp
from tui.launch import Launch
from widgets import gc_pause
from widgets.chat_pane import ChatPane


class Recording(KompaktApp):
    """Counts the cyclic collector's passes from the main screen's creation until the first frame."""

    def __init__(self, launch: Launch) -> None:
        super().__init__(launch, start_background=False)
        self.passes_before_frame: int | None = None
        self.gc_enabled_after_frame: bool | None = None
        self._passes = 0
        self._counting = False

    def get_default_screen(self) -> Any:
        self._counting = True  # the session, the chat and the layout are made from here on
        return super().get_default_screen()

    def count(self, phase: str, _info: dict[str, Any]) -> None:
        if phase == "start" and self._counting and self.passes_before_frame is None:
            self._passes += 1

    async def _after_first_frame(self) -> None:
        self.passes_before_frame = self._passes
        await super()._after_first_frame()
        self.gc_enabled_after_frame = gc.isenabled()


async def test_no_collector_pass_before_the_first_frame_and_it_is_back_after(tmp_path: Path) -> None:
    assert gc.isenabled()
    app = Recording(Launch("new", cwd=tmp_path))
    gc.callbacks.append(app.count)
    try:
        async with app.run_test() as pilot:
            await wait_until(pilot, lambda: app.gc_enabled_after_frame is not None, "the first frame")
            assert app.passes_before_frame == 0
            assert app.gc_enabled_after_frame is True
            assert gc_pause.streams_open() == 0
    finally:
        gc.callbacks.remove(app.count)
    assert gc.isenabled()


class ChatHost(App[None]):
    def compose(self) -> ComposeResult:
        yield ChatPane()


async def test_mounting_collapsed_blocks_restyles_none_of_them() -> None:
    """A collapsed tool call, thinking block or summary is styled once, as it mounts: Collapsible's own
    mount handler used to add ``-collapsed`` then and restyle the block's whole subtree again."""
    reply = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "why"},
            {"type": "text", "text": "reading"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}},
        ],
    }
    result = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [{"type": "text", "text": "x"}],
    }
    summary = {"role": "compactionSummary", "summary": "what came before", "tokensBefore": 900}
    app = ChatHost()
    restyled: list[object] = []
    async with app.run_test() as pilot:
        pane = app.query_one(ChatPane)
        update_styles = app.update_styles

        def counting(node: Any = None, **options: Any) -> None:
            if isinstance(node, Collapsible):
                restyled.append(node)
            update_styles(node, **options)

        app.update_styles = counting  # type: ignore[method-assign]
        await pane.load_messages([summary, {"role": "user", "content": "go"}, reply, result])
        blocks = await wait_until(pilot, lambda: list(pane.query(Collapsible)), "the blocks mounted")
        await wait_until(pilot, lambda: all(block.is_mounted for block in blocks), "the blocks mounted")
        assert {type(block).__name__ for block in blocks} >= {"ToolCallView", "ThinkingBlock", "Collapsible"}
        assert all(block.collapsed and block.has_class("-collapsed") for block in blocks)
        assert restyled == []
        blocks[0].collapsed = False  # expanding still works as before
        await wait_until(pilot, lambda: not blocks[0].has_class("-collapsed"), "the block expanded")
