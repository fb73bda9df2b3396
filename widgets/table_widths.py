"""Column widths for a DataTable, given when the column is added rather than measured later.

A DataTable measures new rows when it is idle and keeps its render cache when it does, so a frame drawn
before that measuring keeps the header's widths for good (Textual 8.2.8; seen under load in CI).
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len
from rich.text import Text


def column_width(label: str, cells: Iterable[Text]) -> int:
    """The cells the column needs: its label or its widest line, whichever is wider."""
    return max([cell_len(label), *(cell_len(line) for cell in cells for line in cell.plain.splitlines())])
