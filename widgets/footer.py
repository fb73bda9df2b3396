"""The footer of kompakt's screens: Textual's key footer with the help key (F1) always first.

Textual lists the focused widget's keys first and the app's last, so at 80 or 100 columns the app's
F1 Help fell off the right edge, the one key a new user needs to find the others. This footer moves
the help key to the front; everything else keeps Textual's order.

A focused widget with many keys (the timeline's what-if) can say which come next and how the footer
names them: ``FOOTER_KEYS`` maps a binding's action to ``(key shown, label)``, in the order wanted
(``None`` keeps the binding's own; an empty label drops the key from the footer, F1 and the palette
still list it). At 80 columns the what-if footer was cut after "s Sw…", hiding Esc and F9.

A key that does not fit is left out whole, never cut mid-label (:meth:`KompaktFooter._dropped` says which).

A footer shows only while its screen is the one on top: a dialog over the main screen let the main
footer show through, listing keys that do nothing there. A screen with keys of its own (the full tree,
help, the pickers) composes its own footer; a small dialog has none, as in Textual's own dialogs.
"""

from __future__ import annotations

from collections.abc import Mapping

from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

HELP_ACTIONS = frozenset({"help", "app.help"})  # the app's binding, and a modal screen's own

FooterKeys = Mapping[str, tuple[str | None, str | None]]


class KompaktFooter(Footer):
    """:class:`~textual.widgets.Footer` with the help key first, then the focused widget's chosen keys."""

    def compose(self) -> ComposeResult:
        widgets = list(super().compose())
        keys = [*widgets, *self._palette_key(widgets)]
        first = [w for w in keys if isinstance(w, FooterKey) and w.action in HELP_ACTIONS]
        chosen: FooterKeys = getattr(self.screen.focused, "FOOTER_KEYS", {})
        order = {action: i for i, action in enumerate(chosen)}
        picked = sorted(
            (w for w in keys if isinstance(w, FooterKey) and w.action in order and w not in first),
            key=lambda w: order[w.action],
        )
        for key in picked:
            shown, label = chosen[key.action]
            key.key_display = key.key_display if shown is None else shown
            key.description = key.description if label is None else label
        rest = [w for w in keys if w not in first and w not in picked]
        shown = [w for w in picked if w.description]
        dropped = self._dropped(shown, rest, [*first, *shown, *rest])
        yield from first
        yield from (w for w in shown if w not in dropped)
        yield from (w for w in rest if w not in dropped)

    def _palette_key(self, widgets: list[Widget]) -> list[Widget]:
        """The palette key where Textual's footer leaves it out: a modal screen's key chain (the full tree,
        help, the pickers) skips the app, whose Ctrl+P is a priority binding and opens the palette there."""
        if any("-command-palette" in w.classes for w in widgets) or not (
            self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE
        ):
            return []
        for _key, binding in self.app._bindings:
            if binding.action in ("command_palette", "app.command_palette"):
                shown = self.app.get_key_display(binding)
                tooltip = binding.tooltip or binding.description
                return [
                    FooterKey(
                        binding.key,
                        shown,
                        binding.description,
                        binding.action,
                        classes="-command-palette -modal-palette",
                        tooltip=tooltip,
                    )
                ]
        return []

    def _dropped(self, chosen: list[FooterKey], rest: list[Widget], row: list[Widget]) -> set[Widget]:
        """The keys left out so that the row fits its width with whole labels (Textual's footer cuts the
        last one mid-word: with the timeline focused, '^r R▏' at 80 columns and 'f5 Se▏' at 120).

        They go in this order, each group last first: the focused widget's unchosen keys (at 160 columns
        the timeline's pushed F5 and Quit off, QA item 19), the screen's and the app's keys, then the
        focused widget's chosen ones. F1 and the palette key stay; F1 lists every key. On a modal screen
        the palette key (which this footer adds) goes after the focused widget's unchosen keys and before
        the screen's: at 40 columns F5 kept it and dropped Esc Close."""
        width = self.size.width or self.app.size.width
        focused = self.screen.focused
        own = {b.binding.action for b in self.screen.active_bindings.values() if b.node is focused}
        keys = [w for w in rest if isinstance(w, FooterKey) and "-command-palette" not in w.classes]
        unchosen = [w for w in keys if chosen and w.action in own]
        added = [w for w in rest if "-modal-palette" in w.classes]  # a modal screen's (see above)
        order = [*chosen, *(w for w in keys if w not in unchosen), *added, *unchosen]
        dropped: set[Widget] = set()
        used = sum(map(_cells, row))
        while order and used > width:
            key = order.pop()
            dropped.add(key)
            used -= _cells(key)
        return dropped

    def on_mount(self) -> None:
        # Immediate: hidden in the same step as the push, before the new screen's first frame.
        self.app.screen_change_signal.subscribe(self, self._screen_changed, immediate=True)

    def on_unmount(self) -> None:
        self.app.screen_change_signal.unsubscribe(self)  # (Footer's own handlers run too: Textual calls each)

    def _screen_changed(self, screen: Screen) -> None:
        self.visible = screen is self.screen

    def on_resize(self, event: events.Resize) -> None:
        # Which keys fit depends on the width: choose again when it changes.
        if event.size.width != getattr(self, "_composed_width", None):
            self._composed_width = event.size.width
            self.call_after_refresh(self.recompose)


def _cells(widget: Widget) -> int:
    """The cells a footer item takes: "key label" and the gap (the palette key: its whole cell)."""
    if isinstance(widget, FooterKey):
        if "-command-palette" in widget.classes:
            return len(widget.key_display) + len(widget.description) + 4
        return len(widget.key_display) + 1 + len(widget.description) + 2
    return 0
