"""The retry policy for transient provider failures: exponential backoff, server delays, provider timeouts.

Mirrors the ``retry`` settings as a plain dataclass so the provider does not depend on the settings module:
``enabled``, ``maxRetries`` and ``baseDelayMs`` for kompakt's own retries, and the ``retry.provider`` table
(pi 0.73.1): ``maxRetryDelayMs`` is the longest server-requested delay accepted (a longer one fails at once,
0 accepts any finite one), ``timeoutMs`` and ``maxRetries`` go to the SDK, and ``streamIdleTimeoutMs`` is
kompakt's limit on the silence between two chunks of a stream. Attempt ``n`` (1-based) waits
``baseDelayMs × 2^(n-1)`` (at most ``maxRetryDelayMs``, as the old ``retry.maxDelayMs`` capped it), or the
server's requested delay when that is longer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tui.agent.errors import UNBOUNDED_DELAY_MS

# With maxRetryDelayMs = 0, our own backoff still never waits longer than this.
BACKOFF_CEILING_MS = 3_600_000
DEFAULT_REQUEST_TIMEOUT_MS = 600_000  # the openai SDK's own default


@dataclass(frozen=True)
class RetryPolicy:
    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_retry_delay_ms: int = 60000
    # None: the SDK's default (600 s); one request, from sending it to the end of its headers.
    timeout_ms: int | None = None
    # None: 0, the SDK does not retry on its own (this policy decides; see DESIGN.md's deviations).
    sdk_max_retries: int | None = None
    # 0: no limit. A stream silent for longer fails like a dropped connection and is retried.
    stream_idle_timeout_ms: int = 120_000

    @classmethod
    def from_settings(cls, retry: Mapping[str, Any]) -> RetryPolicy:
        """Build from the camelCase ``retry`` table of settings.toml (missing keys keep their defaults)."""
        defaults = cls()
        provider = retry.get("provider") or {}
        return cls(
            enabled=bool(retry.get("enabled", defaults.enabled)),
            max_retries=int(retry.get("maxRetries", defaults.max_retries)),
            base_delay_ms=int(retry.get("baseDelayMs", defaults.base_delay_ms)),
            max_retry_delay_ms=int(provider.get("maxRetryDelayMs", defaults.max_retry_delay_ms)),
            timeout_ms=_optional_int(provider.get("timeoutMs")),
            sdk_max_retries=_optional_int(provider.get("maxRetries")),
            stream_idle_timeout_ms=int(provider.get("streamIdleTimeoutMs", defaults.stream_idle_timeout_ms)),
        )

    @property
    def request_timeout_s(self) -> float:
        return (self.timeout_ms or DEFAULT_REQUEST_TIMEOUT_MS) / 1000

    @property
    def stream_idle_timeout_s(self) -> float | None:
        return self.stream_idle_timeout_ms / 1000 if self.stream_idle_timeout_ms > 0 else None

    def allows(self, attempt: int) -> bool:
        """Whether retry number ``attempt`` (1-based) may run."""
        return self.enabled and attempt <= self.max_retries

    def refuses_delay(self, retry_after_ms: int | None) -> bool:
        """Whether the server asked to wait longer than ``maxRetryDelayMs`` allows (then fail at once)."""
        if retry_after_ms is None:
            return False
        if retry_after_ms >= UNBOUNDED_DELAY_MS:
            return True  # "retry-after: inf" is never waited for, even with the cap off
        return self.max_retry_delay_ms > 0 and retry_after_ms > self.max_retry_delay_ms

    def delay_ms(self, attempt: int, retry_after_ms: int | None = None) -> int:
        """The wait before retry number ``attempt``: the backoff, or the server's delay when longer."""
        exponent = min(max(attempt - 1, 0), 40)  # 2**40 × any sane base is past the ceiling already
        ceiling = self.max_retry_delay_ms or BACKOFF_CEILING_MS
        delay = min(self.base_delay_ms << exponent, ceiling)
        if retry_after_ms is not None and not self.refuses_delay(retry_after_ms):
            delay = max(delay, retry_after_ms)
        return delay


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)
