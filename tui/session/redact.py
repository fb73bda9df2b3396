"""Keep secrets out of exports: provider keys by their shape, and the values of secret environment variables.

Exports are meant to be shared, so every string taken from a session passes through :func:`scrub`
before it is written. Keys are matched by the prefixes providers give them (``sk-``, ``sk-ant-``,
``AIza``, ``hf_``, ``xai-``, ``gsk_``, ...), and the current values of environment variables whose
names end in ``_API_KEY``, ``_TOKEN`` or ``_SECRET`` are replaced wherever they occur, whatever their shape.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

REDACTED = "[redacted]"
SECRET_NAME_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET")
# Shorter values would match ordinary words and numbers; a real secret is longer than this.
MIN_SECRET_VALUE_CHARS = 8

_KEY_PATTERNS = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk-ant-[A-Za-z0-9_\-]{8,}"  # Anthropic
    r"|sk-[A-Za-z0-9_\-]{16,}"  # OpenAI and OpenAI-style (sk-proj-…, sk-or-…, DeepSeek)
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google
    r"|hf_[A-Za-z0-9]{20,}"  # Hugging Face
    r"|xai-[A-Za-z0-9]{20,}"  # xAI
    r"|gsk_[A-Za-z0-9]{20,}"  # Groq
    r"|gh[pousr]_[A-Za-z0-9]{30,}"  # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{30,}"
    r"|AKIA[0-9A-Z]{16}"  # AWS access key ids
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack
    r")"
)


def secret_env_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the secret-named variables in ``environ`` (default: ``os.environ``), longest first."""
    env = os.environ if environ is None else environ
    values = {
        value.strip()
        for name, value in env.items()
        if name.upper().endswith(SECRET_NAME_SUFFIXES) and len(value.strip()) >= MIN_SECRET_VALUE_CHARS
    }
    # Longest first, so a value that contains another is replaced whole.
    return sorted(values, key=len, reverse=True)


class Scrubber:
    """Replaces key-shaped strings and the given secret values with ``[redacted]``."""

    def __init__(self, secret_values: list[str]) -> None:
        self._values = re.compile("|".join(re.escape(v) for v in secret_values)) if secret_values else None

    def __call__(self, text: str) -> str:
        if self._values is not None:
            text = self._values.sub(REDACTED, text)
        return _KEY_PATTERNS.sub(REDACTED, text)


def scrubber() -> Scrubber:
    """A scrubber for the environment as it is now."""
    return Scrubber(secret_env_values())
