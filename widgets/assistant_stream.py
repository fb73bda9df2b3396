"""The handle through which the agent loop streams one assistant reply into the chat pane.

The lead's async worker calls ``append_text`` / ``append_thinking`` for deltas, ``tool_call_started`` and
``tool_call_args`` while a tool call streams, and ``finish`` with the final message. Text goes through
Textual's ``MarkdownStream`` (which batches fragments that arrive faster than they render); every call
waits until the reply's widget is mounted, so the first delta may come straight after ``begin_assistant``.
Long text is split into sealed Markdown chunks on the way (see :mod:`widgets.chunked_markdown`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tui.session.entries import Message
from widgets import gc_pause
from widgets.chat_messages import AssistantMessage


class AssistantStream:
    """Feed one streaming assistant reply; obtained from ``ChatPane.begin_assistant()``."""

    def __init__(
        self,
        widget: AssistantMessage,
        mounted: Awaitable[object],
        register_call: Callable[[str], None],
        on_finish: Callable[[Message, str | None], None],
    ) -> None:
        self.widget = widget
        self._mounted: Awaitable[object] | None = mounted
        self._register_call = register_call
        self._on_finish = on_finish
        self.finished = False
        gc_pause.pause()

    async def _ready(self) -> None:
        if self._mounted is not None:
            mounted, self._mounted = self._mounted, None
            await mounted

    @property
    def lost(self) -> bool:
        """Whether the reply's widget is gone or going (a redraw of the whole chat removed it): what is
        still to come goes to a new one. Textual marks a widget it is removing with ``_pruning``."""
        return self.finished or not self.widget.is_attached or self.widget._pruning

    async def append_text(self, delta: str) -> None:
        await self._ready()
        if not self.lost:
            await self.widget.stream_text(delta)

    async def append_thinking(self, delta: str) -> None:
        await self._ready()
        if not self.lost:
            await self.widget.stream_thinking(delta)

    async def tool_call_started(self, call_id: str, name: str) -> None:
        await self._ready()
        if not self.lost:
            await self.widget.start_tool_call(call_id, name)
        self._register_call(call_id)

    async def tool_call_args(self, call_id: str, args_json_so_far: str) -> None:
        """The arguments streamed so far, as raw JSON text (the whole prefix, not a delta)."""
        await self._ready()
        if not self.lost:
            await self.widget.stream_tool_args(call_id, args_json_so_far)

    async def finish(self, message: Message, entry_id: str | None = None) -> None:
        """Replace the streamed content with the final rendering of ``message``."""
        await self._ready()
        await self.widget.finish(message)
        self.widget.entry_id = entry_id
        for block in message.get("content") or ():
            if isinstance(block, dict) and block.get("type") == "toolCall":
                self._register_call(str(block.get("id")))
        self._on_finish(message, entry_id)
        self.close()

    def close(self) -> None:
        """End the stream (done by :meth:`finish`; the pane also closes a stream left open)."""
        if not self.finished:
            self.finished = True
            gc_pause.resume()
