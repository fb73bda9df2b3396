"""Builders for pi v3 session entries and linear paths, shared by the test modules.

Every builder returns a plain entry ``dict`` in pi's JSONL format. Builders leave ``id``,
``parentId`` and ``timestamp`` unset unless given; :func:`chain` fills them in so that the entries
form one root→leaf path (ids ``00000001``, ``00000002``, … by position, timestamps one second
apart). A compaction built with an ``int`` ``first_kept`` refers to that position in the chain and
is resolved to the entry's id by :func:`chain`.

Example::

    path = chain([
        user("fix the bug"),
        assistant(tool_calls=[tool_call("read", {"path": "a.py"}, "c1")], stop_reason="toolUse"),
        tool_result("c1", "read", "print(1)"),
        assistant("done", usage=usage(input=900, output=20)),
    ])
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

Entry = dict[str, Any]

BASE_TIME = datetime(2025, 1, 1, tzinfo=UTC)


def entry_id(position: int) -> str:
    """The id :func:`chain` gives the entry at ``position`` (0-based)."""
    return f"{position + 1:08x}"


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _entry(kind: str, **fields: Any) -> Entry:
    return {"type": kind, "id": None, "parentId": None, "timestamp": None, **fields}


def message(msg: dict[str, Any]) -> Entry:
    """A ``message`` entry around any message dict."""
    return _entry("message", message=msg)


def usage(
    input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0, total: int | None = None
) -> dict[str, Any]:
    """An assistant usage record; ``totalTokens`` is the sum of the parts unless ``total`` is given."""
    parts = input + output + cache_read + cache_write
    return {
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": parts if total is None else total,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call") -> dict[str, Any]:
    """A ``toolCall`` content block for :func:`assistant`."""
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def user(content: str | list[dict[str, Any]]) -> Entry:
    return message({"role": "user", "content": content, "timestamp": 0})


def assistant(
    text: str = "",
    tool_calls: Sequence[dict[str, Any]] = (),
    usage: dict[str, Any] | None = None,
    stop_reason: str | None = None,
    thinking: str | None = None,
    provider: str = "anthropic",
    model: str = "claude-sonnet-4-5",
) -> Entry:
    """An assistant reply; ``stop_reason`` defaults to ``toolUse`` with tool calls, else ``stop``."""
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking})
    if text:
        content.append({"type": "text", "text": text})
    content.extend(tool_calls)
    msg: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "stopReason": stop_reason or ("toolUse" if tool_calls else "stop"),
        "timestamp": 0,
    }
    if usage is not None:
        msg["usage"] = usage
    return message(msg)


def tool_result(call_id: str, name: str, text: str = "", images: int = 0, is_error: bool = False) -> Entry:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "image", "data": "AAAA", "mimeType": "image/png"}] * images
    return message(
        {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": content,
            "isError": is_error,
            "timestamp": 0,
        }
    )


def bash(command: str, output: str = "", exit_code: int = 0, exclude: bool = False) -> Entry:
    """A user-run ``!command`` (``exclude=True`` is the ``!!`` form kept out of the context)."""
    msg = {
        "role": "bashExecution",
        "command": command,
        "output": output,
        "exitCode": exit_code,
        "cancelled": False,
        "truncated": False,
        "timestamp": 0,
    }
    if exclude:
        msg["excludeFromContext"] = True
    return message(msg)


def custom_message(custom_type: str, content: str | list[dict[str, Any]], display: bool = True) -> Entry:
    return _entry("custom_message", customType=custom_type, content=content, display=display)


def custom(custom_type: str, data: Any = None) -> Entry:
    return _entry("custom", customType=custom_type, data=data)


def branch_summary(
    summary: str, from_id: str = "root", details: dict[str, Any] | None = None, from_hook: bool | None = None
) -> Entry:
    entry = _entry("branch_summary", fromId=from_id, summary=summary)
    if details is not None:
        entry["details"] = details
    if from_hook is not None:
        entry["fromHook"] = from_hook
    return entry


def compaction(
    summary: str,
    first_kept: int | str,
    tokens_before: int = 0,
    details: dict[str, Any] | None = None,
    from_hook: bool | None = None,
) -> Entry:
    """A compaction; an ``int`` ``first_kept`` is a chain position that :func:`chain` turns into an id."""
    entry = _entry("compaction", summary=summary, firstKeptEntryId=first_kept, tokensBefore=tokens_before)
    if details is not None:
        entry["details"] = details
    if from_hook is not None:
        entry["fromHook"] = from_hook
    return entry


def thinking_change(level: str) -> Entry:
    return _entry("thinking_level_change", thinkingLevel=level)


def model_change(provider: str, model_id: str) -> Entry:
    return _entry("model_change", provider=provider, modelId=model_id)


def label(target_id: str, text: str | None) -> Entry:
    return _entry("label", targetId=target_id, label=text)


def session_info(name: str) -> Entry:
    return _entry("session_info", name=name)


def chain(entries: list[Entry], start: datetime = BASE_TIME) -> list[Entry]:
    """Link ``entries`` into one path in place: ids, parents, timestamps; returns the list."""
    for position, entry in enumerate(entries):
        moment = start + timedelta(seconds=position)
        if entry.get("id") is None:
            entry["id"] = entry_id(position)
        entry["parentId"] = entries[position - 1]["id"] if position else None
        if entry.get("timestamp") is None:
            entry["timestamp"] = _iso(moment)
        msg = entry.get("message")
        if isinstance(msg, dict) and not msg.get("timestamp"):
            msg["timestamp"] = int(moment.timestamp() * 1000)
    for entry in entries:
        if entry["type"] == "compaction" and isinstance(entry["firstKeptEntryId"], int):
            entry["firstKeptEntryId"] = entries[entry["firstKeptEntryId"]]["id"]
    return entries


def text_of(chars: int, fill: str = "x") -> str:
    """A string of exactly ``chars`` characters (``chars // 4`` tokens when a multiple of 4)."""
    return (fill * chars)[:chars]
