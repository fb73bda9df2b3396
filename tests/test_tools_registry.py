"""execute_tool_call: pi toolResult messages, argument errors, approval policies and the outside-workspace flag."""

import json
from typing import Any, ClassVar

from tests.tools_helpers import RecordingApprover, make_ctx, result_text
from tui.agent.tools import (
    Tool,
    ToolContext,
    ToolOutput,
    default_tools,
    execute_tool_call,
    tool_schemas,
)


def openai_call(name: str, args: Any, call_id: str = "call_1") -> dict[str, Any]:
    arguments = args if isinstance(args, str) else json.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class Exploding(Tool):
    name: ClassVar[str] = "explode"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        raise RuntimeError("boom")


def test_default_tools_and_schemas():
    tools = default_tools()
    schemas = tool_schemas(tools)
    assert [s["function"]["name"] for s in schemas] == ["read", "write", "edit", "bash", "ls", "grep", "find"]
    for schema in schemas:
        assert schema["type"] == "function"
        assert schema["function"]["description"].strip()
        assert schema["function"]["parameters"]["type"] == "object"
    policies = {tool.name: tool.default_policy for tool in tools}
    assert policies == {
        "read": "auto",
        "write": "ask",
        "edit": "ask",
        "bash": "ask",
        "ls": "auto",
        "grep": "auto",
        "find": "auto",
    }


async def test_result_message_has_pi_shape(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "a.txt").write_text("hi\n")
    msg = await execute_tool_call(openai_call("read", {"path": "a.txt"}), default_tools(), ctx)
    assert set(msg) == {"role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"}
    assert msg["role"] == "toolResult"
    assert msg["toolCallId"] == "call_1"
    assert msg["toolName"] == "read"
    assert msg["content"] == [{"type": "text", "text": "hi"}]
    assert msg["isError"] is False
    assert isinstance(msg["timestamp"], int)


async def test_accepts_pi_tool_call_block_with_dict_arguments(tmp_path):
    ctx = make_ctx(tmp_path)
    block = {"type": "toolCall", "id": "tc9", "name": "ls", "arguments": {}}
    msg = await execute_tool_call(block, {t.name: t for t in default_tools()}, ctx)
    assert msg["toolCallId"] == "tc9"
    assert result_text(msg) == "(. is empty)"


async def test_unknown_tool_is_an_error_result(tmp_path):
    msg = await execute_tool_call(openai_call("fly", {}), default_tools(), make_ctx(tmp_path))
    assert msg["isError"] is True
    assert msg["toolName"] == "fly"
    assert result_text(msg).startswith("Unknown tool 'fly'. Available tools: bash, edit, find")


async def test_invalid_json_arguments_are_an_error_result(tmp_path):
    msg = await execute_tool_call(openai_call("read", '{"path": '), default_tools(), make_ctx(tmp_path))
    assert msg["isError"] is True
    assert result_text(msg).startswith("Invalid arguments for read: the arguments are not valid JSON")


async def test_missing_and_mistyped_arguments(tmp_path):
    ctx = make_ctx(tmp_path)
    msg = await execute_tool_call(openai_call("read", {}), default_tools(), ctx)
    assert result_text(msg) == "Invalid arguments for read: missing required argument(s): path"
    msg = await execute_tool_call(openai_call("read", {"path": "a", "offset": "x"}), default_tools(), ctx)
    assert "'offset' must be a number" in result_text(msg)
    msg = await execute_tool_call(openai_call("read", {"path": "a", "offset": 0}), default_tools(), ctx)
    assert "'offset' must be at least 1" in result_text(msg)
    msg = await execute_tool_call(openai_call("read", "[1]"), default_tools(), ctx)
    assert "must be a JSON object" in result_text(msg)


async def test_numeric_strings_are_coerced(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "a.txt").write_text("1\n2\n3\n")
    msg = await execute_tool_call(
        openai_call("read", {"path": "a.txt", "offset": "2", "limit": 1.0}), default_tools(), ctx
    )
    assert result_text(msg).startswith("2\n\n")


async def test_tool_error_becomes_error_result(tmp_path):
    msg = await execute_tool_call(openai_call("read", {"path": "nope"}), default_tools(), make_ctx(tmp_path))
    assert msg["isError"] is True
    assert result_text(msg) == "File not found: nope"


async def test_unexpected_exception_becomes_error_result(tmp_path):
    msg = await execute_tool_call(openai_call("explode", {}), [Exploding()], make_ctx(tmp_path))
    assert msg["isError"] is True
    assert result_text(msg) == "explode failed: RuntimeError: boom"


async def test_ask_policy_runs_after_approval(tmp_path):
    approver = RecordingApprover(True)
    ctx = make_ctx(tmp_path, ask=approver)
    msg = await execute_tool_call(
        openai_call("write", {"path": "n.txt", "content": "x"}), default_tools(), ctx
    )
    assert msg["isError"] is False
    assert (ctx.workspace / "n.txt").read_text() == "x"
    # The question names the path resolved once, the one the write then used (issue 8).
    resolved = str(ctx.workspace / "n.txt")
    assert approver.calls == [
        ("write", {"path": resolved, "content": "x"}, "write is set to ask before it runs")
    ]


