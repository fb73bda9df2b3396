"""Where a compaction cuts the path: pi's ``findCutPoint`` plus kompakt's fix for pi issue #7201.

Walking back from the newest entry, pi adds up the estimated tokens of ``message`` entries until
``keep_recent_tokens`` is reached, then cuts at the first valid cut point at or after that entry (a
tool result is never one, so it stays with its call). Settings and other non-message entries just
before the cut are pulled into the kept region. A cut that is not at a user message splits a turn.
The one deliberate deviation (DESIGN.md deviation 2) is marked where it happens.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from tui.compaction.tokens import estimate_tokens
from tui.session.entries import Entry

# Entry types that are user-role context messages: valid cut points and turn starts.
_USER_ROLE_ENTRIES = frozenset({"branch_summary", "custom_message"})
_TURN_START_ROLES = frozenset({"user", "bashExecution"})


@dataclass(frozen=True)
class CutPoint:
    """The first kept index, the start of the turn the cut splits (or -1), and whether it splits one.

    ``tail_over_budget`` is True when kompakt's #7201 fix moved the cut (DESIGN.md deviation 2).
    """

    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool
    tail_over_budget: bool = False


def _role(entry: Entry) -> str | None:
    return (entry.get("message") or {}).get("role")


def find_valid_cut_points(entries: Sequence[Entry], start: int, end: int) -> list[int]:
    """Indices in ``[start, end)`` where kept history may begin: any message but a tool result."""
    points: list[int] = []
    for index in range(start, end):
        entry = entries[index]
        kind = entry.get("type")
        if (kind == "message" and _role(entry) != "toolResult") or kind in _USER_ROLE_ENTRIES:
            points.append(index)
    return points


def find_turn_start_index(entries: Sequence[Entry], index: int, start: int) -> int:
    """The nearest turn start at or before ``index`` (down to ``start``), or -1."""
    for i in range(index, start - 1, -1):
        entry = entries[i]
        kind = entry.get("type")
        if kind in _USER_ROLE_ENTRIES or (kind == "message" and _role(entry) in _TURN_START_ROLES):
            return i
    return -1


def find_cut_point(entries: Sequence[Entry], start: int, end: int, keep_recent_tokens: int) -> CutPoint:
    """pi's cut: keep about ``keep_recent_tokens`` of the newest messages in ``[start, end)``."""
    points = find_valid_cut_points(entries, start, end)
    if not points:
        return CutPoint(start, -1, False)

    cut = points[0]  # pi's default keeps everything
    tail_over_budget = False
    accumulated = 0
    for i in range(end - 1, start - 1, -1):
        entry = entries[i]
        # Only `message` entries count; custom_message and branch_summary entries do not (pi quirk).
        if entry.get("type") != "message":
            continue
        accumulated += estimate_tokens(entry["message"])
        if accumulated >= keep_recent_tokens:
            at_or_after = bisect_left(points, i)
            if at_or_after < len(points):
                cut = points[at_or_after]
            elif points[-1] > points[0]:
                # Deviation 2 (pi #7201): no cut point at or after the crossing, so pi would fall back
                # to points[0] and summarise nothing although the tail is over budget. Cut at the
                # last valid cut point before the crossing instead, so that something is summarised.
                cut = points[-1]
                tail_over_budget = True
            break

    # Pull settings, labels, custom entries etc. sitting just before the cut into the kept region.
    while cut > start and entries[cut - 1].get("type") not in ("message", "compaction"):
        cut -= 1

    cut_entry = entries[cut]
    if cut_entry.get("type") == "message" and _role(cut_entry) == "user":
        return CutPoint(cut, -1, False, tail_over_budget)
    turn_start = find_turn_start_index(entries, cut, start)
    return CutPoint(cut, turn_start, turn_start != -1, tail_over_budget)
