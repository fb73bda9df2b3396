"""Faults under a writer: a full disk mid-line, a file replaced at its path, migrations, odd versions.

The full disk is real: a write limit (RLIMIT_FSIZE) in a child process, and a small tmpfs where the
machine lets the tests mount one. Nothing here mocks ``os.write``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from tui.session.errors import (
    SessionFormatError,
    SessionReplacedError,
    SessionVersionError,
    SessionWriteError,
)
from tui.session.store import SessionStore

ROOT = Path(__file__).resolve().parents[1]


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def texts(store: SessionStore) -> list[str]:
    return [m["content"][0]["text"] for m in store.build_context().messages]


# --- a full disk --------------------------------------------------------------------------------
FSIZE_WRITER = textwrap.dedent(
    r"""
    import os, resource, signal, sys
    from tui.session.errors import SessionWriteError
    from tui.session.store import SessionStore
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    path = sys.argv[1]
    store = SessionStore.open(path)
    size = os.path.getsize(path)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    # Room for 100 more bytes: the big line is written in part, then the write fails.
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, hard))
    try:
        store.append_message({"role": "user", "content": [{"type": "text", "text": "x" * 5000}], "timestamp": 1})
    except SessionWriteError as exc:
        print("refused:", exc)
    else:
        print("stored")
    print("size after failure:", os.path.getsize(path) - size)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # the disk has room again
    entry = store.append_message({"role": "user", "content": [{"type": "text", "text": "after"}], "timestamp": 2})
    print("returned", entry["id"])
    store.close()
    """
)


def test_a_write_cut_short_by_the_file_size_limit_leaves_no_partial_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path) as store:
        store.append_message(user("before"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", FSIZE_WRITER, str(path)], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "refused:" in done.stdout and "the entry was not saved" in done.stdout
    assert "size after failure: 0" in done.stdout  # cut back to the last good line
    returned = done.stdout.split("returned ")[1].strip()
    with SessionStore.open(path) as store:
        assert store.problems == [] and store.recovered_torn_line is None
        assert texts(store) == ["before", "after"]
        assert store.entries[-1]["id"] == returned


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    return done.returncode == 0


def test_a_really_full_disk_mid_append_keeps_the_file_loadable(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "256k"):
        pytest.skip("cannot mount a tmpfs here (needs root); the RLIMIT_FSIZE test covers the same path")
    store = None
    try:
        path = disk / "s.jsonl"
        store = SessionStore.create(path)
        store.append_message(user("before"))
        filler = disk / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:  # fill the disk to the last byte
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        with pytest.raises(SessionWriteError, match="not saved"):
            store.append_message(user("y" * 20_000))
        filler.unlink()
        store.append_message(user("after"))
        store.close()
        with SessionStore.open(path) as again:
            assert again.problems == [] and texts(again) == ["before", "after"]
    finally:
        if store is not None:
            store.close()
        subprocess.run(["umount", str(disk)], check=False)


# --- the file replaced under the writer ---------------------------------------------------------
def test_a_file_replaced_at_its_path_stops_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    store = SessionStore.create(path)
    store.append_message(user("one"))
    # An editor's save: a new file written beside it and renamed over the path.
    copy = tmp_path / "s.jsonl.tmp"
    copy.write_bytes(path.read_bytes())
    os.replace(copy, path)
    with pytest.raises(SessionReplacedError, match="was replaced by another file"):
        store.append_message(user("two"))
    with pytest.raises(SessionWriteError, match="Reopen the session"):
        store.append_message(user("three"))  # and every later append too
    assert b"two" not in path.read_bytes() and b"three" not in path.read_bytes()
    assert len(store.entries) == 1  # nothing was reported as stored
    store.close()
    with SessionStore.open(path) as again:  # a new writer takes the new file's lock, and can append
        again.append_message(user("two"))
        assert texts(again) == ["one", "two"]


def test_a_deleted_file_stops_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    store = SessionStore.create(path)
    store.append_message(user("one"))
    path.unlink()
    with pytest.raises(SessionReplacedError, match="deleted or moved"):
        store.append_message(user("two"))
    store.close()
    assert not path.exists()


# --- migrations ---------------------------------------------------------------------------------
def _v1(path: Path, *texts_: str, corrupt_after: int | None = None) -> bytes:
    lines = [orjson.dumps({"type": "session", "id": "old", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/"})]
    for i, text in enumerate(texts_):
        lines.append(
            orjson.dumps(
                {"type": "message", "timestamp": f"2025-01-01T00:00:0{i + 1}Z", "message": user(text)}
            )
        )
        if corrupt_after == i:
            lines.append(b'{"type": "message", broken')
    data = b"\n".join(lines) + b"\n"
    path.write_bytes(data)
    return data


def test_a_second_migration_gets_a_fresh_backup_name(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    first = _v1(path, "a")
    SessionStore.open(path).close()
    assert (tmp_path / "old.jsonl.v1.bak").read_bytes() == first
    second = _v1(path, "b")  # another v1 file at the same path (pi rewrote it, a restore, ...)
    with SessionStore.open(path) as store:
        assert store.migration_backup == tmp_path / "old.jsonl.v1.2.bak"
    assert (tmp_path / "old.jsonl.v1.bak").read_bytes() == first
    assert (tmp_path / "old.jsonl.v1.2.bak").read_bytes() == second


def test_a_migration_keeps_a_corrupt_middle_line_verbatim(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    _v1(path, "a", "b", corrupt_after=0)
    with SessionStore.open(path) as store:
        assert texts(store) == ["a", "b"] and len(store.problems) == 1
    rewritten = path.read_bytes().split(b"\n")
    assert rewritten[2] == b'{"type": "message", broken'  # still in the only file most users look at
    with SessionStore.open(path) as store:
        assert texts(store) == ["a", "b"] and store.problems[0].line == 3


# --- header versions ----------------------------------------------------------------------------
def _v3(path: Path, version: object) -> bytes:
    header = {
        "type": "session",
        "id": "s",
        "timestamp": "2025-01-01T00:00:00Z",
        "cwd": "/",
        "version": version,
    }
    a = {
        "type": "message",
        "id": "aaaaaaaa",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:01Z",
        "message": user("a"),
    }
    b = {
        "type": "message",
        "id": "bbbbbbbb",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:02Z",
        "message": user("b"),
    }
    data = b"".join(orjson.dumps(e) + b"\n" for e in (header, a, b))
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("version", [3, 3.0, "3", " 3 "])
def test_numeric_equivalents_of_version_3_keep_ids_and_tree(tmp_path: Path, version: object) -> None:
    path = tmp_path / "s.jsonl"
    data = _v3(path, version)
    with SessionStore.open(path) as store:
        assert store.migrated_from is None
        assert [e["id"] for e in store.entries] == ["aaaaaaaa", "bbbbbbbb"]
        assert store.tree.roots == ["aaaaaaaa", "bbbbbbbb"]  # two roots, not one flattened chain
    assert path.read_bytes() == data and not list(tmp_path.glob("*.bak"))


@pytest.mark.parametrize("version", [-1, 0, 4, 2.5, "x", True, [3], 1e300])
def test_an_unknown_version_is_refused_and_the_file_is_unchanged(tmp_path: Path, version: object) -> None:
    path = tmp_path / "s.jsonl"
    data = _v3(path, version)
    with pytest.raises(SessionVersionError, match="unsupported session format version"):
        SessionStore.open(path)
    assert path.read_bytes() == data and sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
    done = subprocess.run(
        [sys.executable, "-m", "tui", "stats", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "unsupported session format version" in done.stderr


# --- lone surrogates ----------------------------------------------------------------------------
def test_a_lone_surrogate_is_read_and_the_line_kept_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path) as store:
        store.append_message(user("first"))
    cut = b'{"type":"message","id":"cccccccc","parentId":null,"timestamp":"2025-01-01T00:00:03Z",' + (
        b'"message":{"role":"user","content":[{"type":"text","text":"cut emoji \\ud83d here"}],"timestamp":3}}\n'
    )
    path.write_bytes(path.read_bytes() + cut)
    before = path.read_bytes()
    with SessionStore.open(path) as store:
        assert store.problems == []
        assert texts(store) == ["cut emoji \ufffd here"]
        store.append_message(user("next"))
    assert path.read_bytes().startswith(before)
    done = subprocess.run(
        [sys.executable, "-m", "tui", "context", str(path), "--json"],
        capture_output=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "cut emoji \ufffd here" in [m["text"] for m in json.loads(done.stdout)["messages"]]


# --- a leaf marker that is its own parent -------------------------------------------------------
def test_a_leaf_marker_that_is_its_own_parent_loads(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _v3(path, 3)
    marker = {
        "type": "custom",
        "customType": "kompakt.leaf",
        "id": "dddddddd",
        "parentId": "dddddddd",
        "timestamp": "2025-01-01T00:00:04Z",
        "data": {"leafId": "dddddddd"},
    }
    path.write_bytes(path.read_bytes() + orjson.dumps(marker) + b"\n")
    done = subprocess.run(
        [sys.executable, "-m", "tui", "stats", str(path), "--json"], capture_output=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["leafId"] == "bbbbbbbb"


def test_not_a_session_file_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"message"}\n')
    with pytest.raises(SessionFormatError, match="not a session header"):
        SessionStore.open(path)


def written(path: Path, *texts_: str) -> bytes:
    """A session of one user message per text written at ``path``; its bytes."""
    with SessionStore.create(path) as writer:
        for text in texts_:
            writer.append_message(user(text))
    return path.read_bytes()


def test_refresh_reports_a_path_that_became_a_fifo_and_reloads_when_it_is_a_file_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path) as writer:
        writer.append_message(user("one"))
    saved = path.read_bytes()
    reader = SessionStore.open(path, read_only=True)
    path.unlink()
    os.mkfifo(path)  # a read would block until a writer came: refresh must not attempt it
    result = reader.refresh()
    assert result.problem is not None and "is a FIFO" in result.problem
    assert texts(reader) == ["one"]  # the last good content stays
    path.unlink()
    # A shorter file: reloaded whether or not the new file reuses the old inode number.
    path.write_bytes(saved.split(b"\n", 1)[0] + b"\n")
    result = reader.refresh()
    assert result.reloaded and result.problem is None and texts(reader) == []
    reader.close()


def test_refresh_reloads_a_longer_file_written_over_the_same_inode(tmp_path: Path) -> None:
    """Same inode, larger size: not an append when its first bytes (the header) are not the ones read."""
    path = tmp_path / "s.jsonl"
    written(path, "one")
    reader = SessionStore.open(path, read_only=True)
    other = written(tmp_path / "other.jsonl", "two", "three", "four")
    with open(path, "r+b") as handle:  # in place: the inode stays
        handle.write(other)
    result = reader.refresh()
    assert result.reloaded and texts(reader) == ["two", "three", "four"]
    reader.close()


def test_a_failed_reload_keeps_the_old_files_identity_so_the_rewritten_file_is_reloaded(tmp_path: Path) -> None:
    """A writer that truncates and rewrites in place is caught empty, then written: the second refresh
    reloads the new file instead of reading it from the old file's byte offset as appends."""
    path = tmp_path / "s.jsonl"
    written(path, "one", "two")
    reader = SessionStore.open(path, read_only=True)
    new = written(tmp_path / "other.jsonl", "three", "four", "five", "six")
    with open(path, "wb"):  # O_TRUNC: the watcher looks in between
        pass
    assert reader.refresh().problem is not None and texts(reader) == ["one", "two"]
    path.write_bytes(new)
    result = reader.refresh()
    assert result.reloaded and texts(reader) == ["three", "four", "five", "six"]
    reader.close()


