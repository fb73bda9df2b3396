"""A one-line "working…" indicator with a spinner, the elapsed time and Escape to cancel.

:class:`ProgressIndicator` shows e.g. ``⠹ Summarizing branch… 3s (esc to cancel)``. It only tells: a
press of Escape posts :class:`ProgressIndicator.Cancelled`, and the owner of the work aborts it. The
clock starts on mount; ``frozen=True`` keeps the first frame for snapshot tests.
"""

from __future__ import annotations

from time import monotonic
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.widget import Widget

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def format_elapsed(seconds: float) -> str:
    """``7s``, ``1m05s``: short enough for a status line."""
    whole = int(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


class ProgressIndicator(Widget, can_focus=True):
    """Spinner, message and elapsed time; Escape posts :class:`Cancelled`."""

    HELP = "Work is running in the background. **Esc** cancels it."
    DEFAULT_CSS = """
    ProgressIndicator { height: 1; width: 1fr; }
    ProgressIndicator:focus { text-style: none; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="progress.cancel"),
    ]

    class Cancelled(Message):
        """The user asked to cancel the running work."""

    def __init__(self, message: str, *, frozen: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.message = message
        self._frozen = frozen
        self._started = monotonic()
        self._frame = 0

    def on_mount(self) -> None:
        self._started = monotonic()
        if not self._frozen:
            self.set_interval(0.1, self._tick)

    def _tick(self) -> None:
        self._frame += 1
        self.refresh()

    @property
    def elapsed(self) -> float:
        return monotonic() - self._started

    def render(self) -> Content:
        elapsed = 0.0 if self._frozen else self.elapsed
        return Content.assemble(
            (SPINNER[self._frame % len(SPINNER)] + " ", "$text-accent"),
            self.message,
            (f" {format_elapsed(elapsed)}", "$text-muted"),
            (" (esc to cancel)", "$text-muted"),
        )

    def action_cancel(self) -> None:
        self.post_message(self.Cancelled())
