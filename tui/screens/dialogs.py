"""Small modal dialogs of the session tree flow: summarize-branch choice, label prompt, confirm.

:class:`SummarizeBranchDialog` asks how to leave a branch (no summary, a summary, or a summary with
custom instructions written in an editor); :class:`LabelDialog` edits an entry's label;
:class:`ConfirmDialog` is a yes/no question. Each returns its answer through ``dismiss`` so callers can ``await app.push_screen_wait(...)`` or pass a callback.
"""

from __future__ import annotations

import time
from typing import ClassVar, Literal

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from widgets.button_row import ButtonRow
from widgets.ordered_keys import OrderedInput, OrderedTextArea

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


class _AnswerButton(Button):
    """A dialog's button that Enter or Space typed before its dialog was drawn cannot press."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        screen = self.screen
        return not isinstance(screen, ConfirmDialog) or screen.shown_before_key()


class ConfirmDialog(ModalScreen[bool]):
    """A yes/no question: True for yes; no, ``n`` and Escape give False.

    Keys typed before the dialog was drawn never answer it: a question that pops up while the user is
    typing would otherwise take the next ``y`` or ``n`` of a word as the answer. Keys queued for the
    screen underneath bubble up to the app and are checked against this dialog's bindings, so the check
    is on the action (and the buttons' press): the key's time against the first frame that showed it.
    With ``letters=False``
    there are no letter accelerators at all (the answer that quits the app must not be one stray letter
    away): Tab/arrows (in the buttons' drawn order) and Enter on a button, or Escape. ``default`` is the button focused first.
    """

    DEFAULT_CSS = (
        _DIALOG_CSS.format(name="ConfirmDialog")
        + """
    ConfirmDialog ButtonRow { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmDialog Button { margin-left: 1; }
    """
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="dialog.confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="dialog.confirm.no"),
    ]

    def __init__(
        self,
        question: str,
        *,
        yes: str = "Yes",
        no: str = "No",
        letters: bool = True,
        default: Literal["yes", "no"] = "no",
    ) -> None:
        super().__init__()
        self._question, self._yes, self._no = question, yes, no
        self._letters, self._default = letters, default
        self.drawn_at: float | None = None  # the event-clock time of the first frame that showed it

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._question, classes="dialog-title", markup=False)
            with ButtonRow():
                yield _AnswerButton(self._no, id="no")
                yield _AnswerButton(self._yes, id="yes", variant="primary")

    def on_mount(self) -> None:
        self.query_one(f"#{self._default}", Button).focus()
        if not getattr(self.app, "reports_frames", False):  # another app (tests' hosts): its layouts
            self.screen_layout_refresh_signal.subscribe(self, lambda _screen: self.frame_shown())

    def frame_shown(self) -> None:
        """A frame of this screen reached the terminal (KompaktApp._display): from now on keys answer."""
        if self.drawn_at is None and self.query_one(Button).region:
            self.drawn_at = time.monotonic()  # Textual stamps events with this clock

    def shown_before_key(self) -> bool:
        """Whether the key being handled was typed after the dialog was drawn (KompaktApp.key_time)."""
        key_time = getattr(self.app, "key_time", None)
        return self.drawn_at is not None and (key_time is None or key_time >= self.drawn_at)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action != "answer" or self.shown_before_key()

    def on_key(self, event: events.Key) -> None:
        """Keys sent to the dialog itself, before the bindings (they run when the key reaches the app)."""
        early = self.drawn_at is None or event.time < self.drawn_at
        if early or (not self._letters and event.key in ("y", "n")):
            event.stop()
            event.prevent_default()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class QuitDialog(ConfirmDialog):
    """Ctrl+Q with unsent text (a draft, queued messages): quit or keep editing; Ctrl+Q again quits."""
