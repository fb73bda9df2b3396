"""A terminal input parser that delivers a bracketed paste whole, even when it holds escape bytes.

Textual 8.2.8's ``XTermParser`` collects a bracketed paste character by character, but an ESC inside the
paste (copied terminal output with colour codes: ``\\x1b[31m``) starts its escape-sequence search: the
bytes after the ESC are not added to the paste; once they match nothing they are re-issued as key
presses (the ESC as ``^``), and a newline among them is Enter, so parts of the paste were sent as
messages. :class:`PasteSafeParser` wraps Textual's parser: it passes everything through until Textual
has read the paste's start marker, then reads the paste itself up to the end marker, delivers it as
one :class:`~textual.events.Paste` (the prompt strips its escape sequences), and hands Textual the end
marker so that its own state leaves paste mode (the empty paste that gives is dropped).
:func:`install` makes the Linux drivers create this parser (they name ``XTermParser`` when their
input thread starts; tests/test_textual_private.py checks that they still do).
"""

from __future__ import annotations

from collections.abc import Generator

from textual import events
from textual._parser import ParseEOF, ParseError, Peek1, Read1, TokenCallback
from textual._xterm_parser import BRACKETED_PASTE_END, BRACKETED_PASTE_START, XTermParser
from textual.message import Message


class PasteSafeParser(XTermParser):
    """Textual's parser, with the paste between the bracketed-paste markers read here, escapes and all."""

    def parse(self, token_callback: TokenCallback[Message]) -> Generator[Read1 | Peek1, str, None]:
        resyncing = False  # Textual is being given the end marker: the empty paste it then reports goes

        def from_textual(token: Message) -> None:
            if resyncing and isinstance(token, events.Paste) and not token.text:
                return
            token_callback(token)

        textual_parser = super().parse(from_textual)
        request = next(textual_parser)
        recent = ""  # the last characters Textual was given, to see the start marker go by
        while True:
            try:
                character = yield request
            except ParseError as error:  # a timeout (a lone Esc) or the end of input: Textual's to handle
                recent = ""  # Textual gave out what it had as keys: no marker is being read
                try:
                    request = textual_parser.throw(error)
                except StopIteration:
                    return
                continue
            try:
                request = textual_parser.send(character)
            except StopIteration:
                return
            recent = (recent + character)[-len(BRACKETED_PASTE_START) :]
            if recent != BRACKETED_PASTE_START:
                continue
            recent = ""
            text, ended = yield from self._read_paste()
            token_callback(events.Paste(text.replace("\x00", "")))  # NULs go, as Textual drops them
            if not ended:
                return
            resyncing = True
            for marker_character in BRACKETED_PASTE_END:
                request = textual_parser.send(marker_character)
            resyncing = False

    def _read_paste(self) -> Generator[Read1, str, tuple[str, bool]]:
        """The paste's text up to the end marker; False when the input ended before it."""
        end, size = BRACKETED_PASTE_END, len(BRACKETED_PASTE_END)
        read: list[str] = []
        while True:
            try:
                read.append((yield self.read1()))
            except ParseEOF:
                return "".join(read), False
            if read[-1] == end[-1] and "".join(read[-size:]) == end:
                return "".join(read[:-size]), True


def install() -> None:
    """Make Textual's Linux drivers read terminal input with :class:`PasteSafeParser`."""
    from textual.drivers import linux_driver, linux_inline_driver

    linux_driver.XTermParser = PasteSafeParser  # type: ignore[misc]
    linux_inline_driver.XTermParser = PasteSafeParser  # type: ignore[misc]
