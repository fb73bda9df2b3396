"""Prompt templates shipped as package data: Markdown files with ``{{name}}`` placeholders."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

_DIR = Path(__file__).parent
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@cache
def load(name: str) -> str:
    """The template ``prompts/<name>.md`` without its final newline."""
    return (_DIR / f"{name}.md").read_text(encoding="utf-8").removesuffix("\n")


def render(name: str, **values: str) -> str:
    """Fill a template's ``{{placeholders}}``; a placeholder without a value is an error."""
    template = load(name)

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"prompt {name!r} needs a value for {key!r}")
        return values[key]

    return _PLACEHOLDER.sub(fill, template)
