"""Snapshot host: the session tree pane over a generated 300-entry session (seed 5)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from textual.app import App, ComposeResult

from bench.gen_session import generate
from tui.session.store import SessionStore
from widgets.session_tree import SessionTreeView
from widgets.session_tree_pane import SessionTreePane


class TreePaneApp(App[None]):
    """The pane, filled from a deterministic session; the detail shows at once."""

    def __init__(self) -> None:
        super().__init__()
        with tempfile.TemporaryDirectory() as tmp:
            path = generate(Path(tmp) / "session.jsonl", entries=300, seed=5)
            store = SessionStore.open(path, read_only=True)
            self.session_tree, self.leaf_id = store.tree, store.leaf_id
            store.close()

    def compose(self) -> ComposeResult:
        pane = SessionTreePane()
        pane.detail_delay = 0
        yield pane

    def on_mount(self) -> None:
        self.query_one(SessionTreePane).set_session(self.session_tree, self.leaf_id)
        self.query_one(SessionTreeView).focus()


if __name__ == "__main__":
    TreePaneApp().run()
