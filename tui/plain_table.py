"""A Rich table for the CLI whose cells are plain text: session text in a cell is never read as markup.

Rich parses a ``str`` cell as console markup, so a session name like ``[/x]`` crashed ``kompakt stats``
and ``[link=…]`` became a hyperlink. :class:`PlainTable` turns every string cell into a sanitised
:class:`~rich.text.Text` (see :mod:`tui.session.sanitize`); cells given as ``Text`` are sanitised too.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from tui.session.sanitize import sanitize


def plain(value: object, style: str = "") -> Text:
    """Untrusted text as a Rich Text: sanitised, never markup."""
    if isinstance(value, Text):
        text = value.copy()
        text.plain = sanitize(text.plain)  # the styles stay; only the characters are cleaned
        return text
    return Text(sanitize(str(value)), style=style)


class PlainTable(Table):
    """``Table`` whose ``add_row`` takes every cell as plain text."""

    def add_row(self, *renderables: Any, **options: Any) -> None:
        cells = [plain(cell) if isinstance(cell, str | Text) else cell for cell in renderables]
        super().add_row(*cells, **options)


def key_value_table() -> PlainTable:
    """The two-column ``key  value`` table the commands print (keys in bold)."""
    table = PlainTable(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    return table
