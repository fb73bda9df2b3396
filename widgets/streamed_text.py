"""Plain streamed text drawn in sealed pieces, so a redraw costs the new text, not all of it.

The compaction preview streams a summary of thousands of characters ten times a second. One Static
holding all of it is re-rendered (and re-wrapped) whole at every flush, so each flush got slower as the
text grew (0.2-0.85 s at 15k characters under load). :class:`StreamedText` keeps a tail Static; once the
tail passes ``SEAL_CHARS`` it is cut at its last line break, the part before stays as it is for good, and a
fresh tail takes the rest. Lines wrap on their own, so the pieces show exactly what one Static would.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from widgets.safe_text import safe_text

SEAL_CHARS = 500  # a flush redraws at most this much beyond its new text


class StreamedText(Vertical):
    """A bold ``title`` line and the text given to :meth:`set_text`, hidden while that is empty."""

    DEFAULT_CSS = """
    StreamedText { height: auto; margin-bottom: 1; }
    StreamedText > Static { height: auto; }
    """

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title = title
        self.text = ""
        self._sealed = 0  # characters of :attr:`text` in sealed pieces, each with the line break after it
        self._tail = Static("")
        self.rendered_chars = 0  # of text drawn so far, over all updates (what a redraw costs)
        self.display = False

    def compose(self) -> ComposeResult:
        yield Static(Text(self.title, style="bold"))
        yield self._tail

    @property
    def pieces(self) -> list[str]:
        """The text of each piece on screen, sealed ones first (joined by line breaks: :attr:`text`)."""
        return [str(piece.content) for piece in self.query(Static)][1:]

    def set_text(self, text: str) -> None:
        """Show ``text``: only the part after the sealed pieces is drawn again (a retry starts over)."""
        if not text.startswith(self.text[: self._sealed]):
            for piece in list(self.query(Static))[1:-1]:
                piece.remove()
            self._sealed = 0
        self.text = text
        self.display = bool(text)
        tail = text[self._sealed :]
        cut = tail.rfind("\n")
        if len(tail) > SEAL_CHARS and cut > 0:
            # The tail is sealed as it stands up to its last line break; a new tail takes the rest.
            self._draw(self._tail, tail[:cut])
            self._sealed += cut + 1
            tail = tail[cut + 1 :]
            self._tail = Static("")
            self.mount(self._tail)
        self._draw(self._tail, tail)

    def _draw(self, piece: Static, text: str) -> None:
        self.rendered_chars += len(text)
        piece.update(safe_text(text))
