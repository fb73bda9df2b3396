"""Shared pytest setup: offline guards for litellm and a clean settings environment."""

import atexit
import os
import shutil
import tempfile

# Set before anything can import litellm: no network fetches, no tokenizer downloads (reference/deps.md).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# No test reads or writes the real home: logs, sessions, prompt history and user settings go to a
# directory of this run (a test that needs its own points these elsewhere with monkeypatch).
_HOME = tempfile.mkdtemp(prefix="kompakt-tests-")
atexit.register(shutil.rmtree, _HOME, True)
for _name, _sub in (
    ("XDG_STATE_HOME", "state"),
    ("KOMPAKT_HOME", "kompakt"),
    ("KOMPAKT_CONFIG_DIR", "config"),
    ("KOMPAKT_PI_SESSIONS", "pi-sessions"),
    ("PI_CODING_AGENT_DIR", "pi-agent"),  # pi's settings.json (sessionDir) is read from here
):
    os.environ[_name] = os.path.join(_HOME, _sub)
os.environ.pop("PI_CODING_AGENT_SESSION_DIR", None)
