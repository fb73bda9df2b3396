"""pi-format messages and tool specs → OpenAI chat format."""

from __future__ import annotations

import prompts
from tui.agent.openai_format import to_openai_messages, to_openai_tools


def call(call_id: str, name: str = "bash", **arguments) -> dict:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def result(call_id: str, text: str, name: str = "bash") -> dict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
    }


def test_no_system_prompt_means_no_system_message() -> None:
    assert to_openai_messages(None, [{"role": "user", "content": "hi"}]) == [
        {"role": "user", "content": "hi"}
    ]


def test_text_blocks_join_into_a_string_and_images_become_data_urls() -> None:
    text_only = {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    with_image = {
        "role": "user",
        "content": [
            {"type": "text", "text": "see"},
            {"type": "image", "data": "AAAA", "mimeType": "image/jpeg"},
        ],
    }
    out = to_openai_messages("sys", [text_only, with_image])
    assert out[1] == {"role": "user", "content": "a\nb"}
    assert out[2]["content"] == [
        {"type": "text", "text": "see"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
    ]


def test_tool_calls_and_results() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "stopReason": "toolUse",
            "content": [call("c1", command="ls"), call("c2", command="pwd")],
        },
        result("c1", "a.txt"),
        result("c2", "/work"),
    ]
    out = to_openai_messages(None, messages)
    assert out[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}},
            {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": '{"command": "pwd"}'}},
        ],
    }
    assert out[2:] == [
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "tool", "tool_call_id": "c2", "content": "/work"},
    ]


def test_failed_and_aborted_assistant_turns_are_left_out() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "stopReason": "error",
            "errorMessage": "boom",
            "content": [{"type": "text", "text": "pa"}],
        },
        {"role": "assistant", "stopReason": "aborted", "content": [call("c1")]},
        {"role": "user", "content": "again"},
    ]
    assert [m["role"] for m in to_openai_messages(None, messages)] == ["user", "user"]


def test_a_tool_call_without_a_result_gets_a_placeholder_before_the_next_message() -> None:
    messages = [
        {"role": "assistant", "stopReason": "toolUse", "content": [call("c1"), call("c2")]},
        result("c1", "done"),
        {"role": "user", "content": "stop that"},
    ]
    out = to_openai_messages(None, messages)
    assert out[1] == {"role": "tool", "tool_call_id": "c1", "content": "done"}
    assert out[2] == {"role": "tool", "tool_call_id": "c2", "content": prompts.render("tool_result_missing")}
    assert out[3] == {"role": "user", "content": "stop that"}


def test_trailing_tool_call_without_result_is_closed() -> None:
    out = to_openai_messages(None, [{"role": "assistant", "stopReason": "toolUse", "content": [call("c9")]}])
    assert out[-1]["tool_call_id"] == "c9"


def test_tool_images_follow_the_tool_results_as_a_user_message() -> None:
    shot = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "screenshot",
        "isError": False,
        "content": [{"type": "image", "data": "QQ==", "mimeType": "image/png"}],
    }
    messages = [
        {"role": "assistant", "stopReason": "toolUse", "content": [call("c1", "screenshot"), call("c2")]},
        shot,
        result("c2", "ok"),
    ]
    out = to_openai_messages(None, messages)
    assert [m["role"] for m in out] == ["assistant", "tool", "tool", "user"]
    assert out[1]["content"] == ""
    assert out[3]["content"][0]["text"] == prompts.render("tool_result_images", tool="screenshot")
    assert out[3]["content"][1]["image_url"]["url"] == "data:image/png;base64,QQ=="


def test_thinking_only_assistant_message_is_dropped_and_text_is_kept() -> None:
    messages = [
        {"role": "assistant", "stopReason": "stop", "content": [{"type": "thinking", "thinking": "hm"}]},
        {
            "role": "assistant",
            "stopReason": "stop",
            "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "Hi"}],
        },
    ]
    assert to_openai_messages(None, messages) == [{"role": "assistant", "content": "Hi"}]


def test_tools_accept_pi_specs_and_pass_openai_specs_through() -> None:
    openai_spec = {"type": "function", "function": {"name": "x", "parameters": {"type": "object"}}}
    out = to_openai_tools([{"name": "ls", "description": "List"}, openai_spec])
    assert out[0] == {
        "type": "function",
        "function": {"name": "ls", "description": "List", "parameters": {"type": "object", "properties": {}}},
    }
    assert out[1] == openai_spec
