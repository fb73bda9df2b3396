"""A one-row title that says as much as its width allows.

It is given its wordings, fullest first, and draws the first that fits the width it has now (it
redraws on resize); when none fits, the last is cut with ``…``. The fullest wording is its tooltip.
The inspector's column titles wrapped onto a second row at 120 columns and lost their figures at 80.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget


class FittedTitle(Widget):
    """The first of ``wordings`` that fits, on one row (never parsed as markup)."""

    DEFAULT_CSS = """
    FittedTitle { height: 1; width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(
        self, wordings: Sequence[str], *, tooltip: str | None = None, id: str | None = None, classes: str = ""
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.wordings = tuple(wordings)
        self.tooltip = Text(tooltip if tooltip is not None else self.wordings[0])

    def wording(self, width: int) -> str:
        """The wording drawn in ``width`` cells."""
        return next((text for text in self.wordings if cell_len(text) <= width), self.wordings[-1])

    def render(self) -> Text:
        return Text(self.wording(self.content_size.width))
