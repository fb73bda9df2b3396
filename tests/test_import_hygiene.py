"""House rules: the core never imports Textual, and nothing imports litellm at module import time."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import tui

CORE_PACKAGES = ("tui.session", "tui.compaction", "tui.agent", "tui.config")


def core_modules() -> list[str]:
    names = []
    for package in CORE_PACKAGES:
        path = Path(tui.__file__).parent / package.split(".")[1]
        names.append(package)
        names += [m.name for m in pkgutil.walk_packages([str(path)], prefix=f"{package}.")]
    return names


def imported_after(modules: list[str]) -> set[str]:
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_core_imports_neither_textual_nor_litellm() -> None:
    modules = core_modules()
    assert len(modules) > 10  # the walk really found the core
    loaded = imported_after(modules)
    assert not {m for m in loaded if m.split(".")[0] in ("textual", "litellm")}


@pytest.mark.parametrize("module", ["tui.cli", "tui.__init__", "prompts"])
def test_cli_entry_imports_neither(module: str) -> None:
    loaded = imported_after([module])
    assert "textual" not in loaded and "litellm" not in loaded


def test_building_the_agent_does_not_import_litellm(tmp_path) -> None:
    """Issue B: importing tui and building the agent (and asking its window and usage) leaves litellm unloaded;
    the TUI loads it in a background thread after the first frame."""
    code = f"""
import sys
from pathlib import Path
from tui.agent.session import AgentSession
from tui.config import Settings
from tui.session.store import SessionStore
store = SessionStore.create(Path({str(tmp_path / "s.jsonl")!r}), defer=True)
agent = AgentSession(store, Settings(model="anthropic/claude-sonnet-4-5"), env={{}})
agent.context_window, agent.context_usage(), agent.cost_total
print("litellm" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
