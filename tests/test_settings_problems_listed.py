"""A settings file with several problems: every one is listed, never "(and 2 more problems)" alone.

The start-up toast lists them (up to a few, then counts the rest), F5's refusal lists them all, the
CLI prints each on a line of its own, and F5's banner over an open settings screen shows every line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.app_e2e_helpers import RecordingApp, isolated_home, ready, wait_until
from tui.config import SettingsError, load_settings
from tui.launch import Launch

THREE_PROBLEMS = '[compaction]\nkeepRecentTokens = "x"\nreserveTokens = -1\n[retry]\nbogus = 1\n'
KEYS = ("compaction.keepRecentTokens", "compaction.reserveTokens", "retry.bogus")


def _error(path: Path) -> SettingsError:
    try:
        load_settings(path, None, env={})
    except SettingsError as exc:
        return exc
    raise AssertionError("the file loaded")


def test_the_listing_has_every_problem_on_a_line_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(THREE_PROBLEMS)
    lines = _error(path).listing().split("\n")
    assert [next(key for key in KEYS if key in line) for line in lines] == list(KEYS)
    assert all(line.startswith(f"{path}:") for line in lines) and "more problem" not in "".join(lines)
    assert _error(path).listing(limit=2).split("\n")[2] == "… and 1 more problem"


async def test_the_start_up_toast_and_f5_list_every_problem(tmp_path, monkeypatch) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(THREE_PROBLEMS)
    app = RecordingApp(Launch("new", cwd=tmp_path))
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        await ready(pilot, app)
        _title, text, _severity = await wait_until(
            pilot, lambda: next((n for n in app.notes if n[0] == "Settings error"), None), "the toast"
        )
        assert all(key in text for key in KEYS) and "(and 2 more problems)" not in text
        await pilot.press("f5")
        _title, text, _severity = await wait_until(
            pilot, lambda: next((n for n in app.notes if n[0] == "Settings file is invalid"), None), "F5"
        )
        assert all(key in text for key in KEYS) and "more problem" not in text


def test_the_cli_prints_each_problem_on_its_own_line(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.toml").write_text(THREE_PROBLEMS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOMPAKT_")}
    env |= {"KOMPAKT_CONFIG_DIR": str(config), "KOMPAKT_HOME": str(tmp_path / "home")}
    session = Path(__file__).parent / "corpus" / "hostile_sessions" / "healthy.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "tui", "compact", "--dry-run", str(session)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 3, done.stderr
    assert all(line.startswith("kompakt: ") and key in line for line, key in zip(lines, KEYS, strict=True))
