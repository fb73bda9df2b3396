"""The ``bash`` tool: run a shell command in the workspace with a timeout, and cancel it on request.

The command runs in its own process group, so a timeout or a cancel kills it and everything it started.
stdout and stderr share one pipe, which keeps them interleaved as a terminal shows them. The model sees
the last 2,000 lines / 50 KB; a longer output is saved whole and its path reported. A non-zero exit code,
a timeout and a cancel are errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from typing import Any, BinaryIO, ClassVar, Literal

from tui.agent.tools.base import Policy, Tool, ToolContext, ToolError, ToolOutput
from tui.agent.tools.spool import OutputSpool

DEFAULT_TIMEOUT_SECONDS = 120.0
# Background jobs may keep the pipe open after the shell exits; read on for this long, then stop.
DRAIN_SECONDS = 0.5
_CHUNK = 65536

Outcome = Literal["exited", "timeout", "cancelled"]


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _spawn(command: str, ctx: ToolContext, out_fd: int) -> asyncio.subprocess.Process:
    """Start the shell in a new process group, writing stdout and stderr to ``out_fd``."""
    start = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            _shell(),
            "-c",
            command,
            stdin=subprocess.DEVNULL,
            stdout=out_fd,
            stderr=out_fd,
            cwd=ctx.workspace,
            start_new_session=True,
        )
    )
    try:
        return await asyncio.shield(start)
    except asyncio.CancelledError:
        # The shell may already be running: let the start finish so that its group can be killed.
        with contextlib.suppress(OSError):
            _kill_group((await start).pid)
        raise


async def _pump(reader: asyncio.StreamReader, spool: OutputSpool) -> None:
    while chunk := await reader.read(_CHUNK):
        spool.feed(chunk)


async def _wait(proc: asyncio.subprocess.Process, cancel: asyncio.Event, timeout: float) -> Outcome:
    exited = asyncio.create_task(proc.wait())
    cancelled = asyncio.create_task(cancel.wait())
    try:
        done, _ = await asyncio.wait(
            {exited, cancelled}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        exited.cancel()
        cancelled.cancel()
    if exited in done:
        return "exited"
    return "cancelled" if cancelled in done else "timeout"


async def _supervise(
    proc: asyncio.subprocess.Process,
    pipe: BinaryIO,
    spool: OutputSpool,
    cancel: asyncio.Event,
    timeout: float,
) -> Outcome:
    """Collect the output until the shell ends, is timed out or is cancelled; the group dies on any exit path."""
    transport: asyncio.ReadTransport | None = None
    pump: asyncio.Task[None] | None = None
    try:
        reader = asyncio.StreamReader()
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        pump = asyncio.create_task(_pump(reader, spool))
        outcome = await _wait(proc, cancel, timeout)
        if outcome != "exited":
            _kill_group(proc.pid)
            await proc.wait()
        await asyncio.wait({pump}, timeout=DRAIN_SECONDS)
        return outcome
    finally:
        if proc.returncode is None:
            _kill_group(proc.pid)
        if pump is not None:
            pump.cancel()
        if transport is not None:
            transport.close()  # closes the pipe too
        else:
            pipe.close()
        spool.close()


@dataclass(frozen=True)
class BashRun:
    """One finished command: its output as the model sees it, and the notes the tool result adds to it.

    A ``!`` command stores ``output`` alone, as pi does: the exit code, the cut and the cancel are fields of
    its ``bashExecution`` message, which the context text states once.
    """

    output: str
    notes: tuple[str, ...]
    details: dict[str, Any]
    is_error: bool

    def tool_output(self) -> ToolOutput:
        text = self.output or "(no output)"
        if self.notes:
            text += "\n\n" + "\n".join(self.notes)
        return ToolOutput.text(text, self.details, is_error=self.is_error)


def _format(command: str, spool: OutputSpool, outcome: Outcome, code: int | None, timeout: float) -> BashRun:
    tail, full_path = spool.finish()
    total = spool.total_lines
    notes = []
    if tail.truncated:
        first = total - tail.kept_lines + 1
        notes.append(f"[Output truncated: lines {first}-{total} of {total} shown. Full output: {full_path}]")
    if outcome == "timeout":
        notes.append(f"[Timed out after {timeout:g} s; the command was killed.]")
    elif outcome == "cancelled":
        notes.append("[Cancelled; the command was killed.]")
    elif code:
        notes.append(f"[Exit code {code}]")
    details = {
        "command": command,
        "exitCode": code,
        "cancelled": outcome == "cancelled",
        "timedOut": outcome == "timeout",
        "truncated": tail.truncated,
        "fullOutputPath": str(full_path) if full_path else None,
        "totalLines": total,
    }
    return BashRun(tail.text.rstrip("\n"), tuple(notes), details, outcome != "exited" or code != 0)


class BashTool(Tool):
    name: ClassVar[str] = "bash"
    default_policy: ClassVar[Policy] = "ask"
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "Shell command to run in the workspace."},
            "timeout": {
                "type": "number",
                "description": f"Seconds before the command is killed (default {DEFAULT_TIMEOUT_SECONDS:g}).",
            },
        },
        "required": ["command"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return (await self.execute(args, ctx)).tool_output()

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> BashRun:
        """Run the command; the output and the notes apart (``run`` joins them for the model)."""
        command: str = args["command"]
        timeout = float(args.get("timeout", DEFAULT_TIMEOUT_SECONDS))
        if timeout <= 0:
            raise ToolError("timeout must be a positive number of seconds")
        read_fd, write_fd = os.pipe()
        try:
            proc = await _spawn(command, ctx, write_fd)
        except BaseException as exc:
            os.close(read_fd)
            if isinstance(exc, OSError):
                raise ToolError(f"could not start the shell: {exc}") from None
            raise
        finally:
            os.close(write_fd)  # the child has its copy; ours would keep the pipe from ever reaching EOF
        spool = OutputSpool(ctx.artifacts_dir)
        outcome = await _supervise(proc, os.fdopen(read_fd, "rb", buffering=0), spool, ctx.cancel, timeout)
        code = proc.returncode if outcome == "exited" else None
        return _format(command, spool, outcome, code, timeout)
