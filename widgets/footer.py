"""The footer of kompakt's screens: Textual's key footer with the help key (F1) always first.

Textual lists the focused widget's keys first and the app's last, so at 80 or 100 columns the app's
F1 Help fell off the right edge, the one key a new user needs to find the others. This footer moves
the help key to the front; everything else keeps Textual's order.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

HELP_ACTIONS = frozenset({"help", "app.help"})  # the app's binding, and a modal screen's own


class KompaktFooter(Footer):
    """:class:`~textual.widgets.Footer` with the help key moved to the front."""

    def compose(self) -> ComposeResult:
        widgets: Iterable[Widget] = super().compose()
        keys = list(widgets)
        first = [w for w in keys if isinstance(w, FooterKey) and w.action in HELP_ACTIONS]
        yield from first
        yield from (w for w in keys if w not in first)
