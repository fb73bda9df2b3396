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
