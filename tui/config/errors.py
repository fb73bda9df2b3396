"""SettingsError: one clear, one-line message for anything wrong in a settings source.

Every problem found while reading settings (a TOML syntax error, an unknown key, a bad value, a malformed
environment variable) becomes a :class:`SettingsError` that names where the value came from (a file and, when it
can be found, its line; or an environment variable), the dotted key and the reason. The TUI shows ``str(error)``
as a notification; the attributes let a settings screen point at the offending key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(eq=False)
class SettingsError(ValueError):
    """A settings source that cannot be used, with enough detail to fix it."""

    reason: str
    path: Path | None = None
    key: str | None = None
    line: int | None = None
    env_var: str | None = None
    more: int = 0
    # Every problem of the source, the first one included, each as one line (a settings screen lists them).
    problems: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        super().__init__(self.message)

    @property
    def source(self) -> str:
        """Where the bad value lives: a file (with line), an environment variable, or "" for a value given."""
        if self.path is not None:
            return f"{self.path}:{self.line}" if self.line else str(self.path)
        if self.env_var is not None:
            return f"environment variable {self.env_var}"
        return ""

    @property
    def message(self) -> str:
        parts = [p for p in (self.source, self.key) if p]
        tail = f" (and {self.more} more problem{'s' if self.more > 1 else ''})" if self.more else ""
        return ": ".join([*parts, self.reason]) + tail

    def __str__(self) -> str:
        return self.message

    @property
    def all_problems(self) -> tuple[str, ...]:
        """Every problem, one line each; just :attr:`message` when only the first one was recorded."""
        return self.problems or (self.message,)

    def listing(self, limit: int | None = None) -> str:
        """Every problem on a line of its own (for a toast or the CLI); past ``limit`` lines, the count of
        the rest."""
        problems = self.all_problems
        if limit is None or len(problems) <= limit:
            return "\n".join(problems)
        rest = len(problems) - limit
        return "\n".join([*problems[:limit], f"… and {rest} more problem{'s' if rest > 1 else ''}"])
