"""Run every ``kompakt`` subcommand over the files named on the command line; print one JSON report.

Run in a child process by tests/test_hostile_corpus.py: each command runs in-process (``tui.cli.main``,
fast) on a fresh copy of the file, under ``signal.alarm`` as a hang guard, with its output captured.
An exception escaping ``main`` is what a user would see as a traceback.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import signal
import sys
import tempfile
import traceback
from pathlib import Path

import orjson

COMMANDS: list[list[str]] = [
    ["tree"],
    ["tree", "--json"],
    ["tree", "--filter", "all"],
    ["tree", "--filter", "user-only", "--query", "read"],
    ["context"],
    ["context", "--json"],
    ["plan"],
    ["plan", "--json"],
    ["stats"],
    ["stats", "--json"],
    ["export", "--md", "-o", "-"],
    ["export", "--html", "-o", "-"],
    ["export", "--md", "--all-branches", "-o", "-"],
    ["export", "--jsonl", "-o", "-"],
    ["context", "--breakdown", "--json"],
    ["inspect"],
    ["inspect", "--json"],
    ["compact", "--dry-run", "--json"],
    ["compact", "--json"],
    ["uncompact", "--yes", "--json"],
]
HANG_S = 30


class Hang(BaseException):
    pass


def _alarm(_signum: int, _frame: object) -> None:
    raise Hang


def run_one(source: Path, command: list[str], scratch: Path, *, in_place: bool) -> dict[str, object]:
    from tui import cli

    copy = scratch / source.name
    regular = not in_place and source.is_file()
    if regular:
        shutil.copyfile(source, copy)
        target = copy
    else:
        target = source  # a special file: used where it is
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.StringIO()
    report: dict[str, object] = {"file": source.name, "command": " ".join(command)}
    signal.alarm(HANG_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            report["rc"] = cli.main([command[0], str(target), *command[1:]])
    except Hang:
        report["hang"] = True
    except SystemExit as exc:  # argparse
        report["rc"] = exc.code
    except BaseException:
        report["traceback"] = traceback.format_exc()
    finally:
        signal.alarm(0)
    report["stderr"] = err.getvalue()
    if regular:
        report["lost"] = _lost(source.read_bytes(), scratch, copy)
    for leftover in scratch.iterdir():
        if leftover.is_dir():
            shutil.rmtree(leftover)
        else:
            leftover.unlink()
    return report


def _lost(original: bytes, scratch: Path, copy: Path) -> bool:
    """Whether the original bytes survive: still the file's start, or kept whole in a backup."""
    now = copy.read_bytes() if copy.exists() else b""
    if now.startswith(original):
        return False
    if any(p.read_bytes() == original for p in scratch.glob(f"{copy.name}.v*.bak")):
        return False
    corrupt = copy.with_name(copy.name + ".corrupt")
    if corrupt.exists():  # a torn last line moved aside: the rest is the start of the file
        record = orjson.loads(corrupt.read_bytes().splitlines()[0])
        kept = original[: record["offset"]]
        return not (
            now.startswith(kept)
            and original[record["offset"] :].decode("utf-8", "backslashreplace") == record["data"]
        )
    return True


def main() -> None:
    signal.signal(signal.SIGALRM, _alarm)
    in_place = "--in-place" in sys.argv  # special or unreadable files: used where they are
    files = [Path(p) for p in sys.argv[1:] if p != "--in-place"]
    reports = []
    with tempfile.TemporaryDirectory() as scratch:
        for source in files:
            for command in COMMANDS:
                reports.append(run_one(source, command, Path(scratch), in_place=in_place))
    sys.__stdout__.write(orjson.dumps(reports).decode() + "\n")


if __name__ == "__main__":
    main()
