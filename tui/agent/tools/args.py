"""Checking a tool call's arguments against the tool's JSON schema before it runs.

Only what the tools' schemas use is checked: required keys and the scalar types string, integer, number
and boolean, plus a ``minimum``. Models often send numbers as strings ("20") or booleans as "true", so
those are coerced rather than refused. Unknown keys are dropped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tui.agent.tools.base import ToolError


def parse_arguments(raw: Any) -> dict[str, Any]:
    """The arguments of a tool call as a dict; a JSON string is decoded, empty means no arguments."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ToolError(f"the arguments are not valid JSON ({exc.msg} at position {exc.pos})") from None
    if not isinstance(raw, Mapping):
        raise ToolError(f"the arguments must be a JSON object, not {type(raw).__name__}")
    return dict(raw)


def _coerce(name: str, value: Any, spec: Mapping[str, Any]) -> Any:
    kind = spec.get("type")
    if kind == "string":
        if not isinstance(value, str):
            raise ToolError(f"argument {name!r} must be a string")
        return value
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise ToolError(f"argument {name!r} must be true or false")
    if kind in ("integer", "number"):
        number = _number(name, value, integer=kind == "integer")
        if "minimum" in spec and number < spec["minimum"]:
            raise ToolError(f"argument {name!r} must be at least {spec['minimum']}")
        return number
    return value


def _number(name: str, value: Any, *, integer: bool) -> int | float:
    if isinstance(value, bool):
        raise ToolError(f"argument {name!r} must be a number")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ToolError(f"argument {name!r} must be a number, got {value!r}") from None
    if not isinstance(value, int | float):
        raise ToolError(f"argument {name!r} must be a number")
    if integer:
        if value != int(value):
            raise ToolError(f"argument {name!r} must be a whole number")
        return int(value)
    return value


def validate_arguments(schema: Mapping[str, Any], args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments with types coerced; a missing required key or a bad value raises :class:`ToolError`."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    missing = [key for key in schema.get("required", []) if args.get(key) is None]
    if missing:
        raise ToolError(f"missing required argument(s): {', '.join(missing)}")
    return {
        key: _coerce(key, value, properties[key])
        for key, value in args.items()
        if key in properties and value is not None
    }
