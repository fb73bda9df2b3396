"""A screen that styles and lays out its widgets once at start-up, not three and five times.

Textual restyles every widget when a screen first resumes, and start-up sends a screen three Resizes of
the size it was already laid out at (the app's first size, the driver's, the layout's own), each a full
layout and redraw; the height's breakpoint class, set on the first of them, restyled everything again.
With a 10k-entry session's chat on screen that was ~30 ms of restyle and 16-26 ms a layout (issue 13's
start-up figure). :class:`LaidOutOnceScreen` sets the breakpoint class before any child is styled
(:meth:`add_breakpoint_class`, from ``compose``), skips the first resume's restyle, and drops a Resize
that changes neither the size nor the breakpoint classes (the screen's own horizontal and vertical
ones; the app defines none).
"""

from __future__ import annotations

from typing import TypeVar

from textual import events
from textual.screen import Screen

ResultType = TypeVar("ResultType")


class LaidOutOnceScreen(Screen[ResultType]):
    def __init__(self) -> None:
        super().__init__()
        self._resumed = False  # the first ScreenResume has been handled

    def add_breakpoint_class(self) -> None:
        """The size's breakpoint classes, before any child is styled (call it first in ``compose``)."""
        for name in self._breakpoints(self.app.size.width, self.app.size.height):
            self.add_class(name, update=False)

    def _breakpoints(self, width: int, height: int) -> list[str]:
        """The classes of HORIZONTAL_ and VERTICAL_BREAKPOINTS that Textual gives the screen at this size."""

        def pick(breakpoints: list[tuple[int, str]] | None, value: int) -> list[str]:
            chosen = (name for low, name in sorted(breakpoints or [], reverse=True) if value >= low)
            return [name] if (name := next(chosen, None)) else []

        return pick(self.HORIZONTAL_BREAKPOINTS, width) + pick(self.VERTICAL_BREAKPOINTS, height)

    def _on_resize(self, event: events.Resize) -> None:
        # Runs before Screen's own handler: a Resize to the size and classes the screen has is dropped.
        names = self._breakpoints(event.size.width, event.size.height)
        if event.size == self.outer_size and all(self.has_class(name) for name in names):
            event.stop()
            event.prevent_default()

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        # Runs before Screen's own handler (Textual calls each class's in MRO order): the first resume
        # restyles nothing, every widget was styled as it mounted, with the same stylesheet and classes.
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False