def test_a_reload_that_meets_half_a_header_then_the_whole_file_reloads_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    written(path, "one")
    reader = SessionStore.open(path, read_only=True)
    new = written(tmp_path / "other.jsonl", "two", "three", "four")
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, new[:20])
        assert reader.refresh().problem is not None and texts(reader) == ["one"]
        os.write(fd, new[20:])
    finally:
        os.close(fd)
    reader.refresh()
    assert texts(reader) == ["two", "three", "four"]
    reader.close()


def test_a_fifo_named_like_the_quarantine_file_neither_hangs_the_open_nor_loses_the_torn_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path) as writer:
        writer.append_message(user("one"))
    torn = b'{"type":"message","id":"ab'
    with open(path, "ab") as handle:
        handle.write(torn)  # a crash mid-write
    os.mkfifo(tmp_path / "s.jsonl.corrupt")
    # SessionStore.open used to block in open(FIFO) until a reader came; run it in a child so that a
    # regression fails by the hang guard instead of hanging the suite.
    script = (
        "import sys; from tui.session.store import SessionStore\n"
        "s = SessionStore.open(sys.argv[1]); print(s.recovered_torn_line.reason); s.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "left in place" in done.stdout and "is a FIFO" in done.stdout
    assert path.read_bytes().endswith(torn)  # kept, not dropped
