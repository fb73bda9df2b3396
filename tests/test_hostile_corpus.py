"""Every CLI command over every hostile session: no traceback, no hang, nothing lost, clear refusals.

The corpus is tests/corpus/hostile_sessions (written by tests/corpus/make_hostile_sessions.py); the
special files (FIFO, devices, directories, symlink loops, unreadable files) are made here. The commands
run in a child process (tests/corpus/run_cli.py) with an alarm per command and a timeout overall as
hang guards.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.pages import until

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus" / "hostile_sessions"
# Files that are not usable sessions: every command refuses them with one line and exit 2.
REFUSED = {
    "binary_garbage.jsonl",
    "empty.jsonl",
    "header_wrong_types.jsonl",
    "no_header.jsonl",
    "version_4.jsonl",
    "version_minus1.jsonl",
    "version_true.jsonl",
    "version_x.jsonl",
}


PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def _without_file_override() -> None:
    """In the child: root without the capabilities that bypass file permissions (then exec)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_cli(files: list[Path], home: Path, *, as_user: bool = False, in_place: bool = False) -> list[dict]:
    env = {
        **{
            k: v for k, v in os.environ.items() if not k.startswith("KOMPAKT_") and not k.endswith("_API_KEY")
        },
        "PYTHONPATH": str(ROOT),
        "KOMPAKT_HOME": str(home / "kompakt"),
        "KOMPAKT_CONFIG_DIR": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
        "KOMPAKT_PI_SESSIONS": str(home / "pi"),
        "HOME": str(home),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.corpus.run_cli",
            *(["--in-place"] if in_place else []),
            *map(str, files),
        ],
        capture_output=True,
        env=env,
        cwd=ROOT,
        timeout=900,
        stdin=subprocess.DEVNULL,
        preexec_fn=_without_file_override if as_user and os.geteuid() == 0 else None,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return orjson.loads(done.stdout)


def assert_clean(reports: list[dict]) -> None:
    problems = [
        f"{r['file']} / {r['command']}: "
        + ("hang" if r.get("hang") else "lost entries" if r.get("lost") else r.get("traceback", "")[-600:])
        for r in reports
        if r.get("hang") or r.get("lost") or r.get("traceback")
    ]
    assert not problems, "\n".join(problems[:10])
    for r in reports:
        assert "Traceback" not in r["stderr"], (r["file"], r["command"], r["stderr"])
        assert all(line.startswith("kompakt: ") for line in r["stderr"].splitlines()), (
            r["file"],
            r["stderr"],
        )


def test_every_command_over_every_hostile_session(tmp_path: Path) -> None:
    files = sorted(CORPUS.glob("*.jsonl"))
    assert len(files) >= 60
    reports = run_cli(files, tmp_path)
    assert_clean(reports)
    for r in reports:
        refused = r["file"] in REFUSED and not (
            r["file"] == "empty.jsonl" and r["command"] == "compact --json"
        )
        if refused:
            assert r["rc"] == 2 and r["stderr"].count("\n") == 1, (r["file"], r["command"], r["stderr"])
        elif r["command"].startswith(("inspect", "uncompact")):  # "no compaction on this path" is fine
            assert r["rc"] in (0, 2), (r["file"], r["command"], r["stderr"])
        else:
            assert r["rc"] == 0, (r["file"], r["command"], r["stderr"])
    stats = {r["file"]: r for r in reports if r["command"] == "stats"}
    # A malformed entry is reported with its file, line and reason.
    assert "line 4 (byte " in stats["wrong_type_parentid_list.jsonl"]["stderr"]
    assert "parentId is list, not a string" in stats["wrong_type_parentid_list.jsonl"]["stderr"]
    assert "nested too deeply" in stats["deep_tool_arguments_1000.jsonl"]["stderr"]
    assert "unterminated last line" in stats["torn_last_line.jsonl"]["stderr"]
    assert stats["lone_surrogates.jsonl"]["stderr"] == "" and stats["version_3.0.jsonl"]["stderr"] == ""


