"""One-line display text and search text of entries, as pi's ``/tree`` rows show them.

Tool results are described by the tool call that produced them (``[read: path:1-50]``,
``[bash: cmd...]``). Newlines and tabs become spaces and the ends are trimmed; message text is
capped at 200 characters before the screen truncates, as pi does. :func:`displayed_entries` is what the
chat shows of the active path (the TUI and the exports read the same list).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from tui.session.content import content_text
from tui.session.entries import (
    MOA_CUSTOM_TYPE,
    OMP_METADATA_TYPES,
    RESET_BOUNDARY_TYPE,
    Entry,
    Message,
    is_custom,
)

if TYPE_CHECKING:
    from tui.session.store import SessionStore

TEXT_CAP = 200
ERROR_CAP = 80
BASH_CAP = 50
ARGS_CAP = 40


def displayed_entries(store: SessionStore) -> list[Entry]:
    """The entries a chat shows for the active path: those behind the context's messages, in context
    order (the latest compaction's summary first), each preceded by the Mixture-of-Agents record its
    reply was answered with."""
    by_id = store.tree.by_id
    entries: list[Entry] = []
    for entry_id in store.build_context().entry_ids:
        entry = by_id.get(entry_id) if entry_id else None
        if entry is None:
            continue
        parent = by_id.get(entry.get("parentId") or "")
        if parent is not None and is_custom(parent, MOA_CUSTOM_TYPE):
            entries.append(parent)
        entries.append(entry)
    return entries


def flat(text: str, cap: int | None = None) -> str:
    """pi's one-line form: newlines and tabs become spaces, surrounding whitespace is dropped.

    Carriage returns become spaces too (pi leaves them in, but they would garble a terminal row).
    """
    return text.replace("\r", " ").replace("\n", " ").replace("\t", " ").strip()[:cap]


def _capped(content: Any) -> str:
    # pi caps message text before normalising it, so leading blanks count towards the cap.
    return content_text(content)[:TEXT_CAP]


def _home(path: str) -> str:
    # pi tests startsWith(home) alone, which turns /home/adam into ~m for the user ada: kompakt
    # shortens only the home directory itself and paths inside it.
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


def _arg(args: Mapping[str, Any], *names: str, default: str = "") -> str:
    """The first truthy argument among ``names`` as a string (JavaScript's ``a || b || default``)."""
    for name in names:
        value = args.get(name)
        if value:
            return str(value)
    return default


def tool_call_label(name: str, args: Mapping[str, Any] | None) -> str:
    """pi's compact description of a tool call, e.g. ``[read: ~/x.py:10-59]`` or ``[bash: ls -la]``."""
    args = args if isinstance(args, Mapping) else {}
    if name == "read":
        display = _home(_arg(args, "path", "file_path"))
        if "offset" in args or "limit" in args:
            offset, limit = args.get("offset"), args.get("limit")
            start = offset if isinstance(offset, int) else 1
            end = start + limit - 1 if isinstance(limit, int) else 0
            display += f":{start}" + (f"-{end}" if end else "")
        return f"[read: {display}]"
    if name in ("write", "edit"):
        return f"[{name}: {_home(_arg(args, 'path', 'file_path'))}]"
    if name == "bash":
        raw = _arg(args, "command")
        # The ellipsis depends on the raw length, the shown part on the trimmed one (as in pi).
        return f"[bash: {flat(raw, BASH_CAP)}{'...' if len(raw) > BASH_CAP else ''}]"
    if name == "grep":
        return f"[grep: /{_arg(args, 'pattern')}/ in {_home(_arg(args, 'path', default='.'))}]"
    if name == "find":
        return f"[find: {_arg(args, 'pattern')} in {_home(_arg(args, 'path', default='.'))}]"
    if name == "ls":
        return f"[ls: {_home(_arg(args, 'path', default='.'))}]"
    raw = json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    return f"[{name}: {raw[:ARGS_CAP]}{'...' if len(raw) > ARGS_CAP else ''}]"


def tool_calls_by_id(entries: Iterable[Entry]) -> dict[str, tuple[str, Any]]:
    """toolCallId → (tool name, arguments) over every assistant message."""
    calls: dict[str, tuple[str, Any]] = {}
    for entry in entries:
        if entry.get("type") != "message":
            continue
        message = entry.get("message") or {}
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "toolCall":
                calls[str(block.get("id"))] = (str(block.get("name", "")), block.get("arguments"))
    return calls


def assistant_has_text(message: Message) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    if not isinstance(content, list):
        return False
    return any(
        isinstance(b, dict) and b.get("type") == "text" and str(b.get("text") or "").strip() for b in content
    )


def _round_half_up(value: float) -> int:
    # JavaScript's Math.round: 2.5 → 3 (Python's round() would give 2).
    return math.floor(value + 0.5)


def entry_text(entry: Entry, calls: Mapping[str, tuple[str, Any]]) -> str:
    """The row text of an entry (without label, markers or prefix)."""
    kind = entry.get("type")
    if kind == "message":
        return _message_text(entry.get("message") or {}, calls)
    if kind == "custom_message":
        return f"[{entry.get('customType', '')}]: {flat(content_text(entry.get('content')))}"
    if kind == "compaction":
        return f"[compaction: {_round_half_up((entry.get('tokensBefore') or 0) / 1000)}k tokens]"
    if kind == "branch_summary":
        return f"[branch summary]: {flat(str(entry.get('summary') or ''))}"
    if kind == "model_change":
        return f"[model: {entry.get('modelId', '')}]"
    if kind == "thinking_level_change":
        return f"[thinking: {entry.get('thinkingLevel', '')}]"
    if kind == "custom":
        return f"[custom: {entry.get('customType', '')}]"
    if kind == "label":
        label = entry.get("label")
        return f"[label: {'(cleared)' if label is None else label}]"
    if kind == "session_info":
        return f"[title: {entry.get('name') or 'empty'}]"
    if kind == RESET_BOUNDARY_TYPE:
        return "[clear]"
    if kind in OMP_METADATA_TYPES:
        return omp_metadata_text(entry)
    return f"[{kind}]"


def _first_str(entry: Entry, *names: str) -> str:
    for name in names:
        value = entry.get(name)
        if isinstance(value, str) and value.strip():
            return flat(value, ARGS_CAP)
    return ""


def omp_metadata_text(entry: Entry) -> str:
    """A readable row for oh-my-pi's metadata entries: what it is, and its main field when it has one."""
    kind = str(entry.get("type"))
    if kind == "ttsr_injection":
        rules = entry.get("injectedRules")
        count = len(rules) if isinstance(rules, list) else 0
        return f"[rules injected: {count}]"
    label, fields = _OMP_NAMES.get(kind, (kind.replace("_", " "), ()))
    value = _first_str(entry, *fields)
    return f"[{label}: {value}]" if value else f"[{label}]"


# omp type → (row name, the fields whose first non-empty string the row shows)
_OMP_NAMES: dict[str, tuple[str, tuple[str, ...]]] = {
    "model_usage": ("model usage", ("model", "modelId")),
    "service_tier_change": ("service tier", ("serviceTier", "tier")),
    "credential_pin": ("credential pin", ("provider", "credentialId")),
    "session_init": ("session init", ("task",)),
    "mode_change": ("mode", ("mode",)),
    "title_change": ("title", ("title", "name")),
    "session_title": ("title", ("title", "name")),
}


def _message_text(message: Message, calls: Mapping[str, tuple[str, Any]]) -> str:
    role = message.get("role")
    if role == "user":
        return f"user: {flat(_capped(message.get('content')))}"
    if role == "assistant":
        text = flat(_capped(message.get("content")))
        if text:
            return f"assistant: {text}"
        if message.get("stopReason") == "aborted":
            return "assistant: (aborted)"
        if message.get("errorMessage"):
            return f"assistant: {flat(str(message['errorMessage']), ERROR_CAP)}"
        return "assistant: (no content)"
    if role == "toolResult":
        call = calls.get(str(message.get("toolCallId"))) if message.get("toolCallId") else None
        if call is None:
            name = message.get("toolName")
            return f"[{'tool' if name is None else name}]"
        return tool_call_label(call[0], call[1])
    if role == "bashExecution":
        return f"[bash]: {flat(str(message.get('command') or ''))}"
    return f"[{role}]"


def search_text(entry: Entry, label: str | None) -> str:
    """What search-as-you-type matches against, lower-cased (pi's searchable text)."""
    parts = [label or ""]
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message") or {}
        parts += [str(message.get("role", "")), _capped(message.get("content"))]
        if message.get("role") == "bashExecution":
            parts.append(str(message.get("command") or ""))
    elif kind == "custom_message":
        content = entry.get("content")
        parts += [str(entry.get("customType", "")), content if isinstance(content, str) else _capped(content)]
    elif kind == "compaction":
        parts.append("compaction")
    elif kind == "branch_summary":
        parts += ["branch summary", str(entry.get("summary") or "")]
    elif kind == "model_change":
        parts += ["model", str(entry.get("modelId", ""))]
    elif kind == "thinking_level_change":
        parts += ["thinking", str(entry.get("thinkingLevel", ""))]
    elif kind == "custom":
        parts += ["custom", str(entry.get("customType", ""))]
    elif kind == "label":
        parts += ["label", str(entry.get("label") or "")]
    elif kind == "session_info":
        parts += ["title", str(entry.get("name") or "")]
    elif kind == RESET_BOUNDARY_TYPE or kind in OMP_METADATA_TYPES:
        parts.append(entry_text(entry, {})[1:-1])
    return " ".join(parts).lower()
