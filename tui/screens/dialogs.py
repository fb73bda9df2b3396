"""Small modal dialogs of the session tree flow: summarize-branch choice, label prompt, confirm, progress.

:class:`SummarizeBranchDialog` asks how to leave a branch (no summary, a summary, or a summary with
custom instructions written in an editor); :class:`LabelDialog` edits an entry's label;
:class:`ConfirmDialog` is a yes/no question; :class:`ProgressDialog` hosts the cancellable
:class:`~widgets.progress_indicator.ProgressIndicator` while a branch summary runs. Each returns its
answer through ``dismiss`` so callers can ``await app.push_screen_wait(...)`` or pass a callback.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from widgets.ordered_keys import OrderedInput, OrderedTextArea
from widgets.progress_indicator import ProgressIndicator

SummaryChoice = Literal["none", "summarize"] | tuple[Literal["custom"], str]

_DIALOG_CSS = """
    {name} {{ align: center middle; background: $background 60%; }}
    {name} > Vertical {{
        width: 64; max-width: 90%; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1;
    }}
    {name} .dialog-title {{ text-style: bold; margin-bottom: 1; }}
    {name} .dialog-hint {{ color: $text-muted; margin-top: 1; }}
"""


class SummaryEditor(OrderedTextArea):
    """The custom-instructions editor: Enter submits, Ctrl+J (or Shift+Enter) adds a line."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+j,shift+enter", "newline", "New line", show=False, id="dialog.editor.newline"),
    ]

    class Submitted(TextArea.Changed):
        """Enter in the editor."""

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self))
            return
        await super()._on_key(event)

    def action_newline(self) -> None:
        self.insert("\n")


class SummarizeBranchDialog(ModalScreen[SummaryChoice | None]):
    """ "Summarize branch?": ``"none"``, ``"summarize"``, ``("custom", text)``, or None on Escape."""

    HELP = """\
## Summarize branch?

Leaving a branch can leave a summary of it behind. **No summary** just moves, **Summarize** asks
the model for a summary, **Summarize with custom prompt** lets you write extra instructions first
(Enter submits, Ctrl+J adds a line, Esc goes back). Esc here returns to the tree.
"""

    DEFAULT_CSS = (
        _DIALOG_CSS.format(name="SummarizeBranchDialog")
        + """
    SummarizeBranchDialog #choices-pane { height: auto; }
    SummarizeBranchDialog OptionList, SummarizeBranchDialog OptionList:focus {
        height: auto; border: none; padding: 0;
    }
    SummarizeBranchDialog SummaryEditor { height: 8; width: 1fr; }
    SummarizeBranchDialog #custom-pane { display: none; height: auto; }
    SummarizeBranchDialog.-editing #custom-pane { display: block; }
    SummarizeBranchDialog.-editing #choices-pane { display: none; }
    """
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="dialog.summarize.back"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Summarize branch?", classes="dialog-title", markup=False)
            with Vertical(id="choices-pane"):
                yield OptionList(
                    Option("No summary", id="none"),
                    Option("Summarize", id="summarize"),
                    Option("Summarize with custom prompt", id="custom"),
                    id="choices",
                )
                yield Static("↑/↓ choose · Enter confirm · Esc back to the tree", classes="dialog-hint")
            with Vertical(id="custom-pane"):
                yield Static("Custom summarization instructions:", markup=False)
                yield SummaryEditor(id="custom-editor", soft_wrap=True)
                yield Static("Enter summarize · Ctrl+J new line · Esc back", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#choices", OptionList).highlighted = 0

    @property
    def editing(self) -> bool:
        return self.has_class("-editing")

    @on(OptionList.OptionSelected, "#choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        choice = event.option.id
        if choice == "custom":
            self.add_class("-editing")
            self.query_one(SummaryEditor).focus()
        elif choice in ("none", "summarize"):
            self.dismiss(choice)  # type: ignore[arg-type]

    @on(SummaryEditor.Submitted)
    def _submitted(self, event: SummaryEditor.Submitted) -> None:
        text = self.query_one(SummaryEditor).text.strip()
        if text:
            self.dismiss(("custom", text))

    def action_back(self) -> None:
        if self.editing:
            self.remove_class("-editing")
            self.query_one("#choices", OptionList).focus()
        else:
            self.dismiss(None)


class LabelDialog(ModalScreen[str | None]):
    """ "Label (empty to remove):" returns the trimmed label ("" clears it), or None on Escape."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="LabelDialog")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.label.cancel"),
    ]

    def __init__(self, current_label: str | None = None) -> None:
        super().__init__()
        self._current = current_label or ""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Label (empty to remove):", classes="dialog-title", markup=False)
            yield OrderedInput(self._current, id="label-input", select_on_focus=False)
            yield Static("Enter save · Esc cancel", classes="dialog-hint")

    @on(Input.Submitted, "#label-input")
    def _save(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmDialog(ModalScreen[bool]):
    """A yes/no question: True for yes; no, ``n`` and Escape give False."""

    DEFAULT_CSS = (
        _DIALOG_CSS.format(name="ConfirmDialog")
        + """
    ConfirmDialog Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmDialog Button { margin-left: 1; }
    """
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="dialog.confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="dialog.confirm.no"),
    ]

    def __init__(self, question: str, *, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self._question, self._yes, self._no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._question, classes="dialog-title", markup=False)
            with Horizontal():
                yield Button(self._no, id="no")
                yield Button(self._yes, id="yes", variant="primary")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class ProgressDialog(ModalScreen[bool]):
    """A cancellable "working…" indicator: dismisses True when the user cancels with Escape.

    The caller runs the work and calls :meth:`finish` (dismiss with False) when it is done.
    """

    DEFAULT_CSS = _DIALOG_CSS.format(name="ProgressDialog")

    def __init__(self, message: str = "Summarizing branch…") -> None:
        super().__init__()
        self._message = message

    def compose(self) -> ComposeResult:
        with Vertical():
            yield ProgressIndicator(self._message)

    def on_mount(self) -> None:
        self.query_one(ProgressIndicator).focus()

    @on(ProgressIndicator.Cancelled)
    def _cancelled(self, event: ProgressIndicator.Cancelled) -> None:
        event.stop()
        self.dismiss(True)

    def finish(self) -> None:
        """The work ended (success or error): close without cancelling."""
        if self.is_active:
            self.dismiss(False)
