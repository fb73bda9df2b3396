"""A collapsed block whose body widgets are built the first time it is opened, not when it mounts.

A chat message's tool calls and thinking start collapsed, and most are never opened; their bodies (the
arguments, the output, a Markdown with its blocks) were still made, styled and mounted with the message,
about a fifth of the widgets of a long session's first screen (issue 13's start-up figure). A
:class:`LazyCollapsible` mounts only its title; :meth:`LazyCollapsible.build_body` runs once, when the
block is first expanded, and ``Contents`` with its widgets is mounted then (an empty ``Contents`` on each
collapsed block was another widget to style and lay out per block: ~6 ms of a 10k session's first frame).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import AwaitMount, Widget
from textual.widgets import Collapsible


class LazyCollapsible(Collapsible):
    """A :class:`Collapsible` whose body comes from :meth:`build_body`, on the first expand."""

    _body_built = False

    @property
    def body_built(self) -> bool:
        """Whether the body widgets exist (the block has been expanded once)."""
        return self._body_built

    def compose(self) -> ComposeResult:
        if self._body_built or not self.collapsed:
            yield from super().compose()
        else:
            yield self._title

    def build_body(self) -> list[Widget]:
        """The widgets of the body (called once)."""
        return []

    async def watch_collapsed(self, collapsed: bool) -> None:
        if not collapsed and (mounting := self.open_body()) is not None:
            await mounting
        self.call_after_refresh(self._relayout_in_stream)

    def _relayout_in_stream(self) -> None:
        # A `layout: stream` container (the chat) reuses the placements of its children before the first one
        # that asked for a layout, and a request from deep inside a message does not always reach it (Textual
        # 8.2.8): an expanded summary stayed one row tall, its body hidden behind the next message. Its
        # placements are dropped (there is no public way) and the message asks again, after the frame that
        # drew the change.
        node: Widget = self
        while isinstance(parent := node.parent, Widget):
            layout = parent.styles.layout
            if getattr(layout, "name", "") == "stream":
                layout._cached_placements = None  # type: ignore[union-attr]
                node.refresh(layout=True)
                return
            node = parent

    def open_body(self) -> AwaitMount | None:
        """Build the body now, if it is not built yet (it shows while the block is expanded); the mount to
        await when the block was already composed."""
        if self._body_built:
            return None
        self._body_built = True
        body = self.build_body()
        if self._title.parent is not self:
            self._contents_list.extend(body)  # not composed yet: compose puts them in Contents
            return None
        contents = next(iter(self.query_children(Collapsible.Contents)), None)
        if contents is None:
            return self.mount(Collapsible.Contents(*self._contents_list, *body), after=self._title)
        return contents.mount_all(body)
