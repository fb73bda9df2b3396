"""The agent's tools (read, write, edit, bash, ls, grep, find) and the registry that runs their calls.

Import from here: the context and output types, :func:`default_tools`, :func:`tool_schemas`,
:func:`execute_tool_call` and :func:`tool_call_label`. Nothing here imports Textual or litellm.
"""

from tui.agent.tools.base import (
    ApprovalCallback,
    ApprovalDecision,
    Policy,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
)
from tui.agent.tools.registry import (
    default_tools,
    execute_tool_call,
    tool_result_message,
    tool_schemas,
    unpack_tool_call,
)
from tui.session.labels import tool_call_label

__all__ = [
    "ApprovalCallback",
    "ApprovalDecision",
    "Policy",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "default_tools",
    "execute_tool_call",
    "tool_call_label",
    "tool_result_message",
    "tool_schemas",
    "unpack_tool_call",
]
