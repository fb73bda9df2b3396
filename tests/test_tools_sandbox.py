"""Issue 8: the tool sandbox. Symlinks cannot carry a tool outside the workspace, FIFOs and devices in it
are skipped instead of blocking a thread, the path that was approved is the one opened, and an aborted
tool never keeps the process from exiting (checked with a real child process).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.tools_helpers import RecordingApprover, make_ctx, output_text, result_text
from tui.agent.tools import ToolError, default_tools, execute_tool_call
from tui.agent.tools.files import open_approved
from tui.agent.tools.find import FindTool
from tui.agent.tools.grep import GrepTool
from tui.agent.tools.read import ReadTool

SECRET = "outside-secret-7731"


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """``ws`` (the workspace) holds a file, a symlink to a secret outside it, a link inside, and a FIFO."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(f"token {SECRET}\n")
    (ws / "notes.txt").write_text(f"token inside\n{SECRET[:7]} here\n")
    (ws / "leak.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (ws / "alias.txt").symlink_to(ws / "notes.txt")
    os.mkfifo(ws / "pipe")
    return tmp_path


async def test_grep_does_not_read_outside_files_through_a_symlink(world: Path) -> None:
    ctx = make_ctx(world)
    out = output_text(await GrepTool().run({"pattern": "token"}, ctx))
    assert SECRET not in out
    assert "notes.txt:1:token inside" in out and "alias.txt:1:token inside" in out
    assert "leak.txt" in out and "outside the workspace" in out  # said, not silently dropped


async def test_grep_find_and_read_skip_a_fifo(world: Path) -> None:
    ctx = make_ctx(world)
    grep = output_text(await GrepTool().run({"pattern": "token"}, ctx))  # returns: the FIFO is not opened
    assert "pipe" not in grep.split("\n\n")[0]
    found = output_text(await FindTool().run({"pattern": "*"}, ctx))
    assert "pipe" not in found.split() and "notes.txt" in found.split()
    with pytest.raises(ToolError, match="FIFO"):
        await ReadTool().run({"path": "pipe"}, ctx)
    with pytest.raises(ToolError, match="FIFO"):
        await GrepTool().run({"pattern": "x", "path": "pipe"}, ctx)


async def test_edit_refuses_a_fifo(world: Path) -> None:
    message = await execute_tool_call(
        {"id": "c", "name": "edit", "arguments": {"path": "pipe", "old_text": "a", "new_text": "b"}},
        default_tools(),
        make_ctx(world, approval={"*": "auto"}),
    )
    assert message["isError"] and "FIFO" in result_text(message)


def test_the_approved_path_is_the_one_opened(world: Path) -> None:
    """A file swapped for a symlink after approval (check-then-use) is refused, not followed."""
    ws = world / "ws"
    approved = (ws / "notes.txt").resolve()
    os.close(open_approved(approved, "notes.txt"))
    (ws / "notes.txt").unlink()
    (ws / "notes.txt").symlink_to(world / "outside" / "secret.txt")
    with pytest.raises(ToolError, match="changed"):
        open_approved(approved, "notes.txt")
    # A directory on the way swapped for a link to elsewhere: the opened file is not the approved one.
    (ws / "sub").mkdir()
    (ws / "sub" / "secret.txt").write_text("inside\n")
    approved = (ws / "sub" / "secret.txt").resolve()
    (ws / "sub").rename(ws / "sub-old")
    (ws / "sub").symlink_to(world / "outside")
    with pytest.raises(ToolError, match="changed"):
        open_approved(approved, "sub/secret.txt")


def test_a_write_goes_to_the_approved_directory_or_nowhere(world: Path) -> None:
    """The directory of an approved write swapped for a symlink to elsewhere: refused, nothing written."""
    from tui.agent.tools.files import atomic_write

    ws = world / "ws"
    (ws / "out").mkdir()
    approved = (ws / "out" / "new.txt").resolve()
    atomic_write(approved, b"one\n", "out/new.txt")
    assert approved.read_bytes() == b"one\n"
    (ws / "out").rename(ws / "out-old")
    (ws / "out").symlink_to(world / "outside")
    with pytest.raises(ToolError, match="changed"):
        atomic_write(approved, b"two\n", "out/new.txt")
    assert sorted(p.name for p in (world / "outside").iterdir()) == ["secret.txt"]


async def test_read_asks_once_for_the_resolved_path_and_reads_that(world: Path) -> None:
    approver = RecordingApprover(answer=True)
    ctx = make_ctx(world, ask=approver)
    message = await execute_tool_call(
        {"id": "c", "name": "read", "arguments": {"path": "leak.txt"}}, default_tools(), ctx
    )
    (question,) = approver.calls
    target = str(world / "outside" / "secret.txt")
    assert question[1]["path"] == target and target in question[2]  # the resolved target is what is asked
    assert SECRET in result_text(message)


def test_an_aborted_tool_does_not_keep_the_process_alive(world: Path) -> None:
    """Cancel a grep over a workspace with a FIFO, and leave: the child process must exit by itself."""
    script = textwrap.dedent(
        f"""
        import asyncio
        from pathlib import Path
        from tui.agent.tools import ToolContext, default_tools, execute_tool_call

        async def main():
            ctx = ToolContext(workspace=Path({str(world / "ws")!r}))
            call = {{"id": "c", "name": "grep", "arguments": {{"pattern": "x"}}}}
            task = asyncio.create_task(execute_tool_call(call, default_tools(), ctx))
            await asyncio.sleep(0)
            ctx.cancel.set()
            try:
                await asyncio.wait_for(task, 30)
            except (asyncio.CancelledError, asyncio.TimeoutError):
                pass
            print("left main", flush=True)

        asyncio.run(main())
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = child.communicate(timeout=90)  # a hang guard: a thread stuck on the FIFO never returns
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail("the process did not exit: a tool thread was left blocked")
    assert child.returncode == 0, err.decode()
    assert b"left main" in out


def test_a_blocked_tool_thread_does_not_keep_the_process_alive() -> None:
    """Whatever blocks a tool's thread (a hung mount, say), leaving the awaiting task lets the process exit."""
    script = textwrap.dedent(
        """
        import asyncio, threading
        from tui.agent.tools.worker import in_thread

        async def main():
            try:
                await asyncio.wait_for(in_thread(threading.Event().wait), 0.2)  # never returns by itself
            except asyncio.TimeoutError:
                print("gave up on it", flush=True)

        asyncio.run(main())
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = child.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail("the process did not exit: it waited for the blocked thread")
    assert child.returncode == 0 and b"gave up on it" in out, err.decode()


async def test_in_thread_returns_results_and_raises_errors() -> None:
    from tui.agent.tools.worker import in_thread

    assert await in_thread(sum, [1, 2, 3]) == 6
    with pytest.raises(ZeroDivisionError):
        await in_thread(divmod, 1, 0)


# --- the workspace is where kompakt started, unless the user moves it -------------------------------
def session_recorded_in(tmp_path: Path, directory: Path) -> Path:
    from tests import factories as f
    from tui.session.store import SessionStore

    path = tmp_path / "elsewhere.jsonl"
    with SessionStore.create(path, cwd=str(directory)) as store:
        store.append_message(f.user("hello")["message"])
        store.append_message(f.assistant("hi")["message"])
    return path


@pytest.mark.parametrize("move", [False, True], ids=["stay", "move"])
async def test_a_session_cwd_elsewhere_moves_the_tools_only_when_the_user_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, move: bool
) -> None:
    from tests.app_e2e_helpers import isolated_home, make_app, ready, settings_toml, wait_until
    from tests.pages import dialog_shown
    from tui.launch import Launch

    stored = tmp_path / "recorded-there"
    stored.mkdir()
    here = tmp_path / "here"
    here.mkdir()
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(None))
    app = make_app(home, Launch("open", session_recorded_in(tmp_path, stored), here))
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        screen = await ready(pilot, app)
        dialog = await dialog_shown(pilot, app)  # drawn: it ignores keys read before its first frame
        assert str(stored) in dialog._question and str(here) in dialog._question
        assert screen.prompt.disabled and screen.agent.workspace == here.resolve()  # not the stored cwd
        assert screen.agent.tool_context.workspace == here.resolve()
        await pilot.press("y" if move else "n")
        await wait_until(pilot, lambda: not screen.prompt.disabled, "the prompt enabled")
        expected = (stored if move else here).resolve()
        assert screen.agent.workspace == expected and screen.agent.tool_context.workspace == expected
