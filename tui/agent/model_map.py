"""litellm's bundled model map, read as JSON without importing litellm (which takes seconds).

The CLI, the timeline and the model picker need context windows at once; this reads the same file
litellm uses offline (``model_prices_and_context_window_backup.json``) from its installed package.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

import orjson

_MAP_FILE = "model_prices_and_context_window_backup.json"


@cache
def model_map() -> dict[str, dict[str, Any]]:
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return {}
    path = Path(spec.origin).parent / _MAP_FILE
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    data.pop("sample_spec", None)
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def lookup(model: str, provider: str | None = None) -> dict[str, Any]:
    """The map entry for ``model`` (``provider/id`` or a bare id); {} when unknown."""
    table = model_map()
    candidates = [model]
    if provider and not model.startswith(f"{provider}/"):
        candidates.append(f"{provider}/{model}")
    if "/" in model:
        candidates.append(model.split("/", 1)[1])
    for name in candidates:
        if name in table:
            return table[name]
    return {}


def context_window(model: str, provider: str | None = None) -> int | None:
    value = lookup(model, provider).get("max_input_tokens")
    return int(value) if value else None


def chat_models() -> list[tuple[str, dict[str, Any]]]:
    """(name, info) of every chat model in the map, sorted by name."""
    return sorted((k, v) for k, v in model_map().items() if v.get("mode") == "chat")
