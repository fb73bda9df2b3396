"""The full-screen ``/tree`` view: the session tree pane on its own screen.

:class:`TreeScreen` dismisses with the entry id chosen with Enter (or a double click), or ``None``
when the tree is closed with Escape or F3. The main screen's other F-keys (F2 the pane, F4 the timeline,
F5 the settings …) close the tree and do there what they do: it dismisses with a :class:`MainCommand`
naming the action-table row, which the opener runs on the main screen. F1 is its help, and the
footer lists its own keys. Shift+L's ``LabelRequested`` goes to the ``on_label`` callback
of whoever opened it (the main screen, which labels through the agent), Shift+U/Shift+I's
``CompactionActionRequested`` to ``on_compaction_action``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen

from tui.actions import ACTIONS
from tui.session.tree import TreeIndex
from tui.session.tree_view import FilterMode
from widgets.footer import KompaktFooter
from widgets.session_tree import SessionTreeView
from widgets.session_tree_pane import SessionTreePane


@dataclass(frozen=True)
class MainCommand:
    """The tree was closed by one of the main screen's F-keys: run the row ``name`` there."""

    name: str


# The F-keys the footer names here (the others work too, and F1 lists them): the row has room for few.
_FOOTER_F_KEYS = ("toggle_timeline", "settings")


def _main_f_keys() -> list[BindingType]:
    """The main screen's F-keys but F3 (which closes the tree), in their order, with the main screen's
    ids: a ``[keymap]`` remap moves them here too."""
    return [
        Binding(
            a.key,
            f"main({a.name!r})",
            a.title,
            tooltip=a.help,
            id=a.binding_id,
            show=a.name in _FOOTER_F_KEYS,
        )
        for a in sorted(ACTIONS, key=lambda a: a.key)
        if a.key.startswith("f") and not a.on_app and a.name != "open_tree"
    ]


class TreeScreen(ModalScreen[str | MainCommand | None]):
    """Pick an entry of the session tree; the result is its id, a :class:`MainCommand`, or None."""

    AUTO_FOCUS = "SessionTreeView"
    BINDINGS: ClassVar[list[BindingType]] = [
        # A modal screen hides the app's keys from its key chain: F1 is its own here (as in the pickers).
        Binding("f1", "app.help", "Help", id="tree.help"),
        Binding("f3", "close", "Close", id="tree.close"),
        *_main_f_keys(),
    ]
    DEFAULT_CSS = """
    TreeScreen { background: $surface; }
    TreeScreen > SessionTreePane { border: round $foreground 30%; }
    """

    def __init__(
        self,
        tree_index: TreeIndex,
        leaf_id: str | None,
        *,
        selected_id: str | None = None,
        filter_mode: FilterMode = "default",
        on_label: Callable[[SessionTreeView.LabelRequested], None] | None = None,
        on_compaction_action: Callable[[SessionTreeView.CompactionActionRequested], None] | None = None,
    ) -> None:
        super().__init__()
        self.pane = SessionTreePane()
        self._on_label = on_label
        self._on_compaction_action = on_compaction_action
        self._session = (tree_index, leaf_id, selected_id, filter_mode)

    def compose(self) -> ComposeResult:
        yield self.pane
        yield KompaktFooter()  # its own keys, not the main screen's

    def on_mount(self) -> None:
        # As in the side pane: the loading line reaches the screen first, then the rows are built (a
        # 10k-entry tree takes a moment, and building it here would hold the old screen without a sign).
        self.pane.show_loading()
        self.call_after_refresh(self._build)

    def _build(self) -> None:
        tree_index, leaf_id, selected_id, filter_mode = self._session
        self.pane.set_session(tree_index, leaf_id, filter_mode=filter_mode, selected_id=selected_id)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_main(self, name: str) -> None:
        self.dismiss(MainCommand(name))

    @on(SessionTreeView.NavigateRequested)
    def _navigate(self, event: SessionTreeView.NavigateRequested) -> None:
        event.stop()
        self.dismiss(event.entry_id)

    @on(SessionTreeView.LabelRequested)
    def _label(self, event: SessionTreeView.LabelRequested) -> None:
        if self._on_label is not None:
            event.stop()
            self._on_label(event)

    @on(SessionTreeView.CompactionActionRequested)
    def _compaction_action(self, event: SessionTreeView.CompactionActionRequested) -> None:
        if self._on_compaction_action is not None:
            event.stop()
            self._on_compaction_action(event)

    @on(SessionTreeView.Closed)
    def _closed(self, event: SessionTreeView.Closed) -> None:
        event.stop()
        self.dismiss(None)
