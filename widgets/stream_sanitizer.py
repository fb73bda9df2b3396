"""Sanitise streamed model output chunk by chunk, with the same result as sanitising it whole.

A delta can end in the middle of an escape sequence (``"\\x1b"`` now, ``"[31m"`` next) or between
``"\\r"`` and ``"\\n"``; tabs expand by column, which depends on earlier chunks. :class:`StreamSanitizer`
holds such a tail back until the next delta decides it, so that the joined output equals
``sanitize(joined input)`` (the chat pane's streamed text then matches the final rendering).
"""

from __future__ import annotations

from tui.session.sanitize import sanitize

# An escape still open after this many characters is flushed (dropped by sanitize) rather than held.
_MAX_HELD = 4096
_PROBE = "Z"
_TAB_STANDIN = "\uffff"  # a noncharacter: sanitize keeps it, so tabs survive and expand later


def sanitize_keep_tabs(text: str) -> str:
    """:func:`sanitize` without expanding tabs (they can sit inside escape sequences, so keep them in place)."""
    if _TAB_STANDIN in text:
        return "\t".join(sanitize(piece) for piece in text.split("\t"))
    return sanitize(text.replace("\t", _TAB_STANDIN)).replace(_TAB_STANDIN, "\t")


def _escape_open(tail: str) -> bool:
    """True when ``tail`` (starting with ESC) could still grow into a longer escape sequence."""
    # A complete sequence leaves a following character alone; an open one swallows it.
    return not sanitize(tail + _PROBE).endswith(_PROBE)


class StreamSanitizer:
    """Feed raw deltas, get sanitised text; :meth:`flush` returns whatever was held back."""

    def __init__(self) -> None:
        self._held = ""
        self._column = 0

    def feed(self, delta: str) -> str:
        text = self._held + delta
        cut = len(text)
        if text.endswith("\r"):
            cut -= 1
        escape = text.rfind("\x1b", max(0, len(text) - _MAX_HELD))
        if escape != -1 and _escape_open(text[escape:cut]):
            cut = escape
        self._held = text[cut:]
        return self._emit(text[:cut])

    def flush(self) -> str:
        text, self._held = self._held, ""
        return self._emit(text)

    def _emit(self, raw: str) -> str:
        # Sanitise, then expand tabs with the column carried over from earlier chunks.
        clean = sanitize_keep_tabs(raw)
        if "\t" in clean:
            clean = (" " * self._column + clean).expandtabs(4)[self._column :]
        newline = clean.rfind("\n")
        self._column = len(clean) - newline - 1 if newline != -1 else self._column + len(clean)
        return clean
