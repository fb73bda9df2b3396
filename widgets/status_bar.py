"""The one-line status bar: session name, model, context use, cost, litellm loading, tool iterations, a message.

Every field is a reactive; Textual only repaints when a value actually changes, so the lead can set
them as often as it likes (for example on every streamed usage update). The context figure says
where it comes from: ``≈`` marks a chars/4 estimate (no reply since the last compaction reported
usage, or only the offline model's own guess did); without it the figure is the provider's usage.
When, in one context, the source changes (an estimate gives way to a measured figure, or the other
way round) and the figure moves, the bar says so: it never rises or falls silently because of that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual import on
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.worker import Worker

from tui.compaction.token_text import format_tokens
from tui.session.sanitize import sanitize
from widgets.latest_only import LatestOnly
from widgets.worker_failures import pass_failure_on

NAME_CHARS = 32  # the most of a long name shown
MIN_NAME_CELLS = 8  # less room than this for the name: the figures matter more


def short_tokens(tokens: int) -> str:
    return format_tokens(tokens, trim=False)


@dataclass(frozen=True)
class SessionFigures:
    """What the bar shows that walks the session: the context size (None: the window is unknown), the
    window, whether the size is an estimate, the latest compaction, whose window it is (MoA), the cost."""

    tokens: int | None
    window: int
    estimated: bool
    compaction_id: str | None
    window_model: str
    cost: float


class StatusBar(Widget):
    """Name · model · context tokens / window (%) · cost · loading litellm… · tools n/max · message."""

    DEFAULT_CSS = """
    StatusBar { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    """
    HELP = """
## Status bar
The session's name (once `/name` gave it one), the model (and whether it runs offline), the context size against the model's window, the session
cost, whether litellm is still loading, and the tool iterations of the current turn. With MoA on,
the window is the aggregator's (it writes the reply) and the bar names it ("… of MODEL"). A context size
marked `≈` is an estimate (about four characters a token): no reply since the last compaction has
reported its usage yet, or the last one came from the offline model, whose usage is its own estimate.
Unmarked, it is the provider's count from the last reply (plus an estimate of what came after it).
When the figure moves because its source changed, the bar says "measured now, was ≈…" or
"estimated now, was …", so the jump is not mistaken for growth or for a saving.
"""

    session_name: reactive[str] = reactive("")  # the /name of the session; "" while it has none
    model: reactive[str] = reactive("")
    offline: reactive[bool] = reactive(False)
    context_tokens: reactive[int | None] = reactive(None)
    context_estimated: reactive[bool] = reactive(False)  # chars/4, no provider usage behind it
    # Set when the figure moved because its source changed: the figure it replaced, shown beside it.
    replaced_figure: reactive[int | None] = reactive(None)
    replaced_was_estimated: reactive[bool] = reactive(False)
    context_window: reactive[int] = reactive(0)
    window_model: reactive[str] = reactive("")  # whose window it is, when not the model's (MoA)
    cost: reactive[float] = reactive(0.0)
    litellm_loading: reactive[bool] = reactive(False)
    iteration: reactive[int] = reactive(0)
    max_iterations: reactive[int] = reactive(0)
    message: reactive[str] = reactive("")
    session_settings: reactive[bool] = reactive(False)  # the session sets its own compaction values

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._compaction_id: str | None = None  # the latest compaction of the context shown
        self._figures: LatestOnly[SessionFigures] = LatestOnly(self, "status-figures", self._show_figures)

    def show_figures(self, count: Callable[[], SessionFigures], *, at_once: bool) -> None:
        """Show the figures ``count`` returns: at once, or (a long session: it walks every entry) from a
        worker thread, the figures shown staying until then; of the counts asked for meanwhile only the
        latest is shown."""
        if at_once:
            self._figures.cancel()
            self._show_figures(count())
        else:
            self._figures.request(count)

    def forget_figures(self) -> None:
        """Another session: its figures are not the old one's (nor compared with them) until counted."""
        self._figures.cancel()
        self.show_context(None, 0, False)
        self.window_model = ""
        self.cost = 0.0

    def _show_figures(self, figures: SessionFigures) -> None:
        self.show_context(figures.tokens, figures.window, figures.estimated, figures.compaction_id)
        self.window_model = figures.window_model
        self.cost = figures.cost

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        pass_failure_on(self, event)  # a failed count is reported by the screen

    def show_context(
        self, tokens: int | None, window: int, estimated: bool, compaction_id: str | None = None
    ) -> None:
        """Show the context size; note it when, in the same context (the same latest compaction), the
        figure moves and its source changed (estimate ↔ measured). Any other change clears the note."""
        if tokens != self.context_tokens or estimated != self.context_estimated:
            previous, was_estimated = self.context_tokens, self.context_estimated
            moved_with_source = (
                tokens is not None
                and previous is not None
                and compaction_id == self._compaction_id
                and was_estimated != estimated
                and tokens != previous
            )
            self.replaced_figure = previous if moved_with_source else None
            self.replaced_was_estimated = was_estimated
        self._compaction_id = compaction_id
        self.context_tokens = tokens
        self.context_window = window
        self.context_estimated = estimated

    def render(self) -> Content:
        parts: list[Content] = []
        if self.model:
            model = Content.styled(sanitize(self.model), "bold")
            if self.offline:
                model = Content.assemble(model, " ", (" offline ", "reverse"))
            parts.append(model)
        if self.context_tokens is not None:
            used = ("≈" if self.context_estimated else "") + short_tokens(self.context_tokens)
            if self.context_window:
                percent = 100 * self.context_tokens / self.context_window
                style = "$error" if percent >= 90 else "$warning" if percent >= 75 else ""
                label = f"{used}/{short_tokens(self.context_window)} ({percent:.0f}%)"
                if self.window_model:  # MoA: the aggregator writes the reply, so its window applies
                    label += f" of {sanitize(self.window_model)}"
                parts.append(Content.styled(label, style) if style else Content(label))
            else:
                parts.append(Content(f"{used} tokens"))
            if self.replaced_figure is not None:
                was = short_tokens(self.replaced_figure)
                note = (
                    f"measured now, was ≈{was}"
                    if self.replaced_was_estimated
                    else f"estimated now, was {was}"
                )
                parts.append(Content.styled(note, "italic"))
        if self.session_settings:
            parts.append(Content.styled("session settings", "italic"))
        if self.cost:
            parts.append(Content(f"${self.cost:.2f}" if self.cost >= 0.01 else f"${self.cost:.4f}"))
        if self.litellm_loading:
            parts.append(Content.styled("loading litellm…", "italic"))
        if self.max_iterations and self.iteration:
            parts.append(Content(f"tools {self.iteration}/{self.max_iterations}"))
        if self.message:
            parts.append(Content(sanitize(self.message).replace("\n", " ")))
        return self._with_name(Content(" · ").join(parts))

    def _with_name(self, rest: Content) -> Content:
        """The session's name before the rest (D26: on screen, not only in a title the terminal may hide),
        cut to the room the rest leaves, and left out where fewer than a few cells are left."""
        room = min(NAME_CHARS, self.content_size.width - rest.cell_length - 3)
        if not self.session_name or room < MIN_NAME_CELLS:
            return rest
        name = Content(" ".join(sanitize(self.session_name).split())).truncate(room, ellipsis=True)
        return Content(" · ").join([name.stylize("$accent"), rest] if rest else [name.stylize("$accent")])
