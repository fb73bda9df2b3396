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


async def test_a_key_echoed_in_an_error_is_redacted_everywhere_it_is_kept(
    tmp_path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.agent_helpers import Recorder, make_session, make_settings, messages_on_path
    from tui.agent.events import Notice

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    gateway_key = "gw-0123456789abcdef"  # no key shape, and a variable name the scrubber does not know
    settings = make_settings(fake_openai, retry={"enabled": False})
    settings.models[MODEL] = settings.models[MODEL].model_copy(update={"api_key_env": "MY_GATEWAY"})
    session = make_session(tmp_path, settings)
    session.provider.env = {"MY_GATEWAY": gateway_key}
    events = Recorder()
    session.subscribe(events)
    echo = f"Incorrect API key provided: {gateway_key}. Also tried {OPENAI_SECRET}."
    fake_openai.queue(Reply.error(400, {"error": {"message": echo}}))
    await session.prompt("hi")
    assert fake_openai.hits[-1].headers["Authorization"] == f"Bearer {gateway_key}"
    stored = messages_on_path(session.store)[-1]
    assert stored["stopReason"] == "error" and "[redacted]" in stored["errorMessage"]
    session.store.close()
    on_disk = (tmp_path / "session.jsonl").read_text()
    shown = " ".join(e.text for e in events.of(Notice))
    for secret in (gateway_key, OPENAI_SECRET):
        assert secret not in on_disk and secret not in shown and secret not in stored["errorMessage"]
