"""Raw HTML in text bound for the Markdown export, made inert while code keeps its ``<``.

A Markdown renderer passes raw HTML through (``<script>``, ``<img onerror=…>``), so every ``<`` that a
renderer could read as the start of a tag becomes ``&lt;``, which renders as ``<``. Message text is
Markdown the model wrote, so :func:`escape_markdown_html` leaves code alone where a renderer is sure to
treat it as code: a fenced block whose fence starts the line (closed at the end of the text if the text
leaves it open, so that nothing after it changes meaning) and a backtick span within one line with no
``|`` (a table cell split could end it early). Where this is unsure it escapes: at worst a ``&lt;``
shows inside code, never a tag outside it. Names, headings and notes use :func:`escape_html`.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"(`{3,}|~{3,})(.*)")
_BACKTICKS = re.compile(r"`+")


def escape_html(text: str) -> str:
    """Every ``<`` as ``&lt;``: no tag, comment or autolink can start."""
    return text.replace("<", "&lt;")


def _fence_opening(line: str) -> str | None:
    """The fence of a line that opens a fenced code block at the start of the line, else None."""
    match = _FENCE.match(line)
    if match is None:
        return None
    fence, info = match.groups()
    if fence[0] == "`" and "`" in info:  # a backtick fence's info string cannot hold a backtick
        return None
    return fence


def _closes(line: str, fence: str) -> bool:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return False
    run = len(stripped) - len(stripped.lstrip(fence[0]))
    return run >= len(fence) and not stripped[run:].strip()


def _escape_inline(line: str) -> str:
    """One line outside code blocks: ``<`` escaped except inside a single-line backtick span."""
    if "<" not in line:
        return line
    out: list[str] = []
    i = 0
    while i < len(line):
        char = line[i]
        if char == "\\" and i + 1 < len(line):
            out.append(line[i : i + 2])  # an escaped character, ``\\<`` included, is literal
            i += 2
            continue
        if char == "`":
            run = _BACKTICKS.match(line, i).group()  # type: ignore[union-attr]
            end = _closing_run(line, i + len(run), len(run))
            if end is not None and "|" not in line[i:end]:
                out.append(line[i:end])
                i = end
                continue
            out.append(run)
            i += len(run)
            continue
        out.append("&lt;" if char == "<" else char)
        i += 1
    return "".join(out)


def _closing_run(line: str, start: int, length: int) -> int | None:
    """The end of the first backtick run of exactly ``length`` at or after ``start``."""
    for match in _BACKTICKS.finditer(line, start):
        if len(match.group()) == length:
            return match.end()
    return None


def escape_markdown_html(text: str) -> str:
    """Markdown ``text`` with raw HTML made inert, code left as written (see the module docstring)."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        if fence is not None:
            out.append(line)
            if _closes(line, fence):
                fence = None
            continue
        fence = _fence_opening(line)
        out.append(line if fence is not None else _escape_inline(line))
    if fence is not None:
        out.append(fence)  # close what the text left open, so the rest of the export stays outside it
    return "\n".join(out)