async def test_denied_by_user_is_an_error_result_and_nothing_runs(tmp_path):
    approver = RecordingApprover(False)
    ctx = make_ctx(tmp_path, ask=approver)
    msg = await execute_tool_call(openai_call("bash", {"command": "touch made"}), default_tools(), ctx)
    assert msg["isError"] is True
    assert result_text(msg) == "The user denied this bash call."
    assert msg["details"]["denied"] is True
    assert not (ctx.workspace / "made").exists()


async def test_ask_without_callback_refuses(tmp_path):
    ctx = make_ctx(tmp_path)
    msg = await execute_tool_call(openai_call("bash", {"command": "touch made"}), default_tools(), ctx)
    assert msg["isError"] is True
    assert "needs approval" in result_text(msg)
    assert not (ctx.workspace / "made").exists()


async def test_auto_policy_does_not_ask(tmp_path):
    approver = RecordingApprover(False)
    ctx = make_ctx(tmp_path, ask=approver, approval={"bash": "auto"})
    msg = await execute_tool_call(openai_call("bash", {"command": "echo ok"}), default_tools(), ctx)
    assert result_text(msg) == "ok"
    assert approver.calls == []


async def test_deny_policy_refuses_without_asking(tmp_path):
    approver = RecordingApprover(True)
    ctx = make_ctx(tmp_path, ask=approver, approval={"*": "deny"})
    (ctx.workspace / "a.txt").write_text("secret\n")
    msg = await execute_tool_call(openai_call("read", {"path": "a.txt"}), default_tools(), ctx)
    assert msg["isError"] is True
    assert result_text(msg) == "Not run: read is denied by the approval policy."
    assert approver.calls == []


async def test_tool_entry_overrides_wildcard(tmp_path):
    ctx = make_ctx(tmp_path, approval={"*": "deny", "ls": "auto"})
    msg = await execute_tool_call(openai_call("ls", {}), default_tools(), ctx)
    assert msg["isError"] is False


async def test_outside_path_escalates_auto_to_ask(tmp_path):
    approver = RecordingApprover(True)
    ctx = make_ctx(tmp_path, ask=approver)
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("far\n")
    msg = await execute_tool_call(openai_call("read", {"path": str(outside)}), default_tools(), ctx)
    assert result_text(msg) == "far"
    ((name, _, reason),) = approver.calls
    assert name == "read"
    assert reason == f"{outside} is outside the workspace {ctx.workspace}"


async def test_outside_path_via_dotdot_and_symlink_is_flagged(tmp_path):
    ctx = make_ctx(tmp_path)
    (tmp_path / "secret").mkdir()
    (ctx.workspace / "link").symlink_to(tmp_path / "secret")
    read = default_tools()[0]
    for raw in ("../secret", "link"):
        decision = read.needs_approval({"path": raw}, ctx)
        assert decision.policy == "ask"
        assert decision.outside_paths == (tmp_path / "secret",)
    assert read.needs_approval({"path": "sub/../a.txt"}, ctx).policy == "auto"


async def test_outside_path_refused_when_user_declines(tmp_path):
    ctx = make_ctx(tmp_path, ask=RecordingApprover(False))
    msg = await execute_tool_call(openai_call("ls", {"path": str(tmp_path)}), default_tools(), ctx)
    assert msg["isError"] is True
    assert msg["details"]["outsidePaths"] == [str(tmp_path)]


async def test_outside_path_with_ask_policy_gives_both_reasons(tmp_path):
    approver = RecordingApprover(False)
    ctx = make_ctx(tmp_path, ask=approver)
    await execute_tool_call(openai_call("write", {"path": "../x.txt", "content": ""}), default_tools(), ctx)
    assert approver.calls[0][2] == (
        f"write is set to ask before it runs; {tmp_path / 'x.txt'} is outside the workspace {ctx.workspace}"
    )
    assert not (tmp_path / "x.txt").exists()


async def test_outside_path_under_deny_policy_is_refused(tmp_path):
    approver = RecordingApprover(True)
    ctx = make_ctx(tmp_path, ask=approver, approval={"read": "deny"})
    msg = await execute_tool_call(openai_call("read", {"path": "/etc/hostname"}), default_tools(), ctx)
    assert msg["isError"] is True
    assert result_text(msg).startswith(
        "Not run: read is denied by the approval policy; /etc/hostname is outside"
    )
    assert approver.calls == []


async def test_cancelled_context_does_not_run(tmp_path):
    ctx = make_ctx(tmp_path, approval={"bash": "auto"})
    ctx.cancel.set()
    msg = await execute_tool_call(openai_call("bash", {"command": "touch made"}), default_tools(), ctx)
    assert msg["isError"] is True
    assert result_text(msg) == "Cancelled before bash ran."
    assert not (ctx.workspace / "made").exists()


async def test_failing_approval_callback_becomes_error_result(tmp_path):
    async def broken(tool_name, args, reason):
        raise OSError("dialog gone")

    ctx = make_ctx(tmp_path, ask=broken)
    msg = await execute_tool_call(openai_call("bash", {"command": "true"}), default_tools(), ctx)
    assert msg["isError"] is True
    assert result_text(msg) == "bash failed: OSError: dialog gone"
