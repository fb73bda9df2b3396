"""One-line labels for tool calls, as pi's session tree shows them: ``[read: src/app.py:10-29]``.

The tree view, the chat pane and the tool registry use :func:`tool_call_label`. Paths under the home directory are
shortened to ``~``; long commands and unknown tools' arguments are cut with ``...``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

BASH_LABEL_CHARS = 50
OTHER_LABEL_CHARS = 40


def shorten_home(path: str) -> str:
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


def _cut(text: str, limit: int) -> str:
    return text[:limit] + "..." if len(text) > limit else text


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ").replace("\t", " ")


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _read_label(path: str, args: Mapping[str, Any]) -> str:
    offset, limit = _int(args.get("offset")), _int(args.get("limit"))
    if offset is None and limit is None:
        return path
    start = offset if offset is not None else 1
    return f"{path}:{start}-{start + limit - 1}" if limit is not None else f"{path}:{start}"


def _as_args(args: Mapping[str, Any] | str | None) -> Mapping[str, Any] | str:
    if isinstance(args, str):
        try:
            decoded = json.loads(args)
        except json.JSONDecodeError:
            return args
        return decoded if isinstance(decoded, Mapping) else args
    return args or {}


def tool_call_label(name: str, args: Mapping[str, Any] | str | None) -> str:
    """The tree text of a call of tool ``name``; ``args`` may be a dict or its JSON text."""
    parsed = _as_args(args)
    if isinstance(parsed, str):
        return f"[{name}: {_cut(_one_line(parsed), OTHER_LABEL_CHARS)}]"
    path = _one_line(shorten_home(str(parsed.get("path") or "")))
    where = path or "."
    if name == "read":
        return f"[read: {_read_label(path, parsed)}]"
    if name in ("write", "edit"):
        return f"[{name}: {path}]"
    if name == "bash":
        return f"[bash: {_cut(_one_line(str(parsed.get('command') or '')), BASH_LABEL_CHARS)}]"
    if name == "grep":
        return f"[grep: /{_one_line(str(parsed.get('pattern') or ''))}/ in {where}]"
    if name == "find":
        return f"[find: {_one_line(str(parsed.get('pattern') or ''))} in {where}]"
    if name == "ls":
        return f"[ls: {where}]"
    compact = json.dumps(parsed, separators=(",", ":"), ensure_ascii=False, default=str)
    return f"[{name}: {_cut(_one_line(compact), OTHER_LABEL_CHARS)}]"
