"""The iteration budget of one user turn: how many model calls the agent may make before it hands back.

As in Hermes (reference hermes-compressor §5): a fresh budget per user turn, ``consume()`` before each model
call (False once it is spent), and ``refund()`` for a call that should not count, such as the request that
overflowed the context and is repeated after a compaction. The agent runs on one event loop, so a plain
counter suffices where Hermes needs a lock for its threads.
"""

from __future__ import annotations


class IterationBudget:
    """A counter of model calls, capped at ``max_total``."""

    def __init__(self, max_total: int) -> None:
        if max_total < 1:
            raise ValueError("an iteration budget needs at least one iteration")
        self.max_total = max_total
        self._used = 0

    @property
    def used(self) -> int:
        return self._used

    @property
    def remaining(self) -> int:
        return max(0, self.max_total - self._used)

    def consume(self) -> bool:
        """Take one iteration; False (and nothing taken) when the budget is spent."""
        if self._used >= self.max_total:
            return False
        self._used += 1
        return True

    def refund(self) -> None:
        """Give one iteration back; never below zero."""
        if self._used > 0:
            self._used -= 1
