"""Snapshot host: the full-screen ``/tree`` view over the hand-built sample tree (labels, branches)."""

from __future__ import annotations

from textual.app import App

from tests.tree_ui_helpers import sample_tree
from tui.screens.tree_screen import TreeScreen


class TreeScreenApp(App[None]):
    def on_mount(self) -> None:
        tree, leaf = sample_tree()
        screen = TreeScreen(tree, leaf)
        screen.pane.detail_delay = 0
        self.push_screen(screen)


if __name__ == "__main__":
    TreeScreenApp().run()
