"""Hermes's ineffective-compaction breaker (reference hermes-compressor §4.2, #14694/#14695).

A compaction can only shrink messages; a system prompt and tool schemas form a floor no summary can
reach. So the verdict on an automatic compaction comes from the next real usage the provider reports,
not from kompakt's chars/4 estimate: still at or over the threshold is a strike, any reading under it
clears the count. After two strikes in a row automatic compaction stops for the session (manual
``/compact`` still works) and the user is told once why, with the figures and the ways out.
"""

from __future__ import annotations

from dataclasses import dataclass

import prompts

STRIKES = 2


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
