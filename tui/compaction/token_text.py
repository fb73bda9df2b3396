"""The short forms of a token count people read on screen and in exports: 950, 12.3k, 45k, 1.5M, 2B.

Every place that shows a count calls :func:`format_tokens`. Its defaults are the timeline's form (950, 8.4k,
1k, 1.2M); what differs elsewhere (the status bar's ``10.0k``, the model picker's whole ``200k``, pi's
half-up ``45k`` in a compaction title, the MoA group's tenths below 10k only) is a keyword, so the rules
live in one function and one test table. A figure of a billion or more (a foreign or hand-edited file can
hold one) is in billions or trillions in every form, never ``1000000M`` or ``1000000000.0k``.
"""

from __future__ import annotations

import math


def recorded_count(value: object) -> int | None:
    """A count read back from a session file (tokens, milliseconds), or None when it is no count.

    Any writer can store a negative, NaN, boolean or absurd figure; every view reads it through this one
    rule, so the divider, the timeline, the inspector and the context card agree.
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return int(value) if 0 <= value < 10**15 else None


def format_tokens(
    tokens: float,
    *,
    trim: bool = True,
    millions: bool = True,
    whole_k_from: float = math.inf,
    k_from: float = 1_000,
    half_up: bool = False,
) -> str:
    """``tokens`` as is below ``k_from``; in thousands with one decimal (``12.3k``) below ``whole_k_from``
    and whole (``45k``) from there; in millions (``1.5M``) from a million when ``millions``; in billions
    (``2.5B``) and trillions (``1T``) from a billion, whatever the keywords.

    ``trim`` drops a ``.0`` (``1k``, ``2M`` rather than ``1.0k``, ``2.0M``); ``half_up`` rounds whole thousands as JavaScript's
    ``Math.round`` does (pi's titles), instead of Python's round half to even. The thresholds apply to the
    size before rounding, so 999,999 is ``1000k`` and 999.6 is ``1000``.
    """
    size = abs(tokens)
    if size < k_from:
        return f"{tokens:.0f}"
    for scale, unit in _HUGE:
        if size >= scale:
            return _scaled(tokens / scale, 1, trim) + unit
    if millions and size >= 1_000_000:
        return _scaled(tokens / 1_000_000, 1, trim) + "M"
    if size >= whole_k_from:
        if half_up:
            return f"{math.floor((tokens + 500) / 1000)}k"
        return _scaled(tokens / 1000, 0, trim) + "k"
    return _scaled(tokens / 1000, 1, trim) + "k"


# Checked largest first; past a trillion the figure stays in trillions (recorded counts end below 10**15).
_HUGE = ((1_000_000_000_000, "T"), (1_000_000_000, "B"))


def _scaled(value: float, decimals: int, trim: bool) -> str:
    text = f"{value:.{decimals}f}"
    return text.removesuffix(".0") if trim else text
