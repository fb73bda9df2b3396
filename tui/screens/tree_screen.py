"""The full-screen ``/tree`` view: the session tree pane on its own screen.

:class:`TreeScreen` dismisses with the entry id chosen with Enter (or a double click), or ``None``
when the tree is closed with Escape. Shift+L's ``LabelRequested`` bubbles on to the app, which owns
the store; after appending the label it calls ``screen.pane.refresh_tree()``.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.screen import ModalScreen

from tui.session.tree import TreeIndex
from tui.session.tree_view import FilterMode
from widgets.session_tree import SessionTreeView
from widgets.session_tree_pane import SessionTreePane


class TreeScreen(ModalScreen[str | None]):
    """Pick an entry of the session tree; the result is its id, or None when cancelled."""

    AUTO_FOCUS = "SessionTreeView"
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
    ) -> None:
        super().__init__()
        self.pane = SessionTreePane()
        self._session = (tree_index, leaf_id, selected_id, filter_mode)

    def compose(self) -> ComposeResult:
        yield self.pane

    def on_mount(self) -> None:
        tree_index, leaf_id, selected_id, filter_mode = self._session
        self.pane.set_session(tree_index, leaf_id, filter_mode=filter_mode, selected_id=selected_id)

    @on(SessionTreeView.NavigateRequested)
    def _navigate(self, event: SessionTreeView.NavigateRequested) -> None:
        event.stop()
        self.dismiss(event.entry_id)

    @on(SessionTreeView.Closed)
    def _closed(self, event: SessionTreeView.Closed) -> None:
        event.stop()
        self.dismiss(None)
