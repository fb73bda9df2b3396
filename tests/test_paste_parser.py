"""A bracketed paste holding escape bytes arrives as one Paste (tui/paste_parser.py), fed as raw bytes.

Textual's own parser turned the bytes after an ESC inside a paste into key presses (the ESC as ``^``,
a CR as Enter, which sent parts of the paste as messages); everything outside a paste must parse as
Textual parses it.
"""

from __future__ import annotations

import pytest
from textual import events
from textual._xterm_parser import XTermParser

from tui.paste_parser import PasteSafeParser

COLOURED = "red \x1b[31mline\x1b[0m one\rline two\r\x1b]0;title\x07end"
PASTE = f"ab\x1b[200~{COLOURED}\x1b[201~cd"


def parsed(parser: XTermParser, data: str, *, one_at_a_time: bool = False) -> list[tuple[str, str | None]]:
    chunks = list(data) if one_at_a_time else [data]
    got = [event for chunk in chunks for event in parser.feed(chunk)]
    got += list(parser.feed(""))  # the end of input flushes a pending Esc
    return [
        (type(e).__name__, e.text if isinstance(e, events.Paste) else getattr(e, "key", None)) for e in got
    ]


@pytest.mark.parametrize("one_at_a_time", [False, True], ids=["one read", "byte by byte"])
def test_a_paste_with_escapes_and_newlines_is_one_paste_event(one_at_a_time: bool) -> None:
    assert parsed(PasteSafeParser(), PASTE, one_at_a_time=one_at_a_time) == [
        ("Key", "a"),
        ("Key", "b"),
        ("Paste", COLOURED),
        ("Key", "c"),
        ("Key", "d"),
    ]


def test_textual_alone_turns_such_a_paste_into_keys_and_enters() -> None:
    """The defect this parser exists for (if Textual fixes it, tui/paste_parser.py can go)."""
    events_ = parsed(XTermParser(), PASTE)
    assert ("Key", "enter") in events_ and ("Paste", COLOURED) not in events_


@pytest.mark.parametrize(
    "data",
    [
        "plain typing\r",
        "\x1b[A\x1b[B\x1b[1;5C",  # arrows, ctrl+right
        "\x1bx",  # alt+x
        "\x1b",  # a lone Esc, flushed at the end of input
        "\x1b[<0;10;5M\x1b[<0;10;5m",  # a mouse click
        "\x1b[I\x1b[O",  # focus in, out
        "\x1b[200~\x1b[201~",  # an empty paste
        "\x1b[200~plain paste\r\x1b[201~x",
        "\x1b[20x",  # a start marker that is not one
    ],
)
def test_input_without_escapes_in_a_paste_parses_as_textual_parses_it(data: str) -> None:
    assert parsed(PasteSafeParser(), data) == parsed(XTermParser(), data)


def test_two_pastes_and_a_partial_end_marker_inside_one() -> None:
    data = "\x1b[200~one \x1b[201 still one\x1b[201~\x1b[200~two\x1b[201~z"
    assert parsed(PasteSafeParser(), data) == [
        ("Paste", "one \x1b[201 still one"),
        ("Paste", "two"),
        ("Key", "z"),
    ]


def test_input_that_ends_inside_a_paste_still_delivers_it() -> None:
    assert parsed(PasteSafeParser(), "\x1b[200~cut \x1b[31moff") == [("Paste", "cut \x1b[31moff")]


def test_install_makes_the_linux_drivers_create_this_parser(monkeypatch) -> None:
    from textual.drivers import linux_driver, linux_inline_driver

    from tui.paste_parser import install

    monkeypatch.setattr(linux_driver, "XTermParser", XTermParser)
    monkeypatch.setattr(linux_inline_driver, "XTermParser", XTermParser)
    install()
    assert linux_driver.XTermParser is PasteSafeParser and linux_inline_driver.XTermParser is PasteSafeParser


def test_a_start_marker_split_by_an_escape_timeout_is_typing_not_a_paste(monkeypatch) -> None:
    """Review (session 18): Alt+[ (or Esc, [), a pause past the escape delay, then '200~' was taken for a
    paste's start, and everything typed after it (Ctrl+Q, clicks) was swallowed as an endless paste."""
    import textual._parser as textual_parser

    clock = [1000.0]
    monkeypatch.setattr(textual_parser, "get_time", lambda: clock[0])
    parser = PasteSafeParser()
    got = list(parser.feed("\x1b["))
    clock[0] += 60  # far past the escape delay
    got += list(parser.tick())
    got += list(parser.feed("200~hi\r\x11"))
    keys = [getattr(e, "key", None) for e in got]
    assert not any(isinstance(e, events.Paste) for e in got)
    assert keys[-4:] == ["h", "i", "enter", "ctrl+q"]
