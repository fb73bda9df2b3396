"""Streamed Markdown split into sealed chunks, so an append re-lays out only the short tail.

One Markdown widget holding a long reply gets slower with every append: Textual re-measures its block
widgets whenever a block is added or replaced, and a 100 KB reply has well over a thousand of them.
:class:`ChunkedMarkdown` streams into a tail :class:`ChatMarkdown`; once the tail holds
``SEAL_CHARS`` of text, it is sealed at the next top-level block boundary that cannot change the
rendering (see :func:`seal_point`) and never touched again, and a fresh tail takes the rest. The chunks
render exactly like the whole text in one Markdown: each chunk after the first drops from its first
block the top margin that the previous chunk's last block already leaves (margins between blocks
collapse inside one Markdown but add up across widgets). A finished reply with link reference
definitions (which reach across chunks) is rendered again as one document. Sealed chunks far from the
viewport are folded into blank stand-ins of the same height and rendered again when scrolled near, so
the widget count (and the work of each layout pass) stays bounded however long the reply grows.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token
from textual import events
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.containers import ScrollableContainer
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownStream

# The tail is sealed at the first boundary after this much text; small enough that an
# append re-measures a few dozen blocks, large enough that a long reply stays a few dozen chunks.
SEAL_CHARS = 3000

# Top-level blocks that a blank line ends for good: nothing after it can join them. Lists and
# indented code are left out (an indented line or a further item continues them after a blank line).
_CLOSED_BY_BLANK = frozenset(
    {"paragraph_open", "heading_open", "hr", "fence", "table_open", "blockquote_open"}
)
# A finished reply at least this long (from the session file, not streamed) is mounted chunk by chunk
# too: as one Markdown, 80 KB took seconds to lay out before anything showed.
LOAD_CHUNKED_CHARS = 12_000

# A link reference definition ("[label]: url") changes links anywhere in the document.
_REFERENCE = re.compile(r"^ {0,3}\[[^\]\n]+\]:", re.MULTILINE)


def no_html_parser() -> MarkdownIt:
    # Inline HTML from a model is shown as text, not silently dropped.
    return MarkdownIt("gfm-like", {"html": False})


class ChatMarkdown(Markdown):
    """Markdown of sanitised model text; HTML is literal text."""

    DEFAULT_CSS = """
    ChatMarkdown { layout: stream; margin: 0; padding: 0; background: transparent; }
    """

    def __init__(self, markdown: str = "", *, classes: str | None = None) -> None:
        super().__init__(markdown, classes=classes, parser_factory=no_html_parser)


def _blank(line: str) -> bool:
    return line.endswith("\n") and not line.strip(" \t\r\n")


def _seal_points(text: str, parser: MarkdownIt | None = None) -> Iterator[int]:
    """Every offset where ``text`` splits into two documents that render like it, in order.

    That is just after the blank line that ends a top-level paragraph, heading, rule, closed fence,
    table or block quote: whatever follows starts a new block and cannot reach back into those, so
    the cut holds for any text that streams in later.
    """
    for _line, offset in _cuts(text, (parser or no_html_parser()).parse(text)):
        yield offset


def _cuts(text: str, tokens: Iterable[Token]) -> Iterator[tuple[int, int]]:
    """The seal points of ``text`` (see :func:`_seal_points`) from its parsed ``tokens``: (line, offset) pairs."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for token in tokens:
        if token.level != 0 or token.map is None or token.type not in _CLOSED_BY_BLANK:
            continue
        end = token.map[1]
        if end < len(lines) and _blank(lines[end]):
            yield end + 1, offsets[end + 1]


def seal_point(text: str, earliest: int, parser: MarkdownIt | None = None) -> int | None:
    """The first seal point of ``text`` at or after ``earliest`` (see :func:`_seal_points`), or None."""
    return next((cut for cut in _seal_points(text, parser) if cut >= earliest), None)


