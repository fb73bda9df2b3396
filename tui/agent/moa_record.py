"""What a Mixture-of-Agents fan-out produced, and how it is stored in the session.

Each reference model's outcome is a :class:`ReferenceAnswer` (its text, tokens, cost, time, or the error
that left it out). A whole fan-out is a :class:`MoaRecord`, stored as a ``custom`` entry (customType
``kompakt.moa``) just before the aggregated assistant reply, so a reload can show the reference answers.
pi ignores ``custom`` entries and kompakt's context builder never turns them into messages, so the
reference answers never reach the context of a later turn. The stored data is plain camelCase JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tui.session.entries import MOA_CUSTOM_TYPE, Entry, is_custom


@dataclass(frozen=True, slots=True)
class ReferenceAnswer:
    """One reference model's answer; ``error`` is set (and ``text`` may be partial) when it was left out."""

    model: str
    text: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_data(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "text": self.text,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cost": self.cost,
            "durationMs": round(self.seconds * 1000),
            "error": self.error,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> ReferenceAnswer:
        """Read a stored answer leniently: a hand-edited or partial entry still displays."""
        error = data.get("error")
        return cls(
            model=str(data.get("model") or "?"),
            text=str(data.get("text") or ""),
            input_tokens=_int(data.get("inputTokens")),
            output_tokens=_int(data.get("outputTokens")),
            cost=_float(data.get("cost")),
            seconds=_float(data.get("durationMs")) / 1000,
            error=None if error is None else str(error),
        )


@dataclass(frozen=True, slots=True)
class MoaRecord:
    """A fan-out: the answers in the configured order, the aggregator that acts on them, and how it ended."""

    aggregator: str
    references: tuple[ReferenceAnswer, ...] = field(default_factory=tuple)
    aborted: bool = False

    @property
    def answered(self) -> tuple[ReferenceAnswer, ...]:
        return tuple(answer for answer in self.references if answer.ok)

    @property
    def failed(self) -> tuple[ReferenceAnswer, ...]:
        return tuple(answer for answer in self.references if not answer.ok)

    @property
    def all_failed(self) -> bool:
        """Every reference was left out, so the aggregator answers alone."""
        return not self.answered

    @property
    def cost(self) -> float:
        return sum(answer.cost for answer in self.references)

    def to_data(self) -> dict[str, Any]:
        return {
            "aggregator": self.aggregator,
            "references": [answer.to_data() for answer in self.references],
            "allFailed": self.all_failed,
            "aborted": self.aborted,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> MoaRecord:
        references = data.get("references")
        return cls(
            aggregator=str(data.get("aggregator") or "?"),
            references=tuple(
                ReferenceAnswer.from_data(item)
                for item in (references if isinstance(references, list) else ())
                if isinstance(item, Mapping)
            ),
            aborted=bool(data.get("aborted")),
        )


def moa_record(entry: Entry) -> MoaRecord | None:
    """The record a ``kompakt.moa`` entry holds; None for any other entry."""
    if not is_custom(entry, MOA_CUSTOM_TYPE):
        return None
    data = entry.get("data")
    return MoaRecord.from_data(data if isinstance(data, Mapping) else {})


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _float(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
