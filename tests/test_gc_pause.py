"""The collector is paused while a reply streams and always comes back, also for a stream left open."""

from __future__ import annotations

import gc

from textual.app import App, ComposeResult

from widgets import gc_pause
from widgets.chat_pane import ChatPane


class Host(App):
    def compose(self) -> ComposeResult:
        yield ChatPane()


async def test_streaming_pauses_gc_and_finish_resumes_it() -> None:
    assert gc.isenabled()
    app = Host()
    async with app.run_test() as pilot:
        pane = app.query_one(ChatPane)
        stream = pane.begin_assistant()
        await stream.append_text("hello")
        assert not gc.isenabled() and gc_pause.streams_open() == 1
        await stream.finish({"role": "assistant", "content": [{"type": "text", "text": "hello"}]})
        assert gc.isenabled() and gc_pause.streams_open() == 0

        dangling = pane.begin_assistant()  # never finished: an error upstream
        await dangling.append_text("x")
        second = pane.begin_assistant()
        assert gc_pause.streams_open() == 1 and not gc.isenabled()
        await second.finish({"role": "assistant", "content": []})
        assert gc.isenabled()
        left_open = pane.begin_assistant()
        await left_open.append_text("y")
        await pilot.pause()
    assert gc.isenabled() and gc_pause.streams_open() == 0  # unmounting the pane closed it
