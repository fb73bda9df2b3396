"""Helpers for the tool tests: a workspace context, a scripted approval callback and text extraction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui.agent.tools import ToolContext, ToolOutput


class RecordingApprover:
    """An approval callback that answers with a fixed choice and records every question."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.calls: list[tuple[str, dict[str, Any], str]] = []

    async def __call__(self, tool_name: str, args: dict[str, Any], reason: str) -> bool:
        self.calls.append((tool_name, args, reason))
        return self.answer


def make_ctx(tmp_path: Path, **overrides: Any) -> ToolContext:
    """A context whose workspace is ``tmp_path/ws`` and whose artifacts go to ``tmp_path/artifacts``."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    overrides.setdefault("artifacts_dir", tmp_path / "artifacts")
    return ToolContext(workspace=workspace, **overrides)


def output_text(output: ToolOutput) -> str:
    return "".join(block.get("text", "") for block in output.content if block["type"] == "text")


def result_text(message: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in message["content"] if block["type"] == "text")
