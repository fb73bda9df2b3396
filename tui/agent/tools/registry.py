"""The built-in tool set, its schemas for litellm, and running one tool call into a pi ``toolResult``.

:func:`execute_tool_call` is the single door from the agent loop to the tools: it finds the tool, decodes
and checks the arguments, applies the approval policy (asking the user through the context's callback),
runs the tool and wraps whatever happens (including every failure) in a pi-format ``toolResult``
message, so that each tool call gets exactly one result and the session stays well formed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tui.agent.tools.args import parse_arguments, validate_arguments
from tui.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from tui.agent.tools.bash import BashTool
from tui.agent.tools.edit import EditTool
from tui.agent.tools.find import FindTool
from tui.agent.tools.grep import GrepTool
from tui.agent.tools.ls import LsTool
from tui.agent.tools.read import ReadTool
from tui.agent.tools.write import WriteTool
from tui.session.entries import Message, now_ms


def default_tools() -> list[Tool]:
    return [ReadTool(), WriteTool(), EditTool(), BashTool(), LsTool(), GrepTool(), FindTool()]


def tool_schemas(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    """The ``tools=`` list for ``litellm.completion``."""
    return [tool.schema() for tool in tools]


def tool_result_message(tool_call_id: str, tool_name: str, output: ToolOutput) -> Message:
    return {
        "role": "toolResult",
        "toolCallId": tool_call_id,
        "toolName": tool_name,
        "content": output.content,
        "details": output.details,
        "isError": output.is_error,
        "timestamp": now_ms(),
    }


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


def unpack_tool_call(tool_call: Any) -> tuple[str, str, Any]:
    """``(id, name, raw arguments)`` of an OpenAI/litellm tool call or a pi ``toolCall`` block."""
    function = _field(tool_call, "function")
    source = function if function is not None else tool_call
    return str(_field(tool_call, "id") or ""), str(_field(source, "name") or ""), _field(source, "arguments")


async def _approve(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolOutput | None:
    """None when the call may run, else the error output that replaces it."""
    decision = tool.needs_approval(args, ctx)
    details = {"policy": decision.policy, "outsidePaths": [str(p) for p in decision.outside_paths]}
    if decision.policy == "deny":
        return ToolOutput.text(f"Not run: {decision.reason}.", details, is_error=True)
    if decision.policy == "auto":
        return None
    if ctx.ask is None:
        return ToolOutput.text(
            f"Not run: this call needs approval ({decision.reason}) and no one is there to give it.",
            details,
            is_error=True,
        )
    if not await ctx.ask(tool.name, args, decision.reason):
        return ToolOutput.text(
            f"The user denied this {tool.name} call.", {**details, "denied": True}, is_error=True
        )
    return None


async def _execute(tool: Tool, raw_args: Any, ctx: ToolContext) -> ToolOutput:
    try:
        args = validate_arguments(tool.parameters, parse_arguments(raw_args))
    except ToolError as exc:
        return ToolOutput.text(f"Invalid arguments for {tool.name}: {exc}", is_error=True)
    args = tool.with_resolved_paths(args, ctx)  # resolved once: what is approved is what runs
    refusal = await _approve(tool, args, ctx)
    if refusal is not None:
        return refusal
    if ctx.cancel.is_set():
        return ToolOutput.text(f"Cancelled before {tool.name} ran.", {"cancelled": True}, is_error=True)
    try:
        return await tool.run(args, ctx)
    except ToolError as exc:
        return ToolOutput.text(str(exc), is_error=True)


async def execute_tool_call(
    tool_call: Any, tools: Iterable[Tool] | Mapping[str, Tool], ctx: ToolContext
) -> Message:
    """Run one tool call and return its pi ``toolResult`` message; never raises (except task cancellation).

    ``tool_call`` is an OpenAI/litellm tool call (``{id, function: {name, arguments}}``, dict or object)
    or a pi ``toolCall`` block (``{id, name, arguments}``); arguments may be a JSON string or a dict.
    """
    call_id, name, raw_args = unpack_tool_call(tool_call)
    by_name = dict(tools) if isinstance(tools, Mapping) else {tool.name: tool for tool in tools}
    tool = by_name.get(name)
    if tool is None:
        known = ", ".join(sorted(by_name)) or "none"
        output = ToolOutput.text(f"Unknown tool {name!r}. Available tools: {known}.", is_error=True)
        return tool_result_message(call_id, name, output)
    try:
        output = await _execute(tool, raw_args, ctx)
    except Exception as exc:  # the loop must always get a result, whatever went wrong
        output = ToolOutput.text(f"{name} failed: {type(exc).__name__}: {exc}", is_error=True)
    return tool_result_message(call_id, name, output)
