"""The summary calls' text as it arrives, for a preview that shows the summary while it is written.

A caller that wants the live text wraps the compaction in :func:`streaming` with a sink; every summary
call made inside it (the history notes, a split turn's prefix, the short summary, in parallel) names its
part with :func:`summary_part`, and the summarize function that streams (the provider adapter) passes
each piece to :func:`emit`. The sink gets ``(part, text)``, or ``(part, None)`` when that call starts
over (a retry after part of it had streamed). Context variables carry both, so parallel calls keep their
own part and nothing is threaded through the compaction's signatures; outside :func:`streaming` (every
real compaction) :func:`emit` does nothing. No Textual here: the sink is the UI's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

PART_SUMMARY = "summary"
PART_TURN_PREFIX = "turn prefix"
PART_SHORT = "short summary"
PART_BRANCH = "branch summary"

SummarySink = Callable[[str, str | None], None]

_PART: ContextVar[str] = ContextVar("kompakt_summary_part", default=PART_SUMMARY)
_SINK: ContextVar[SummarySink | None] = ContextVar("kompakt_summary_sink", default=None)


@contextmanager
def streaming(sink: SummarySink | None) -> Iterator[None]:
    """Send the text of the summary calls started inside this block (tasks made here too) to ``sink``."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


@contextmanager
def summary_part(part: str) -> Iterator[None]:
    """The summary call made inside this block writes ``part``."""
    token = _PART.set(part)
    try:
        yield
    finally:
        _PART.reset(token)


def emit(text: str | None) -> None:
    """A piece of the current call's text (None: the call starts over); nothing without a sink."""
    sink = _SINK.get()
    if sink is not None:
        sink(_PART.get(), text)
