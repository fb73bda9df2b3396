"""Where the next compaction's range starts and what it measures: pi 0.73.1's rule, in one place.

After a previous compaction the range a new one may summarise starts at that compaction's
``firstKeptEntryId`` (pi #2608, fixed in 0.63.1): the messages it kept are summarised again or kept
again, never dropped. When that id is not on the path the range starts right after the compaction.
The previous compaction entry may then lie inside the range; it contributes no message
(:func:`compaction_input_message`) and is never a cut point. ``tokensBefore`` is pi's
``estimateContextTokens`` over the context the path builds (the summary, its kept entries, what
followed), so a kept reply from before the latest compaction still counts with its usage.

The keep-recent planner, the head-tail planner, the timeline's keep span and what-if, ``kompakt plan``
and the stored ``tokensBefore`` all call these functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tui.compaction.tokens import estimate_context_tokens
from tui.session.context import context_from_path, entry_to_message
from tui.session.entries import RESET_BOUNDARY_TYPE, Entry, Message, iso_to_ms


@dataclass(frozen=True)
class Boundary:
    """``previous``: path index of the latest compaction (-1 if none); ``start``: where the range starts."""

    previous: int
    start: int


def latest_compaction_index(path: Sequence[Entry], end: int | None = None) -> int:
    """Path index of the latest ``compaction`` entry (before ``end``), or -1."""
    for index in range(len(path) - 1 if end is None else end - 1, -1, -1):
        if path[index].get("type") == "compaction":
            return index
    return -1


def compaction_boundary(
    path: Sequence[Entry], end: int | None = None, index_of: Mapping[str, int] | None = None
) -> Boundary:
    """pi's ``boundaryStart``: the previous compaction's first kept entry, else just after it, else 0.

    An oh-my-pi ``reset_boundary`` (its ``/clear``) after the latest compaction starts the context
    afresh (``context_from_path``), so the range starts after it and there is no previous compaction
    to build on: what the user cleared is neither summarised nor carried forward.

    ``end`` reads the path as ``path[:end]`` without copying it, and ``index_of`` (each id's first
    index on ``path``) finds the first kept entry without a scan: the history view asks this for every
    compaction of a long path.
    """
    end = len(path) if end is None else end
    previous = latest_compaction_index(path, end)
    reset = next((i for i in range(end - 1, previous, -1) if path[i].get("type") == RESET_BOUNDARY_TYPE), -1)
    if reset >= 0:
        return Boundary(-1, reset + 1)
    if previous < 0:
        return Boundary(-1, 0)
    first_kept = path[previous].get("firstKeptEntryId")
    # pi searches the whole path (findIndex), not only the part before the compaction.
    if index_of is not None and isinstance(first_kept, str):
        found = index_of.get(first_kept)
        return Boundary(previous, found if found is not None and found < end else previous + 1)
    start = next((i for i in range(end) if path[i].get("id") == first_kept), previous + 1)
    return Boundary(previous, start)


def compaction_input_message(entry: Entry) -> Message | None:
    """The message an entry gives the summarizer: compaction entries give none (pi 0.73.1).

    A ``branch_summary`` becomes a branchSummary message even when its summary is empty, as in pi's
    ``getMessageFromEntryForCompaction`` (the context builder drops those).
    """
    kind = entry.get("type")
    if kind == "compaction":
        return None
    if kind == "branch_summary" and not entry.get("summary"):
        return {
            "role": "branchSummary",
            "summary": entry.get("summary") or "",
            "fromId": entry.get("fromId"),
            "timestamp": iso_to_ms(entry.get("timestamp")),
        }
    return entry_to_message(entry)


def tokens_before(path: Sequence[Entry]) -> int:
    """pi's stored ``tokensBefore``: ``estimateContextTokens`` of the context built from the path."""
    return estimate_context_tokens(context_from_path(path).messages).tokens
