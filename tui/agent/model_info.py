"""What kompakt knows about a model: context window, output limit, call options and cost.

Settings overrides (``models.<name>.contextWindow``, ``maxOutputTokens``, ``apiBase``) come first, then
litellm's bundled model map, then conservative defaults, so an unknown or local model never crashes.
Cost comes from litellm's price table and is zero for models it does not price (it never prints).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from tui.agent import model_map
from tui.agent.assistant_builder import empty_usage
from tui.agent.litellm_loader import is_loaded, load_litellm

DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_OUTPUT_TOKENS = 8_192

Overrides = Mapping[str, Mapping[str, Any]]


def split_model(model: str) -> tuple[str, str]:
    """``(provider, model id)`` as litellm routes ``model``; a bare unknown name counts as openai."""
    try:
        model_id, provider, _, _ = load_litellm().get_llm_provider(model)
    except Exception:  # litellm raises BadRequestError for names it cannot route
        provider, _, model_id = model.rpartition("/")
        return provider or "openai", model_id
    return provider, model_id


def unroutable_reason(model: str, overrides: Overrides | None = None) -> str | None:
    """Why litellm cannot send anything to ``model`` (a provider it does not know: ``typo/x``), or None.

    Only the name is checked, no request is made: a routable model may still fail when called."""
    from tui.agent.offline import is_offline

    if is_offline(model):
        return None
    api_base = (overrides or {}).get(model, {}).get("apiBase")
    try:
        load_litellm().get_llm_provider(model, api_base=api_base)
    except Exception:  # BadRequestError: "LLM Provider NOT provided"
        provider = model.rpartition("/")[0]
        known = f"no provider named {provider!r}" if provider else "no provider prefix"
        return (
            f"litellm cannot route the model {model!r} ({known}); "
            "name it as provider/model, for example openai/gpt-4o-mini or ollama/llama3"
        )
    return None


def _info(model: str) -> Mapping[str, Any]:
    # Until litellm has loaded (in the background, seconds after start), read its bundled model map as
    # JSON: importing litellm here would freeze the UI for seconds.
    if not is_loaded():
        return model_map.lookup(model)
    try:
        info: Mapping[str, Any] = load_litellm().get_model_info(model)
        return info
    except Exception:  # ModelNotMappedError (or plain Exception) for unknown and local models
        return model_map.lookup(model)


def context_window(model: str, overrides: Overrides | None = None) -> int:
    override = (overrides or {}).get(model, {}).get("contextWindow")
    if override:
        return int(override)
    return int(_info(model).get("max_input_tokens") or DEFAULT_CONTEXT_WINDOW)


def context_window_source(model: str, overrides: Overrides | None = None) -> str:
    """Where :func:`context_window` takes ``model``'s window from: the settings, the model map or the default."""
    if (overrides or {}).get(model, {}).get("contextWindow"):
        return f'settings models."{model}".contextWindow'
    if _info(model).get("max_input_tokens"):
        return f"litellm's model map ({model})"
    return f"default {DEFAULT_CONTEXT_WINDOW:,} ({model} is not in the model map)"


def max_output_tokens(model: str, overrides: Overrides | None = None) -> int:
    override = (overrides or {}).get(model, {}).get("maxOutputTokens")
    if override:
        return int(override)
    info = _info(model)
    return int(info.get("max_output_tokens") or info.get("max_tokens") or DEFAULT_MAX_OUTPUT_TOKENS)


def call_options(
    model: str, overrides: Overrides | None = None, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Extra litellm kwargs for ``model``: ``api_base``, the API key and request headers from settings.

    The key comes from ``apiKeyEnv`` when it is set. A model with its own ``apiBase`` and no ``apiKeyEnv``
    gets a placeholder key, never the provider's usual variable: ``OPENAI_API_KEY`` is meant for OpenAI, not
    for whatever server ``apiBase`` names (issue 8). The headers go with every request to the model,
    summaries included.
    """
    env = os.environ if env is None else env
    override = (overrides or {}).get(model, {})
    options: dict[str, Any] = {}
    if headers := override.get("headers"):
        options["extra_headers"] = dict(headers)
    api_base = override.get("apiBase")
    if api_base:
        options["api_base"] = api_base
    key_env = override.get("apiKeyEnv")
    if key_env and env.get(key_env):
        options["api_key"] = env[key_env]
    elif api_base:
        options["api_key"] = "x"  # local servers ignore it; the SDK will not send without one
    return options


def usage_from_litellm(model: str, usage: Any) -> dict[str, Any]:
    """pi usage (with cost) from a litellm ``Usage`` object."""
    result = empty_usage()
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    output = int(getattr(usage, "completion_tokens", 0) or 0)
    details = getattr(usage, "prompt_tokens_details", None)
    cache_read = int(
        getattr(details, "cached_tokens", 0) or getattr(usage, "cache_read_input_tokens", 0) or 0
    )
    cache_write = int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
    # OpenAI-style prompt_tokens include the cached part; pi counts fresh input separately.
    fresh = max(0, prompt - cache_read - cache_write)
    result.update(
        input=fresh,
        output=output,
        cacheRead=cache_read,
        cacheWrite=cache_write,
        totalTokens=fresh + output + cache_read + cache_write,
    )
    result["cost"] = cost(model, fresh, output, cache_read, cache_write)
    return result


def cost(
    model: str, fresh_input: int, output: int, cache_read: int = 0, cache_write: int = 0
) -> dict[str, float]:
    """Dollar cost per part; all zero when litellm has no price for ``model``."""
    info = _info(model)
    if not info:
        cost: dict[str, float] = empty_usage()["cost"]
        return cost
    parts = {
        "input": fresh_input * (info.get("input_cost_per_token") or 0.0),
        "output": output * (info.get("output_cost_per_token") or 0.0),
        "cacheRead": cache_read
        * (info.get("cache_read_input_token_cost") or info.get("input_cost_per_token") or 0.0),
        "cacheWrite": cache_write
        * (info.get("cache_creation_input_token_cost") or info.get("input_cost_per_token") or 0.0),
    }
    parts["total"] = sum(parts.values())
    return parts
