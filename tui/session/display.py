"""One-line display text and search text of entries, as pi's ``/tree`` rows show them.

Tool results are described by the tool call that produced them (``[read: path:1-50]``,
``[bash: cmd...]``). Newlines and tabs become spaces; texts are capped before the screen truncates.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from tui.session.entries import Entry, Message

TEXT_CAP = 200


def flat(text: str, cap: int = TEXT_CAP) -> str:
    return (
        " ".join(text.replace("\t", " ").splitlines())[:cap]
        if "\n" in text or "\r" in text
        else (text.replace("\t", " ")[:cap])
    )


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home not in ("", "/") and path.startswith(home) else path


def tool_call_label(name: str, args: Mapping[str, Any] | None) -> str:
    """pi's compact description of a tool call, e.g. ``[read: ~/x.py:10-60]`` or ``[bash: ls -la]``."""
    args = args if isinstance(args, Mapping) else {}
    path = _home(str(args.get("path") or ""))
    if name == "read":
        offset, limit = args.get("offset"), args.get("limit")
        if isinstance(offset, int) or isinstance(limit, int):
            start = offset if isinstance(offset, int) else 1
            end = f"{start + limit - 1}" if isinstance(limit, int) else ""
            return f"[read: {path}:{start}-{end}]"
        return f"[read: {path}]"
    if name in ("write", "edit"):
        return f"[{name}: {path}]"
    if name == "bash":
        command = flat(str(args.get("command") or ""))
        return f"[bash: {command[:50]}{'...' if len(command) > 50 else ''}]"
    if name == "grep":
        return f"[grep: /{args.get('pattern', '')}/ in {path or '.'}]"
    if name == "find":
        return f"[find: {args.get('pattern', '')} in {path or '.'}]"
    if name == "ls":
        return f"[ls: {path or '.'}]"
    raw = json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    return f"[{name}: {raw[:40]}{'...' if len(raw) > 40 else ''}]"


def tool_calls_by_id(entries: Iterable[Entry]) -> dict[str, tuple[str, Any]]:
    """toolCallId → (tool name, arguments) over every assistant message."""
    calls: dict[str, tuple[str, Any]] = {}
    for entry in entries:
        if entry.get("type") != "message":
            continue
        message = entry.get("message") or {}
        if message.get("role") != "assistant":
            continue
        for block in message.get("content") or ():
            if isinstance(block, dict) and block.get("type") == "toolCall":
                calls[str(block.get("id"))] = (str(block.get("name", "")), block.get("arguments"))
    return calls


def assistant_has_text(message: Message) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    return any(
        isinstance(b, dict) and b.get("type") == "text" and b.get("text", "").strip() for b in content or ()
    )


def entry_text(entry: Entry, calls: Mapping[str, tuple[str, Any]]) -> str:
    """The row text of an entry (without label, markers or prefix)."""
    kind = entry.get("type")
    if kind == "message":
        return _message_text(entry.get("message") or {}, calls)
    if kind == "custom_message":
        return f"[{entry.get('customType', '')}]: {flat(content_text(entry.get('content')))}"
    if kind == "compaction":
        return f"[compaction: {round((entry.get('tokensBefore') or 0) / 1000)}k tokens]"
    if kind == "branch_summary":
        return f"[branch summary]: {flat(str(entry.get('summary') or ''))}"
    if kind == "model_change":
        return f"[model: {entry.get('modelId', '')}]"
    if kind == "thinking_level_change":
        return f"[thinking: {entry.get('thinkingLevel', '')}]"
    if kind == "custom":
        return f"[custom: {entry.get('customType', '')}]"
    if kind == "label":
        return f"[label: {entry.get('label') or '(cleared)'}]"
    if kind == "session_info":
        return f"[session: {entry.get('name') or ''}]"
    return f"[{kind}]"


def _message_text(message: Message, calls: Mapping[str, tuple[str, Any]]) -> str:
    role = message.get("role")
    if role == "user":
        return f"user: {flat(content_text(message.get('content')))}"
    if role == "assistant":
        text = flat(content_text(message.get("content")))
        if text.strip():
            return f"assistant: {text}"
        if message.get("stopReason") == "aborted":
            return "assistant: (aborted)"
        if message.get("errorMessage"):
            return f"assistant: {flat(str(message['errorMessage']), 80)}"
        return "assistant: (no content)"
    if role == "toolResult":
        call = calls.get(str(message.get("toolCallId")))
        if call is None:
            return f"[{message.get('toolName', 'tool')}]"
        return tool_call_label(call[0], call[1])
    if role == "bashExecution":
        return f"[bash]: {flat(str(message.get('command') or ''))}"
    if role == "custom":
        return f"[{message.get('customType', '')}]: {flat(content_text(message.get('content')))}"
    return f"[{role}]"


def search_text(entry: Entry, label: str | None) -> str:
    """What search-as-you-type matches against, lower-cased."""
    parts = [label or ""]
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message") or {}
        parts += [
            str(message.get("role", "")),
            content_text(message.get("content")),
            str(message.get("command") or ""),
        ]
    elif kind == "custom_message":
        parts += [str(entry.get("customType", "")), content_text(entry.get("content"))]
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
    return " ".join(parts).lower()
