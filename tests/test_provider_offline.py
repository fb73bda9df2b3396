"""The built-in offline model end to end through litellm, and the choice of a default model."""

from __future__ import annotations

import pytest

from tui.agent.litellm_loader import load_litellm
from tui.agent.offline import OFFLINE_MODEL, offline_reply, register_offline_provider, resolve_model
from tui.agent.provider import Provider
from tui.agent.stream_events import Done, TextDelta, UsageUpdate


async def test_offline_model_streams_its_explanation() -> None:
    provider = Provider(env={})
    events = [e async for e in provider.stream([{"role": "user", "content": "hello?"}], model=OFFLINE_MODEL)]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 10  # it streams, piece by piece
    text = "".join(deltas)
    assert text == offline_reply()
    assert "offline" in text and "OPENAI_API_KEY" in text and "settings.toml" in text
    (usage,) = [e.usage for e in events if isinstance(e, UsageUpdate)]
    assert usage["input"] > 0 and usage["output"] > 0
    done = events[-1]
    assert isinstance(done, Done) and done.error is None
    assert done.message["stopReason"] == "stop"
    assert (done.message["provider"], done.message["model"]) == ("kompakt-offline", "echo")
    assert done.message["usage"]["cost"]["total"] == 0


async def test_offline_model_answers_complete() -> None:
    text = await Provider(env={}).complete("Summarise.", "anything", model=OFFLINE_MODEL, max_tokens=100)
    assert text == offline_reply()


async def test_offline_model_goes_through_litellm_directly() -> None:
    litellm = load_litellm()
    register_offline_provider()
    register_offline_provider()  # idempotent
    assert sum(item["provider"] == "kompakt-offline" for item in litellm.custom_provider_map) == 1
    response = await litellm.acompletion(model=OFFLINE_MODEL, messages=[{"role": "user", "content": "hi"}])
    assert response.choices[0].message.content == offline_reply()
    assert response.usage.completion_tokens > 0


@pytest.mark.parametrize(
    ("configured", "env", "expected"),
    [
        ("openai/my-local", {}, ("openai/my-local", False)),
        ("  gpt-4o  ", {}, ("gpt-4o", False)),
        (OFFLINE_MODEL, {"OPENAI_API_KEY": "sk"}, (OFFLINE_MODEL, True)),
        (None, {"OPENAI_API_KEY": "sk"}, ("gpt-4o-mini", False)),
        ("", {"ANTHROPIC_API_KEY": "sk"}, ("anthropic/claude-sonnet-4-5", False)),
        (None, {"GEMINI_API_KEY": "k", "GROQ_API_KEY": "k"}, ("gemini/gemini-2.5-flash", False)),
        (None, {"OPENAI_API_KEY": ""}, (OFFLINE_MODEL, True)),
        (None, {}, (OFFLINE_MODEL, True)),
    ],
)
def test_resolve_model(configured: str | None, env: dict, expected: tuple[str, bool]) -> None:
    assert resolve_model(configured, env) == expected


def test_default_models_have_a_context_window() -> None:
    from tui.agent.offline import DEFAULT_MODELS

    provider = Provider(env={})
    litellm = load_litellm()
    # litellm's bundled map has no openrouter entries; that default falls back without crashing.
    mapped = [model for _, model in DEFAULT_MODELS if not model.startswith("openrouter/")]
    for model in mapped:
        assert litellm.get_model_info(model)["max_input_tokens"] == provider.context_window(model)
    assert provider.context_window("openrouter/openai/gpt-4o-mini") == 128_000
