"""Snapshot host: the "Summarize branch?" dialog over an empty screen."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static, TextArea

from tui.screens.dialogs import SummarizeBranchDialog


class SummaryDialogApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("session tree behind the dialog")

    async def on_mount(self) -> None:
        dialog = SummarizeBranchDialog()
        await self.push_screen(dialog)
        # A blinking cursor would make the editor snapshot flaky.
        dialog.query_one(TextArea).cursor_blink = False


if __name__ == "__main__":
    SummaryDialogApp().run()
