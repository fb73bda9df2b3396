"""Dotted settings keys: parsing, quoting, resolving against the model, and flattening nested data.

A dotted key names one setting the way a TOML file does: ``compaction.keepRecentTokens``, or with a quoted segment
for a dictionary entry whose name is not a bare key: ``models."gpt-4.1".contextWindow``. Keys resolve against the
pydantic model's field types, so the loader, the writer, the watcher's diff and the settings screen all speak the
same canonical (camelCase alias) names, whether the user typed ``keep_recent_tokens``, ``KEEPRECENTTOKENS`` or
``keepRecentTokens``.
"""

from __future__ import annotations

import difflib
import json
import re
import types
from collections.abc import Iterable, Mapping
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from tui.config.errors import SettingsError

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def join_key(segments: Iterable[str]) -> str:
    """Join key segments into a dotted key, quoting the ones TOML would not accept bare."""
    return ".".join(s if _BARE_KEY.fullmatch(s) else json.dumps(s, ensure_ascii=False) for s in segments)


def split_key(dotted: str) -> tuple[str, ...]:
    """Split a TOML-style dotted key (``a."b.c".d``) into its segments."""
    segments: list[str] = []
    i, n = 0, len(dotted)
    while i < n:
        while i < n and dotted[i] in " \t":
            i += 1
        if i < n and dotted[i] in "\"'":
            quote = dotted[i]
            end = dotted.find(quote, i + 1)
            if end < 0:
                raise SettingsError(f"unterminated quote in key {dotted!r}")
            raw = dotted[i : end + 1]
            segments.append(json.loads(raw) if quote == '"' else raw[1:-1])
            i = end + 1
        else:
            match = _BARE_KEY.match(dotted, i)
            if not match:
                raise SettingsError(f"invalid key {dotted!r}")
            segments.append(match.group())
            i = match.end()
        while i < n and dotted[i] in " \t":
            i += 1
        if i < n:
            if dotted[i] != ".":
                raise SettingsError(f"invalid key {dotted!r}")
            i += 1
            if i == n:
                raise SettingsError(f"invalid key {dotted!r}")
    if not segments:
        raise SettingsError("empty key")
    return tuple(segments)


def unwrap_optional(annotation: Any) -> Any:
    """``X | None`` → ``X``; anything else unchanged."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def model_class(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model class an annotation stands for, if any."""
    annotation = unwrap_optional(annotation)
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def dict_value_type(annotation: Any) -> Any | None:
    """The value type of a ``dict[str, V]`` annotation, or None when it is not a dict."""
    annotation = unwrap_optional(annotation)
    if get_origin(annotation) is dict:
        return get_args(annotation)[1]
    return None


def is_composite(annotation: Any) -> bool:
    """Whether a value of this type is a table or a list (and so arrives as JSON from the environment)."""
    annotation = unwrap_optional(annotation)
    return (
        model_class(annotation) is not None
        or dict_value_type(annotation) is not None
        or get_origin(annotation) in (list, tuple, set, frozenset)
    )


def field_alias(model: type[BaseModel], name: str) -> str:
    """The key a field has in TOML (its alias, or its name when it has none)."""
    return model.model_fields[name].alias or name


def _match_field(model: type[BaseModel], segment: str, case_insensitive: bool) -> str | None:
    """Find the field a key segment names, by alias or attribute name."""
    wanted = segment.lower() if case_insensitive else segment
    for name, info in model.model_fields.items():
        for candidate in (info.alias or name, name):
            if (candidate.lower() if case_insensitive else candidate) == wanted:
                return name
    return None


def resolve_key(
    model: type[BaseModel], segments: Iterable[str], *, case_insensitive: bool = False
) -> tuple[tuple[str, ...], Any]:
    """Resolve key segments against ``model``: the canonical segments and the annotation of the value there.

    Raises SettingsError("unknown key …") naming the longest valid prefix plus the bad segment.
    """
    annotation: Any = model
    canonical: list[str] = []
    for segment in segments:
        sub_model = model_class(annotation)
        value_type = dict_value_type(annotation)
        if sub_model is not None:
            name = _match_field(sub_model, segment, case_insensitive)
            if name is None:
                raise SettingsError(
                    unknown_key_reason(segment, [field_alias(sub_model, n) for n in sub_model.model_fields]),
                    key=join_key([*canonical, segment]),
                )
            canonical.append(field_alias(sub_model, name))
            annotation = sub_model.model_fields[name].annotation
        elif value_type is not None:
            canonical.append(segment)
            annotation = value_type
        else:
            raise SettingsError(
                f"{join_key(canonical)} is a single value, not a table", key=join_key([*canonical, segment])
            )
    return tuple(canonical), annotation


def unknown_key_reason(segment: str, known: list[str]) -> str:
    """'unknown key', with a suggestion when the segment looks like a typo of a known key."""
    close = difflib.get_close_matches(segment, known, n=1) or difflib.get_close_matches(
        segment.lower(), [k.lower() for k in known], n=1
    )
    if close:
        suggestion = next(k for k in known if k.lower() == close[0].lower())
        return f"unknown key (did you mean {suggestion!r}?)"
    return "unknown key"


def flatten(data: Mapping[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """Flatten nested settings data into ``{dotted key: leaf value}`` with canonical key names.

    Tables (nested models and dictionary entries) are walked; scalars and lists are leaves. An empty dictionary
    contributes no keys.
    """
    flat: dict[str, Any] = {}
    _flatten_into(flat, (), data, model)
    return flat


def _flatten_into(flat: dict[str, Any], prefix: tuple[str, ...], value: Any, annotation: Any) -> None:
    sub_model = model_class(annotation)
    value_type = dict_value_type(annotation)
    if isinstance(value, Mapping) and sub_model is not None:
        for key, item in value.items():
            name = _match_field(sub_model, key, case_insensitive=False)
            if name is None:
                flat[join_key((*prefix, key))] = item
            else:
                field_annotation = sub_model.model_fields[name].annotation
                _flatten_into(flat, (*prefix, field_alias(sub_model, name)), item, field_annotation)
    elif isinstance(value, Mapping) and value_type is not None:
        for key, item in value.items():
            _flatten_into(flat, (*prefix, key), item, value_type)
    else:
        flat[join_key(prefix)] = value


def set_nested(data: dict[str, Any], segments: tuple[str, ...], value: Any) -> None:
    """Set ``data[s0][s1]…[sn] = value``, creating (or merging into) the tables on the way."""
    *parents, last = segments
    for segment in parents:
        child = data.get(segment)
        if not isinstance(child, dict):
            child = data[segment] = {}
        data = child
    if isinstance(value, dict) and isinstance(data.get(last), dict):
        data[last] = deep_merge(data[last], value)
    else:
        data[last] = value


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Merge two nested dicts per key: tables merge recursively, anything else in ``override`` wins."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def unflatten(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Rebuild nested data from ``{dotted key: value}`` (the inverse of :func:`flatten`)."""
    nested: dict[str, Any] = {}
    for dotted, value in flat.items():
        set_nested(nested, split_key(dotted), value)
    return nested


def find_by_prefix(segments: tuple[str, ...], mapping: Mapping[str, str]) -> str | None:
    """The value ``mapping`` has for the key or its nearest enclosing table (e.g. the variable that set it)."""
    for length in range(len(segments), 0, -1):
        found = mapping.get(join_key(segments[:length]))
        if found is not None:
            return found
    return None
