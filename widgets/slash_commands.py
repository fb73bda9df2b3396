"""The prompt's slash commands and their completion (pure functions, no Textual).

The main screen runs the commands (listed once, in :mod:`tui.actions`); the prompt only offers them: typing ``/`` followed by the start of a name
lists the matching commands, and accepting one fills in its name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tui.actions import SLASH_COMMANDS as TABLE


@dataclass(frozen=True)
class SlashCommand:
    name: str  # with the leading slash
    args: str  # a hint such as "[instructions]", or ""
    description: str

    @property
    def completion(self) -> str:
        """The text accepting this command inserts (a trailing space when it takes arguments)."""
        return self.name + (" " if self.args else "")


# One list of commands for the whole app: the action table (tui.actions) describes them, the main screen runs them.
SLASH_COMMANDS: tuple[SlashCommand, ...] = tuple(
    SlashCommand(f"/{command.slash}", command.args, command.help) for command in TABLE
)


def complete(text: str, commands: Sequence[SlashCommand] = SLASH_COMMANDS) -> list[SlashCommand]:
    """Commands whose name starts with ``text``, while ``text`` is a lone ``/word`` being typed."""
    if not text.startswith("/") or any(ch.isspace() for ch in text):
        return []
    return [command for command in commands if command.name.startswith(text)]
