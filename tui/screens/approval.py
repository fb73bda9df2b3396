"""The approval dialog: may this tool call run? It shows exactly what would run, all of it.

The old yes/no question showed the call's one-line label (the first 50 characters of a bash command),
and an OSC sequence in the command could hide more of it. Here every argument is shown whole, wrapped
and scrollable, with each control character named in reverse video (``<ESC>]0;…<BEL>``, ``<CR>``,
``<U+202E>``) by :func:`widgets.safe_text.revealed_text`: nothing that would run is elided or hidden.
``y`` allows, ``n`` or Escape denies; Enter does nothing, so a key typed for the prompt cannot approve.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui.session.sanitize import sanitize
from widgets.button_row import ButtonRow
from widgets.safe_text import revealed_text

CHROME_ROWS = 12


def call_text(tool: str, args: dict[str, Any]) -> Text:
    """The arguments of a call as they will be used: a bash command alone, else ``name:`` and each value."""
    if tool == "bash" and isinstance(args.get("command"), str):
        text = revealed_text(args["command"])
        rest = {k: v for k, v in args.items() if k != "command"}
    else:
        text, rest = Text(), args
    for name, value in rest.items():
        if text:
            text.append("\n")
        text.append(f"{sanitize(str(name))}: ", style="bold")
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        text.append_text(revealed_text(shown))
    text.overflow = "fold"  # a long word wraps too: nothing runs off the right edge
    return text


class ApprovalDialog(ModalScreen[bool]):
    """Allow or deny one tool call; dismisses True to allow."""

    DEFAULT_CSS = """
    ApprovalDialog { align: center middle; background: $background 60%; }
    ApprovalDialog > Vertical {
        width: 100; max-width: 96%; height: auto; max-height: 96%;
        border: round $warning; background: $surface; padding: 0 1;
    }
    ApprovalDialog .dialog-title { text-style: bold; }
    ApprovalDialog #approval-reason { color: $text-muted; margin-bottom: 1; }
    ApprovalDialog #approval-scroll { height: auto; background: $background; padding: 0 1; }
    ApprovalDialog #approval-scroll:focus { background: $background-lighten-1; }
    ApprovalDialog .dialog-hint { color: $text-muted; }
    ApprovalDialog ButtonRow { height: auto; align-horizontal: right; }
    ApprovalDialog Button { margin-left: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Allow", id="dialog.approval.allow"),
        Binding("n,escape", "answer(False)", "Deny", id="dialog.approval.deny"),
    ]

    def __init__(self, tool: str, args: dict[str, Any], reason: str) -> None:
        super().__init__()
        self.tool, self.args, self.reason = tool, args, reason
        self.call = call_text(tool, args)

    def compose(self) -> ComposeResult:
        lines = self.call.plain.count("\n") + 1
        with Vertical():
            yield Static(Text(f"Allow {sanitize(self.tool)}?"), classes="dialog-title")
            yield Static(Text(sanitize(self.reason)), id="approval-reason")
            with VerticalScroll(id="approval-scroll"):
                yield Static(self.call, id="approval-call")
            yield Static(
                f"{lines} line(s), all shown · ↑/↓ PgUp/PgDn scroll · y allow · n/Esc deny",
                classes="dialog-hint",
                markup=False,
            )
            with ButtonRow():
                yield Button("Deny", id="deny")
                yield Button("Allow", id="allow", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#approval-scroll").focus()

    def on_resize(self) -> None:
        # The command scrolls; title, reason, hint and buttons (about 12 rows) always stay in view.
        self.query_one("#approval-scroll").styles.max_height = max(3, self.size.height - CHROME_ROWS)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "allow")

    def action_answer(self, allow: bool) -> None:
        self.dismiss(allow)
