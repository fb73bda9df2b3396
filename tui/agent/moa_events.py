"""The events of a Mixture-of-Agents fan-out, sent to the agent session's subscribers inside a turn.

:class:`MoaStart` names the reference models (in the configured order) and the aggregator before any of
them is called; :class:`MoaReferenceEnd` follows as each reference finishes or is left out (a failure, a
timeout, an abort), so a UI can fill in its group live; :class:`MoaEnd` carries the whole record and the id
of the ``kompakt.moa`` entry that stores it. The aggregator's reply then streams as a normal assistant
message.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.agent.moa_record import MoaRecord, ReferenceAnswer


@dataclass(frozen=True, slots=True)
class MoaStart:
    models: tuple[str, ...]
    aggregator: str


@dataclass(frozen=True, slots=True)
class MoaReferenceEnd:
    """Reference number ``index`` (its place in ``MoaStart.models``) answered, or failed: ``answer.error``."""

    index: int
    answer: ReferenceAnswer

    @property
    def ok(self) -> bool:
        return self.answer.ok


@dataclass(frozen=True, slots=True)
class MoaEnd:
    """The fan-out is over; ``entry_id`` is the stored ``kompakt.moa`` entry (None when nothing was stored)."""

    record: MoaRecord
    entry_id: str | None


MoaEvent = MoaStart | MoaReferenceEnd | MoaEnd
