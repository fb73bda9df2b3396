"""The type checks every entry read from disk passes before anything else sees it.

A line that parses as JSON can still hold a list ``parentId``, an int ``timestamp`` or a string
``usage``; the consumers (context builder, token estimates, tree rows, exports, the TUI) rely on the
types of pi's format. :func:`entry_problem` names the first field of the wrong type, and the loader
skips that entry and reports it like a corrupt line, so what load lets through is what every consumer
accepts. Unknown entry types and unknown fields are not checked (they round-trip unchanged), and the
checks are plain Python: pydantic would cost start-up time on every open.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tui.session.entries import LEAF_CUSTOM_TYPE, PRUNE_CUSTOM_TYPE, Entry

# Deeper values make orjson's encoder (limit 255) and recursive Python walks fail; pi never writes them.
MAX_NESTING = 200
# A value can only be that deep when its line has that many opening brackets: a C-speed pre-check.
_BRACKETS = b"[{"

_NUMBER = (int, float)


def _number(value: Any) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool) and value == value


def _opt_str(entry: dict[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        return f"{key} is {type(value).__name__}, not a string"
    return None


def _opt(entry: dict[str, Any], key: str, kind: type, what: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, kind):  # kind is dict or bool: no int subclass trap
        return f"{key} is {type(value).__name__}, not {what}"
    return None


def _opt_number(entry: dict[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is not None and not _number(value):
        return f"{key} is {type(value).__name__}, not a number"
    return None


def _required_str(entry: dict[str, Any], key: str) -> str | None:
    if not isinstance(entry.get(key), str):
        return f"{key} is missing or not a string"
    return None


def too_deep(raw: bytes, value: Any) -> bool:
    """Whether ``value`` (decoded from ``raw``) nests deeper than :data:`MAX_NESTING`."""
    if len(raw) <= MAX_NESTING or len(raw) - len(raw.translate(None, _BRACKETS)) <= MAX_NESTING:
        return False
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_NESTING:
            return True
        if isinstance(current, dict):
            stack.extend((v, depth + 1) for v in current.values() if isinstance(v, (dict, list)))
        elif isinstance(current, list):
            stack.extend((v, depth + 1) for v in current if isinstance(v, (dict, list)))
    return False


def header_problem(header: Entry) -> str | None:
    for key in ("id", "timestamp", "cwd", "parentSession"):
        if reason := _opt_str(header, key):
            return f"session header: {reason}"
    return None


_STR = frozenset({str})
_BOOL = frozenset({bool})
_NUM = frozenset({int, float})  # bool is its own class here: true is not a number
_OBJ = frozenset({dict})
_WHAT = {_STR: "a string", _BOOL: "true or false", _NUM: "a number", _OBJ: "an object"}

# Field → the classes a value may have (None is always allowed: the field is then absent).
_MESSAGE_FIELDS = {
    "role": _STR,
    "stopReason": _STR,
    "errorMessage": _STR,
    "model": _STR,
    "provider": _STR,
    "api": _STR,
    "toolCallId": _STR,
    "toolName": _STR,
    "command": _STR,
    "output": _STR,
    "fullOutputPath": _STR,
    "customType": _STR,
    "isError": _BOOL,
    "cancelled": _BOOL,
    "truncated": _BOOL,
    "excludeFromContext": _BOOL,
    "timestamp": _NUM,
    "exitCode": _NUM,
}
_BLOCK_FIELDS: dict[str, dict[str, frozenset[type]]] = {
    "text": {"text": _STR},
    "thinking": {"thinking": _STR},
    "image": {"data": _STR, "mimeType": _STR},
    "toolCall": {"id": _STR, "name": _STR, "arguments": _OBJ},
}
_USAGE_FIELDS = {k: _NUM for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")}
_USAGE_FIELDS["cost"] = _OBJ


def _typed(values: dict[str, Any], fields: dict[str, frozenset[type]], where: str) -> str | None:
    """The first field of ``values`` whose class is not one ``fields`` allows (loops over the values)."""
    for key, value in values.items():
        allowed = fields.get(key)
        if allowed is not None and value is not None and value.__class__ not in allowed:
            return f"{where}{key} is {type(value).__name__}, not {_WHAT[allowed]}"
    return None


# The fast path for the entries almost every file is made of (messages of a v2+ file): the tables above with
# None's class added to each field's classes, checked in one pass that also bounds the nesting, so that the
# bracket count of :func:`too_deep` (a read of the whole line) is left out too. What it accepts, the
# explaining checks accept; what it refuses, they explain (or accept: it is only a shortcut).
_NONE = type(None)
_CONTAINERS = frozenset({dict, list})


def _or_none(fields: dict[str, frozenset[type]]) -> dict[str, frozenset[type]]:
    return {key: allowed | {_NONE} for key, allowed in fields.items()}


_ENTRY_OK = {"id": frozenset({str}), "parentId": _STR | {_NONE}, "timestamp": _STR | {_NONE}}
_MESSAGE_OK = {**_or_none(_MESSAGE_FIELDS), "content": frozenset({str, list, _NONE}), "usage": _OBJ | {_NONE}}
_BLOCK_OK = {kind: _or_none(fields) for kind, fields in _BLOCK_FIELDS.items()}
_USAGE_OK = _or_none(_USAGE_FIELDS)
_NUMBER_OK = _NUM | {_NONE}
_NO_FIELDS: dict[str, frozenset[type]] = {}
_ENTRY_WALKED = frozenset({"message"})
_MESSAGE_WALKED = frozenset({"content", "usage"})
_USAGE_WALKED = frozenset({"cost"})
_ENTRY_KEYS = frozenset({"type", "id", "parentId", "timestamp", "message"})
_STR_OR_NONE = _STR | {_NONE}


def _shallow(value: Any, depth: int) -> bool:
    """Whether ``value``, a container at ``depth`` (the entry is at 1), nests no deeper than the limit."""
    stack = [(value, depth)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_NESTING:
            return False
        children = current.values() if current.__class__ is dict else current
        stack.extend((v, depth + 1) for v in children if v.__class__ in _CONTAINERS)
    return True


def _fits(
    values: dict[str, Any],
    fields: Mapping[str, frozenset[object]],
    depth: int,
    walked: frozenset[str] = frozenset(),
) -> bool:
    """Every field of ``values`` (a dict at ``depth``) that ``fields`` names has a class it allows, and every
    container in it nests no deeper than the limit (but those in ``walked``: the caller checks them)."""
    for key, value in values.items():
        allowed = fields.get(key)
        if allowed is not None and value.__class__ not in allowed:
            return False
        if value.__class__ in _CONTAINERS and key not in walked and not _shallow(value, depth + 1):
            return False
    return True


def message_passes(entry: dict[str, Any]) -> bool:
    """Whether ``entry`` is a ``message`` entry of a v2+ file that passes every load check: what
    :func:`too_deep` and :func:`entry_problem` would say of it is nothing (told in one cheap pass)."""
    if entry.get("type") != "message" or not entry.get("id"):
        return False
    if entry.keys() == _ENTRY_KEYS:  # the usual fields only: two to look at
        if not _STR_OR_NONE.issuperset((entry["id"].__class__, entry["parentId"].__class__,
                                        entry["timestamp"].__class__)):  # fmt: skip
            return False
    elif not _fits(entry, _ENTRY_OK, 1, _ENTRY_WALKED):
        return False
    message: Any = entry.get("message")
    if message.__class__ is not dict or not _fits(message, _MESSAGE_OK, 2, _MESSAGE_WALKED):
        return False
    role = message.get("role")
    if role.__class__ is not str:
        return False
    content = message.get("content")
    if content.__class__ is list:
        for block in content:
            if block.__class__ is not dict:
                return False
            kind = block.get("type")
            if kind == "text" and len(block) == 2 and block.get("text").__class__ is str:
                continue  # {"type": "text", "text": "…"}: most blocks
            if kind.__class__ is not str and kind is not None:
                return False
            if not _fits(block, _BLOCK_OK.get(kind, _NO_FIELDS), 4):
                return False
    elif content is not None and role == "assistant":  # a string: a user's or a tool's, not a reply
        return False
    usage: Any = message.get("usage")
    if usage is None:
        return True
    if not _fits(usage, _USAGE_OK, 3, _USAGE_WALKED):
        return False
    cost = usage.get("cost")  # an object (or none): its values must be numbers, so it nests no deeper
    return not cost or all(value.__class__ in _NUMBER_OK for value in cost.values())


def _blocks_problem(content: Any, where: str) -> str | None:
    """Content is a string or a list of blocks (objects); known block types have typed fields."""
    if content is None or content.__class__ is str:
        return None
    if content.__class__ is not list:
        return f"{where} is {type(content).__name__}, not a string or a list"
    for index, block in enumerate(content):
        if block.__class__ is not dict:
            return f"{where}[{index}] is {type(block).__name__}, not an object"
        kind = block.get("type")
        if kind is not None and kind.__class__ is not str:
            return f"{where}[{index}].type is {type(kind).__name__}, not a string"
        fields = _BLOCK_FIELDS.get(kind)
        if fields and (reason := _typed(block, fields, f"{where}[{index}].")):
            return reason
    return None


def _usage_problem(usage: Any) -> str | None:
    if usage is None:
        return None
    if usage.__class__ is not dict:
        return f"message.usage is {type(usage).__name__}, not an object"
    if reason := _typed(usage, _USAGE_FIELDS, "message.usage."):
        return reason
    cost = usage.get("cost")
    if cost:
        for key, value in cost.items():
            if value is not None and value.__class__ not in _NUM:
                return f"message.usage.cost.{key} is {type(value).__name__}, not a number"
    return None


def _message_problem(message: Any) -> str | None:
    if message.__class__ is not dict:
        return f"message is {type(message).__name__ if message is not None else 'missing'}, not an object"
    role = message.get("role")
    if role.__class__ is not str:
        return "message.role is missing or not a string"
    if reason := _typed(message, _MESSAGE_FIELDS, "message."):
        return reason
    content = message.get("content")
    if role == "assistant" and content is not None and content.__class__ is not list:
        return f"message.content is {type(content).__name__}, not a list (an assistant reply)"
    return _blocks_problem(content, "message.content") or _usage_problem(message.get("usage"))


_KOMPAKT_RECORD = {
    **dict.fromkeys(("reason", "strategy", "model", "summarySource"), _STR),
    **dict.fromkeys(("tokensAfter", "durationMs", "headChars", "costUsd", "keepRecentTokens",
                     "keepRecentTokensUsed", "reserveTokens"), _NUM),
    **dict.fromkeys(("tokensBeforeMeasured", "tokensAfterMeasured"), _BOOL),
}  # fmt: skip
_ID_LISTS = ("headEntryIds", "pinnedEntryIds", "middleEntryIds")


def _strings(values: Any) -> bool:
    return values.__class__ is list and all(v.__class__ is str for v in values)


def _details_problem(details: Any) -> str | None:
    """A compaction's or branch summary's details: file lists and kompakt's own record are read back."""
    if details is None:
        return None
    if details.__class__ is not dict:
        return f"details is {type(details).__name__}, not an object"
    for key in ("readFiles", "modifiedFiles"):
        if details.get(key) is not None and not _strings(details[key]):
            return f"details.{key} is not a list of strings"
    record = details.get("kompakt")
    if record is None:
        return None
    if record.__class__ is not dict:
        return f"details.kompakt is {type(record).__name__}, not an object"
    if reason := _typed(record, _KOMPAKT_RECORD, "details.kompakt."):
        return reason
    for key in _ID_LISTS:
        if record.get(key) is not None and not _strings(record[key]):
            return f"details.kompakt.{key} is not a list of strings"
    return None


