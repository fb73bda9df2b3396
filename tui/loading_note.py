"""A line on the terminal while ``kompakt open FILE`` loads a big file, before the screen takes over.

The file named on the command line is opened before the TUI starts (a file that is no session must
exit with its error, not start a new session), so a 377 MB, 100k-entry file left the terminal blank
for 4-6 s. :func:`open_with_note` runs the open on a thread and, when stderr is a terminal and the file
is large, shows ``Opening NAME (377 MB)… 2.4 s`` there, ticking, then that the screen is starting;
:func:`erase_note` clears the line just before the TUI takes over.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

from tui.session.sanitize import sanitize

T = TypeVar("T")

# Below this a file opens in well under a second: no note.
NOTE_FROM_BYTES = 8 * 1024 * 1024
TICK_S = 0.1


def open_with_note(path: Path, opener: Callable[[], T], stream: IO[str] | None = None) -> T:
    """``opener()``, with the note on ``stream`` (stderr) while it runs; its exception is raised here."""
    stream = sys.stderr if stream is None else stream
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    if size < NOTE_FROM_BYTES or not stream.isatty():
        return opener()
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(opener())
        except BaseException as exc:  # raised again on the caller's thread
            failure.append(exc)

    worker = threading.Thread(target=run, name="kompakt-open", daemon=True)
    started = time.monotonic()
    worker.start()
    label = f"Opening {sanitize(path.name)} ({size / 1024 / 1024:,.0f} MB)…"
    done = False
    try:
        stream.write(f"\r{label}")  # at once, however quick the open turns out to be
        stream.flush()
        while worker.is_alive():
            worker.join(TICK_S)
            stream.write(f"\r{label} {time.monotonic() - started:.1f} s")
            stream.flush()
        done = not failure
    finally:
        if done:  # the screen still has to start (a second or two): the line says so until it does
            stream.write(f"\r\x1b[K{label} read in {time.monotonic() - started:.1f} s, starting the screen…")
        else:
            stream.write("\r\x1b[K")  # the error comes next
        stream.flush()
    if failure:
        raise failure[0]
    return result[0]


def erase_note(stream: IO[str] | None = None) -> None:
    """Erase the note's line (just before the TUI takes the screen); nothing when it is no terminal."""
    stream = sys.stderr if stream is None else stream
    if stream.isatty():
        stream.write("\r\x1b[K")
        stream.flush()
