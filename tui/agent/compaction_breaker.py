"""Hermes's ineffective-compaction breaker (reference hermes-compressor §4.2, #14694/#14695).

A compaction can only shrink messages; a system prompt and tool schemas form a floor no summary can
reach. So the verdict on an automatic compaction comes from the next real usage the provider reports,
not from kompakt's chars/4 estimate: still at or over the threshold is a strike, any reading under it
clears the count. After two strikes in a row automatic compaction stops for the session (manual
``/compact`` still works) and the user is told once why, with the figures and the ways out.

The count is part of the session: every change is appended to the file (a ``kompakt.leaf`` marker that
restates the leaf, with a ``breaker`` field; pi ignores it and the leaf does not move), and a reopened
session starts from the latest one, so a tripped breaker stays tripped and a cleared one stays clear.
Only whether the warning was shown is not kept: a reopened session tells the user again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import prompts
from tui.session.entries import LEAF_CUSTOM_TYPE, Entry, is_custom

STRIKES = 2
STATE_KEY = "breaker"  # the field of the marker's data that holds the state


@dataclass
class CompactionBreaker:
    """The strike count of one agent session."""

    strikes: int = 0
    # The reported context size that set off the last automatic compaction, until the next usage judges it.
    pending: int | None = None
    # (reported before, reported after) of the latest ineffective compaction.
    last: tuple[int, int] | None = None
    warned: bool = False
    # The reply whose reading a skip was already counted against (the pre-prompt check sees it again).
    skipped_at: object = None

    @property
    def tripped(self) -> bool:
        return self.strikes >= STRIKES

    def compacted(self, tokens_before: int) -> None:
        """An automatic compaction was stored; the next real usage decides whether it helped."""
        self.pending = tokens_before

    def skipped(self, tokens: int, reply: object) -> None:
        """An automatic compaction found nothing to compact while ``reply`` said ``tokens``: a strike."""
        if reply != self.skipped_at:
            self.skipped_at = reply
            self.strikes += 1
            self.last = (tokens, tokens)

    def observe(self, reported: int, threshold: int) -> None:
        """A completed reply reported ``reported`` context tokens."""
        if reported < threshold:
            self.reset()
            return
        if self.pending is not None:
            self.strikes += 1
            self.last = (self.pending, reported)
            self.pending = None

    def reset(self) -> None:
        """A way out was taken (a reading under the threshold, another path, other settings)."""
        self.strikes, self.pending, self.last, self.warned = 0, None, None, False
        self.skipped_at = None

    def notice(self, threshold: int) -> str | None:
        """The warning for the first automatic compaction the breaker refuses; None after that."""
        if self.warned or not self.tripped:
            return None
        self.warned = True
        before, after = self.last or (0, 0)
        return prompts.render(
            "compaction_ineffective",
            strikes=str(self.strikes),
            before=f"{before:,}",
            after=f"{after:,}",
            threshold=f"{threshold:,}",
        )

    def state(self) -> dict[str, Any]:
        """What a reopened session needs (JSON): the count, the verdict pending and the figures."""
        return {
            "strikes": self.strikes,
            "pending": self.pending,
            "last": list(self.last) if self.last else None,
            "skippedAt": self.skipped_at if isinstance(self.skipped_at, int | str) else None,
        }

    @classmethod
    def restore(cls, state: Any) -> CompactionBreaker:
        """A breaker from a stored :meth:`state`; a damaged field starts from its default."""
        data = state if isinstance(state, dict) else {}

        def count(value: Any) -> int | None:
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

        last = data.get("last")
        pair = (count(last[0]), count(last[1])) if isinstance(last, list) and len(last) == 2 else (None, None)
        skipped = data.get("skippedAt")
        return cls(
            strikes=count(data.get("strikes")) or 0,
            pending=count(data.get("pending")),
            last=(pair[0], pair[1]) if pair[0] is not None and pair[1] is not None else None,
            skipped_at=skipped if isinstance(skipped, int | str) and not isinstance(skipped, bool) else None,
        )


def saved_state(entries: Sequence[Entry]) -> Any:
    """The latest breaker state in the file (file order, any branch), or None."""
    for entry in reversed(entries):
        if is_custom(entry, LEAF_CUSTOM_TYPE):
            data = entry.get("data")
            if isinstance(data, dict) and STATE_KEY in data:
                return data[STATE_KEY]
    return None
