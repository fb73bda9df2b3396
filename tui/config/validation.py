"""Validating settings data and turning pydantic's errors into one-line SettingsErrors.

The loader validates each source (a file, the environment) on its own so that an error names the source that
holds the bad value; this module does that validation and finds the TOML line of the offending key. It also
validates a single edit (:func:`validate_change`), which the settings screen uses as the user types and the
timeline's what-if uses before anything is saved.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_settings import SettingsError as PydanticSettingsError

from tui.config.errors import SettingsError
from tui.config.keys import (
    field_alias,
    find_by_prefix,
    join_key,
    model_class,
    resolve_key,
    split_key,
    unknown_key_reason,
)
from tui.config.model import Settings

_KEY_PART = r"(?:[A-Za-z0-9_-]+|\"(?:[^\"\\]|\\.)*\"|'[^']*')"
_DOTTED = rf"{_KEY_PART}(?:\s*\.\s*{_KEY_PART})*"
_HEADER = re.compile(rf"^\s*\[\[?\s*(?P<key>{_DOTTED})\s*\]\]?\s*(?:#.*)?$")
_ASSIGNMENT = re.compile(rf"^\s*(?P<key>{_DOTTED})\s*=")


def validate_layer(
    data: Mapping[str, Any],
    *,
    path: Path | None = None,
    text: str | None = None,
    env_vars: Mapping[str, str] | None = None,
) -> Settings:
    """Validate one source's data; on failure raise a SettingsError naming ``path`` (and line) or the variable."""
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise error_from_validation(exc, path=path, text=text, env_vars=env_vars) from None
    except PydanticSettingsError as exc:
        raise SettingsError(str(exc), path=path) from None


def error_from_validation(
    exc: ValidationError,
    *,
    path: Path | None = None,
    text: str | None = None,
    env_vars: Mapping[str, str] | None = None,
) -> SettingsError:
    """The first problem of a ValidationError (by line) as a SettingsError; the rest are counted in
    ``more`` and every one, the first included, is a line of ``problems``."""
    errors = exc.errors(include_url=False)
    found = [_one_problem(error, path=path, text=text, env_vars=env_vars) for error in errors]
    found.sort(key=lambda problem: problem.line or 0)  # in the file's order (stable: pydantic's otherwise)
    return replace(found[0], more=len(errors) - 1, problems=tuple(problem.message for problem in found))


def _one_problem(
    error: Any,
    *,
    path: Path | None,
    text: str | None,
    env_vars: Mapping[str, str] | None,
) -> SettingsError:
    loc = error["loc"]
    names = tuple(str(p) for p in loc if isinstance(p, str))
    key = "".join(
        f"[{p}]" if isinstance(p, int) else ("." if i else "") + join_key([p]) for i, p in enumerate(loc)
    )
    if error["type"] == "extra_forbidden":
        reason = unknown_key_reason(names[-1], _known_keys(names[:-1]))
    elif error["type"] in ("model_type", "model_attributes_type", "dict_type"):
        reason = f"expected a table (got {error['input']!r})"
    else:
        message = error["msg"].removeprefix("Value error, ")
        # A whole table (the keymap) would make a long line; its message names the entries at fault.
        reason = message if isinstance(error["input"], Mapping) else f"{message} (got {error['input']!r})"
    return SettingsError(
        reason,
        path=path,
        key=key or None,
        line=find_key_line(text, names) if text is not None else None,
        env_var=find_by_prefix(names, env_vars) if env_vars else None,
    )


def _known_keys(parent: tuple[str, ...]) -> list[str]:
    """The valid keys of the table at ``parent`` (for a did-you-mean suggestion)."""
    try:
        _, annotation = resolve_key(Settings, parent)
    except SettingsError:
        return []
    sub_model = model_class(annotation)
    return [field_alias(sub_model, name) for name in sub_model.model_fields] if sub_model else []


def find_key_line(text: str, names: tuple[str, ...]) -> int | None:
    """1-based line where the key (or its nearest enclosing table) is written in a TOML text, if found."""
    defined: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = split_key(header.group("key"))
            defined.setdefault(table, number)
            continue
        assignment = _ASSIGNMENT.match(line)
        if assignment:
            defined.setdefault((*table, *split_key(assignment.group("key"))), number)
    for length in range(len(names), 0, -1):
        if names[:length] in defined:
            return defined[names[:length]]
    return None


def validate_change(settings: Settings, dotted_key: str, value: Any) -> Settings:
    """A copy of ``settings`` with one key changed, validated; None resets the key to its default.

    Raises SettingsError naming the key and the reason, without a source (nothing has been written yet).
    """
    segments, _ = resolve_key(Settings, split_key(dotted_key))
    data = settings.model_dump(by_alias=True)
    parent = data
    for segment in segments[:-1]:
        child = parent.get(segment)
        if not isinstance(child, dict):
            child = parent[segment] = {}
        parent = child
    if value is None:
        parent.pop(segments[-1], None)
    else:
        parent[segments[-1]] = value
    return validate_layer(data)
