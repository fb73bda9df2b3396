"""The architecture's two static guards, run with the suite: the import layers and the type check.

``lint-imports`` checks the ``[tool.importlinter]`` layers contract in pyproject.toml (every import points
downward: the core never imports a widget, a screen or the agent from the compaction layer).
``mypy`` runs the ``[tool.mypy]`` configuration (strict over the headless core and the agent-event view).
Both run as subprocesses of the installed tools, on the real source tree; tests/test_import_hygiene.py is
the run-time guard (what importing a module actually loads).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / tool), *args], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )


def test_imports_point_downward_by_the_layers_contract() -> None:
    result = run("lint-imports", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_the_core_passes_mypy_strict() -> None:
    result = run("mypy", "--no-incremental")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout


def test_no_core_module_is_left_out_of_the_type_check() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["strict"] is True and "exclude" not in config
