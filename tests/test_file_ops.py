"""File-operation tracking for summaries (pi §6.3)."""

from __future__ import annotations

from tests import factories as f
from tui.compaction.file_ops import (
    FileOps,
    compute_file_lists,
    extract_file_ops,
    extract_from_messages,
    format_file_operations,
    seed_from_details,
)


def _assistant(*calls):
    return f.assistant(tool_calls=list(calls))["message"]


def test_read_write_edit_calls_with_a_path_are_recorded():
    ops = FileOps()
    extract_file_ops(
        _assistant(
            f.tool_call("read", {"path": "a.py"}),
            f.tool_call("write", {"path": "b.py", "content": "x"}),
            f.tool_call("edit", {"path": "c.py", "oldText": "a", "newText": "b"}),
        ),
        ops,
    )
    assert ops == FileOps(read={"a.py"}, written={"b.py"}, edited={"c.py"})


def test_other_tools_empty_paths_and_non_assistants_are_ignored():
    ops = FileOps()
    extract_from_messages(
        [
            _assistant(
                f.tool_call("bash", {"path": "x.py"}),
                f.tool_call("Read", {"path": "y.py"}),  # names match exactly
                f.tool_call("read", {"path": ""}),
                f.tool_call("edit", {"path": 7}),
                f.tool_call("write", {"file": "z.py"}),
            ),
            {"role": "user", "content": [{"type": "toolCall", "name": "read", "arguments": {"path": "u"}}]},
            f.tool_result("c", "read", "text")["message"],
        ],
        ops,
    )
    assert ops == FileOps()


def test_lists_modified_is_edited_or_written_and_read_excludes_it():
    ops = FileOps(read={"b", "a", "m"}, written={"w", "m"}, edited={"e"})
    assert compute_file_lists(ops) == (["a", "b"], ["e", "m", "w"])


def test_lists_sort_like_javascript():
    # UTF-16 order puts the astral character (a surrogate pair, 0xD8..) before U+FF21.
    ops = FileOps(read={"\uff21", "\U0001f600", "B", "a"})
    assert compute_file_lists(ops)[0] == ["B", "a", "\U0001f600", "\uff21"]


def test_format_tags():
    assert format_file_operations([], []) == ""
    assert format_file_operations(["a", "b"], []) == "\n\n<read-files>\na\nb\n</read-files>"
    assert format_file_operations([], ["m"]) == "\n\n<modified-files>\nm\n</modified-files>"
    assert format_file_operations(["r"], ["m"]) == (
        "\n\n<read-files>\nr\n</read-files>\n\n<modified-files>\nm\n</modified-files>"
    )


def test_seed_from_previous_details_unless_from_a_hook():
    details = {"readFiles": ["r.py"], "modifiedFiles": ["m.py"]}
    ops = FileOps()
    seed_from_details(f.compaction("s", "x", details=details), ops)
    assert ops == FileOps(read={"r.py"}, edited={"m.py"})
    hooked = FileOps()
    seed_from_details(f.compaction("s", "x", details=details, from_hook=True), hooked)
    seed_from_details({**f.branch_summary("b", details=details), "fromExtension": True}, hooked)
    assert hooked == FileOps()
    branch = FileOps()
    seed_from_details(f.branch_summary("b", details=details), branch)
    seed_from_details(f.branch_summary("b", details={"readFiles": "not a list"}), branch)
    assert branch == FileOps(read={"r.py"}, edited={"m.py"})