def split_at_seals(text: str, size: int, parser: MarkdownIt | None = None) -> list[str]:
    """``text`` cut at seal points into pieces of at least ``size`` characters (the last may be shorter)."""
    pieces, start = [], 0
    for cut in _seal_points(text, parser):
        if cut - start >= size and cut < len(text):
            pieces.append(text[start:cut])
            start = cut
    return [*pieces, text[start:]]


def has_reference_definitions(text: str) -> bool:
    return _REFERENCE.search(text) is not None


def _overlaps(widget: Widget, band: tuple[int, int]) -> bool:
    region = widget.virtual_region
    return region.y < band[1] and region.bottom > band[0]


def _blocks(markdown: Markdown) -> Iterable[MarkdownBlock]:
    return (child for child in markdown.children if isinstance(child, MarkdownBlock))


class _Chunk(ChatMarkdown):
    """One chunk; ``gap_above`` is the bottom margin of the previous chunk's last block."""

    def __init__(self, markdown: str = "", *, gap_above: int = 0) -> None:
        super().__init__(markdown)
        self.gap_above = gap_above
        self._fitted: MarkdownBlock | None = None
        # Where the text stops changing: the last seal point rendered (offset, line, blocks before it).
        self._settled = (0, 0, 0)

    def update(self, markdown: str) -> AwaitComplete:
        self._settled = (0, 0, 0)  # only ever the first text of a chunk, before any append
        return self._then_fit(super().update(markdown))

    def append(self, markdown: str) -> AwaitComplete:
        # Markdown.append parses again from the start of the last block, which is not always where the
        # text can be cut: "1. a\n\n2" then ". b" made a second list of "2. b" (and a lost stop of the
        # stream could leave the tail of an indented code block out). Parse again from the last seal point.
        self._markdown = self.source + markdown
        return self._then_fit(AwaitComplete(self._render_unsettled()))

    async def _render_unsettled(self) -> None:
        """Render again the text after the last seal point; the blocks before it cannot change."""
        async with self.lock:
            text = self._markdown  # all that was appended by now, later appends too
            offset, line, kept = self._settled
            rest = text[offset:]
            tokens = no_html_parser().parse(rest)
            new = list(self._parse_markdown(tokens))
            for block in new:
                start, end = block.source_range
                block.source_range = (start + line, end + line)
            cuts = list(_cuts(rest, tokens))
            old = list(_blocks(self))[kept:]
            with self.app.batch_update():
                if old[1:]:
                    await self.remove_children(old[1:])
                if old and new:
                    # The open block (a paragraph, fence or table being written) is updated in place.
                    old[0].source_range = new[0].source_range
                    await old[0]._update_from_block(new.pop(0))
                elif old:
                    await old[0].remove()
                if new:
                    await self.mount_all(new)
            if cuts:
                cut_line, cut_offset = cuts[-1]
                before = sum(1 for block in _blocks(self) if block.source_range[0] < line + cut_line)
                self._settled = (offset + cut_offset, line + cut_line, before)
            self._table_of_contents = None

    def _then_fit(self, change: AwaitComplete) -> AwaitComplete:
        if not self.gap_above:
            return change

        async def change_and_fit() -> None:
            await change
            self._fit_first_block()

        return AwaitComplete(change_and_fit())

    def _fit_first_block(self) -> None:
        # The gap inside one Markdown is max(previous bottom, this top); the previous chunk has already
        # drawn its bottom margin, so this block keeps only the rest of its own top margin.
        first = next(iter(_blocks(self)), None)
        if first is None or first is self._fitted:
            return
        self._fitted = first
        # Done with a class, as a stream layout ignores inline styles. Every block with a top margin
        # has "margin: T 0 1 0" (T is 1 or 2), which the classes keep but for the top.
        top, right, bottom, left = first.styles.margin
        trimmed = max(0, top - self.gap_above)
        if trimmed != top and trimmed < 2 and (right, bottom, left) == (0, 1, 0):
            first.add_class(f"-chunk-top-{trimmed}")

    def last_margin(self) -> int:
        blocks = list(_blocks(self))
        return blocks[-1].styles.margin.bottom if blocks else self.gap_above


