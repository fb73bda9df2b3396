"""Hermes §2.10 in the compacted context: a request after a compaction carries only the images of the
last image-bearing user message; earlier images become a note (AgentSession and the loopback server)."""

from __future__ import annotations

from pathlib import Path

from tests.agent_helpers import make_session, make_settings
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tui.session.entries import now_ms

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def _user(text: str, image: bool) -> dict:
    content = [{"type": "text", "text": text}]
    if image:
        content.append({"type": "image", "data": PNG, "mimeType": "image/png"})
    return {"role": "user", "content": content, "timestamp": now_ms()}


def _reply(text: str) -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "litellm-completions",
        "provider": "openai",
        "model": "fake",
        "usage": {"input": 100, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 105},
        "stopReason": "stop",
        "timestamp": now_ms(),
    }


def _images(request: dict) -> int:
    return sum(
        1
        for m in request["messages"]
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if part.get("type") == "image_url"
    )


async def test_images_before_the_last_image_message_are_stripped_after_a_compaction(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai, compaction={"enabled": False}))
    store = session.store
    first = store.append_message(_user("the first screenshot", image=True))
    store.append_message(_reply("I see it"))
    fake_openai.queue(Reply.text_reply("two images"), Reply.text_reply("one image"))
    await session.prompt("before any compaction both images go")
    store.append_message(_user("a second screenshot", image=True))
    store.append_message(_reply("I see that too"))
    await session.prompt("still no compaction")
    assert _images(fake_openai.requests[-1]) == 2  # no compaction: the context is sent as it is

    store.append_compaction("SUMMARY of the start.", first["id"], 500, {})
    fake_openai.queue(Reply.text_reply("one image"))
    await session.prompt("after the compaction")

    sent = fake_openai.requests[-1]
    assert _images(sent) == 1
    text = str(sent["messages"])
    assert "left out after the context was compacted" in text and "the first screenshot" in text
    assert any(
        b.get("type") == "image" for b in store.get(first["id"])["message"]["content"]
    )  # file unchanged
