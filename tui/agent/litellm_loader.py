"""Load litellm lazily and quietly: set the offline guards, import it once, route its logs to a file.

litellm takes two to three seconds to import and, without the guards, fetches a price map from the
network and may download tokenizers (reference/deps.md §1.3, §2.3). Nothing in the core imports it at
module level: callers use :func:`load_litellm` (on whatever thread they are on), start the import on a
daemon thread with :func:`start_background_import` right after the first frame, or await
:func:`load_litellm_async` from the event loop. After the import, the
heap is frozen so that litellm's ~370k objects never make a gen-2 collection stall the UI.
:func:`warm_up_litellm` then does, once, the work litellm defers to its first call (a streamed
``mock_response`` completion on a thread: about 0.4 s measured, against 0.02 s for later calls), so that
whoever times a real request (the Mixture-of-Agents references) times the request alone.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading
from concurrent.futures import Future
from pathlib import Path
from types import ModuleType
from typing import Any

# "1" is ignored by litellm for the first two: it compares the lowercased value with "true".
OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "HF_HUB_OFFLINE": "1",
}
LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")

_lock = threading.Lock()
_module: ModuleType | None = None
_background: Future[ModuleType] | None = None
_warm: Future[None] | None = None
WARM_UP_MODEL = "openai/kompakt-warm-up"


def ensure_env() -> None:
    """Set the three offline guards unless the user already chose values."""
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)


def log_dir() -> Path:
    """Where kompakt keeps its logs: ``$XDG_STATE_HOME/kompakt`` or ``~/.local/state/kompakt``."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kompakt"


def is_loaded() -> bool:
    return _module is not None


def load_litellm() -> ModuleType:
    """Import and configure litellm once; later calls return the same module at once."""
    global _module
    if _module is not None:
        return _module
    with _lock:
        if _module is None:
            ensure_env()
            import litellm

            _configure(litellm)
            gc.freeze()
            _module = litellm
    return _module


def start_background_import() -> Future[ModuleType]:
    """Import litellm on a daemon thread; the future resolves to the module (or its import error)."""
    global _background
    with _lock:
        if _background is not None:
            return _background
        future: Future[ModuleType] = Future()
        _background = future

    def run() -> None:
        try:
            future.set_result(load_litellm())
        except BaseException as exc:  # the error belongs to whoever waits on the future
            future.set_exception(exc)

    threading.Thread(target=run, name="kompakt-litellm-import", daemon=True).start()
    return future


async def load_litellm_async() -> ModuleType:
    """The loaded module, awaiting the background import so that the event loop never blocks on it."""
    if _module is not None:
        return _module
    return await asyncio.wrap_future(start_background_import())


async def warm_up_litellm() -> None:
    """Import litellm and run its first-call set-up once (later calls return at once); never raises.

    The set-up is a streamed ``mock_response`` completion, so nothing leaves the machine; it runs on a thread
    so that the event loop stays free meanwhile. A failure only means the first real call pays the cost.
    """
    global _warm
    await load_litellm_async()
    with _lock:
        if _warm is None:
            future: Future[None] = Future()
            _warm = future
            # A thread of its own sets the future: a cancelled first caller cannot leave the others waiting.
            threading.Thread(
                target=_warm_up, args=(future,), name="kompakt-litellm-warm-up", daemon=True
            ).start()
        waiting = _warm
    await asyncio.wrap_future(waiting)


def _warm_up(future: Future[None]) -> None:
    try:
        _mock_call()
    except Exception:  # best effort: litellm's real call will report real problems
        logging.getLogger(__name__).debug("litellm warm-up failed", exc_info=True)
    future.set_result(None)


def _mock_call() -> None:
    assert _module is not None
    messages = [{"role": "user", "content": "warm-up"}]
    response = _module.completion(
        model=WARM_UP_MODEL, messages=messages, stream=True, mock_response="ok", api_key="warm-up"
    )
    for _chunk in response:
        pass


def _configure(litellm: Any) -> None:  # litellm is not type-checked (pyproject.toml)
    litellm.suppress_debug_info = True  # no "Provider List: ..." prints on unknown models
    litellm.disable_hf_tokenizer_download = True
    handler = _file_handler()
    for name in LITELLM_LOGGERS:
        logger = logging.getLogger(name)
        for old in list(logger.handlers):
            logger.removeHandler(old)
        logger.propagate = False
        if handler is not None:
            logger.addHandler(handler)
        else:
            logger.addHandler(logging.NullHandler())


def _file_handler() -> logging.Handler | None:
    """A handler for ``litellm.log``; None when the state dir cannot be written (logs are then dropped)."""
    try:
        directory = log_dir()
        directory.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(directory / "litellm.log", encoding="utf-8", delay=True)
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    return handler