class _Fold(Widget):
    """A blank stand-in for a sealed chunk far off screen: its text and height, none of its widgets."""

    DEFAULT_CSS = """
    _Fold { height: auto; }
    """

    def __init__(self, chunk: _Chunk) -> None:
        super().__init__()
        self.source = chunk.source
        self.gap_above = chunk.gap_above
        self.lines = chunk.outer_size.height
        self.display = False  # until it takes the chunk's place
        self.unfolding = False

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.lines  # (a stream layout ignores inline heights)


class ChunkedMarkdown(Widget):
    """Markdown that streams into a short tail chunk and seals the rest (see the module docstring).

    Sealed chunks more than a screen height away from the viewport are folded: replaced by a blank
    widget of the same height that keeps only their text, so that neither the screen's layout passes
    nor the garbage collector walk their block widgets. :meth:`reveal` (called on scroll) renders the
    folds that come near the viewport again.
    """

    DEFAULT_CSS = """
    ChunkedMarkdown {
        layout: stream; height: auto;
        & > ChatMarkdown > MarkdownBlock.-chunk-top-0 { margin: 0 0 1 0; }
        & > ChatMarkdown > MarkdownBlock.-chunk-top-1 { margin: 1 0 1 0; }
    }
    """

    def __init__(self, markdown: str = "", *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._parser = no_html_parser()
        pieces = [markdown]
        if len(markdown) >= LOAD_CHUNKED_CHARS and not has_reference_definitions(markdown):
            pieces = split_at_seals(markdown, SEAL_CHARS, self._parser)
        self._tail = _Chunk(pieces[0])
        self._tail_text = pieces[0]  # what the tail was given (its source may still be catching up)
        self._unmounted = pieces[1:]  # the rest of a long finished text, mounted after the first chunk
        self._stream: MarkdownStream | None = None
        self._lock = asyncio.Lock()
        self._fold_width = 0  # folds keep the heights of this width

    def compose(self) -> ComposeResult:
        yield self._tail

    def on_mount(self) -> None:
        if self._unmounted:
            self.run_worker(self._mount_rest(), group="markdown.load")

    async def _mount_rest(self) -> None:
        """Mount the remaining chunks one by one, folding those far from the viewport as it goes."""
        async with self._lock:
            pieces, self._unmounted = self._unmounted, []
            for piece in pieces:
                chunk = _Chunk(piece, gap_above=self._tail.last_margin())
                await self.mount(chunk)
                self._tail, self._tail_text = chunk, piece
                await self._fold_far_chunks()
            # The chunks mounted last had no layout yet when the loop looked at them: look once more.
            laid_out = asyncio.Event()
            self.call_after_refresh(laid_out.set)
            await laid_out.wait()
            await self._fold_far_chunks()

    @property
    def chunks(self) -> list[ChatMarkdown]:
        """The chunks rendered as Markdown widgets (folded ones are not)."""
        return [child for child in self.children if isinstance(child, ChatMarkdown)]

    @property
    def folds(self) -> list[Widget]:
        """The stand-ins of folded chunks."""
        return [child for child in self.children if isinstance(child, _Fold)]

    @property
    def source(self) -> str:
        """The Markdown the chunks hold so far (like :attr:`Markdown.source`), folded ones included."""
        return "".join(child.source for child in self.children if isinstance(child, (ChatMarkdown, _Fold)))

    async def write(self, text: str) -> None:
        """Stream ``text`` into the tail, sealing it at a block boundary once it is long enough."""
        async with self._lock:
            while text:
                text = await self._write_tail(text)

    async def _write_tail(self, text: str) -> str:
        """Give the tail what belongs to it; returns the text left for a new tail."""
        if self._stream is None:
            self._stream = Markdown.get_stream(self._tail)
        given = len(self._tail_text)
        whole = self._tail_text + text
        cut = seal_point(whole, max(given, SEAL_CHARS), self._parser) if len(whole) >= SEAL_CHARS else None
        if cut is None:
            self._tail_text = whole
            await self._stream.write(text)
            return ""
        self._tail_text = whole[:cut]
        await self._stream.write(whole[given:cut])
        await self._stop_stream()
        self._tail = _Chunk(gap_above=self._tail.last_margin())
        self._tail_text = ""
        await self.mount(self._tail)
        await self._fold_far_chunks()
        return whole[cut:]

    def _near_band(self) -> tuple[int, int] | None:
        """Lines of this widget (top, bottom) within a viewport height of its scroll container's viewport.

        Worked out from the scroll offset and the layout's positions inside the containers, which stay
        right while a scroll has not been laid out yet (screen regions would not).
        """
        scroller = next((node for node in self.ancestors if isinstance(node, ScrollableContainer)), None)
        if scroller is None:
            return None
        top, node = 0, self
        while node is not scroller and isinstance(node.parent, Widget):
            parent = node.parent
            top += node.virtual_region.y + (0 if parent is scroller else parent.styles.gutter.top)
            node = parent
        height = scroller.scrollable_content_region.height
        start = round(scroller.scroll_y) - height - top
        return start, start + 3 * height

    async def _fold_far_chunks(self) -> None:
        band = self._near_band()
        if band is None:
            return
        # The chunk sealed last is left alone: its final blocks may not have been laid out yet.
        far = [
            chunk
            for chunk in self.chunks[:-2]
            if isinstance(chunk, _Chunk) and chunk.virtual_region.height and not _overlaps(chunk, band)
        ]
        if not far:
            return
        self._fold_width = self.size.width
        folds = [_Fold(chunk) for chunk in far]
        for fold, chunk in zip(folds, far, strict=True):
            await self.mount(fold, before=chunk)
        for fold, chunk in zip(folds, far, strict=True):
            fold.display, chunk.display = True, False  # swapped within one frame
        await self.remove_children(far)

    def reveal(self, everything: bool = False) -> None:
        """Render again the folded chunks that a scroll has brought near the viewport (or all of them)."""
        folds = [fold for fold in self.folds if isinstance(fold, _Fold) and not fold.unfolding]
        if not folds:
            return
        band = None if everything else self._near_band()
        for fold in folds:
            if band is None or _overlaps(fold, band):
                fold.unfolding = True
                self.run_worker(self._unfold(fold), group="markdown.unfold")

    def on_resize(self, event: events.Resize) -> None:
        # At another width the folds' heights are wrong: render them all again.
        if event.size.width != self._fold_width:
            self.reveal(everything=True)

    async def _unfold(self, fold: _Fold) -> None:
        async with self._lock:  # not while a write seals or folds, nor after an update removed it
            if fold.parent is not self:
                return
            chunk = _Chunk(fold.source, gap_above=fold.gap_above)
            chunk.display = False
            await self.mount(chunk, before=fold)  # a Markdown has mounted its blocks once mounted
            chunk.display, fold.display = True, False  # swapped within one frame
            await fold.remove()

    async def _stop_stream(self) -> None:
        await self.close()
        await self.rendered()

    async def stop(self) -> None:
        """End streaming: everything written has been rendered when this returns."""
        async with self._lock:
            await self._stop_stream()

    async def close(self) -> None:
        """End streaming without waiting for the rendering (the widget is going away)."""
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    async def rendered(self) -> None:
        """Wait until the tail has parsed and mounted what it was given so far."""
        await asyncio.sleep(0)  # let a just-started append take the tail's lock first
        async with self._tail.lock:
            pass

    async def update(self, markdown: str) -> None:
        """Replace everything with ``markdown``, rendered as one document."""
        async with self._lock:
            await self._stop_stream()
            self._tail, self._tail_text = _Chunk(markdown), markdown
            with self.app.batch_update():
                await self.remove_children()
                await self.mount(self._tail)

    async def finalize(self, markdown: str) -> None:
        """Show the finished ``markdown``: kept as streamed when the chunks render it faithfully."""
        await self.stop()
        pieces = len(self.chunks) + len(self.folds)
        if self.source != markdown or (pieces > 1 and has_reference_definitions(markdown)):
            await self.update(markdown)
