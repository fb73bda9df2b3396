"""Prompt history: recall earlier prompts with Up/Down, optionally kept in a file across runs.

The file holds one JSON string per line and is only appended to; unreadable lines are skipped. The
in-memory list is capped, and navigation keeps the unsent draft so that moving past the newest entry
brings it back.
"""

from __future__ import annotations

import json
from pathlib import Path

LIMIT = 1000


def read_history(path: Path, limit: int = LIMIT) -> list[str]:
    """The last ``limit`` prompts stored in ``path`` (missing file: none)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return []
    entries: list[str] = []
    for line in lines[-limit:]:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, str) and value:
            entries.append(value)
    return entries


def append_history(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(text, ensure_ascii=False) + "\n")


class PromptHistory:
    """Entries oldest first, with a cursor for Up/Down recall."""

    def __init__(self, entries: list[str] | None = None, limit: int = LIMIT) -> None:
        self.entries: list[str] = list(entries or [])[-limit:]
        self.limit = limit
        self._position: int | None = None  # None: editing the draft
        self._draft = ""

    def add(self, text: str) -> None:
        if text and (not self.entries or self.entries[-1] != text):
            self.entries.append(text)
            del self.entries[: -self.limit]
        self.reset()

    def merge_older(self, older: list[str]) -> None:
        """Put entries loaded from the file before the ones added in this run."""
        self.entries = (older + self.entries)[-self.limit :]

    def reset(self) -> None:
        self._position, self._draft = None, ""

    def previous(self, current: str) -> str | None:
        """The entry before the current one (the first call keeps ``current`` as the draft)."""
        if not self.entries:
            return None
        if self._position is None:
            self._draft, self._position = current, len(self.entries)
        if self._position == 0:
            return None
        self._position -= 1
        return self.entries[self._position]

    def next(self) -> str | None:
        """The entry after the current one, then the draft; None when not navigating."""
        if self._position is None:
            return None
        self._position += 1
        if self._position >= len(self.entries):
            draft = self._draft
            self.reset()
            return draft
        return self.entries[self._position]
