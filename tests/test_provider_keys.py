"""API keys go only where they were configured (issue 8 "Secrets and trust"): ``models."X".apiKeyEnv`` is the
key sent for that model, and a model with its own ``apiBase`` never receives the provider's usual variable.
Asserted on the Authorization header the loopback server receives."""

from __future__ import annotations

import pytest

from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tui.agent.provider import Provider
from tui.agent.retry import RetryPolicy

MODEL = "openai/fake"
USER = [{"role": "user", "content": "hello"}]
OPENAI_SECRET = "sk-openai-real-secret-0123456789"


async def ask(server: FakeOpenAI, override: dict, env: dict[str, str]) -> str:
    provider = Provider(
        models={MODEL: {"apiBase": server.api_base, **override}}, env=env, retry=RetryPolicy(enabled=False)
    )
    server.queue(Reply.text_reply("ok"))
    events = [event async for event in provider.stream(USER, model=MODEL)]
    assert events[-1].error is None
    return server.hits[-1].headers.get("Authorization", "")


async def test_openai_key_is_not_sent_to_a_custom_api_base(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # litellm reads OPENAI_API_KEY from the process environment itself: set it there, as a user has it.
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    header = await ask(fake_openai, {}, {"OPENAI_API_KEY": OPENAI_SECRET})
    assert OPENAI_SECRET not in header
    assert all(OPENAI_SECRET not in str(value) for value in fake_openai.hits[-1].headers.values())
    assert OPENAI_SECRET not in str(fake_openai.hits[-1].body)


async def test_api_key_env_names_the_key_that_is_sent(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    env = {"OPENAI_API_KEY": OPENAI_SECRET, "MY_GATEWAY_KEY": "gw-key-42"}
    header = await ask(fake_openai, {"apiKeyEnv": "MY_GATEWAY_KEY"}, env)
    assert header == "Bearer gw-key-42"


async def test_an_unset_api_key_env_sends_no_other_key(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    header = await ask(fake_openai, {"apiKeyEnv": "NOT_SET_ANYWHERE"}, {"OPENAI_API_KEY": OPENAI_SECRET})
    assert OPENAI_SECRET not in header
