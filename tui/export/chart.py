"""The context size over a session, for the HTML export: the samples and their inline SVG chart.

:func:`context_series` walks the path once. At each assistant reply the context size is the reply's
usage when it reported one (measured), else the running chars/4 estimate of the context so far
(pi's rule: the last usage plus what came after it). At each compaction the size drops from its
``tokensBefore`` to its ``tokensAfter`` (stored by kompakt; else the estimate of the context it
builds), and the running estimate starts again from there. :func:`chart_svg` draws the samples as a
line with each compaction as a drop, the threshold (window − reserveTokens) and the window. The SVG is
plain markup with presentation attributes: no script, no external asset, no ``style`` element, so it
stays within the page's Content-Security-Policy. Hovering a point shows its figures (SVG ``<title>``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from tui.compaction.token_text import format_tokens
from tui.compaction.tokens import (
    assistant_usage,
    calculate_context_tokens,
    estimate_tokens,
    sum_tokens,
    usage_is_estimate,
)
from tui.session.context import context_from_path, entry_to_message
from tui.session.entries import Entry

WIDTH, HEIGHT = 880, 240
SCALE_CAP = 2  # the scale reaches at most this many context windows
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 16, 36


@dataclass(frozen=True)
class Sample:
    """One point: a reply's context size, or a compaction's drop from ``tokens`` to ``after``."""

    kind: str  # "reply" | "compaction"
    entry_id: str
    tokens: int
    measured: bool
    after: int | None = None


def context_series(path: Sequence[Entry], tokens_after: Mapping[str, int] | None = None) -> list[Sample]:
    """The context size at each reply and each compaction on ``path``, in order.

    ``tokens_after`` may give a compaction's size after it when the caller knows it already (the
    timeline does): the context is then not rebuilt for it, which is most of the time on long paths.
    """
    samples: list[Sample] = []
    running = 0
    for index, entry in enumerate(path):
        if entry.get("type") == "compaction":
            details = entry.get("details") if isinstance(entry.get("details"), dict) else {}
            stored = (details.get("kompakt") or {}).get("tokensAfter") if isinstance(details, dict) else None
            known = (tokens_after or {}).get(str(entry.get("id")))
            if isinstance(stored, int):
                after = stored
            elif known is not None:
                after = known
            else:
                after = sum_tokens(context_from_path(path[: index + 1]).messages)
            before = int(entry.get("tokensBefore") or running)
            samples.append(Sample("compaction", str(entry.get("id")), before, False, after))
            running = after
            continue
        message = entry_to_message(entry)
        if message is None:
            continue
        usage = assistant_usage(message)
        if usage is not None:
            running = calculate_context_tokens(usage)
            # The offline model's usage is its own chars/4 guess: plotted as an estimate.
            samples.append(Sample("reply", str(entry.get("id")), running, not usage_is_estimate(message)))
        else:
            running += estimate_tokens(message)
            if message.get("role") == "assistant":
                samples.append(Sample("reply", str(entry.get("id")), running, False))
    return samples


def _short(tokens: int) -> str:
    return format_tokens(tokens, trim=False, millions=False)


def chart_svg(samples: Sequence[Sample], context_window: int, reserve_tokens: int) -> str:
    """An inline SVG of ``samples`` against the threshold and the window ("" when there is nothing)."""
    if not samples:
        return ""
    threshold = max(0, context_window - reserve_tokens)
    highest = max([context_window, *(s.tokens for s in samples)])
    # A figure far above the window (a wrong tokensBefore in a hand-edited or foreign file) would flatten
    # every other point to the axis: the scale stops at SCALE_CAP windows, and such points sit on its top
    # edge, marked, their real figure in their tooltip.
    top = (min(highest, SCALE_CAP * context_window) if context_window > 0 else highest) or 1
    plot_w, plot_h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM
    count = len(samples)

    def x(i: int) -> float:
        return _LEFT + (plot_w * i / (count - 1) if count > 1 else plot_w / 2)

    def y(tokens: int) -> float:
        return _TOP + plot_h * (1 - min(max(tokens, 0), top) / top)

    points: list[str] = []
    marks: list[str] = []
    for i, sample in enumerate(samples):
        px = x(i)
        points.append(f"{px:.1f},{y(sample.tokens):.1f}")
        if sample.kind == "compaction" and sample.after is not None:
            points.append(f"{px:.1f},{y(sample.after):.1f}")
            label = f"compaction {sample.entry_id}: {sample.tokens:,} → {sample.after:,} tokens"
            marks.append(
                f'<g class="compaction"><line x1="{px:.1f}" y1="{y(sample.tokens):.1f}" x2="{px:.1f}" '
                f'y2="{y(sample.after):.1f}" stroke="#b4009e" stroke-width="3"/>'
                f'<circle cx="{px:.1f}" cy="{y(sample.tokens):.1f}" r="4" fill="#b4009e"><title>{escape(label)}'
                f'</title></circle><text x="{px + 4:.1f}" y="{y(sample.after) - 4:.1f}" font-size="10" '
                f'fill="#b4009e">{_short(sample.tokens)} → {_short(sample.after)}</text></g>'
            )
        else:
            how = "measured" if sample.measured else "estimated"
            label = f"reply {sample.entry_id}: {sample.tokens:,} tokens ({how})"
            fill = "#1f6feb" if sample.measured else "#ffffff"
            marks.append(
                f'<circle class="reply" cx="{px:.1f}" cy="{y(sample.tokens):.1f}" r="2.5" fill="{fill}" '
                f'stroke="#1f6feb"><title>{escape(label)}</title></circle>'
            )
        if sample.tokens > top:
            marks.append(
                f'<text class="off-scale" x="{px:.1f}" y="{_TOP + 10}" font-size="10" text-anchor="middle" '
                f'fill="#cf222e">▲ {_short(sample.tokens)}</text>'
            )
    right = WIDTH - _RIGHT
    lines = [
        (context_window, "#57606a", "", f"window {context_window:,}"),
        (
            threshold,
            "#cf222e",
            ' stroke-dasharray="6 4"',
            f"threshold {threshold:,} (window − reserve {reserve_tokens:,})",
        ),
    ]
    guides = "".join(
        f'<line class="guide" x1="{_LEFT}" y1="{y(v):.1f}" x2="{right}" y2="{y(v):.1f}" stroke="{color}"{dash}/>'
        f'<text x="{right}" y="{y(v) - 4:.1f}" font-size="11" text-anchor="end" fill="{color}">{escape(text)}</text>'
        for v, color, dash, text in lines
    )
    axis = (
        f'<line x1="{_LEFT}" y1="{y(0):.1f}" x2="{right}" y2="{y(0):.1f}" stroke="#8c959f"/>'
        f'<text x="{_LEFT - 6}" y="{y(0):.1f}" font-size="11" text-anchor="end" fill="#57606a">0</text>'
        f'<text x="{_LEFT - 6}" y="{y(top) + 10:.1f}" font-size="11" text-anchor="end" fill="#57606a">'
        f"{_short(top)}</text>"
        f'<text x="{_LEFT + plot_w / 2:.1f}" y="{HEIGHT - 8}" font-size="11" text-anchor="middle" '
        f'fill="#57606a">replies and compactions, in order ({count})</text>'
    )
    replies = sum(1 for s in samples if s.kind == "reply")
    compactions = count - replies
    description = (
        f"Context size over the session: {replies} replies and {compactions} compactions; "
        f"threshold {threshold:,} tokens, window {context_window:,}."
    )
    return (
        f'<svg class="context-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="100%" role="img" aria-label="{escape(description)}"><title>{escape(description)}</title>'
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>{guides}{axis}'
        f'<polyline points="{" ".join(points)}" fill="none" stroke="#1f6feb" stroke-width="1.5"/>'
        f"{''.join(marks)}</svg>"
    )
