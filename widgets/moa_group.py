"""The reference answers of a Mixture-of-Agents turn: a collapsible group above the aggregated reply.

The group's title sums the fan-out up (how many references answered, tokens, cost, time, and whether the
aggregator had to answer alone); expanded, it lists one collapsed row per reference model in the configured
order, with its model, tokens, cost and time, or marked as failed with its error. It is rebuilt from a stored
``kompakt.moa`` custom entry (the chat pane shows such entries through :func:`moa_message`), and it can also
fill in live: ``ChatPane.begin_moa`` mounts it waiting, :meth:`MoaGroup.set_answer` shows each reference as
it ends and :meth:`MoaGroup.finish` takes the stored record. Everything from the models is sanitised and
shown literally.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from tui.agent.moa_record import MoaRecord, ReferenceAnswer, moa_record
from tui.compaction.token_text import format_tokens
from tui.session.entries import Entry, Message
from tui.session.sanitize import sanitize
from widgets.chat_messages import ChatMessage, plain

MOA_ROLE = "kompakt.moa"  # the chat pane's role for a MoA group (it is not a context message)
TITLE_ERROR_CHARS = 100


def moa_message(entry: Entry) -> Message | None:
    """The chat item for a stored ``kompakt.moa`` entry; None for any other entry."""
    record = moa_record(entry)
    return None if record is None else record_message(record)


def record_message(record: MoaRecord, waiting: Sequence[str] = ()) -> Message:
    message: Message = {"role": MOA_ROLE, "data": record.to_data()}
    if waiting:
        message["models"] = list(waiting)
    return message


def _tokens(tokens: int) -> str:
    return format_tokens(tokens, whole_k_from=10_000, trim=False, millions=False)


def _cost(cost: float) -> str:
    return f"${cost:.4f}" if cost else "$0"


def reference_heading(answer: ReferenceAnswer | None, model: str) -> str:
    """One reference's row title: a mark, the model and its figures, or why it was left out."""
    if answer is None:
        return f"… {model} · waiting"
    figures = f"{answer.seconds:.1f}s"
    if answer.ok:
        tokens = f"{_tokens(answer.input_tokens)} in / {_tokens(answer.output_tokens)} out tokens"
        return f"✓ {answer.model} · {tokens} · {_cost(answer.cost)} · {figures}"
    error = " ".join(str(answer.error).split())
    if len(error) > TITLE_ERROR_CHARS:
        error = error[: TITLE_ERROR_CHARS - 1] + "…"
    return f"✗ {answer.model} · failed after {figures}: {error}"


class ReferenceView(Collapsible):
    """One reference model's answer, collapsed to its heading."""

    DEFAULT_CSS = """
    ReferenceView { background: transparent; border-top: none; padding: 0; margin: 0; }
    ReferenceView > Contents { padding: 0 0 0 2; }
    ReferenceView.-waiting CollapsibleTitle { color: $text-muted; }
    ReferenceView.-failed CollapsibleTitle { color: $error; }
    ReferenceView .reference--error { color: $error; }
    """

    def __init__(self, model: str, answer: ReferenceAnswer | None = None) -> None:
        self.model = model
        self.answer = answer
        super().__init__(*self._body(), title=Content(""), collapsed=True)
        self._show(answer)

    def _show(self, answer: ReferenceAnswer | None) -> None:
        self.answer = answer
        self.title = Content(sanitize(reference_heading(answer, self.model)))
        self.set_class(answer is None, "-waiting")
        self.set_class(answer is not None and not answer.ok, "-failed")

    def _body(self) -> list[Widget]:
        answer = self.answer
        if answer is None:
            return [Static(Content("waiting for the answer…"))]
        widgets: list[Widget] = []
        if not answer.ok:
            widgets.append(Static(plain(str(answer.error)), classes="reference--error"))
        if answer.text:
            from widgets.chunked_markdown import ChatMarkdown

            widgets.append(ChatMarkdown(sanitize(answer.text)))
        return widgets

    async def set_answer(self, answer: ReferenceAnswer) -> None:
        self._show(answer)
        if not self.is_mounted:
            self._contents_list[:] = self._body()
            return
        contents = self.query_one(Collapsible.Contents)
        await contents.remove_children()
        await contents.mount_all(self._body())


