"""The one sanitiser for untrusted text: what a session file, a model or a tool says, made inert for display.

Such text may carry ANSI CSI sequences, OSC sequences (window titles, hyperlinks, OSC 52 clipboard
writes), DCS/APC strings, 8-bit C1 controls and bidirectional overrides that reorder what the reader
sees (Trojan Source). :func:`sanitize` drops the escape sequences and control characters and shows the
bidi controls as ``<U+202E>``; the TUI, the CLI and the exports all call it, and none of them parses
the result as markup. :func:`reveal_parts` keeps everything but makes every control visible
(``<ESC>]52;…<BEL>``): the approval dialog shows a command that way, because what runs is the raw text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

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

# Bidirectional formatting characters: the embeddings and overrides (LRE RLE PDF LRO RLO), the isolates
# (LRI RLI FSI PDI) and the invisible marks (ALM LRM RLM). Any of them can make text read differently
# from how it runs, so they are shown, never applied.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")

# For reveal_parts: every control and invisible format character a command could hide something with.
_HIDDEN = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}\u200b-\u200d\u2028\u2029\u2060\ufeff]")
_C0_NAMES = {0x00: "NUL", 0x07: "BEL", 0x08: "BS", 0x0D: "CR", 0x1B: "ESC", 0x7F: "DEL"}


def codepoint_name(char: str) -> str:
    """A control shown as text: ``<ESC>``, ``<CR>``, ``<U+009B>``, ``<U+202E>``."""
    code = ord(char)
    return f"<{_C0_NAMES.get(code) or f'U+{code:04X}'}>"


def _show_bidi(text: str) -> str:
    if _BIDI.search(text) is None:  # the common case costs one scan
        return text
    return _BIDI.sub(lambda m: codepoint_name(m.group()), text)


def sanitize(text: str) -> str:
    """Drop escape sequences and control characters; keep newlines and tabs (tabs become spaces);
    show bidi controls as ``<U+…>``."""
    if not text:
        return ""
    text = _ESCAPES.sub("", text)
    text = _CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return _show_bidi(text.expandtabs(4))


def reveal_parts(text: str) -> Iterator[tuple[str, bool]]:
    """``text`` split into ``(piece, is_control)``: controls named (``<ESC>``), the rest unchanged.

    Newlines and tabs stay as they are; nothing is dropped, so the pieces say exactly what ``text`` holds.
    """
    start = 0
    for match in _HIDDEN.finditer(text):
        if match.start() > start:
            yield text[start : match.start()], False
        yield codepoint_name(match.group()), True
        start = match.end()
    if start < len(text):
        yield text[start:], False


def reveal(text: str) -> str:
    """``text`` with every control character shown by name, see :func:`reveal_parts`."""
    return "".join(piece for piece, _ in reveal_parts(text))
