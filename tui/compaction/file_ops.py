"""File operations a summary remembers: which files were read and which were modified (pi §6.3).

Only the assistant's ``read``, ``write`` and ``edit`` tool calls with a non-empty string ``path``
count. A compaction or branch summary stores the lists in ``details`` and appends them to its text
as ``<read-files>`` / ``<modified-files>`` tags, so the next summary can carry them forward.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tui.session.entries import Entry, Message

_TOOL_SETS = {"read": "read", "write": "written", "edit": "edited"}


@dataclass
class FileOps:
    """Paths seen in tool calls, by kind of operation."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)


def extract_file_ops(message: Message, ops: FileOps) -> None:
    """Add the paths of an assistant message's read/write/edit tool calls to ``ops``."""
    if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
        return
    for block in message["content"]:
        if not isinstance(block, dict) or block.get("type") != "toolCall":
            continue
        name = block.get("name")
        target = _TOOL_SETS.get(name) if isinstance(name, str) else None
        arguments = block.get("arguments")
        path = arguments.get("path") if isinstance(arguments, dict) else None
        if target and isinstance(path, str) and path:
            getattr(ops, target).add(path)


def extract_from_messages(messages: Iterable[Message], ops: FileOps) -> None:
    for message in messages:
        extract_file_ops(message, ops)


def seed_from_details(entry: Entry, ops: FileOps) -> None:
    """Carry the lists of an earlier compaction or branch summary forward, unless a hook wrote it."""
    # pi writes `fromHook`; omp names the same flag `fromExtension`.
    if entry.get("fromHook") or entry.get("fromExtension"):
        return
    details = entry.get("details")
    if not isinstance(details, dict):
        return
    if isinstance(details.get("readFiles"), list):
        ops.read.update(details["readFiles"])
    if isinstance(details.get("modifiedFiles"), list):
        ops.edited.update(details["modifiedFiles"])


def _js_order(path: str) -> bytes:
    # JavaScript's default sort compares UTF-16 code units; big-endian UTF-16 bytes sort the same way.
    return path.encode("utf-16-be", "surrogatepass")


def compute_file_lists(ops: FileOps) -> tuple[list[str], list[str]]:
    """``(read_files, modified_files)``: modified = edited ∪ written; read excludes modified; sorted."""
    modified = ops.edited | ops.written
    read_only = sorted(ops.read - modified, key=_js_order)
    return read_only, sorted(modified, key=_js_order)


def format_file_operations(read_files: list[str], modified_files: list[str]) -> str:
    """The tags appended to a summary: empty when both lists are empty, else ``\\n\\n`` + sections."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""
