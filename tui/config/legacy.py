"""Settings keys that moved: read an old settings.toml as the new layout, in memory, with a notice.

pi 0.73.1 moved ``retry.maxDelayMs`` to ``retry.provider.maxRetryDelayMs``, and kompakt follows. A file that
still has the old key loads: the value is read as the new key (unless the file sets that too, which then
wins), and one notice line per moved key names the new key. The user's file is never rewritten here; the
notice tells them what to change.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

# old key path → new key path; each segment in every spelling a file may use (camelCase, snake_case)
MOVED_KEYS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("retry", "maxDelayMs"), ("retry", "provider", "maxRetryDelayMs")),
)


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _dotted(segments: tuple[str, ...]) -> str:
    return ".".join(segments)


def migrate_moved_keys(data: Mapping[str, Any], path: Path | None = None) -> tuple[dict[str, Any], list[str]]:
    """``data`` with every moved key under its new name, and the notices that say so (empty: nothing moved)."""
    result: dict[str, Any] = dict(data)
    notices: list[str] = []
    where = f"{path}: " if path is not None else ""
    for old, new in MOVED_KEYS:
        parent = _table(result, old[:-1])
        if parent is None:
            continue
        spelled = next((s for s in (old[-1], _snake(old[-1])) if s in parent), None)
        if spelled is None:
            continue
        value = parent.pop(spelled)
        target = _make_table(result, new[:-1])
        if any(s in target for s in (new[-1], _snake(new[-1]))):
            notices.append(
                f"{where}{_dotted(old)} is obsolete and ignored: {_dotted(new)} is set "
                f"(remove {_dotted(old)} from the file)"
            )
            continue
        target[new[-1]] = value
        notices.append(
            f"{where}{_dotted(old)} is now {_dotted(new)} (read as {value!r}; the file is unchanged, "
            "rename the key there to silence this)"
        )
    return result, notices


def _table(data: dict[str, Any], segments: tuple[str, ...]) -> dict[str, Any] | None:
    """The table at ``segments`` (copied into ``data`` so the caller's input stays untouched), or None."""
    for segment in segments:
        spelled = next((s for s in (segment, _snake(segment)) if s in data), None)
        child = data.get(spelled) if spelled is not None else None
        if spelled is None or not isinstance(child, Mapping):
            return None
        data[spelled] = dict(child)
        data = data[spelled]
    return data


def _make_table(data: dict[str, Any], segments: tuple[str, ...]) -> dict[str, Any]:
    for segment in segments:
        spelled = next((s for s in (segment, _snake(segment)) if s in data), segment)
        child = data.get(spelled)
        if not isinstance(child, Mapping):
            child = {}  # a non-table here is an error the validation reports with its line
            if spelled in data:
                return child
        data[spelled] = dict(child)
        data = data[spelled]
    return data
