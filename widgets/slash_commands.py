"""The prompt's slash commands and their completion (pure functions, no Textual).

The lead runs the commands; the prompt only offers them: typing ``/`` followed by the start of a name
lists the matching commands, and accepting one fills in its name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    name: str  # with the leading slash
    args: str  # a hint such as "[instructions]", or ""
    description: str

    @property
    def completion(self) -> str:
        """The text accepting this command inserts (a trailing space when it takes arguments)."""
        return self.name + (" " if self.args else "")


SLASH_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("/compact", "[instructions]", "Compact the context now"),
    SlashCommand("/tree", "", "Open the session tree"),
    SlashCommand("/model", "", "Pick the model"),
    SlashCommand("/settings", "", "Edit the settings"),
    SlashCommand("/label", "[text]", "Label the current entry"),
    SlashCommand("/export", "[file]", "Export the session"),
    SlashCommand("/new", "", "Start a new session"),
    SlashCommand("/resume", "", "Resume another session"),
    SlashCommand("/moa", "on|off", "Mixture of agents on or off"),
    SlashCommand("/help", "", "Show help"),
)


def complete(text: str, commands: Sequence[SlashCommand] = SLASH_COMMANDS) -> list[SlashCommand]:
    """Commands whose name starts with ``text``, while ``text`` is a lone ``/word`` being typed."""
    if not text.startswith("/") or any(ch.isspace() for ch in text):
        return []
    return [command for command in commands if command.name.startswith(text)]
