"""Make model and tool output inert before it reaches the terminal.

Model output, tool output and session files are untrusted: Rich markup (``[bold]``), ANSI CSI
sequences, OSC sequences (titles, hyperlinks, clipboard writes) and other C0/C1 controls must be shown
literally or dropped, never interpreted. Everything displayed from a session goes through
:func:`sanitize` and is rendered as plain :class:`rich.text.Text` / Textual ``Content`` (no markup).
"""

from __future__ import annotations

import re

from rich.text import Text

# ESC-introduced sequences: CSI (ESC [ … final), OSC (ESC ] … BEL or ST), DCS/SOS/PM/APC (… ST), and
# two-character escapes. C1 controls (0x80–0x9f) include 8-bit CSI/OSC introducers.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, terminated by BEL or ST (or cut off)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
    r"|\x1b[@-Z\\-_]?"  # other two-character escapes, or a lone ESC
    r"|[\x80-\x9f]"  # C1 controls
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def sanitize(text: str) -> str:
    """Drop escape sequences and control characters; keep newlines and tabs (tabs become spaces)."""
    if not text:
        return ""
    text = _ESCAPES.sub("", text)
    text = _CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return text.expandtabs(4)


def safe_text(text: str, style: str = "") -> Text:
    """A Rich Text of untrusted content: sanitised, and never parsed as markup."""
    return Text(sanitize(text), style=style)
