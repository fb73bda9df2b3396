"""Shared pytest setup: offline guards for litellm and a clean settings environment."""

import atexit
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

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


# The snapshot apps show fixed directories (/tmp/kompakt-snap-*), which each snapshot test deletes and
# makes again: two test runs at once (two checkouts, two helpers) removed each other's current directory.
SNAPSHOT_LOCK = os.path.join(tempfile.gettempdir(), "kompakt-snapshots.lock")


@pytest.fixture(autouse=True)
def _one_snapshot_run_at_a_time(request: pytest.FixtureRequest) -> Iterator[None]:
    if not request.node.module.__name__.rpartition(".")[2].startswith("test_snapshots"):
        yield
        return
    with open(SNAPSHOT_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
