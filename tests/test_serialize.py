"""Serialising the conversation for the summarizer (pi §6.1, §12 behaviours 28–30)."""

from __future__ import annotations

from tests import factories as f
from tui.compaction.serialize import serialize_conversation
from tui.session.context import convert_to_llm


def _tool_result(text: str) -> dict:
    return f.tool_result("c", "bash", text)["message"]


def test_long_tool_result_is_truncated_to_2000_chars():  # behaviour 28
    out = serialize_conversation([_tool_result("a" * 5000)])
    assert out == "[Tool result]: " + "a" * 2000 + "\n\n[... 3000 more characters truncated]"


def test_short_tool_result_is_whole():  # behaviour 29
    text = "b" * 1500
    assert serialize_conversation([_tool_result(text)]) == "[Tool result]: " + text


def test_user_and_assistant_text_are_never_truncated():  # behaviour 30
    long = "c" * 5000
    out = serialize_conversation([f.user(long)["message"], f.assistant(long)["message"]])
    assert out == f"[User]: {long}\n\n[Assistant]: {long}"
    assert "truncated" not in out


def test_truncation_counts_javascript_characters_and_can_be_disabled():
    text = "\U0001f600" * 1500  # 3000 UTF-16 code units
    out = serialize_conversation([_tool_result(text)])
    assert out == "[Tool result]: " + "\U0001f600" * 1000 + "\n\n[... 1000 more characters truncated]"
    assert serialize_conversation([_tool_result("a" * 5000)], truncate_tool_results=None).endswith("a" * 5000)


def test_assistant_blocks_come_in_a_fixed_order():
    msg = {
        "role": "assistant",
        "content": [
            f.tool_call("edit", {"path": "a.py", "edits": [{"old": "x", "new": "é"}]}),
            {"type": "text", "text": "first"},
            {"type": "thinking", "thinking": "t1"},
            f.tool_call("bash", {"command": "ls -la", "timeout": 5}),
            {"type": "text", "text": "second"},
            {"type": "thinking", "thinking": "t2"},
        ],
    }
    assert serialize_conversation([msg]) == (
        "[Assistant thinking]: t1\nt2\n\n"
        "[Assistant]: first\nsecond\n\n"
        '[Assistant tool calls]: edit(path="a.py", edits=[{"old":"x","new":"é"}]); '
        'bash(command="ls -la", timeout=5)'
    )


def test_empty_blocks_and_images_are_omitted():
    messages = [
        f.user("")["message"],
        f.user([{"type": "image", "data": "A", "mimeType": "image/png"}])["message"],
        f.tool_result("c", "shot", "", images=1)["message"],
        f.assistant("")["message"],
        f.user([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])["message"],
    ]
    assert serialize_conversation(messages) == "[User]: ab"


def test_converted_bash_and_summaries_read_as_user_blocks():
    llm = convert_to_llm(
        [
            f.bash("make", "ok")["message"],
            {"role": "compactionSummary", "summary": "SUMMARY", "tokensBefore": 1, "timestamp": 0},
            {"role": "custom", "customType": "n", "content": "note", "display": True, "timestamp": 0},
        ]
    )
    blocks = serialize_conversation(llm).split("\n\n[User]: ")
    assert len(blocks) == 3
    assert blocks[0].startswith("[User]: ") and "make" in blocks[0]
    assert "SUMMARY" in blocks[1]
    assert blocks[2] == "note"
