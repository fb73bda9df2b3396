"""A dialog's row of buttons whose arrow keys move the focus in the order the buttons are drawn.

Left goes to the button drawn to the left of the focused one, Right to the one on its right; at either
end the focus stays. Before, one dialog bound both arrows to "previous" (Right moved left when the
right-hand button had the focus) and another bound none. Tab and Shift+Tab work as everywhere.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Button


class ButtonRow(Horizontal):
    """A horizontal row of :class:`~textual.widgets.Button`; ←/→ focus the neighbour on that side."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "Button on the left", show=False, id="dialog.buttons.left"),
        Binding("right", "move(1)", "Button on the right", show=False, id="dialog.buttons.right"),
    ]

    def action_move(self, step: int) -> None:
        buttons = [b for b in self.query_children(Button) if b.focusable]
        buttons.sort(key=lambda b: b.region.x)  # the drawn order (a row's CSS could reverse it)
        focused = self.screen.focused
        if focused not in buttons:
            return
        index = max(0, min(len(buttons) - 1, buttons.index(focused) + step))
        buttons[index].focus()
