"""R6: escape sequences and markup in model or tool output never style or control the terminal."""

from __future__ import annotations

import pytest

from tui.session.sanitize import sanitize
from widgets.safe_text import safe_text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("plain", "plain"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b]0;evil title\x07after", "after"),
        ("\x1b]52;c;ZXZpbA==\x1b\\after", "after"),  # OSC 52 clipboard write
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 hyperlink
        ("\x1bPq#0;2;0;0;0\x1b\\sixel", "sixel"),  # DCS
        ("a\x9b31mb", "a31mb"),  # 8-bit CSI introducer dropped
        ("bell\x07 back\x08space", "bell backspace"),
        ("cr\rlf\r\nend", "cr\nlf\nend"),
        ("tab\tx", "tab x"),
        ("lone \x1b escape", "lone  escape"),
    ],
)
def test_sanitize(raw: str, expected: str) -> None:
    assert sanitize(raw) == expected


def test_markup_stays_literal() -> None:
    text = safe_text("[bold red]not bold[/] [link=http://x]y[/link]")
    assert text.plain == "[bold red]not bold[/] [link=http://x]y[/link]"
    assert text.spans == []
