"""Reply text with no Markdown syntax at all, drawn exactly as the Markdown widget draws it, without it.

Importing the Markdown stack (markdown-it, Textual's Markdown widget, pygments) took ~40 ms of a long
session's first frame, whose replies are mostly plain sentences. :func:`is_plain` accepts only text
that Markdown (``gfm-like``, as the chat parses it) turns into paragraphs of literal text: at most
``PLAIN_MAX_CHARS``, in lines that start with a letter, end with no space and hold letters, digits,
spaces and ``, ; : ' " ? ! ( ) -``, with a full stop only where no word follows it (nothing can be
linkified). :class:`PlainText` shows those paragraphs as Markdown does (each paragraph's lines joined
by a space, runs of spaces collapsed, a blank line below each paragraph, the Markdown's colour), in
one widget.
Anything else goes through Markdown; tests/test_plain_text.py compares the two renderings.
"""

from __future__ import annotations

import re
from typing import ClassVar

from textual.content import Content
from textual.widgets import Static

# A line's characters after its first (a letter): word characters but "_", the punctuation Markdown leaves
# alone inside a line, and a full stop followed by no word character (``a.b`` may be a link).
_PLAIN_LINE = re.compile(r"(?:[^\W_]|[ ,;:'\"?!()\-]|\.(?![^\W_]))*")
_SPACES = re.compile(r" +")
# Longer text goes through Markdown all the same: ChunkedMarkdown mounts a long reply chunk by chunk
# and folds the far chunks (a first screen's replies are shorter). Below its LOAD_CHUNKED_CHARS.
PLAIN_MAX_CHARS = 4000


def is_plain(text: str) -> bool:
    """Whether Markdown would draw ``text`` as paragraphs of literal text (see the module docstring)."""
    if len(text) > PLAIN_MAX_CHARS or not text.strip():
        return False
    for line in text.split("\n"):
        if line and not (line[0].isalpha() and line[-1] != " " and _PLAIN_LINE.fullmatch(line)):
            return False
    return True


def paragraphs(text: str) -> list[str]:
    """The paragraphs of plain ``text`` as Markdown draws them: lines joined by a space, spaces collapsed."""
    return [
        _SPACES.sub(" ", " ".join(block.split("\n")))
        for block in re.split(r"\n{2,}", text.strip("\n"))
        if block
    ]


class PlainText(Static):
    """Plain reply text (:func:`is_plain`) laid out as ``ChunkedMarkdown`` lays out its one chunk: its
    paragraphs with a blank line between them and one below the last (a MarkdownParagraph's bottom
    margin), in one widget rather than one per paragraph inside a container, which was two widgets or
    more per reply on a long session's first screen."""

    DEFAULT_CSS: ClassVar[str] = """
    PlainText {
        width: 1fr; height: auto; margin: 0 0 1 0; padding: 0; background: transparent;
        color: $foreground;
    }
    """

    def __init__(self, text: str, *, classes: str | None = None) -> None:
        super().__init__(Content("\n\n".join(paragraphs(text))), expand=True, classes=classes)
        self.source = text
