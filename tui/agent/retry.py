"""The retry policy for transient provider failures: exponential backoff, capped, honouring retry-after.

Mirrors the ``retry`` settings (``enabled``, ``maxRetries``, ``baseDelayMs``, ``maxDelayMs``) as a plain
dataclass so the provider does not depend on the settings module. Attempt ``n`` (1-based) waits
``baseDelayMs × 2^(n-1)``; a server's requested delay wins when it is longer, and ``maxDelayMs`` caps both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RetryPolicy:
    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60000

    @classmethod
    def from_settings(cls, retry: Mapping[str, Any]) -> RetryPolicy:
        """Build from the camelCase ``retry`` table of settings.toml (missing keys keep their defaults)."""
        defaults = cls()
        return cls(
            enabled=bool(retry.get("enabled", defaults.enabled)),
            max_retries=int(retry.get("maxRetries", defaults.max_retries)),
            base_delay_ms=int(retry.get("baseDelayMs", defaults.base_delay_ms)),
            max_delay_ms=int(retry.get("maxDelayMs", defaults.max_delay_ms)),
        )

    def allows(self, attempt: int) -> bool:
        """Whether retry number ``attempt`` (1-based) may run."""
        return self.enabled and attempt <= self.max_retries

    def delay_ms(self, attempt: int, retry_after_ms: int | None = None) -> int:
        """The wait before retry number ``attempt``."""
        delay = self.base_delay_ms * 2 ** (attempt - 1)
        if retry_after_ms is not None:
            delay = max(delay, retry_after_ms)
        return min(delay, self.max_delay_ms)
