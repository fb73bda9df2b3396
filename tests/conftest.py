"""Shared pytest setup: offline guards for litellm and a clean settings environment."""

import os

# Set before anything can import litellm: no network fetches, no tokenizer downloads (reference/deps.md).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
