"""What the summarised messages did, extracted without a model: tool calls, their paths, mentioned paths.

These are the Hermes guards that survive a weak summary (reference hermes-compressor §2.5, §2.11): the
tool calls (name and shortened arguments) and the file paths mentioned are listed beside the summary
text, so that a summary that drops them does not lose them. The deterministic fallback summary reads
the same records.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import prompts
from tui.compaction.tokens import json_compact
from tui.session.context import message_text
from tui.session.entries import Message
from tui.session.redact import scrubber

ARGUMENT_CHARS = 200
MAX_TRAIL_CALLS = 40
MAX_PATHS = 12
PATH_KEYS = ("path", "workdir", "file_path", "output_path", "cwd")

# Absolute, home-relative and Windows paths in free text; never the "//host" part of a URL.
_PATH_IN_TEXT = re.compile(
    r"(?<![\w.:/~\\])(?:~?/[\w.+@-]+(?:/[\w.+@-]+)*/?|[A-Za-z]:\\[^\s`'\"<>()\[\]{}]+)"
)


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call: its name, its arguments as short text, and the paths among its arguments."""

    name: str
    arguments: str
    paths: tuple[str, ...]
    command: str | None = None  # a shell call's command line (bash and the like)

    def describe(self) -> str:
        return f"{self.name}({self.arguments})"


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _argument_paths(value: Any, found: list[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in PATH_KEYS and isinstance(item, str) and item:
                found.append(item)
            else:
                _argument_paths(item, found)
    elif isinstance(value, list):
        for item in value:
            _argument_paths(item, found)


def tool_calls(messages: Iterable[Message]) -> list[ToolCallRecord]:
    """Every assistant tool call in order."""
    records: list[ToolCallRecord] = []
    for message in messages:
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if not isinstance(block, dict) or block.get("type") != "toolCall":
                continue
            arguments = block.get("arguments") or {}
            shown = (
                ", ".join(
                    f"{key}={shorten(json_compact(value), ARGUMENT_CHARS)}"
                    for key, value in arguments.items()
                )
                if isinstance(arguments, dict)
                else shorten(str(arguments), ARGUMENT_CHARS)
            )
            found: list[str] = []
            _argument_paths(arguments, found)
            command = arguments.get("command") if isinstance(arguments, dict) else None
            records.append(
                ToolCallRecord(
                    str(block.get("name") or "?"),
                    shown,
                    tuple(dict.fromkeys(found)),
                    command if isinstance(command, str) and command else None,
                )
            )
    return records


def mentioned_paths(messages: Iterable[Message], limit: int = MAX_PATHS) -> list[str]:
    """Paths named in tool arguments and in message text, first seen first, at most ``limit``."""
    found: list[str] = []
    for message in messages:
        for record in tool_calls([message]):
            found.extend(record.paths)
        text = message_text(message) if isinstance(message.get("content"), list | str) else ""
        for match in _PATH_IN_TEXT.finditer(text):
            # Sentence punctuation after a path is not part of it ("C:\\notes.txt?").
            found.append(match.group(0).rstrip(".,:;?!"))
    unique = [p for p in dict.fromkeys(found) if p not in ("/", "~/")]
    return unique[:limit]


def format_trail(messages: Sequence[Message]) -> str:
    """The tool-call and path sections appended to a summary; empty when there is nothing to list."""
    sections = []
    records = tool_calls(messages)
    if records:
        lines = [f"- {r.describe()}" for r in records[-MAX_TRAIL_CALLS:]]
        if len(records) > MAX_TRAIL_CALLS:
            lines.insert(0, f"- (+{len(records) - MAX_TRAIL_CALLS} earlier)")
        sections.append(prompts.render("summary_tool_trail", calls="\n".join(lines)))
    paths = mentioned_paths(messages)
    if paths:
        sections.append(prompts.render("summary_paths", paths="\n".join(paths)))
    # The trail is stored in the summary and sent on: redacted like the summarizer input.
    return scrubber()("\n\n" + "\n\n".join(sections)) if sections else ""
