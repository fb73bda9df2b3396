"""A collapsed block whose body widgets are built the first time it is opened, not when it mounts.

A chat message's tool calls and thinking start collapsed, and most are never opened; their bodies (the
arguments, the output, a Markdown with its blocks) were still made, styled and mounted with the message,
about a fifth of the widgets of a long session's first screen (issue 13's start-up figure). A
:class:`LazyCollapsible` mounts its title and an empty ``Contents``; :meth:`LazyCollapsible.build_body`
runs once, when the block is first expanded, and its widgets go into ``Contents`` then.
"""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import Collapsible


class LazyCollapsible(Collapsible):
    """A :class:`Collapsible` whose body comes from :meth:`build_body`, on the first expand."""

    _body_built = False

    @property
    def body_built(self) -> bool:
        """Whether the body widgets exist (the block has been expanded once)."""
        return self._body_built

    def build_body(self) -> list[Widget]:
        """The widgets of the body (called once)."""
        return []

    def watch_collapsed(self, collapsed: bool) -> None:
        if not collapsed:
            self.open_body()

    def open_body(self) -> None:
        """Build the body now, if it is not built yet (it shows while the block is expanded)."""
        if self._body_built:
            return
        self._body_built = True
        body = self.build_body()
        contents = next(iter(self.query_children(Collapsible.Contents)), None)
        if contents is None:
            self._contents_list.extend(body)  # not composed yet: compose puts them in Contents
        else:
            contents.mount_all(body)
