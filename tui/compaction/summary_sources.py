"""Where summary text comes from: the model through the provider, or a remote summary endpoint.

Both return a :data:`~tui.compaction.summarizer.SummarizeFn`, the one shape the summarizer calls:
``(system_prompt, user_prompt, max_tokens) → text``. The provider adapter streams one completion and
raises :class:`SummaryError` with the classified provider message when it fails. The remote adapter is
oh-my-pi's ``compaction.remoteEndpoint``: it POSTs ``{systemPrompt, prompt}`` and reads ``{summary,
shortSummary?}``; a non-2xx status, a body that is not JSON or a missing summary is a
:class:`SummaryError`. Its answer carries the short summary along, so the engine need not ask again. The provider adapter
counts what its calls cost in a :class:`SummaryMeter` (``summarize.meter``), which the engine stores
with the compaction for the inspector.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui.compaction.errors import SummaryError
from tui.compaction.summarizer import RETURNS_SHORT_SUMMARY, SummarizeFn, SummaryText

if TYPE_CHECKING:
    from tui.agent.provider import Provider

REMOTE_TIMEOUT_S = 300.0


def summary_reasoning_effort(model: str, thinking_level: str | None) -> str | None:
    """pi 0.73.1's rule (delta A.4): the session's thinking level, for a reasoning model, unless "off".

    None (no reasoning option at all) for a model without reasoning, without a level, or at "off".
    """
    if not thinking_level or thinking_level == "off":
        return None
    from tui.agent.litellm_loader import load_litellm

    try:
        return thinking_level if load_litellm().supports_reasoning(model=model) else None
    except Exception:  # unknown and local models: litellm cannot tell, so ask for nothing special
        return None


AUTO = "auto"


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


class _ProviderSummarize:
    """A SummarizeFn that streams from the provider and meters each call (see provider_summarize_fn)."""

    def __init__(
        self, provider: Provider, model: str, reasoning_effort: str | None, thinking_level: str | None
    ) -> None:
        self.provider = provider
        self.model = model
        self.reasoning_effort = reasoning_effort
        self.thinking_level = thinking_level
        self.meter = SummaryMeter()

    async def __call__(self, system_prompt: str, prompt: str, max_tokens: int) -> str:
        from tui.agent.litellm_loader import load_litellm_async
        from tui.agent.stream_events import Done

        effort = self.reasoning_effort
        if effort == AUTO:
            await load_litellm_async()
            effort = summary_reasoning_effort(self.model, self.thinking_level)
        limit = min(max_tokens, self.provider.max_output_tokens(self.model))
        messages = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
        done = None
        async for event in self.provider.stream(
            messages,
            model=self.model,
            system_prompt=system_prompt,
            max_tokens=limit,
            reasoning_effort=effort,
        ):
            if isinstance(event, Done):
                done = event
        if done is not None and isinstance(done.message.get("usage"), dict):
            self.meter.add(done.message["usage"])  # a failed call may still have been paid for
        if done is None or done.error is not None:
            raise SummaryError(str(done.error) if done else "the stream ended without a reply")
        return "\n".join(b["text"] for b in done.message["content"] if b.get("type") == "text")


def provider_summarize_fn(
    provider: Provider,
    model: str,
    *,
    reasoning_effort: str | None = None,
    thinking_level: str | None = None,
) -> SummarizeFn:
    """Summaries from ``model``; ``max_tokens`` is capped by the model's output limit (pi #4390).

    ``reasoning_effort="auto"`` applies pi's rule (:func:`summary_reasoning_effort`) to ``thinking_level``
    at the first call, once litellm is loaded, so building the function never imports litellm on the
    caller's thread. Branch summaries pass neither: they never send a reasoning option (delta B.6). The
    model's request headers (``models."<name>".headers``) go with every call, as with any request.
    """
    return _ProviderSummarize(provider, model, reasoning_effort, thinking_level)


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
