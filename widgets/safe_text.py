"""Rich renderables of untrusted text, built on the core sanitiser (:mod:`tui.session.sanitize`).

Model output, tool output and session files are untrusted: everything displayed from them goes through
:func:`~tui.session.sanitize.sanitize` and becomes plain :class:`rich.text.Text` (never markup).
:func:`revealed_text` is for text that will run (a command to approve): nothing is dropped, and every
control character is shown by name in reverse video so that it cannot pass for typed text.
"""

from __future__ import annotations

from rich.text import Text

from tui.session.sanitize import reveal_parts, sanitize


def safe_text(text: str, style: str = "") -> Text:
    """A Rich Text of untrusted content: sanitised, and never parsed as markup."""
    return Text(sanitize(text), style=style)


def revealed_text(text: str, control_style: str = "reverse") -> Text:
    """``text`` whole, with its controls (``<ESC>``, ``<CR>``, ``<U+202E>``) named and styled."""
    out = Text()
    for piece, is_control in reveal_parts(text):
        out.append(piece, style=control_style if is_control else "")
    return out