def _custom_data_problem(entry: Entry) -> str | None:
    """kompakt's own custom entries are read back: their data must have the shape kompakt writes."""
    kind, data = entry.get("customType"), entry.get("data")
    if kind == LEAF_CUSTOM_TYPE:
        if data is None:
            return None
        if not isinstance(data, dict):
            return f"data is {type(data).__name__}, not an object"
        reason = _opt_str(data, "leafId")
        return f"data.{reason}" if reason else None
    if kind == PRUNE_CUSTOM_TYPE:
        if not isinstance(data, dict):
            return "data is not an object"
        pruned = data.get("entries")
        if pruned is None:
            return None
        if not isinstance(pruned, dict) or not all(_number(v) for v in pruned.values()):
            return "data.entries is not an object of token counts"
    return None


def _fields_problem(entry: Entry, kind: Any, needs_id: bool) -> str | None:
    if kind == "message":
        return _message_problem(entry.get("message"))
    if kind == "compaction":
        return (
            _required_str(entry, "summary")
            # v1 names the first kept entry by index; the migration turns it into an id.
            or (_required_str if needs_id else _opt_str)(entry, "firstKeptEntryId")
            or _opt_number(entry, "tokensBefore")
            or _details_problem(entry.get("details"))
            or _opt(entry, "fromHook", bool, "true or false")
            or _opt_str(entry, "shortSummary")
        )
    if kind == "branch_summary":
        return (
            _required_str(entry, "summary")
            or _opt_str(entry, "fromId")
            or _details_problem(entry.get("details"))
            or _opt(entry, "fromHook", bool, "true or false")
        )
    if kind == "custom":
        return _required_str(entry, "customType") or _custom_data_problem(entry)
    if kind == "custom_message":
        return (
            _required_str(entry, "customType")
            or _blocks_problem(entry.get("content"), "content")
            or _opt(entry, "display", bool, "true or false")
        )
    if kind == "label":
        return _required_str(entry, "targetId") or _opt_str(entry, "label")
    if kind == "model_change":
        return _opt_str(entry, "provider") or _opt_str(entry, "modelId")
    if kind == "thinking_level_change":
        return _opt_str(entry, "thinkingLevel")
    if kind == "session_info":
        return _opt_str(entry, "name")
    return None


def entry_problem(entry: Entry, *, needs_id: bool) -> str | None:
    """Why ``entry`` cannot be loaded, or None. ``needs_id`` is False for v1 files (ids come later)."""
    kind = entry.get("type")
    if not isinstance(kind, str):
        return "type is missing or not a string"
    entry_id = entry.get("id")
    if needs_id and not (isinstance(entry_id, str) and entry_id):
        return f"entry without an id (type {kind!r})"
    reason = (
        (_opt_str(entry, "id") if not needs_id else None)
        or _opt_str(entry, "parentId")
        or _opt_str(entry, "timestamp")
        or _fields_problem(entry, kind, needs_id)
    )
    return f"{kind}: {reason}" if reason else None
