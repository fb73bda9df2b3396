"""The prompt: a multi-line TextArea that sends with Enter and completes slash commands.

Enter posts :class:`PromptInput.Submitted` and clears; Shift+Enter and Ctrl+J insert a newline. Up on the
first line and Down on the last recall history (kept in memory, and appended to an optional file). The
box grows with its text up to ten lines. Typing ``/`` lists the matching slash commands (shown by
:class:`PromptBox`, accepted with Tab). A paste is stripped of control characters; a huge one shows as a
short ``[pasted 1.2 MB #1]`` chip so the editor stays fast, and the real text is what gets submitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from widgets.ordered_keys import OrderedTextArea
from widgets.prompt_history import PromptHistory, append_history, read_history
from widgets.slash_commands import SLASH_COMMANDS, SlashCommand, complete
from widgets.stream_sanitizer import sanitize_keep_tabs

PASTE_COLLAPSE_BYTES = 100_000


def clean_paste(text: str) -> str:
    """Pasted text without escape sequences or control characters (tabs and newlines kept)."""
    return sanitize_keep_tabs(text)


def human_size(size: int) -> str:
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    return f"{size / 1000:.0f} KB"


class PromptInput(OrderedTextArea):
    """Multi-line prompt with history, slash-command completion and collapsed huge pastes."""

    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 12; border: tall $border-blurred; }
    PromptInput:focus { border: tall $border; }
    """
    HELP = """
## Prompt
- **enter**: send, **shift+enter** or **ctrl+j**: new line
- **up / down** on the first / last line: earlier prompts
- **/**: slash commands (**tab** completes), **!cmd**: run a shell command
- **alt+a**: select all (typing then replaces it), **ctrl+a / ctrl+e**: line start / end
"""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Send", id="prompt.submit"),
        Binding("shift+enter,ctrl+j", "newline", "New line", id="prompt.newline"),
        Binding("tab", "complete", "Complete", id="prompt.complete", show=False),
        # TextArea's select-all is F7, which opens the session picker here; ctrl+a goes to the line start.
        Binding("alt+a", "select_all", "Select all", id="prompt.select_all", show=False),
    ]

    completion_index: reactive[int] = reactive(0)

    class Submitted(Message):
        """The user sent ``text`` (huge pastes expanded)."""

        def __init__(self, prompt: PromptInput, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

        @property
        def control(self) -> PromptInput:
            return self.prompt

    class CompletionsChanged(Message):
        """The slash-command matches (or the highlighted one) changed."""

        def __init__(self, prompt: PromptInput, commands: list[SlashCommand], index: int) -> None:
            super().__init__()
            self.prompt = prompt
            self.commands = commands
            self.index = index

        @property
        def control(self) -> PromptInput:
            return self.prompt

    def __init__(
        self,
        text: str = "",
        *,
        history_path: Path | None = None,
        commands: Sequence[SlashCommand] = SLASH_COMMANDS,
        placeholder: str = "Message, /command or !shell (enter sends, shift+enter new line)",
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        # Set before TextArea's own setup, which already calls update_suggestion().
        self.recall = PromptHistory()
        self.history_path = history_path
        self.commands = tuple(commands)
        self.completions: list[SlashCommand] = []
        self._pastes: dict[str, str] = {}
        self._paste_count = 0  # numbers the chips: a removed chip's number is never given again
        super().__init__(
            text, soft_wrap=True, tab_behavior="focus", placeholder=placeholder, id=id, classes=classes
        )

    def on_mount(self) -> None:
        if self.history_path is not None:
            self._load_history(self.history_path)

    @work(thread=True, group="prompt.history")
    def _load_history(self, path: Path) -> None:
        older = read_history(path)
        self.app.call_from_thread(self.recall.merge_older, older)

    @work(thread=True, group="prompt.history")
    def _store_history(self, path: Path, text: str) -> None:
        append_history(path, text)

    # Sending ---------------------------------------------------------------------------------------

    @property
    def submit_text(self) -> str:
        """The text Enter would send: the editor's text with paste chips expanded."""
        text = self.text
        for chip, pasted in self._pastes.items():
            text = text.replace(chip, pasted)
        return text

    def action_submit(self) -> None:
        if self.completions and self.text.strip() not in {c.name for c in self.completions}:
            self.action_complete()
            return
        if cut := self._cut_chips():
            # Sent, a cut chip would be literal text and its paste lost (Ctrl+Z gives the chip back whole).
            self.notify(
                f"The paste chip {cut[0]} was cut: undo (Ctrl+Z) or delete it whole before sending.",
                severity="warning",
            )
            return
        text = self.submit_text
        if not text.strip():
            return
        if len(text) <= PASTE_COLLAPSE_BYTES:
            self.recall.add(text)
            if self.history_path is not None:
                self._store_history(self.history_path, text)
        self.recall.reset()
        self._pastes.clear()
        self._paste_count = 0
        self.clear()
        self.post_message(self.Submitted(self, text))

    def _cut_chips(self) -> list[str]:
        """The chips no longer whole in the text of which a part is left (a selection, Ctrl+K, typing inside)."""
        rest = self.text
        for chip in self._pastes:  # the whole chips out first: they share their start ("[pasted 1…")
            rest = rest.replace(chip, "\0")
        return [
            chip for chip in self._pastes if chip[: len(chip) // 2] in rest or chip[len(chip) // 2 :] in rest
        ]

    def action_newline(self) -> None:
        self.insert("\n")

    async def _on_key(self, event: events.Key) -> None:
        # Enter must send, not insert a newline (TextArea handles it before bindings would run).
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()
            return
        if event.key in ("up", "down") and self._recall(event.key == "up"):
            event.stop()
            event.prevent_default()
            return
        if event.key == "escape" and self.completions:
            event.stop()
            self._set_completions([])
            return
        await super()._on_key(event)

    def _recall(self, older: bool) -> bool:
        """Up/Down: move in the completion list, or through history at the first/last line."""
        if self.completions:
            self.completion_index = (self.completion_index + (-1 if older else 1)) % len(self.completions)
            return True
        row = self.cursor_location[0]
        if older and row == 0:
            recalled = self.recall.previous(self.text)
        elif not older and row == self.document.line_count - 1:
            recalled = self.recall.next()
        else:
            return False
        if recalled is None:
            return older  # nothing older: stay put instead of moving the cursor
        self.load_text(recalled)
        self.move_cursor(self.document.end)
        return True

    # Completion ------------------------------------------------------------------------------------

    def update_suggestion(self) -> None:
        """Recompute the slash-command matches after every edit or cursor move."""
        single_line = self.document.line_count == 1 and self.cursor_location == self.document.end
        matches = complete(self.document[0], self.commands) if single_line else []
        if [c.name for c in matches] != [c.name for c in self.completions]:
            self._set_completions(matches)
        self._show_suggestion()

    def _set_completions(self, matches: list[SlashCommand]) -> None:
        self.completions = matches
        self.completion_index = 0
        self._show_suggestion()
        self.post_message(self.CompletionsChanged(self, matches, 0))

    def watch_completion_index(self, index: int) -> None:
        self._show_suggestion()
        if self.completions:
            self.post_message(self.CompletionsChanged(self, self.completions, index))

    def _show_suggestion(self) -> None:
        if not self.completions:
            self.suggestion = ""
            return
        command = self.completions[self.completion_index % len(self.completions)]
        self.suggestion = command.name[len(self.text) :] if command.name.startswith(self.text) else ""

    def action_complete(self) -> None:
        if self.completions:
            self.accept_completion(self.completion_index)
        else:
            self.screen.focus_next()

    def accept_completion(self, index: int) -> None:
        if not 0 <= index < len(self.completions):
            return
        command = self.completions[index]
        self.load_text(command.completion)
        self.move_cursor(self.document.end)
        self._set_completions([])

    # Pasting ---------------------------------------------------------------------------------------

    async def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()
        if self.read_only:
            return
        text = clean_paste(event.text)
        size = len(text.encode("utf-8", errors="replace"))
        if size > PASTE_COLLAPSE_BYTES:
            self._paste_count += 1
            chip = f"[pasted {human_size(size)} #{self._paste_count}]"
            self._pastes[chip] = text
            text = chip
        self.replace(text, *self.selection)

    # A chip is one thing: Backspace just after it or Delete just before it removes all of it, and its
    # paste (edited character by character, a half chip was sent as text and the paste was lost).

    def action_delete_left(self) -> None:
        if not self._delete_chip(before_cursor=True):
            super().action_delete_left()

    def action_delete_right(self) -> None:
        if not self._delete_chip(before_cursor=False):
            super().action_delete_right()

    def action_delete_word_left(self) -> None:
        if not self._delete_chip(before_cursor=True):
            super().action_delete_word_left()

    def action_delete_word_right(self) -> None:
        if not self._delete_chip(before_cursor=False):
            super().action_delete_word_right()

    def _delete_chip(self, *, before_cursor: bool) -> bool:
        """Delete the paste chip that ends at the cursor (``before_cursor``) or starts there; True if one did."""
        if self.read_only or not self._pastes or not self.selection.is_empty:
            return False
        row, column = self.cursor_location
        line = self.document[row]
        for chip in self._pastes:
            start = column - len(chip) if before_cursor else column
            if start >= 0 and line.startswith(chip, start):
                # The paste stays known until the prompt is sent or cleared, so Ctrl+Z brings the chip back
                # whole; a chip no longer in the text sends nothing (submit_text).
                self.delete((row, start), (row, start + len(chip)))
                return True
        return False


class CompletionMenu(OptionList, can_focus=False):
    """The list of matching slash commands above the prompt."""

    DEFAULT_CSS = """
    CompletionMenu { height: auto; max-height: 10; border: none; padding: 0 1; background: $panel; }
    CompletionMenu.-empty { display: none; }
    """


class PromptBox(Vertical):
    """The prompt with its completion menu; the lead mounts this where the prompt goes."""

    DEFAULT_CSS = """
    PromptBox { height: auto; }
    """

    def __init__(self, prompt: PromptInput | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.prompt = prompt or PromptInput()
        self.menu = CompletionMenu(classes="-empty")

    def compose(self) -> ComposeResult:
        yield self.menu
        yield self.prompt

    @on(PromptInput.CompletionsChanged)
    def _show_completions(self, event: PromptInput.CompletionsChanged) -> None:
        self.menu.set_class(not event.commands, "-empty")
        names = [option.id for option in self.menu.options]
        wanted = [command.name for command in event.commands]
        if names != wanted:
            self.menu.set_options(
                Option(Content.assemble((c.name, "bold"), f" {c.args}  ", (c.description, "dim")), id=c.name)
                for c in event.commands
            )
        if event.commands:
            self.menu.highlighted = event.index

    @on(OptionList.OptionSelected)
    def _menu_clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.prompt.accept_completion(event.option_index)
        self.prompt.focus()
