"""Slash commands and ``!`` shell lines typed in the prompt: parsing and the command list.

The commands themselves are rows of the one action table (:mod:`tui.actions`); this module tells a
command from a shell line or a message.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.actions import BY_SLASH, SLASH_COMMANDS, Action

COMMANDS: tuple[Action, ...] = SLASH_COMMANDS


@dataclass(frozen=True)
class Parsed:
    """What a submitted prompt is: a slash command, a shell line, or a message for the model."""

    kind: str  # "command" | "bash" | "message" | "unknown"
    name: str = ""
    argument: str = ""
    exclude_from_context: bool = False


def parse(text: str) -> Parsed:
    stripped = text.strip()
    if stripped.startswith("!!"):
        return Parsed("bash", argument=stripped[2:].strip(), exclude_from_context=True)
    if stripped.startswith("!") and len(stripped) > 1:
        return Parsed("bash", argument=stripped[1:].strip())
    if stripped.startswith("//"):  # the escape for a message that starts with a slash: '//text' sends '/text'
        at = text.index("/")
        return Parsed("message", argument=text[:at] + text[at + 1 :])
    if stripped.startswith("/") and len(stripped) > 1:
        name, _, argument = stripped[1:].partition(" ")
        if "/" in name:  # a path such as /etc/hosts is a message, not a command
            return Parsed("message", argument=text)
        if name in BY_SLASH:
            return Parsed("command", name=name, argument=argument.strip())
        return Parsed("unknown", name=name, argument=argument.strip())
    return Parsed("message", argument=text)
