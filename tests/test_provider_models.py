"""Model facts (context window, output limit, call options, usage and cost) and the lazy litellm loader."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tui.agent import litellm_loader, model_info
from tui.agent.offline import OFFLINE_MODEL
from tui.agent.provider import Provider

ROOT = Path(__file__).resolve().parents[1]


def test_context_window_from_litellm_settings_and_fallback() -> None:
    provider = Provider(models={"openai/my-local": {"contextWindow": 32768, "maxOutputTokens": 2048}})
    assert provider.context_window("gpt-4o-mini") == 128000
    assert provider.context_window("anthropic/claude-sonnet-4-5") == 200000
    assert provider.context_window("openai/my-local") == 32768
    assert provider.context_window("openai/never-heard-of-it") == model_info.DEFAULT_CONTEXT_WINDOW
    assert provider.context_window(OFFLINE_MODEL) == model_info.DEFAULT_CONTEXT_WINDOW
    assert provider.max_output_tokens("gpt-4o-mini") == 16384
    assert provider.max_output_tokens("openai/my-local") == 2048
    assert provider.max_output_tokens("openai/never-heard-of-it") == model_info.DEFAULT_MAX_OUTPUT_TOKENS


def test_settings_override_beats_litellm() -> None:
    assert model_info.context_window("gpt-4o-mini", {"gpt-4o-mini": {"contextWindow": 50_000}}) == 50_000


def test_call_options_for_local_endpoints() -> None:
    overrides = {
        "openai/qwen": {"apiBase": "http://127.0.0.1:8080/v1"},
        "ollama_chat/llama3.1": {"apiBase": "http://127.0.0.1:11434"},
    }
    assert model_info.call_options("openai/qwen", overrides, env={}) == {
        "api_base": "http://127.0.0.1:8080/v1",
        "api_key": "x",
    }
    # OPENAI_API_KEY is for OpenAI: a custom apiBase gets the placeholder unless apiKeyEnv names a key.
    assert model_info.call_options("openai/qwen", overrides, env={"OPENAI_API_KEY": "sk"}) == {
        "api_base": "http://127.0.0.1:8080/v1",
        "api_key": "x",
    }
    keyed = {"openai/qwen": {**overrides["openai/qwen"], "apiKeyEnv": "QWEN_KEY"}}
    assert model_info.call_options("openai/qwen", keyed, env={"QWEN_KEY": "q", "OPENAI_API_KEY": "sk"}) == {
        "api_base": "http://127.0.0.1:8080/v1",
        "api_key": "q",
    }
    assert model_info.call_options("ollama_chat/llama3.1", overrides, env={}) == {
        "api_base": "http://127.0.0.1:11434",
        "api_key": "x",
    }
    assert model_info.call_options("gpt-4o-mini", overrides, env={}) == {}


def test_split_model() -> None:
    assert model_info.split_model("gpt-4o-mini") == ("openai", "gpt-4o-mini")
    assert model_info.split_model("anthropic/claude-sonnet-4-5") == ("anthropic", "claude-sonnet-4-5")
    assert model_info.split_model(OFFLINE_MODEL) == ("kompakt-offline", "echo")


def test_usage_from_litellm_counts_cache_apart_and_prices_it() -> None:
    usage = SimpleNamespace(
        prompt_tokens=1000,
        completion_tokens=100,
        prompt_tokens_details=SimpleNamespace(cached_tokens=400),
        cache_creation_input_tokens=0,
    )
    pi = model_info.usage_from_litellm("gpt-4o-mini", usage)
    assert (pi["input"], pi["output"], pi["cacheRead"], pi["cacheWrite"]) == (600, 100, 400, 0)
    assert pi["totalTokens"] == 1100
    assert pi["cost"]["input"] == pytest.approx(600 * 0.15e-6)
    assert pi["cost"]["output"] == pytest.approx(100 * 0.6e-6)
    assert pi["cost"]["cacheRead"] == pytest.approx(400 * 0.075e-6)
    assert pi["cost"]["total"] == pytest.approx(sum(v for k, v in pi["cost"].items() if k != "total"))


def _run(code: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


def test_importing_the_provider_layer_does_not_import_litellm() -> None:
    code = (
        "import sys\n"
        "import tui.agent.provider, tui.agent.errors, tui.agent.offline, tui.agent.model_info\n"
        "from tui.agent.provider import Provider\n"
        "Provider(models={})\n"
        "print('litellm' in sys.modules)"
    )
    assert _run(code) == "False"


def test_background_import_sets_guards_and_routes_logs_to_a_file(tmp_path: Path) -> None:
    code = (
        "import logging, os, threading\n"
        "from tui.agent import litellm_loader as ll\n"
        "future = ll.start_background_import()\n"
        "assert ll.start_background_import() is future\n"
        "module = future.result(timeout=120)\n"
        "assert ll.is_loaded() and ll.load_litellm() is module\n"
        "assert module.suppress_debug_info is True and module.disable_hf_tokenizer_download is True\n"
        "logger = logging.getLogger('LiteLLM')\n"
        "assert logger.propagate is False\n"
        "logger.warning('hello from the test')\n"
        "for h in logger.handlers: h.flush()\n"
        "print(os.environ['LITELLM_LOCAL_MODEL_COST_MAP'], os.environ['LITELLM_OFFLINE_MODE'],"
        " os.environ['HF_HUB_OFFLINE'])"
    )
    env = {k: v for k, v in os.environ.items() if k not in litellm_loader.OFFLINE_ENV}
    env["XDG_STATE_HOME"] = str(tmp_path)
    assert _run(code, env) == "True true 1"
    log = tmp_path / "kompakt" / "litellm.log"
    assert "hello from the test" in log.read_text()


def test_ensure_env_keeps_user_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.delenv("LITELLM_OFFLINE_MODE", raising=False)
    litellm_loader.ensure_env()
    assert os.environ["HF_HUB_OFFLINE"] == "0"
    assert os.environ["LITELLM_OFFLINE_MODE"] == "true"


def test_awaiting_litellm_keeps_the_event_loop_running() -> None:
    code = (
        "import asyncio, sys\n"
        "from tui.agent import litellm_loader as ll\n"
        "async def main():\n"
        "    ticks = 0\n"
        "    async def ticker():\n"
        "        nonlocal ticks\n"
        "        while True:\n"
        "            ticks += 1\n"
        "            await asyncio.sleep(0.005)\n"
        "    task = asyncio.create_task(ticker())\n"
        "    await asyncio.sleep(0)\n"
        "    before = ticks\n"
        "    module = await ll.load_litellm_async()\n"
        "    task.cancel()\n"
        "    return before, ticks, module is sys.modules['litellm']\n"
        "before, after, same = asyncio.run(main())\n"
        "print(before, after > before + 1, same)"
    )
    assert _run(code) == "1 True True"
