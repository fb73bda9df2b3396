"""D24 (issue 13): what the user names on the command line is honoured or refused, as real processes.

``compact --model typo/x`` stops with one line and leaves the file as it was; every read-only command
says that a torn last line was ignored; ``open``/``watch`` of a file that is not a session exit with the
error instead of starting a new session.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli_compact import write_session
from tui.agent.offline import DEFAULT_MODELS

ROOT = Path(__file__).resolve().parent.parent


def isolated_env(home: Path) -> dict[str, str]:
    """No provider keys, no user settings, kompakt's own files under ``home``."""
    keys = {var for var, _ in DEFAULT_MODELS}
    env = {k: v for k, v in os.environ.items() if k not in keys and not k.startswith("KOMPAKT_")}
    return env | {
        "PYTHONPATH": str(ROOT),
        "KOMPAKT_HOME": str(home / "kompakt"),
        "KOMPAKT_CONFIG_DIR": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
        "HOME": str(home),
        "COLUMNS": "120",
    }


def run(argv: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    # The hang guard is generous: before the fix, ``open bad.jsonl`` started a TUI that never exits here.
    return subprocess.run(
        [sys.executable, "-m", "tui", *argv],
        capture_output=True,
        text=True,
        env=isolated_env(home),
        cwd=home,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("model", ["typo/x", "gpt-typo"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_compact_with_a_model_litellm_cannot_route_fails_and_writes_nothing(
    tmp_path: Path, model: str, dry_run: bool
) -> None:
    path = write_session(tmp_path / "s.jsonl", turns=4)
    before, files = path.read_bytes(), files_under(tmp_path)

    done = run(["compact", str(path), "--model", model, *(["--dry-run"] if dry_run else [])], tmp_path)

    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("kompakt: --model: ")
    assert repr(model) in done.stderr and "nothing was written" in done.stderr
    assert path.read_bytes() == before
    assert files_under(tmp_path) == files  # no .corrupt, no backup, no lock left behind


def test_compact_with_a_routable_model_that_fails_still_falls_back(tmp_path: Path) -> None:
    """The check is on the name only: a model that can be called but fails keeps the fallback summary."""
    path = write_session(tmp_path / "s.jsonl", turns=4)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.toml").write_text(  # the user's own file: no trust needed
        '[compaction]\nkeepRecentTokens = 200\n\n[retry]\nenabled = false\n\n[models."openai/nowhere"]\n'
        'apiBase = "http://127.0.0.1:9/v1"\n'
    )

    done = run(["compact", str(path), "--model", "openai/nowhere"], tmp_path)

    assert done.returncode == 0, done.stderr
    assert "summarizer failed" in done.stderr
    assert b'"type":"compaction"' in path.read_bytes()


READ_ONLY_COMMANDS = [
    ["tree"],
    ["tree", "--json"],
    ["context"],
    ["context", "--breakdown"],
    ["plan"],
    ["stats"],
    ["stats", "--json"],
    ["inspect"],
    ["export", "--md", "-o", "out.md"],
    ["compact", "--dry-run"],
]


@pytest.mark.parametrize("command", READ_ONLY_COMMANDS, ids=" ".join)
def test_read_only_commands_warn_about_a_torn_last_line(tmp_path: Path, command: list[str]) -> None:
    path = write_session(tmp_path / "s.jsonl", turns=4)
    with path.open("ab") as handle:
        handle.write(b'{"type":"message","id":"abcd')  # a write cut short: no newline, not JSON
    before = path.read_bytes()

    done = run([command[0], str(path), *command[1:]], tmp_path)

    assert "unterminated last line" in done.stderr and "a write cut short" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert path.read_bytes() == before  # left for the writer to move aside
    assert not path.with_name(path.name + ".corrupt").exists()


@pytest.mark.parametrize("mode", ["open", "watch"])
@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"garbage\n", "not a pi session file"),
        (
            b'{"type":"session","version":9,"id":"x","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}\n',
            "version",
        ),
    ],
    ids=["not-json", "unknown-version"],
)
def test_open_of_a_file_that_is_not_a_session_exits_with_the_error(
    tmp_path: Path, mode: str, content: bytes, reason: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(content)

    done = run([mode, str(bad)], tmp_path)

    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("kompakt: ")
    assert "bad.jsonl" in done.stderr and reason in done.stderr
    assert bad.read_bytes() == content
    assert not (tmp_path / "kompakt").exists()  # no new session was started
