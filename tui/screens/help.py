"""F1 help: the keys that work right now, the slash commands, and what the focused pane does.

It is built from the live bindings of the screen underneath (so remapped keys show as remapped) and
from each widget's ``HELP`` text, with the focused widget's help first.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown

from tui.slash import COMMANDS


def _key_display(screen: Screen, key: str) -> str:
    return screen.app.get_key_display(Binding(key, ""))


def help_markdown(screen: Screen) -> str:
    parts: list[str] = []
    focused = screen.focused
    seen: set[type] = set()
    chain = list(focused.ancestors_with_self) if focused is not None else []
    for node in chain:
        text = getattr(type(node), "HELP", None)
        if isinstance(text, str) and type(node) not in seen:
            seen.add(type(node))
            parts.append(text.strip())
    rows = []
    for binding in screen.active_bindings.values():
        b = binding.binding
        # kompakt's own bindings carry ids (and are remappable); the text editor's cursor keys do not.
        if b.description and b.id:
            rows.append(f"| `{_key_display(screen, b.key)}` | {b.description} | `{b.id}` |")
    keys = (
        '## Keys\n\nRemap any of them in settings.toml, e.g. `[keymap]` `"main.compact" = "ctrl+k"`.\n\n'
        "| key | action | id |\n|---|---|---|\n" + "\n".join(dict.fromkeys(rows))
    )
    commands = "## Commands (type in the prompt)\n\n| command | what it does |\n|---|---|\n" + "\n".join(
        f"| `{c.usage}` | {c.help} |" for c in COMMANDS
    )
    shell = (
        "`!cmd` runs a shell command and adds its output to the context; `!!cmd` runs it without adding it."
    )
    for node in screen.query("*"):
        text = getattr(type(node), "HELP", None)
        if isinstance(text, str) and type(node) not in seen:
            seen.add(type(node))
            parts.append(text.strip())
    return "\n\n".join(["# kompakt help", keys, commands, shell, *parts])


class HelpScreen(ModalScreen[None]):
    """Keys, commands and per-pane help for the screen it was opened over."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 110; height: 85%; border: round $primary;
        background: $surface; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "dismiss", "Close help", id="help.close"),
    ]

    def __init__(self, over: Screen) -> None:
        super().__init__()
        self._text = help_markdown(over)

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(self._text)
