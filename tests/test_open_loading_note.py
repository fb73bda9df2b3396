"""``kompakt open BIG.jsonl`` says it is loading before the screen takes over, and reads the file once.

The file named on the command line is opened before the TUI starts; a 377 MB, 100k-entry file left the
terminal blank for 4-6 s, and the app then read the whole file a second time on a thread (its prefetch,
never used, held until exit). A real process in a pseudo-terminal; the main screen leaves at once.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from tests.test_tui_exit_code import ROOT, run_in_pty
from tui.loading_note import NOTE_FROM_BYTES, erase_note, open_with_note

LEAVING = r"""
import sys
from tui.screens.main import MainScreen

async def leave(self):
    with open(sys.argv[2], "w") as out:
        out.write("no prefetch" if self.app._prefetch is None else "prefetch")
    self.app.exit()

MainScreen.on_mount = leave
from tui.cli import main
sys.exit(main(["open", sys.argv[1]]))
"""


def big_session(path: Path) -> None:
    """A valid pi v3 session just over the note's size: a few user messages of a megabyte each."""
    header = {
        "type": "session",
        "version": 3,
        "id": "big",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/",
    }
    lines = [json.dumps(header)]
    parent = None
    for n in range(NOTE_FROM_BYTES // 1_000_000 + 1):
        entry_id = f"{n:08x}"
        message = {"role": "user", "content": "x" * 1_000_000, "timestamp": 0}
        lines.append(
            json.dumps(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": "2025-01-01T00:00:00.000Z",
                    "message": message,
                }
            )
        )
        parent = entry_id
    path.write_text("\n".join(lines) + "\n")


def test_opening_a_big_file_shows_a_note_before_the_screen_and_reads_it_once(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    big_session(path)
    assert path.stat().st_size >= NOTE_FROM_BYTES
    report = tmp_path / "report.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOMPAKT_")}
    env |= {
        "KOMPAKT_HOME": str(tmp_path / "home"),
        "KOMPAKT_CONFIG_DIR": str(tmp_path / "c"),
        "TERM": "xterm",
    }
    env["PYTHONPATH"] = str(ROOT)
    rc, output = run_in_pty(LEAVING, str(path), str(report), env=env)
    assert rc == 0, output[-2000:]
    note = output.find(b"Opening big.jsonl (")
    screen = output.find(b"\x1b[?1049h")  # the alternate screen: the TUI begins
    assert 0 <= note < screen, output[:500]
    starting = output.find(b"read in ", note)
    assert note < starting < screen and b"starting the screen" in output[starting:screen]
    assert 0 <= output.rfind(b"\r\x1b[K", 0, screen) > starting  # erased before the screen takes over
    assert report.read_text() == "no prefetch"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_note_is_only_for_big_files_on_a_terminal_and_errors_pass_through(tmp_path: Path) -> None:
    small = tmp_path / "small.jsonl"
    small.write_text("{}\n")
    stream = Terminal()
    assert open_with_note(small, lambda: 7, stream) == 7 and stream.getvalue() == ""
    big = tmp_path / "big.jsonl"
    big_session(big)
    piped = io.StringIO()  # not a terminal (a pipe, a log): nothing written
    assert open_with_note(big, lambda: 8, piped) == 8 and piped.getvalue() == ""
    stream = Terminal()

    def fail() -> None:
        raise ValueError("not a session")

    with pytest.raises(ValueError, match="not a session"):
        open_with_note(big, fail, stream)
    assert stream.getvalue().startswith("\rOpening big.jsonl (") and stream.getvalue().endswith("\r\x1b[K")
    stream = Terminal()
    assert open_with_note(big, lambda: 9, stream) == 9
    assert "read in " in stream.getvalue() and stream.getvalue().endswith("starting the screen…")
    erase_note(stream)
    assert stream.getvalue().endswith("\r\x1b[K")
