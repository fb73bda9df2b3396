"""Where summary text comes from besides the model: a remote summary endpoint, and the meter of summary calls.

A :data:`~tui.compaction.summarizer.SummarizeFn` is the one shape the summarizer calls:
``(system_prompt, user_prompt, max_tokens) → text``. The model's adapter lives with the provider it
streams from (:mod:`tui.agent.summary_model`), since the compaction layer never imports the agent. The remote adapter is
oh-my-pi's ``compaction.remoteEndpoint``: it POSTs ``{systemPrompt, prompt}`` and reads ``{summary,
shortSummary?}``; a non-2xx status, a body that is not JSON or a missing summary is a
:class:`SummaryError`. Its answer carries the short summary along, so the engine need not ask again. The model's adapter
counts what its calls cost in a :class:`SummaryMeter` (``summarize.meter``), which the engine stores
with the compaction for the inspector.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tui.compaction.errors import SummaryError
from tui.compaction.summarizer import RETURNS_SHORT_SUMMARY, SummarizeFn, SummaryText

REMOTE_TIMEOUT_S = 300.0


@dataclass
class SummaryMeter:
    """What the summary calls of one summarize function reported: calls, tokens and dollars."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0

    def add(self, usage: Mapping[str, Any]) -> None:
        self.calls += 1
        self.input_tokens += int(usage.get("input") or 0) + int(usage.get("cacheRead") or 0)
        self.output_tokens += int(usage.get("output") or 0)
        self.cost += float((usage.get("cost") or {}).get("total") or 0.0)

    def snapshot(self) -> SummaryMeter:
        return SummaryMeter(self.calls, self.input_tokens, self.output_tokens, self.cost)

    def since(self, earlier: SummaryMeter) -> SummaryMeter:
        """What was added after ``earlier`` (a snapshot of this meter)."""
        return SummaryMeter(
            self.calls - earlier.calls,
            self.input_tokens - earlier.input_tokens,
            self.output_tokens - earlier.output_tokens,
            self.cost - earlier.cost,
        )


def remote_summarize_fn(endpoint_url: str, *, timeout_s: float = REMOTE_TIMEOUT_S) -> SummarizeFn:
    """Summaries from an HTTP endpoint: POST ``{systemPrompt, prompt}`` → ``{summary, shortSummary?}``."""

    async def summarize(system_prompt: str, prompt: str, max_tokens: int) -> str:
        import httpx  # imported on first use: most sessions never call a remote endpoint

        try:
            async with httpx.AsyncClient(timeout=timeout_s) as client:
                response = await client.post(
                    endpoint_url, json={"systemPrompt": system_prompt, "prompt": prompt}
                )
        except httpx.HTTPError as exc:
            raise SummaryError(
                f"remote summary endpoint {endpoint_url}: {exc or type(exc).__name__}"
            ) from exc
        if not response.is_success:
            detail = response.text.strip()[:200]
            raise SummaryError(
                f"remote summary endpoint {endpoint_url} answered HTTP {response.status_code}"
                + (f": {detail}" if detail else "")
            )
        try:
            body: Any = response.json()
        except ValueError:
            raise SummaryError(f"remote summary endpoint {endpoint_url} did not answer with JSON") from None
        summary = body.get("summary") if isinstance(body, dict) else None
        if not isinstance(summary, str) or not summary.strip():
            raise SummaryError(f"remote summary endpoint {endpoint_url} answered without a summary")
        short = body.get("shortSummary")
        return SummaryText(summary, short if isinstance(short, str) and short.strip() else None)

    # The endpoint sends the short summary with the main one: no separate call is made for it.
    setattr(summarize, RETURNS_SHORT_SUMMARY, True)
    return summarize