def test_special_files_are_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    directory = tmp_path / "dir.jsonl"
    directory.mkdir()
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(tmp_path / "loop2.jsonl")
    (tmp_path / "loop2.jsonl").symlink_to(loop)
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "nowhere")
    specials = [fifo, directory, loop, dangling, Path("/dev/zero"), Path("/dev/null")]
    reports = run_cli(specials, tmp_path / "home")
    assert_clean(reports)
    expected = {
        "fifo.jsonl": "is a FIFO",
        "dir.jsonl": "is a directory",
        "loop.jsonl": "symbolic links",
        "dangling.jsonl": "no such session file",
        "zero": "is a character device",
        "null": "is a character device",
    }
    for r in reports:
        assert r["rc"] == 2 and r["stderr"].count("\n") == 1, (r["file"], r["command"], r["stderr"])
        assert expected[r["file"]] in r["stderr"]
    for special in (fifo, Path("/dev/zero")):  # and the TUI is not started for them
        done = subprocess.run(
            [sys.executable, "-m", "tui", "open", str(special)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
        assert done.returncode == 2 and "not a session file" in done.stderr and done.stderr.count("\n") == 1


def test_permission_errors_are_one_line(tmp_path: Path) -> None:
    # Root reads and writes anything: the commands run without the capabilities that allow it.
    healthy = (CORPUS / "healthy.jsonl").read_bytes()
    unreadable = tmp_path / "mode000.jsonl"
    unreadable.write_bytes(healthy)
    readonly = tmp_path / "mode444.jsonl"
    readonly.write_bytes(healthy)
    locked_dir = tmp_path / "readonly-dir"
    locked_dir.mkdir()
    old = locked_dir / "v1.jsonl"  # a v1 file needs a migration: a backup in a read-only directory
    v1 = (
        b'{"type":"session","id":"old","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}\n'
        b'{"type":"message","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"hi"}}\n'
    )
    old.write_bytes(v1)
    unreadable.chmod(0o000)
    readonly.chmod(0o444)
    locked_dir.chmod(0o555)
    try:
        reports = run_cli([unreadable, readonly, old], tmp_path / "home", as_user=True, in_place=True)
    finally:
        locked_dir.chmod(0o755)
        unreadable.chmod(0o644)
    assert_clean(reports)
    assert old.read_bytes() == v1 and readonly.read_bytes() == healthy  # nothing migrated, nothing lost
    for r in reports:
        writes = r["command"] in ("compact --json", "uncompact --yes --json")
        refused = r["file"] == "mode000.jsonl" or (writes and r["file"] != "v1.jsonl")
        if refused:
            assert r["rc"] == 2 and r["stderr"].count("\n") == 1, (r["file"], r["command"], r["stderr"])
            assert "Permission denied" in r["stderr"], r["stderr"]
        else:
            assert r["rc"] in (0, 2), (r["file"], r["command"], r["stderr"])


# --- the TUI over every hostile session ---------------------------------------------------------
@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.glob("*.jsonl")))
async def test_the_app_opens_every_hostile_session(tmp_path: Path, monkeypatch, name: str) -> None:
    import shutil

    from tests.app_e2e_helpers import RecordingApp, isolated_home, ready
    from tui.launch import Launch

    isolated_home(tmp_path, monkeypatch)
    path = tmp_path / name
    shutil.copyfile(CORPUS / name, path)
    original = path.read_bytes()
    app = RecordingApp(Launch("open", path, tmp_path), start_background=False)
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f2")  # the tree pane too
        await until(pilot, lambda: app.is_running and screen.chat is not None)
        assert app.is_running and screen.chat is not None
        if name in REFUSED and name != "empty.jsonl":
            assert any(title == "Cannot open the session" for title, _text, _sev in app.notes)
    # Nothing the file held is lost: still its start, or kept whole in a backup (a migration).
    now = path.read_bytes()
    kept = now.startswith(original) or any(
        p.read_bytes() == original for p in tmp_path.glob(f"{name}.v*.bak")
    )
    assert kept or (tmp_path / f"{name}.corrupt").exists()
