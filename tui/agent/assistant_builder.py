"""Accumulate streamed deltas into one pi-format assistant message.

Blocks keep their order of arrival (thinking, text, tool calls), consecutive deltas of the same kind
merge into one block, and tool-call argument pieces are joined and parsed as JSON when the call ends.
The agent loop may hold the builder it passed to the provider, so that a cancelled stream still leaves a
well-formed ``aborted`` message with whatever had arrived.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tui.agent.stream_events import ToolCallDelta, ToolCallEnd, ToolCallStart
from tui.session.entries import now_ms

API_NAME = "litellm-completions"
FINISH_REASONS = {"stop": "stop", "length": "length", "tool_calls": "toolUse", "function_call": "toolUse"}


def empty_usage() -> dict[str, Any]:
    cost = {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.0}
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": cost}


@dataclass
class _PendingCall:
    id: str
    name: str
    arguments: str = ""
    ended: bool = False


class AssistantBuilder:
    """One assistant message under construction for ``model`` (a litellm model string)."""

    def __init__(self, provider: str, model_id: str) -> None:
        self.provider = provider
        self.model_id = model_id
        self.reset()

    def reset(self) -> None:
        """Forget everything received (a retried request starts from scratch)."""
        self.blocks: list[dict[str, Any]] = []
        self.calls: dict[int, _PendingCall] = {}
        self.usage = empty_usage()
        self.finish_reason: str | None = None

    def add_text(self, text: str) -> None:
        self._append("text", "text", text)

    def add_thinking(self, text: str) -> None:
        self._append("thinking", "thinking", text)

    def _append(self, kind: str, key: str, text: str) -> None:
        if self.blocks and self.blocks[-1]["type"] == kind:
            self.blocks[-1][key] += text
        else:
            self.blocks.append({"type": kind, key: text})

    def tool_delta(
        self, index: int, call_id: str | None, name: str | None, arguments: str | None
    ) -> list[ToolCallStart | ToolCallDelta]:
        """Record one tool-call delta and return the events it produces."""
        events: list[ToolCallStart | ToolCallDelta] = []
        call = self.calls.get(index)
        if call is None:
            call = _PendingCall(id=call_id or f"call_{index}", name=name or "")
            self.calls[index] = call
            self.blocks.append({"type": "toolCall", "id": call.id, "name": call.name, "arguments": {}})
            events.append(ToolCallStart(index, call.id, call.name))
        elif name and not call.name:
            call.name = name
        if arguments:
            call.arguments += arguments
            events.append(ToolCallDelta(index, call.id, arguments))
        return events

    def end_tool_calls(self) -> list[ToolCallEnd]:
        """Close every open call: parse its arguments and fill its block."""
        events = []
        for index, call in sorted(self.calls.items()):
            if call.ended:
                continue
            call.ended = True
            block = next(b for b in self.blocks if b["type"] == "toolCall" and b["id"] == call.id)
            block["name"] = call.name
            block["arguments"] = _parse_arguments(call.arguments)
            events.append(ToolCallEnd(index, dict(block)))
        return events

    def set_usage(self, usage: dict[str, Any]) -> None:
        self.usage = usage

    def finish(self, stop_reason: str | None = None, error_message: str | None = None) -> dict[str, Any]:
        """The finished message; the stop reason defaults to what the server's finish reason implies."""
        self.end_tool_calls()
        if stop_reason is None:
            has_calls = any(b["type"] == "toolCall" for b in self.blocks)
            stop_reason = "toolUse" if has_calls else FINISH_REASONS.get(self.finish_reason or "stop", "stop")
            if self.finish_reason == "content_filter":
                stop_reason, error_message = "error", error_message or "The provider filtered the content."
        message: dict[str, Any] = {
            "role": "assistant",
            "content": [dict(b) for b in self.blocks],
            "api": API_NAME,
            "provider": self.provider,
            "model": self.model_id,
            "usage": self.usage,
            "stopReason": stop_reason,
            "timestamp": now_ms(),
        }
        if error_message:
            message["errorMessage"] = error_message
        return message


def _parse_arguments(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        # Keep what the model wrote so the tool can report the malformed call back to it.
        return {"_raw": raw}
    return parsed if isinstance(parsed, dict) else {"_value": parsed}
