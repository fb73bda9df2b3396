"""What the settings form needs to know about each key, without Textual: editor kind, text ↔ value, changes.

Every documented setting becomes a :class:`FieldSpec` (its FieldDoc, key segments, section, editor kind and
whether it may be unset). The form shows a value with :func:`format_value`, turns what the user typed back into a
value with :func:`parse_text` (a ValueError carries the reason), and saves the difference from the effective value
with :func:`changes_for`, which edits a table entry by entry so that the rest of the file (and its comments) stays.
:func:`row_source` and :func:`override_note` explain where a value comes from and when a saved edit cannot win.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_origin

from tui.config import Settings, ValueSource, field_docs
from tui.config.keys import join_key, model_class, resolve_key, split_key, unwrap_optional
from tui.config.model import FieldDoc

EditorKind = Literal["switch", "select", "integer", "number", "text", "list", "table"]
TargetKind = Literal["user", "project"]

# Top-level scalars share one section; everything else is grouped by its first key segment.
MODEL_SECTION = "model"
_MODEL_KEYS = ("model", "summaryModel")
MODEL_SECTION_DESCRIPTION = "Which model answers, and which one writes the summaries."
# Later sources win: an edit saved to a file is hidden by any source ranked above that file.
_RANK = {"default": 0, "user": 1, "project": 2, "env": 3, "session": 4}
_SHORT_LIMIT = 40


@dataclass(frozen=True)
class FieldSpec:
    """One setting as the form edits it."""

    doc: FieldDoc
    segments: tuple[str, ...]
    kind: EditorKind
    optional: bool

    @property
    def key(self) -> str:
        return self.doc.key

    @property
    def section(self) -> str:
        return MODEL_SECTION if self.segments[0] in _MODEL_KEYS else self.segments[0]

    @property
    def label(self) -> str:
        """The key inside its section (``keepRecentTokens`` under ``compaction``)."""
        inner = (
            self.segments[1:]
            if self.section == self.segments[0] and len(self.segments) > 1
            else self.segments
        )
        return join_key(inner)


def _editor_kind(doc: FieldDoc, annotation: Any) -> EditorKind:
    inner = unwrap_optional(annotation)
    if doc.is_mapping:
        return "table"
    if doc.choices:
        return "select"
    if get_origin(inner) in (list, tuple, set, frozenset):
        return "list"
    return {bool: "switch", int: "integer", float: "number"}.get(inner, "text")


def field_specs() -> list[FieldSpec]:
    """Every setting, in the model's declaration order."""
    specs = []
    for doc in field_docs():
        segments, annotation = resolve_key(Settings, split_key(doc.key))
        specs.append(
            FieldSpec(
                doc, segments, _editor_kind(doc, annotation), unwrap_optional(annotation) is not annotation
            )
        )
    return specs


def section_description(section: str) -> str:
    """The heading text of a section: the sub-model's description; single-key sections have none."""
    if section == MODEL_SECTION:
        return MODEL_SECTION_DESCRIPTION
    info = Settings.model_fields.get(_attribute(section))
    if info is None or model_class(info.annotation) is None:
        return ""
    return info.description or ""


def _attribute(alias: str) -> str:
    return next(
        (name for name, info in Settings.model_fields.items() if (info.alias or name) == alias), alias
    )


def value_at(settings: Settings, segments: tuple[str, ...]) -> Any:
    """The effective value at a key (None when unset)."""
    data: Any = settings.model_dump(by_alias=True, exclude_none=True)
    for segment in segments:
        if not isinstance(data, Mapping) or segment not in data:
            return None
        data = data[segment]
    return data


