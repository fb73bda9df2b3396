"""Editors that apply a burst of keys in the order it was typed.

Textual runs a widget's own (non-priority) bindings only after the key event has bubbled from the widget up to
the app, one message queue per ancestor, while printable keys are inserted at once by the widget itself. When
keys arrive together (fast typing, key repeat, a paste of keys through tmux) a Backspace can therefore run after
the digits typed behind it: clearing ``20000`` and typing ``5000`` gave ``2000``. :func:`run_own_binding` runs the
editor's own bindings as soon as the key reaches the editor, in the same queue as the printable keys. Keys the
editor does not bind (Ctrl+S, Esc, F-keys) still bubble to the screen and the app as before.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget
from textual.widgets import Input, TextArea


async def run_own_binding(widget: Widget, event: events.Key) -> bool:
    """Run ``widget``'s own binding for ``event`` now; True when one ran (the event is then stopped)."""
    for key in (event.key, *event.aliases):
        for binding in widget._bindings.key_to_bindings.get(key, ()):
            # Priority bindings ran in the app before the key got here.
            if not binding.priority and await widget.app.run_action(binding.action, widget):
                event.stop()
                event.prevent_default()
                return True
    return False


class OrderedInput(Input):
    """An :class:`~textual.widgets.Input` whose Backspace, arrows and Home/End keep their place in a burst."""

    async def _on_key(self, event: events.Key) -> None:
        if not await run_own_binding(self, event):
            await super()._on_key(event)


class OrderedTextArea(TextArea):
    """A :class:`~textual.widgets.TextArea` whose editing keys keep their place in a burst."""

    async def _on_key(self, event: events.Key) -> None:
        if not await run_own_binding(self, event):
            await super()._on_key(event)
