"""The errors a compaction or a branch summary can end with, shared by the summarizer and the engine.

:class:`SummaryError` means the summary text could not be produced (the model or the remote endpoint
failed, or answered with nothing); :class:`CompactionCancelled` means a hook vetoed the compaction;
:class:`CompactionFailed` is what a failed manual compaction raises to its caller, after the end event
said so (pi 0.73.1). A user abort is not an error here: it is ``asyncio.CancelledError`` and simply
propagates.
"""

from __future__ import annotations


class SummaryError(Exception):
    """The summarizer failed: a provider error, a bad remote answer or an empty reply."""


class CompactionCancelled(Exception):
    """A ``session_before_compact`` hook cancelled the compaction; nothing was written."""

    def __init__(self, message: str = "Compaction cancelled") -> None:
        super().__init__(message)


class CompactionFailed(Exception):
    """A manual compaction failed; the message is the ``compaction_end`` event's ``errorMessage``."""
