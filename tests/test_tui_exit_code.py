"""A crash of the TUI makes ``kompakt`` exit non-zero (Textual prints the traceback and returned 0).

The app runs in a real pseudo-terminal; the crash is injected into the main screen's mount (no hostile
file is known to crash it any more: tests/test_hostile_corpus.py opens every one).
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CRASHING = r"""
import sys
from tui.screens.main import MainScreen

async def crash(self):
    raise RuntimeError("injected crash")

MainScreen.on_mount = crash
from tui.cli import main
sys.exit(main(["open", sys.argv[1]]))
"""


def run_in_pty(code: str, *args: str, env: dict[str, str]) -> tuple[int, bytes]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT
    )
    os.close(slave)
    output = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            output.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        rc = proc.wait(timeout=120)
    finally:
        proc.kill()
        reader.join(timeout=10)
        os.close(master)
    return rc, bytes(output)


def test_a_crashing_tui_exits_non_zero(tmp_path: Path) -> None:
    session = ROOT / "tests" / "corpus" / "hostile_sessions" / "healthy.jsonl"
    path = tmp_path / "s.jsonl"
    path.write_bytes(session.read_bytes())
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOMPAKT_")}
    env |= {
        "KOMPAKT_HOME": str(tmp_path / "home"),
        "KOMPAKT_CONFIG_DIR": str(tmp_path / "c"),
        "TERM": "xterm",
    }
    env["PYTHONPATH"] = str(ROOT)
    rc, output = run_in_pty(CRASHING, str(path), env=env)
    assert b"injected crash" in output
    assert rc != 0