def format_value(spec: FieldSpec, value: Any) -> str:
    """The text an editor shows for a value: JSON for tables and lists, '' for unset."""
    if value is None:
        return ""
    if spec.kind == "table":
        return json.dumps(value, indent=2, ensure_ascii=False)
    if spec.kind == "list":
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def short_value(value: Any, unset: str = "unset") -> str:
    """A one-line rendering of a value (for defaults in the row label), cut at a readable length."""
    if value is None:
        return unset
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (str, Mapping, list, tuple)):
        text = json.dumps(value, ensure_ascii=False)
    else:
        text = str(value)
    return text if len(text) <= _SHORT_LIMIT else text[: _SHORT_LIMIT - 1] + "…"


def parse_text(spec: FieldSpec, text: str) -> Any:
    """The value typed into a text editor; ValueError with a short reason when it is not one.

    Empty text unsets an optional key (back to its default); tables and lists take JSON or a TOML inline value.
    """
    stripped = text.strip()
    if not stripped:
        if spec.optional:
            return None
        if spec.kind in ("table", "list"):
            return {} if spec.kind == "table" else []
        raise ValueError("enter a value")
    if spec.kind == "integer":
        try:
            return int(stripped)
        except ValueError:
            raise ValueError("not a whole number") from None
    if spec.kind == "number":
        try:
            return float(stripped)
        except ValueError:
            raise ValueError("not a number") from None
    if spec.kind in ("table", "list"):
        return _parse_structured(stripped, dict if spec.kind == "table" else list)
    return stripped


def _parse_structured(text: str, expected: type) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        json_error = f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        try:
            # A TOML inline value ({ bash = "auto" }, ["a", "b"]) is accepted too; its error is not shown
            # because JSON is what the editor offers.
            value = tomllib.loads(f"value = {text}")["value"]
        except tomllib.TOMLDecodeError:
            raise ValueError(json_error) from None
    if not isinstance(value, expected):
        raise ValueError("expected a table { … }" if expected is dict else "expected a list [ … ]")
    return value


def changes_for(spec: FieldSpec, old: Any, new: Any) -> dict[str, Any]:
    """The ``{dotted key: value}`` edits that turn ``old`` into ``new``; tables are edited entry by entry."""
    if spec.kind != "table":
        return {} if old == new else {spec.key: new}
    changes: dict[str, Any] = {}
    _diff_tables(spec.segments, old or {}, new or {}, changes)
    return changes


def _diff_tables(prefix: tuple[str, ...], old: Mapping[str, Any], new: Mapping[str, Any], out: dict) -> None:
    for name in old:
        if name not in new:
            out[join_key((*prefix, name))] = None
    for name, value in new.items():
        before = old.get(name)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            _diff_tables((*prefix, name), before, value, out)
        elif value != before:
            out[join_key((*prefix, name))] = value


def row_source(spec: FieldSpec, sources: Mapping[str, ValueSource]) -> ValueSource:
    """Where a row's value comes from; for a table, the strongest source of any of its entries."""
    best = ValueSource("default")
    size = len(spec.segments)
    for dotted, source in sources.items():
        if dotted != spec.key and split_key(dotted)[:size] != spec.segments:
            continue
        if _RANK[source.kind] > _RANK[best.kind]:
            best = source
    return best


def source_label(source: ValueSource) -> str:
    """A short name for a source: default, user file, project file, or the environment variable."""
    if source.kind == "env":
        return f"env {source.env_var}" if source.env_var else "env"
    if source.kind == "session":
        return "session"
    return "default" if source.kind == "default" else f"{source.kind} file"


def override_note(source: ValueSource, target: TargetKind) -> str | None:
    """Why a value saved to the ``target`` file would not take effect, or None when it would."""
    if _RANK[source.kind] <= _RANK[target]:
        return None
    if source.kind == "session":
        return (
            f"This session uses {source.session_value} (its own setting, stored in the session file): a saved "
            "edit applies to other sessions, and to this one after /session-settings clear."
        )
    if source.kind == "env":
        return (
            f"Set by the environment ({source.env_var or 'a KOMPAKT_ variable'}), which wins over every file: "
            "a saved edit applies only once the variable is unset."
        )
    return "Set in the project file, which wins over the user file: save to the project file to change it."
