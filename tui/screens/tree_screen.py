"""The full-screen ``/tree`` view: the session tree pane on its own screen.

:class:`TreeScreen` dismisses with the entry id chosen with Enter (or a double click), or ``None``
when the tree is closed with Escape. Shift+L's ``LabelRequested`` goes to the ``on_label`` callback
of whoever opened it (the main screen, which labels through the agent), Shift+U/Shift+I's
``CompactionActionRequested`` to ``on_compaction_action``.
"""

from __future__ import annotations

from collections.abc import Callable

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

    def on_mount(self) -> None:
        # As in the side pane: the loading line reaches the screen first, then the rows are built (a
        # 10k-entry tree takes a moment, and building it here would hold the old screen without a sign).
        self.pane.show_loading()
        self.call_after_refresh(self._build)

    def _build(self) -> None:
        tree_index, leaf_id, selected_id, filter_mode = self._session
        self.pane.set_session(tree_index, leaf_id, filter_mode=filter_mode, selected_id=selected_id)

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
