"""StreamSanitizer: sanitising deltas one by one gives the same text as sanitising the whole reply."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from tui.session.sanitize import sanitize
from widgets.stream_sanitizer import StreamSanitizer

PIECES = [
    "a",
    "b ",
    "\n",
    "\r",
    "\r\n",
    "\t",
    "\x1b",
    "[",
    "31m",
    "]0;",
    "\x07",
    "\\",
    "P",
    "\x9b",
    "\x00",
    "é",
]


@given(st.lists(st.sampled_from(PIECES), max_size=40), st.lists(st.integers(0, 80), max_size=8))
def test_split_stream_equals_whole(pieces: list[str], cuts: list[int]) -> None:
    text = "".join(pieces)
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    sanitizer = StreamSanitizer()
    out = "".join(sanitizer.feed(text[a:b]) for a, b in pairwise(bounds))
    assert out + sanitizer.flush() == sanitize(text)


def test_escape_split_across_deltas_is_dropped_not_shown() -> None:
    sanitizer = StreamSanitizer()
    assert sanitizer.feed("x\x1b") == "x"
    assert sanitizer.feed("[31my") == "y"
    assert sanitizer.feed("a\tb") == "a b"  # the column carries over: the tab sits at column 3