class MoaGroup(ChatMessage):
    """A MoA turn's reference answers; ``message`` is a :func:`record_message` item."""

    DEFAULT_CSS = """
    MoaGroup { border-left: wide $secondary 60%; }
    MoaGroup > .moa--group { background: transparent; border-top: none; padding: 0; margin: 0; }
    MoaGroup > .moa--group > CollapsibleTitle { color: $secondary; }
    MoaGroup > .moa--group > Contents { padding: 0 0 0 1; }
    MoaGroup.-degraded > .moa--group > CollapsibleTitle { color: $warning; }
    """
    HELP = """
## Reference answers (Mixture of Agents)
The drafts the reference models wrote before the aggregator gave the reply below. They are kept in the
session for you to read; they are never sent to the model in later turns.
- **enter** or a click on the title: show or hide them; then on each model to read its answer
- **ctrl+c**: copy every reference answer
"""
    ACTIONS: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        message: Message,
        entry_id: str | None = None,
        *,
        on_finish: Callable[[Message, str | None], None] | None = None,
    ) -> None:
        super().__init__(message, entry_id)
        self.record = MoaRecord.from_data(message.get("data") or {})
        self._on_finish = on_finish
        models = message.get("models") or [answer.model for answer in self.record.references]
        self.models: list[str] = [str(model) for model in models]
        # Live groups start with every model waiting; a stored record has them all.
        by_index: list[ReferenceAnswer | None] = [None] * len(self.models)
        for index, answer in enumerate(self.record.references[: len(self.models)]):
            by_index[index] = answer
        self.answers = by_index
        self.references = [
            ReferenceView(model, answer) for model, answer in zip(self.models, by_index, strict=True)
        ]
        self._group = Collapsible(
            *self.references, title=self.summary(), collapsed=True, classes="moa--group"
        )
        self._update_class()

    @property
    def finished(self) -> bool:
        return all(answer is not None for answer in self.answers)

    def summary(self) -> Content:
        """The group's title: the fan-out in one line."""
        done = [answer for answer in self.answers if answer is not None]
        answered = [answer for answer in done if answer.ok]
        total = len(self.answers)
        aggregator = sanitize(self.record.aggregator)
        if len(done) < total:
            return Content(f"◇ Mixture of agents · {len(done)}/{total} references done…")
        tokens = _tokens(sum(answer.tokens for answer in done))
        cost = _cost(sum(answer.cost for answer in done))
        seconds = max((answer.seconds for answer in done), default=0.0)
        text = f"◇ {len(answered)}/{total} reference answers · {tokens} tokens · {cost} · {seconds:.1f}s"
        if self.record.aborted:
            text += " · aborted"
        elif not answered:
            text += f" · none answered: {aggregator} answered alone"
        else:
            text += f" · aggregated by {aggregator}"
        return Content(text)

    def copy_text(self) -> str:
        parts = []
        for model, answer in zip(self.models, self.answers, strict=True):
            heading = reference_heading(answer, model)
            body = "" if answer is None else answer.text
            parts.append(f"## {heading}\n\n{body}".rstrip())
        return "\n\n".join(parts)

    def compose(self) -> ComposeResult:
        yield self._group

    def _update_class(self) -> None:
        failed = any(answer is not None and not answer.ok for answer in self.answers)
        self.set_class(failed or self.record.aborted, "-degraded")

    async def set_answer(self, index: int, answer: ReferenceAnswer) -> None:
        """Reference ``index`` (its place in the configured order) ended."""
        if not 0 <= index < len(self.answers):
            return
        self.answers[index] = answer
        await self.references[index].set_answer(answer)
        self._group.title = self.summary()
        self._update_class()

    async def finish(self, record: MoaRecord, entry_id: str | None) -> None:
        """Take the stored record: every reference's final answer, and the entry it lives in."""
        self.record, self.entry_id = record, entry_id
        self.message = record_message(record)
        for index, answer in enumerate(record.references[: len(self.answers)]):
            if self.answers[index] != answer:
                self.answers[index] = answer
                await self.references[index].set_answer(answer)
        self._group.title = self.summary()
        self._update_class()
        if self._on_finish is not None:
            self._on_finish(self.message, entry_id)
