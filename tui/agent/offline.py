"""The built-in offline model and the choice of a model when the settings name none.

On a fresh machine with no key and no ``model`` setting, kompakt still works: it talks to
``kompakt-offline/echo``, a litellm custom provider (``litellm.custom_provider_map``), so requests go
through litellm's ordinary streaming path. The model answers every request with the same explanation
(prompts/offline_reply.md) of how to configure a real provider, streams it in small pieces and reports
usage estimated from the text length. :func:`resolve_model` picks the configured model, else a default
model for the first provider key found in the environment, else the offline model.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

import prompts
from tui.agent.litellm_loader import load_litellm

OFFLINE_PROVIDER = "kompakt-offline"
OFFLINE_MODEL = f"{OFFLINE_PROVIDER}/echo"
# First key found wins; each default is a model litellm's bundled map knows.
DEFAULT_MODELS = (
    ("OPENAI_API_KEY", "gpt-4o-mini"),
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-flash"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
    ("MISTRAL_API_KEY", "mistral/mistral-large-latest"),
    ("GROQ_API_KEY", "groq/openai/gpt-oss-120b"),
    ("CEREBRAS_API_KEY", "cerebras/gpt-oss-120b"),
    ("OPENROUTER_API_KEY", "openrouter/openai/gpt-4o-mini"),
)
_PIECE = re.compile(r"\S+\s*|\s+")

_handler: Any = None


def resolve_model(settings_model: str | None, env: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """``(model, is_offline)``: the configured model, else a keyed default, else the offline model."""
    env = os.environ if env is None else env
    if settings_model and settings_model.strip():
        model = settings_model.strip()
        return model, is_offline(model)
    for env_var, model in DEFAULT_MODELS:
        if env.get(env_var):
            return model, False
    return OFFLINE_MODEL, True


def is_offline(model: str) -> bool:
    return model.startswith(f"{OFFLINE_PROVIDER}/")


def offline_reply() -> str:
    return prompts.render("offline_reply", model=OFFLINE_MODEL)


def register_offline_provider() -> None:
    """Add the offline model to litellm's custom providers (once per process)."""
    global _handler
    litellm: Any = load_litellm()  # not type-checked (pyproject.toml)
    if _handler is None:
        _handler = _make_handler(litellm)
    if not any(item.get("provider") == OFFLINE_PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map = [
            *litellm.custom_provider_map,
            {"provider": OFFLINE_PROVIDER, "custom_handler": _handler},
        ]


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _usage(messages: list[Any], reply: str) -> dict[str, int]:
    prompt = _estimate_tokens(json.dumps(messages, default=str))
    completion = _estimate_tokens(reply)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _make_handler(litellm: Any) -> Any:
    """Build the CustomLLM subclass here, because its base class lives in litellm (imported lazily)."""
    from litellm.llms.custom_llm import CustomLLM

    class OfflineLLM(CustomLLM):  # type: ignore[misc]  # the base is litellm's, which mypy does not read
        """Always the same streamed explanation; never touches the network."""

        async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
            messages = kwargs.get("messages") or []
            reply = offline_reply()
            usage = _usage(messages, reply)
            return litellm.ModelResponse(
                id=f"offline-{uuid.uuid4().hex[:12]}",
                created=int(time.time()),
                model=OFFLINE_MODEL,
                choices=[
                    {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}
                ],
                usage=litellm.Usage(**usage),
            )

        async def astreaming(self, *args: Any, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
            messages = kwargs.get("messages") or []
            reply = offline_reply()
            for piece in _PIECE.findall(reply):
                yield {
                    "text": piece,
                    "tool_use": None,
                    "is_finished": False,
                    "finish_reason": "",
                    "usage": None,
                    "index": 0,
                }
                await asyncio.sleep(0)  # let the UI draw between pieces
            yield {
                "text": "",
                "tool_use": None,
                "is_finished": True,
                "finish_reason": "stop",
                "usage": _usage(messages, reply),
                "index": 0,
            }

    return OfflineLLM()
