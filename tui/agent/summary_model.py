"""Summaries written by the session's model: the provider adapter behind the compaction's SummarizeFn.

The compaction layer calls a :data:`~tui.compaction.summarizer.SummarizeFn` and never imports the agent;
this module, which owns the provider, adapts it. :func:`provider_summarize_fn` streams one completion per
call, raises :class:`~tui.compaction.errors.SummaryError` with the classified provider message when it
fails, and meters what each call cost (``summarize.meter``). :func:`summary_reasoning_effort` is pi
0.73.1's rule for the reasoning option of a summary request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.compaction.errors import SummaryError
from tui.compaction.summarizer import SummarizeFn
from tui.compaction.summary_sources import SummaryMeter
from tui.session.content import content_text

if TYPE_CHECKING:
    from tui.agent.provider import Provider

AUTO = "auto"


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
        from tui.agent.stream_events import Done, RetryScheduled, TextDelta
        from tui.compaction.summary_stream import emit

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
            if isinstance(event, TextDelta):
                emit(event.text)  # a preview shows the summary as it is written
            elif isinstance(event, RetryScheduled) and event.partial is not None:
                emit(None)  # the retry writes it again from the start
            elif isinstance(event, Done):
                done = event
        if done is not None and isinstance(done.message.get("usage"), dict):
            self.meter.add(done.message["usage"])  # a failed call may still have been paid for
        if done is None or done.error is not None:
            raise SummaryError(str(done.error) if done else "the stream ended without a reply")
        return content_text(done.message["content"], "\n")


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
