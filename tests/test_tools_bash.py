"""The bash tool: exit codes, interleaved output, tail truncation with the full output file, timeout, cancel."""

import asyncio
import contextlib
import os
import signal
from pathlib import Path

from tests.tools_helpers import make_ctx, output_text
from tui.agent.tools.bash import BashTool


async def test_runs_in_workspace_and_reports_success(tmp_path):
    ctx = make_ctx(tmp_path)
    out = await BashTool().run({"command": "pwd"}, ctx)
    assert output_text(out) == str(ctx.workspace)
    assert out.details["exitCode"] == 0
    assert out.details["truncated"] is False
    assert out.details["fullOutputPath"] is None
    assert not out.is_error


async def test_stdout_and_stderr_are_interleaved(tmp_path):
    ctx = make_ctx(tmp_path)
    out = await BashTool().run({"command": "echo one; echo two >&2; echo three"}, ctx)
    assert output_text(out) == "one\ntwo\nthree"


async def test_non_zero_exit_is_an_error(tmp_path):
    ctx = make_ctx(tmp_path)
    out = await BashTool().run({"command": "echo nope; exit 3"}, ctx)
    assert out.is_error
    assert out.details["exitCode"] == 3
    assert output_text(out) == "nope\n\n[Exit code 3]"


async def test_no_output(tmp_path):
    ctx = make_ctx(tmp_path)
    out = await BashTool().run({"command": "true"}, ctx)
    assert output_text(out) == "(no output)"


async def test_undecodable_bytes_are_replaced(tmp_path):
    ctx = make_ctx(tmp_path)
    out = await BashTool().run({"command": r"printf 'a\377b\n'"}, ctx)
    assert output_text(out) == "a\ufffdb"


async def test_long_output_keeps_the_tail_and_saves_everything(tmp_path):
    ctx = make_ctx(tmp_path)
    out = await BashTool().run({"command": "seq 1 5000"}, ctx)
    text = output_text(out)
    body, _, note = text.partition("\n\n")
    assert body.splitlines()[0] == "3001"
    assert body.splitlines()[-1] == "5000"
    assert out.details["truncated"] is True
    assert out.details["totalLines"] == 5000
    full = Path(out.details["fullOutputPath"])
    assert full.parent == tmp_path / "artifacts"
    assert full.read_text() == "".join(f"{i}\n" for i in range(1, 5001))
    assert "lines 3001-5000 of 5000" in note and str(full) in note


async def test_output_over_50_kb_is_truncated_by_bytes(tmp_path):
    ctx = make_ctx(tmp_path)
    # 100 lines of 1,000 bytes: only the last 51 fit in 50 KB.
    out = await BashTool().run({"command": "for i in $(seq 1 100); do printf '%0999d\\n' $i; done"}, ctx)
    body = output_text(out).partition("\n\n")[0]
    assert len(body.splitlines()) == 51
    assert body.splitlines()[-1] == f"{100:0999d}"
    assert Path(out.details["fullOutputPath"]).stat().st_size == 100_000


async def test_exactly_2000_lines_are_not_truncated_and_leave_no_file(tmp_path):
    ctx = make_ctx(tmp_path)
    out = await BashTool().run({"command": "seq 1 2000"}, ctx)
    assert out.details["truncated"] is False
    assert out.details["fullOutputPath"] is None
    assert not (tmp_path / "artifacts").exists() or not any((tmp_path / "artifacts").iterdir())


async def test_timeout_kills_the_command(tmp_path):
    ctx = make_ctx(tmp_path)
    out = await BashTool().run({"command": "echo started; sleep 30", "timeout": 0.5}, ctx)
    assert out.is_error
    assert out.details["timedOut"] is True
    assert out.details["exitCode"] is None
    assert output_text(out) == "started\n\n[Timed out after 0.5 s; the command was killed.]"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:  # gone, or exiting while we look
        return False
    return state != "Z"


async def _wait_dead(pid: int) -> bool:
    for _ in range(200):
        if not _alive(pid):
            return True
        await asyncio.sleep(0.025)
    return False


async def test_cancel_kills_the_whole_process_group(tmp_path):
    ctx = make_ctx(tmp_path)
    pid_file = ctx.workspace / "child.pid"
    task = asyncio.create_task(BashTool().run({"command": "sleep 60 & echo $! > child.pid; wait"}, ctx))
    while not pid_file.exists() or not pid_file.read_text().strip():
        await asyncio.sleep(0.01)
    child = int(pid_file.read_text())
    assert _alive(child)
    ctx.cancel.set()
    out = await task
    assert out.is_error
    assert out.details["cancelled"] is True
    assert "[Cancelled; the command was killed.]" in output_text(out)
    assert await _wait_dead(child)


async def test_task_cancellation_also_kills_the_group(tmp_path):
    ctx = make_ctx(tmp_path)
    pid_file = ctx.workspace / "child.pid"
    task = asyncio.create_task(BashTool().run({"command": "sleep 60 & echo $! > child.pid; wait"}, ctx))
    while not pid_file.exists() or not pid_file.read_text().strip():
        await asyncio.sleep(0.01)
    child = int(pid_file.read_text())
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert await _wait_dead(child)


async def test_background_job_holding_the_pipe_does_not_hold_the_call(tmp_path):
    ctx = make_ctx(tmp_path)
    out = await BashTool().run({"command": "sleep 60 & echo $!"}, ctx)
    child = int(output_text(out))
    assert out.details["exitCode"] == 0
    assert _alive(child)  # a job started in the background is left running
    os.kill(child, signal.SIGKILL)
