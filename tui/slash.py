"""Slash commands and ``!`` shell lines typed in the prompt: parsing and the command list.

The prompt's completion, the help screen and the main screen's dispatcher all read :data:`COMMANDS`,
so a command is described once.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    name: str
    args: str
    help: str

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.args}".rstrip()


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand(
        "compact",
        "[--preview] [instructions]",
        "Compact the context now, optionally with a focus; --preview shows the summary before writing it",
    ),
    SlashCommand("tree", "", "Open the full-screen session tree"),
    SlashCommand("model", "[name]", "Pick the model (or set it by name)"),
    SlashCommand("settings", "", "Open the settings screen"),
    SlashCommand("label", "[text]", "Label the current entry (empty text clears it)"),
    SlashCommand(
        "export",
        "[html|md|jsonl [file]]",
        "Export the session (HTML outline, Markdown transcript, or the branch as a pi session file)",
    ),
    SlashCommand("fork", "", "New session from before one of your messages; its text goes into the prompt"),
    SlashCommand("clone", "[id]", "New session with this branch up to the current entry (or the one named)"),
    SlashCommand("new", "", "Start a new session"),
    SlashCommand("resume", "", "Open one of your kompakt or pi sessions"),
    SlashCommand("moa", "on|off", "Turn Mixture of Agents on or off"),
    SlashCommand("continue", "", "Let the agent carry on (after a spent iteration budget, an error or Esc)"),
    SlashCommand(
        "uncompact", "[id]", "Undo the latest compaction (or the one named): the leaf goes back to before it"
    ),
    SlashCommand(
        "inspect", "[id]", "Inspect the latest compaction (or the one named): summarised, summary, kept"
    ),
    SlashCommand(
        "session-settings", "[clear]", "Show this session's own compaction settings (or clear them)"
    ),
    SlashCommand("name", "<text>", "Name this session"),
    SlashCommand("help", "", "Show keys and commands"),
)
BY_NAME = {c.name: c for c in COMMANDS}


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
        if name in BY_NAME:
            return Parsed("command", name=name, argument=argument.strip())
        return Parsed("unknown", name=name, argument=argument.strip())
    return Parsed("message", argument=text)


def completions(prefix: str) -> list[SlashCommand]:
    """Commands whose name starts with what follows the slash in ``prefix``."""
    if not prefix.startswith("/") or " " in prefix:
        return []
    head = prefix[1:]
    return [c for c in COMMANDS if c.name.startswith(head)]
