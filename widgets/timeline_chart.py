"""The context size over the session's turns, as a sparkline of a few rows for the expanded timeline.

The samples are the HTML export's (:func:`tui.export.chart.context_series`): each reply's context size
(measured where the provider reported usage, else the running estimate) and each compaction at its
``tokensBefore``, from which the next reply starts again lower. Each sample gets one to three cells (or,
past the width, a cell shows the largest sample of its share, a compaction first); a column is as tall
as its tokens against the window, at eighth-row precision. The threshold is a dotted line in the row it
falls in, and a column above it takes the threshold's colour. The scale stops at ``CLIP_FACTOR`` times the
window (or the threshold): a huge ``tokensBefore`` would flatten every other column, so a taller sample is
drawn full height with ``CLIPPED_MARK`` on top and :attr:`ContextChart.clipped` set. Pure geometry: the
widget picks the styles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.export.chart import Sample

LOWER_EIGHTHS = " ▁▂▃▄▅▆▇█"
THRESHOLD_LINE = "┈"
MAX_CELLS_PER_SAMPLE = 3
CLIP_FACTOR = 1.5
CLIPPED_MARK = "↑"

# What a cell shows; the widget maps each to a style.
FILL_MEASURED = "measured"
FILL_ESTIMATED = "estimated"
FILL_COMPACTION = "compaction"
FILL_OVER = "over"
FILL_THRESHOLD = "threshold"
FILL_EMPTY = "empty"


class ContextChart:
    """Cells of a ``rows``-high, ``width``-wide sparkline of ``samples`` (see the module docstring)."""

    def __init__(
        self, samples: Sequence[Sample], width: int, rows: int, context_window: int, threshold: int
    ) -> None:
        self.samples = samples
        self.width = max(1, width)
        self.rows = max(1, rows)
        self.threshold = threshold
        peak = max([1, *(s.tokens for s in samples)])
        limit = max(context_window, threshold)
        # Without a known window there is nothing to clip against: the peak is the scale.
        self.top = max(limit, min(peak, int(limit * CLIP_FACTOR))) if limit > 0 else peak
        self.clipped = peak > self.top
        self.cells: list[int | None] = self._columns()

    def _columns(self) -> list[int | None]:
        """The sample each cell shows (None past the last one)."""
        n, width = len(self.samples), self.width
        if not n:
            return [None] * width
        if n <= width:
            per = max(1, min(MAX_CELLS_PER_SAMPLE, width // n))
            cells: list[int | None] = [i // per for i in range(n * per)]
            return cells + [None] * (width - len(cells))
        shown: list[int | None] = []
        for column in range(width):
            share = range(column * n // width, max(column * n // width + 1, (column + 1) * n // width))
            compactions = [i for i in share if self.samples[i].kind == "compaction"]
            shown.append(compactions[0] if compactions else max(share, key=lambda i: self.samples[i].tokens))
        return shown

    def sample_at(self, column: int) -> int | None:
        """The sample drawn in cell ``column``."""
        return self.cells[column] if 0 <= column < self.width else None

    def _eighths(self, tokens: int) -> int:
        height = round(tokens / self.top * self.rows * 8)
        return max(1 if tokens > 0 else 0, min(self.rows * 8, height))

    def row(self, row: int) -> list[tuple[str, str]]:
        """Row ``row`` (0 at the top) as ``(char, fill)`` per cell."""
        from_bottom = self.rows - 1 - row
        threshold_eighths = self.threshold / self.top * self.rows * 8
        threshold_row = min(self.rows - 1, int(threshold_eighths // 8))
        out: list[tuple[str, str]] = []
        for index in self.cells:
            if index is None:
                amount, fill = 0, FILL_EMPTY
            else:
                sample = self.samples[index]
                amount = min(8, max(0, self._eighths(sample.tokens) - from_bottom * 8))
                if row == 0 and sample.tokens > self.top:
                    out.append((CLIPPED_MARK, FILL_OVER))
                    continue
                if sample.kind == "compaction":
                    fill = FILL_COMPACTION
                elif sample.tokens > self.threshold:
                    fill = FILL_OVER
                else:
                    fill = FILL_MEASURED if sample.measured else FILL_ESTIMATED
            if amount == 0 and from_bottom == threshold_row and self.threshold < self.top:
                out.append((THRESHOLD_LINE, FILL_THRESHOLD))
            else:
                out.append((LOWER_EIGHTHS[amount], fill))
        return out

    def turn_of(self, index: int) -> int:
        """1-based count of the replies up to sample ``index``."""
        return sum(1 for s in self.samples[: index + 1] if s.kind == "reply")
