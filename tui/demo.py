"""The ``--demo`` session: a small, realistic pi-format session with branches, compactions and summaries.

It is built deterministically (fixed ids and timestamps) into a fresh file each time, so the first look
on a new machine shows everything kompakt draws: tool calls, a branch point with a branch summary,
labels, two compactions with their boundaries, and a context large enough for the timeline to matter.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from tui.compaction.tokens import estimate_tokens
from tui.session.context import entry_to_message

MODEL = ("anthropic", "claude-sonnet-4-5")

_PARSER = '''def parse_line(raw: bytes) -> dict:
    """Decode one JSONL line; raise ValueError with the byte offset on failure."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"bad line at {exc.pos}") from exc
'''


class _Builder:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.clock = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
        self.leaf: str | None = None
        self.counter = 0
        self.kept_from = 0  # index of the first line still in the context

    @property
    def context(self) -> int:
        """What a real tokenizer would report for the current context (the chars/4 estimate × 1.12)."""
        total = 1500  # system prompt and tool schemas
        for line in self.lines[self.kept_from :]:
            message = entry_to_message(line)
            if message is not None:
                total += estimate_tokens(message)
        return int(total * 1.12)

    def _next(self) -> tuple[str, str, int]:
        self.counter += 1
        self.clock += timedelta(seconds=17 + self.counter % 23)
        iso = self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return f"d{self.counter:07x}", iso, int(self.clock.timestamp() * 1000)

    def add(self, kind: str, **fields: Any) -> str:
        entry_id, iso, _ = self._next()
        self.lines.append({"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": iso, **fields})
        self.leaf = entry_id
        return entry_id

    def msg(self, message: dict[str, Any]) -> str:
        _, _, ms = self._next()
        self.counter -= 1
        self.clock -= timedelta(seconds=1)
        message.setdefault("timestamp", ms)
        return self.add("message", message=message)

    def user(self, text: str) -> str:
        return self.msg({"role": "user", "content": [{"type": "text", "text": text}]})

    def assistant(
        self, text: str = "", calls: list[tuple[str, str, dict[str, Any]]] = (), stop: str | None = None
    ) -> str:
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": text})
        for call_id, name, args in calls:
            content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
        usage = {
            "input": 120,
            "output": 180,
            "cacheRead": self.context,
            "cacheWrite": 200,
            "totalTokens": self.context + 500,
            "cost": {
                "input": 0.0004,
                "output": 0.0027,
                "cacheRead": self.context * 3e-7,
                "cacheWrite": 0.00075,
                "total": 0.0039 + self.context * 3e-7,
            },
        }
        return self.msg(
            {
                "role": "assistant",
                "content": content,
                "api": "anthropic-messages",
                "provider": MODEL[0],
                "model": MODEL[1],
                "usage": usage,
                "stopReason": stop or ("toolUse" if calls else "stop"),
            }
        )

    def result(self, call_id: str, name: str, text: str, error: bool = False) -> str:
        return self.msg(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": [{"type": "text", "text": text}],
                "isError": error,
            }
        )


def _log_output(lines: int, failing: bool) -> str:
    rows = [f"tests/test_store.py::test_case_{i:03d} PASSED" for i in range(lines)]
    if failing:
        rows.append("tests/test_store.py::test_torn_line FAILED\nE   ValueError: bad line at 17")
    return "\n".join(rows)


def _compact(b: _Builder, *, kept_id: str, reason: str, duration_ms: int, summary: str, short: str) -> None:
    before = b.context
    b.kept_from = next(i for i, line in enumerate(b.lines) if line["id"] == kept_id)
    b.add(
        "compaction",
        summary=summary,
        firstKeptEntryId=kept_id,
        tokensBefore=before,
        details={
            "readFiles": ["tests/test_part0.py"],
            "modifiedFiles": ["src/store.py"],
            "kompakt": {"reason": reason, "durationMs": duration_ms},
        },
        shortSummary=short,
    )
    b.lines[-1]["details"]["kompakt"]["tokensAfter"] = b.context


def build_demo(path: Path, cwd: str | None = None) -> Path:
    """Write the demo session to ``path`` (overwriting it) and return the path.

    Its header names ``cwd`` (default: the folder it is written to), a directory that exists: pi refuses, or
    asks about, a session whose working directory is gone.
    """
    b = _Builder()
    b.add("model_change", provider=MODEL[0], modelId=MODEL[1])
    b.add("session_info", name="Demo: fixing the JSONL loader")
    first = b.user("The session loader crashes on a half-written last line. Find out why and fix it.")
    b.add("label", targetId=first, label="start")
    b.assistant("Let me look at the loader first.", [("c1", "read", {"path": "src/store.py"})])
    b.result("c1", "read", _PARSER * 40)
    b.assistant("", [("c2", "bash", {"command": "pytest -q tests/test_store.py"})])
    b.result("c2", "bash", _log_output(160, failing=True), error=True)
    fork = b.assistant(
        "The failure is in `parse_line`: a torn last line raises instead of being set aside. "
        "Two options: skip the line, or move it to a `.corrupt` file and keep loading."
    )
    # Branch A (abandoned): just skip the bad line.
    b.user("Just skip the bad line.")
    b.assistant(
        "", [("c3", "edit", {"path": "src/store.py", "old_text": "raise ValueError", "new_text": "continue"})]
    )
    b.result("c3", "edit", "Edited src/store.py")
    b.assistant("Done, but this silently drops data: a crash mid-write would lose the user's last entry.")
    # Back at the fork: a branch summary, then branch B.
    b.leaf = fork
    b.add(
        "branch_summary",
        fromId=fork,
        summary="The user tried skipping torn lines in `parse_line` (src/store.py). It worked but silently "
        "dropped data, so that branch was abandoned.\n\n<modified-files>\nsrc/store.py\n</modified-files>",
    )
    b.user("Move torn lines to a .corrupt file with their byte offset instead, and keep loading.")
    for step in range(6):
        call = f"k{step}"
        b.assistant(
            f"Step {step + 1}: " + ("reading the tests" if step % 2 == 0 else "running them"),
            [
                (
                    call,
                    "read" if step % 2 == 0 else "bash",
                    {"path": f"tests/test_part{step}.py"} if step % 2 == 0 else {"command": "pytest -q -x"},
                )
            ],
        )
        b.result(call, "read" if step % 2 == 0 else "bash", _log_output(1400, failing=step < 4))
        if step == 3:
            _compact(
                b,
                kept_id=b.lines[-4]["id"],
                reason="manual",
                duration_ms=5200,
                summary="## Goal\nQuarantine torn JSONL lines instead of crashing.\n\n## Progress\n"
                "### In Progress\n- [ ] Move torn lines to `.corrupt` with their offset\n\n"
                "<read-files>\ntests/test_part0.py\n</read-files>",
                short="I traced the crash to parse_line and began quarantining torn lines.",
            )
    kept = b.user("Now make every append fsync, and add a kill -9 test.")
    b.assistant(
        "", [("f1", "edit", {"path": "src/store.py", "old_text": "write(", "new_text": "write_all("})]
    )
    b.result("f1", "edit", "Edited src/store.py")
    b.assistant("Appends are one write plus fsync now.")
    summary = (
        "## Goal\nMake the JSONL session loader survive torn writes without losing data.\n\n"
        "## Progress\n### Done\n- [x] Torn last lines move to `FILE.corrupt` with their byte offset\n"
        "### In Progress\n- [ ] fsync on every append, kill -9 test\n\n"
        "## Next Steps\n1. Write the crash test\n\n<read-files>\ntests/test_part0.py\n</read-files>\n\n"
        "<modified-files>\nsrc/store.py\n</modified-files>"
    )
    _compact(
        b,
        kept_id=kept,
        reason="threshold",
        duration_ms=8400,
        summary=summary,
        short="I made the loader quarantine torn lines and started making appends durable.",
    )
    b.user("Add the kill -9 test now.")
    b.assistant("", [("t1", "write", {"path": "tests/test_crash.py", "content": "def test_crash(): ..."})])
    b.result("t1", "write", "Wrote tests/test_crash.py")
    b.assistant("", [("t2", "bash", {"command": "pytest -q tests/test_crash.py"})])
    b.result("t2", "bash", _log_output(90, failing=False))
    for step, target in enumerate(
        ["src/store.py", "src/tree.py", "src/context.py", "src/cli.py", "docs/format.md"]
    ):
        b.assistant(f"Checking {target} for other unsafe writes.", [(f"r{step}", "read", {"path": target})])
        b.result(f"r{step}", "read", (_PARSER * 12 + "\n") * (14 + step * 3))
    done = b.assistant("The crash test passes 12 rounds of kill -9 with nothing fsynced lost.")
    b.add("label", targetId=done, label="crash-safe")
    for topic in (
        "the fsync cost per append",
        "batch mode for bulk imports",
        "what pi does with our leaf marker",
    ):
        b.user(f"Explain {topic}.")
        b.assistant(
            f"About {topic}: "
            + " ".join(
                f"Point {i}: appends stay one write of one whole line, so a reader never sees half an entry."
                for i in range(1, 60)
            )
        )
    b.user("Great. Summarise what changed for the changelog.")
    b.assistant(
        "- Torn last lines are quarantined to `FILE.corrupt` with their byte offset.\n"
        "- Every append is one write plus fsync.\n- A kill -9 test guards it."
    )
    header = {
        "type": "session",
        "version": 3,
        "id": "5e55d3e0-0000-4000-8000-00000000de30",
        "timestamp": "2026-11-20T09:30:00.000Z",
        "cwd": cwd or str(path.parent.absolute()),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [header, *b.lines]))
    return path
