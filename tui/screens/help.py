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

from tui.actions import SLASH_COMMANDS
from widgets.footer import KompaktFooter


def _key_display(screen: Screen, key: str) -> str:
    return screen.app.get_key_display(Binding(key, ""))


def _f_key_number(key: str) -> int | None:
    """12 for ``f12``; None for any other key."""
    return int(key[1:]) if key[:1] == "f" and key[1:].isdigit() else None


def _key_rows(screen: Screen) -> list[str]:
    """One row per binding id (its keys joined), the F-keys first in their order, then the others
    as the focus chain lists them (the focused pane's keys first)."""
    keys: dict[str, list[str]] = {}
    descriptions: dict[str, str] = {}
    f_numbers: dict[str, int] = {}
    for binding in screen.active_bindings.values():
        b = binding.binding
        # kompakt's own bindings carry ids (and are remappable); the text editor's cursor keys do not.
        if not (b.description and b.id):
            continue
        shown = _key_display(screen, b.key)
        if shown not in keys.setdefault(b.id, []):
            keys[b.id].append(shown)
        descriptions.setdefault(b.id, b.description)
        number = _f_key_number(b.key)
        if number is not None:
            f_numbers[b.id] = min(number, f_numbers.get(b.id, number))
    order = sorted(keys, key=lambda i: (0, f_numbers[i]) if i in f_numbers else (1, 0))  # stable
    return [f"| {' or '.join(f'`{k}`' for k in keys[i])} | {_cell(descriptions[i])} | `{i}` |" for i in order]


def _section_key(text: str) -> str:
    """A section's heading (its first line), so two widgets sharing one help text give one section."""
    return text.strip().splitlines()[0] if text.strip() else ""


def _cell(text: str) -> str:
    """Text for a Markdown table cell: a bare ``|`` (``/moa on|off``) would start a new cell."""
    return text.replace("|", "\\|")


def help_markdown(screen: Screen) -> str:
    parts: dict[str, str] = {}  # by heading: each section once, the focused widget's first
    focused = screen.focused
    chain = list(focused.ancestors_with_self) if focused is not None else []
    for node in [*chain, *screen.query("*")]:
        text = getattr(type(node), "HELP", None)
        if isinstance(text, str) and text.strip():
            parts.setdefault(_section_key(text), text.strip())
    keys = (
        '## Keys\n\nRemap any of them in settings.toml, e.g. `[keymap]` `"main.compact" = "ctrl+k"`.\n\n'
        "| key | action | id |\n|---|---|---|\n" + "\n".join(_key_rows(screen))
    )
    # D5: a command the screen refuses now (a write in a read-only session) is not offered.
    offered = [c for c in SLASH_COMMANDS if screen.check_action("command", (c.name,))]
    commands = "## Commands (type in the prompt)\n\n| command | what it does |\n|---|---|\n" + "\n".join(
        f"| `{_cell(c.usage)}` | {_cell(c.help)} |" for c in offered
    )
    shell = (
        "`!cmd` runs a shell command and adds its output to the context; `!!cmd` runs it without adding it."
    )
    return "\n\n".join(["# kompakt help", keys, commands, shell, *parts.values()])


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
        yield KompaktFooter()  # its own key (Esc closes), not the keys of the screen underneath
