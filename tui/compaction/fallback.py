"""The deterministic summary used when the summarizer fails (DESIGN.md deviation 5, Hermes §2.11).

It is built from the compacted messages alone, with no model: the goal (the first user message), the
tool calls with the paths they touched, the files read and changed, the errors seen, the latest user
request and the earlier notes carried along unchanged. It is capped so that a failure never produces a
summary larger than a good one would be. The engine stores it like any other summary (file tags, tool
trail and end marker included) and marks the entry's source as ``fallback``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import prompts
from tui.compaction.summarizer import strip_end_marker
from tui.compaction.tool_trail import shorten, tool_calls
from tui.session.context import message_text
from tui.session.entries import Message
from tui.session.redact import scrubber

MAX_CHARS = 8000
GOAL_CHARS = 600
REQUEST_CHARS = 1400
PREVIOUS_CHARS = 3000
MAX_TOOL_LINES = 20
MAX_ERRORS = 5
ERROR_CHARS = 300

# A shell's output that failed without the tool saying so: an error line of its own, not the word "error"
# anywhere (a file read or a grep that shows source code mentioning ValueError is no error seen).
_SHELL_ERROR_LINE = re.compile(
    r"^\s*(?:error\b|fatal\b|traceback \(most recent call last\)|failed\b|[\w.]*(?:error|exception):|"
    r"npm err!|.*\btimed out\b)",
    re.IGNORECASE | re.MULTILINE,
)
SHELL_TOOLS = frozenset({"bash", "shell"})


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _user_texts(messages: Sequence[Message]) -> list[str]:
    texts = [_collapse(message_text(m)) for m in messages if m.get("role") == "user"]
    return [t for t in texts if t]


def _tool_lines(messages: Sequence[Message]) -> list[str]:
    lines = []
    for record in tool_calls(messages):
        target = ", ".join(record.paths) if record.paths else record.arguments
        if record.command is not None:
            # A shell call's command says what it did; its cwd alone does not.
            target = record.command + (f" (in {', '.join(record.paths)})" if record.paths else "")
        lines.append(f"- {record.name}: {shorten(target, 160)}" if target else f"- {record.name}")
    if len(lines) > MAX_TOOL_LINES:
        dropped = len(lines) - MAX_TOOL_LINES
        lines = [f"- (+{dropped} earlier)", *lines[-MAX_TOOL_LINES:]]
    return lines


def _error_lines(messages: Sequence[Message]) -> list[str]:
    lines = []
    for message in messages:
        if message.get("role") != "toolResult":
            continue
        raw = message_text(message)
        shell_error = message.get("toolName") in SHELL_TOOLS and _SHELL_ERROR_LINE.search(raw)
        text = _collapse(raw)
        if text and (message.get("isError") or shell_error):
            lines.append(f"- {message.get('toolName') or 'tool'}: {shorten(text, ERROR_CHARS)}")
    return lines[-MAX_ERRORS:]


def _listed(items: Sequence[str]) -> str:
    # An empty list is known to be empty: "none", not "not recoverable".
    return "\n".join(items) if items else prompts.load("summary_fallback_empty")


def build_fallback_summary(
    messages: Sequence[Message],
    *,
    read_files: Sequence[str] = (),
    modified_files: Sequence[str] = (),
    previous_summary: str | None = None,
    reason: str = "unknown error",
    head: Sequence[Message] = (),
    focus: str | None = None,
) -> str:
    """The fallback notes for ``messages`` (the compacted history and turn prefix), at most 8,000 chars.

    ``head`` is head-tail's protected head: the goal is its first user message when it has one. ``focus``
    (a ``/compact`` focus) cannot be followed without a model; the notes say so."""
    users = _user_texts(messages)
    goals = _user_texts(head) or users
    none = prompts.load("summary_fallback_none")
    previous = ""
    if previous_summary:
        previous = prompts.render(
            "summary_fallback_previous", previous=shorten(strip_end_marker(previous_summary), PREVIOUS_CHARS)
        )
    text = prompts.render(
        "summary_fallback",
        goal=shorten(goals[0], GOAL_CHARS) if goals else none,
        reason=shorten(_collapse(reason), 300),
        count=str(len(messages)),
        tools=_listed(_tool_lines(messages)),
        read_files=_listed([f"- {p}" for p in read_files]),
        modified_files=_listed([f"- {p}" for p in modified_files]),
        errors=_listed(_error_lines(messages)),
        last_request=f"> {shorten(users[-1], REQUEST_CHARS)}" if users else none,
        previous=previous,
        focus_note=(
            prompts.render("summary_fallback_focus", focus=shorten(_collapse(focus), 300))
            if focus and focus.strip()
            else ""
        ),
    )
    return shorten(scrubber()(text), MAX_CHARS)  # redacted like the summarizer input
