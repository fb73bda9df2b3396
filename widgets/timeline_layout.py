"""Geometry of the compaction timeline bar: which cell shows which region, at eighth-cell precision.

Pure arithmetic over a :class:`~tui.compaction.timeline.Timeline`, kept apart from the widget so the
mapping from tokens to columns is easy to test. The context part of the bar is scaled to the context
window (or to the context, if it overflows the window). The summarised history, often many times the
window, is squeezed into a hatched zone at the left of at most a fifth of the bar. Each cell holds at
most two fills: where a region ends inside a cell, the cell becomes a left-eighths block of the left
region's colour over the right region's colour; within a region the cell takes the shade (tool
output or text) that covers most of it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from tui.compaction.timeline_names import REGION_HEAD, REGION_SUMMARISED

if TYPE_CHECKING:
    from tui.compaction.timeline import Timeline

# Extra fills besides the four regions (and their "-tool" shades).
FILL_OVERHEAD = "overhead"
FILL_STREAMING = "streaming"
FILL_FREE = "free"
FILL_RESERVE = "reserve"

# Left-aligned blocks covering 1/8 … 7/8 of a cell.
LEFT_EIGHTHS = " ▏▎▍▌▋▊▉"


class Cell(NamedTuple):
    """One bar cell: ``left`` fills ``eighths``/8 of it from the left, ``right`` (if any) the rest."""

    left: str
    right: str | None
    eighths: int


def fill_of(region: str, kind: str) -> str:
    """The fill class of a segment: its region, with a darker shade for tool output."""
    if kind == "tool" and region not in (REGION_SUMMARISED, REGION_HEAD):
        return f"{region}-tool"
    return region


def _group(fill: str) -> str:
    """Shades of one region count as one when deciding where a cell splits."""
    return fill.removesuffix("-tool")


Coverage = tuple[
    list[dict[str, float]], list[list[str]]
]  # per cell: fill → eighths covered, regions in order


class BarLayout:
    """Columns for context coordinates, and the cells of a bar ``width`` cells wide.

    The entries' part of the bar walks every segment (a 100k-entry path has tens of thousands): given
    the layout drawn before (``reuse``) of the same segments (the same timeline, or its what-if re-plan),
    width and scale, a new one takes that part from it and lays out only the streamed tail, the free
    space and the reserve, so a redraw while a reply streams or after a what-if nudge costs the bar's
    width, not the path's length.
    """

    def __init__(
        self, timeline: Timeline, width: int, streaming_tokens: int = 0, reuse: BarLayout | None = None
    ) -> None:
        self.width = max(1, width)
        self.timeline = timeline
        self.streaming_tokens = max(0, streaming_tokens)
        self.summarised = -timeline.summarised_start
        tail = timeline.context_end + self.streaming_tokens
        self.extent = max(timeline.context_window, tail, 1)
        self.zone = 0
        if self.summarised > 0:
            proportional = round(self.summarised / self.extent * self.width)
            self.zone = min(max(1, proportional), max(1, self.width // 5))
        # Tokens per cell in the context part.
        self.scale = self.extent / max(1, self.width - self.zone)
        if reuse is not None and reuse._geometry() == self._geometry():
            self._entries_coverage = reuse._entries_coverage
        else:
            self._entries_coverage = self._coverage(self._entry_spans())
        self.cells = self._cells(tail)

    def _geometry(self) -> tuple[object, ...]:
        """What the entries' part of the bar depends on: the segments (a what-if re-plan keeps them, the
        same tuple), the overhead and the scale. The segments by identity: both layouts hold theirs, so
        equal ids are one tuple (comparing two tuples of them would walk the path)."""
        timeline = self.timeline
        return (id(timeline.segments), timeline.overhead_tokens, self.width, self.zone, self.scale)

    def position(self, x: float) -> float:
        """The (fractional) cell position of context coordinate ``x``."""
        if x >= 0:
            return self.zone + x / self.scale
        return self.zone * (1 + x / self.summarised) if self.summarised else 0.0

    def column(self, x: float) -> int:
        """The cell that shows context coordinate ``x`` (clamped to the bar)."""
        return min(self.width - 1, max(0, math.floor(self.position(x))))

    def segment_span(self, index: int) -> tuple[float, float]:
        """The (fractional) cells segment ``index`` of the timeline covers on the bar."""
        segment = self.timeline.segments[index]
        return self.position(segment.start), self.position(segment.end)

    def segment_columns(self, index: int) -> range:
        """The cells that show segment ``index`` (at least one, even for a zero-width one)."""
        a, b = self.segment_span(index)
        first = min(self.width - 1, max(0, math.floor(a)))
        last = max(first, min(self.width - 1, math.ceil(b) - 1))
        return range(first, last + 1)

    def segment_at(self, column: int) -> int | None:
        """The segment that covers most of cell ``column`` (None over the overhead, free space or reserve).

        Segments are in bar order, so the search is a bisection to the first segment ending past the
        cell, then a short scan of those that share it (many summarised ones can).
        """
        segments = self.timeline.segments
        if not 0 <= column < self.width or not segments:
            return None
        low, high = 0, len(segments)
        while low < high:
            middle = (low + high) // 2
            if self.position(segments[middle].end) <= column:
                low = middle + 1
            else:
                high = middle
        best, best_overlap = None, 0.0
        for index in range(low, len(segments)):
            a, b = self.segment_span(index)
            if a >= column + 1:
                break
            overlap = min(b, column + 1) - max(a, column)
            if overlap > best_overlap:
                best, best_overlap = index, overlap
        return best

    def _add_span(self, spans: list[tuple[float, float, str]], start: float, end: float, fill: str) -> None:
        a, b = self.position(start), self.position(end)
        if b <= a:
            return
        if spans and spans[-1][2] == fill and abs(spans[-1][1] - a) < 1e-9:
            spans[-1] = (spans[-1][0], b, fill)
        else:
            spans.append((a, b, fill))

    def _entry_spans(self) -> list[tuple[float, float, str]]:
        """The summarised history, the overhead and the entries since, in cells."""
        timeline = self.timeline
        spans: list[tuple[float, float, str]] = []
        summarised = [s for s in timeline.segments if s.start < 0]
        for segment in summarised:
            self._add_span(spans, segment.start, segment.end, fill_of(segment.region, segment.kind))
        self._add_span(spans, 0, timeline.overhead_tokens, FILL_OVERHEAD)
        for segment in timeline.segments[len(summarised) :]:
            self._add_span(spans, segment.start, segment.end, fill_of(segment.region, segment.kind))
        return spans

    def _tail_spans(self, tail: int) -> list[tuple[float, float, str]]:
        """The streamed reply, the free space and the reserve, in cells."""
        spans: list[tuple[float, float, str]] = []
        self._add_span(spans, self.timeline.context_end, tail, FILL_STREAMING)
        # The reserve starts at the what-if threshold (the saved one when nothing is being tried).
        limit = self.timeline.what_if.threshold
        self._add_span(spans, tail, max(tail, limit), FILL_FREE)
        self._add_span(spans, max(tail, limit), self.extent, FILL_RESERVE)
        return spans

    def _coverage(self, spans: list[tuple[float, float, str]], base: Coverage | None = None) -> Coverage:
        """How much of each cell each fill covers (added to a copy of ``base``), and the regions in order."""
        if base is None:
            coverage: list[dict[str, float]] = [{} for _ in range(self.width)]
            firsts: list[list[str]] = [[] for _ in range(self.width)]
        else:
            coverage, firsts = [dict(cell) for cell in base[0]], [list(order) for order in base[1]]
        for a, b, fill in spans:
            for c in range(max(0, math.floor(a)), min(self.width, math.ceil(b))):
                overlap = min(b, c + 1) - max(a, c)
                if overlap <= 0:
                    continue
                cell = coverage[c]
                cell[fill] = cell.get(fill, 0.0) + overlap
                if _group(fill) not in firsts[c]:
                    firsts[c].append(_group(fill))
        return coverage, firsts

    def _cells(self, tail: int) -> tuple[Cell, ...]:
        coverage, firsts = self._coverage(self._tail_spans(tail), self._entries_coverage)
        return tuple(self._cell(coverage[c], firsts[c]) for c in range(self.width))

    @staticmethod
    def _cell(coverage: dict[str, float], order: list[str]) -> Cell:
        if not coverage:
            return Cell(FILL_FREE, None, 8)
        groups: dict[str, float] = {}
        shade: dict[str, str] = {}
        for fill, amount in coverage.items():
            group = _group(fill)
            groups[group] = groups.get(group, 0.0) + amount
            if amount > coverage.get(shade.get(group, ""), 0.0):
                shade[group] = fill
        left = order[0]
        eighths = round(groups[left] * 8)
        others = [g for g in order[1:] if groups[g] > 0]
        if eighths >= 8 or not others:
            return Cell(shade[left], None, 8)
        right = max(others, key=groups.__getitem__)
        if eighths <= 0:
            return Cell(shade[right], None, 8)
        return Cell(shade[left], shade[right], eighths)
