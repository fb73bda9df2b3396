"""Output limits shared by the tools: at most 2,000 lines and 50 KB reach the model per call.

``truncate_tail`` keeps the end of a text (a command's last lines matter most); ``cut_utf8`` shortens one
over-long line without splitting a character. Line counts treat a final newline as ending the last line,
not as starting an empty one.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_LINES = 2000
MAX_BYTES = 50 * 1024


def cut_utf8(text: str, max_bytes: int, *, keep_end: bool = False) -> str:
    """``text`` shortened to at most ``max_bytes`` UTF-8 bytes, from the start or (``keep_end``) the end."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    part = data[len(data) - max_bytes :] if keep_end else data[:max_bytes]
    # "ignore" drops only the partial character at the cut.
    return part.decode("utf-8", errors="ignore")


def split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True)
class Truncation:
    """The kept text and what was dropped: ``first_line`` is the 1-based number of the first kept line."""

    text: str
    truncated: bool
    total_lines: int
    kept_lines: int
    first_line: int
    # True when even the last line alone was over the byte limit and only its end is kept.
    partial_line: bool = False


def truncate_tail(text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep whole lines from the end of ``text`` while both limits hold."""
    lines = split_lines(text)
    total = len(lines)
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        cost = len(line.encode("utf-8")) + (1 if kept else 0)
        if len(kept) >= max_lines or size + cost > max_bytes:
            break
        kept.append(line)
        size += cost
    if not kept and lines:
        tail = cut_utf8(lines[-1], max_bytes, keep_end=True)
        return Truncation(tail, True, total, 1, total, partial_line=True)
    kept.reverse()
    return Truncation("\n".join(kept), len(kept) < total, total, len(kept), total - len(kept) + 1)


def head_within_bytes(lines: list[str], max_bytes: int = MAX_BYTES) -> tuple[list[str], bool]:
    """The leading lines that fit in ``max_bytes`` when joined by newlines, and whether any were dropped."""
    size = 0
    for count, line in enumerate(lines):
        size += len(line.encode("utf-8")) + (1 if count else 0)
        if size > max_bytes:
            return lines[:count], True
    return lines, False


def capped_listing(items: list[str], more: bool) -> tuple[str, int, bool]:
    """The text of a result list (grep hits, found paths) cut to the byte cap.

    Returns the text, how many items it shows, and whether anything was left out (``more``: the
    search itself stopped at its limit).
    """
    shown, cut = head_within_bytes(items)
    return "\n".join(shown), len(shown), more or cut
