"""Write the hostile session corpus (tests/corpus/hostile_sessions/*.jsonl) from readable definitions.

Each file is one way a session file can be damaged or hostile: wrong field types, odd header versions,
parent cycles, a self-parent leaf marker, lone surrogates, deep nesting, corrupt and torn lines. The
files are committed; run ``python -m tests.corpus.make_hostile_sessions`` after changing a definition.
Special files (FIFOs, devices, directories, unreadable files) cannot be committed: the test makes them.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).parent / "hostile_sessions"

HEADER = {
    "type": "session",
    "version": 3,
    "id": "hostile",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/",  # a directory that exists: kompakt refuses to work in a vanished one
}


def _ts(n: int) -> str:
    return f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z"


def _base() -> list[dict[str, Any]]:
    """A small healthy session: a tool call, a branch, a compaction, a label and a summary."""
    user = {"role": "user", "content": [{"type": "text", "text": "read the file"}], "timestamp": 1}
    call = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "reading"},
            {"type": "toolCall", "id": "call1", "name": "read", "arguments": {"path": "a.py"}},
        ],
        "provider": "openai",
        "model": "gpt-4o-mini",
        "usage": {
            "input": 100,
            "output": 20,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 120,
            "cost": {"total": 0.001},
        },
        "stopReason": "toolUse",
        "timestamp": 2,
    }
    result = {
        "role": "toolResult",
        "toolCallId": "call1",
        "toolName": "read",
        "content": [{"type": "text", "text": "print(1)"}],
        "isError": False,
        "timestamp": 3,
    }
    reply = {
        "role": "assistant",
        "content": [{"type": "text", "text": "done"}],
        "provider": "openai",
        "model": "gpt-4o-mini",
        "usage": {"input": 130, "output": 5, "totalTokens": 135},
        "stopReason": "stop",
        "timestamp": 4,
    }
    rows: list[dict[str, Any]] = [
        {
            "type": "model_change",
            "id": "e0000001",
            "parentId": None,
            "provider": "openai",
            "modelId": "gpt-4o-mini",
        },
        {"type": "message", "id": "e0000002", "parentId": "e0000001", "message": user},
        {"type": "message", "id": "e0000003", "parentId": "e0000002", "message": call},
        {"type": "message", "id": "e0000004", "parentId": "e0000003", "message": result},
        {"type": "message", "id": "e0000005", "parentId": "e0000004", "message": reply},
        {
            "type": "compaction",
            "id": "e0000006",
            "parentId": "e0000005",
            "summary": "read a.py",
            "firstKeptEntryId": "e0000004",
            "tokensBefore": 135,
            "details": {"readFiles": ["a.py"]},
        },
        {"type": "label", "id": "e0000007", "parentId": "e0000006", "targetId": "e0000002", "label": "start"},
        {
            "type": "branch_summary",
            "id": "e0000008",
            "parentId": "e0000002",
            "fromId": "e0000005",
            "summary": "tried reading",
        },
        {
            "type": "custom_message",
            "id": "e0000009",
            "parentId": "e0000008",
            "customType": "note",
            "content": "a note",
            "display": True,
        },
        {"type": "thinking_level_change", "id": "e000000a", "parentId": "e0000009", "thinkingLevel": "high"},
        {"type": "session_info", "id": "e000000b", "parentId": "e000000a", "name": "hostile"},
        {
            "type": "custom",
            "id": "e000000c",
            "parentId": "e000000b",
            "customType": "kompakt.prune",
            "data": {"entries": {"e0000004": 10}},
        },
        {
            "type": "custom",
            "id": "e000000d",
            "parentId": "e0000007",
            "customType": "kompakt.leaf",
            "data": {"leafId": "e0000007"},
        },
    ]
    for n, row in enumerate(rows):
        row["timestamp"] = _ts(n + 1)
    return rows


def _lines(rows: list[Any], header: Any = HEADER) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in [header, *rows])


def _set(
    rows: list[dict[str, Any]], entry_id: str, path: tuple[Any, ...], value: Any
) -> list[dict[str, Any]]:
    rows = copy.deepcopy(rows)
    target = next(r for r in rows if r["id"] == entry_id)
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return rows


def _nested(depth: int) -> Any:  # below orjson's encoding limit (255)
    value: Any = "bottom"
    for _ in range(depth):
        value = {"a": value}
    return value


# name → (bytes, what it is)
def corpus() -> dict[str, bytes]:
    base = _base()
    files: dict[str, bytes] = {"healthy.jsonl": _lines(base)}
    wrong_types = {
        "parentid_list": ("e0000003", ("parentId",), ["e0000002"]),
        "timestamp_int": ("e0000003", ("timestamp",), 1767225600000),
        "message_string": ("e0000002", ("message",), "hello"),
        "message_missing_role": ("e0000002", ("message", "role"), None),
        "content_int": ("e0000002", ("message", "content"), 7),
        "content_block_string": ("e0000002", ("message", "content"), ["plain"]),
        "text_list": ("e0000002", ("message", "content", 0, "text"), ["x"]),
        "assistant_content_string": ("e0000005", ("message", "content"), "done"),
        "usage_string": ("e0000005", ("message", "usage"), "lots"),
        "usage_input_string": ("e0000005", ("message", "usage", "input"), "100"),
        "usage_cost_string": ("e0000003", ("message", "usage", "cost"), "cheap"),
        "tool_arguments_string": ("e0000003", ("message", "content", 1, "arguments"), '{"path": "a.py"}'),
        "tool_name_int": ("e0000003", ("message", "content", 1, "name"), 5),
        "stop_reason_list": ("e0000005", ("message", "stopReason"), ["stop"]),
        "summary_list": ("e0000006", ("summary",), ["read", "a.py"]),
        "tokens_before_string": ("e0000006", ("tokensBefore",), "135"),
        "first_kept_int": ("e0000006", ("firstKeptEntryId",), 4),
        "details_string": ("e0000006", ("details",), "files"),
        "details_read_files_int": ("e0000006", ("details", "readFiles"), 7),
        "details_read_files_dicts": ("e0000006", ("details", "readFiles"), [{"p": 1}]),
        "details_kompakt_reason_dict": ("e0000006", ("details", "kompakt"), {"reason": {"a": []}}),
        "details_kompakt_ids_dicts": (
            "e0000006",
            ("details", "kompakt"),
            {"strategy": "head-tail", "middleEntryIds": [{"a": 1}], "headEntryIds": 5},
        ),
        "branch_summary_dict": ("e0000008", ("summary",), {"text": "x"}),
        "label_target_int": ("e0000007", ("targetId",), 2),
        "label_list": ("e0000007", ("label",), ["start"]),
        "custom_message_content_int": ("e0000009", ("content",), 3),
        "custom_message_display_string": ("e0000009", ("display",), "yes"),
        "model_change_provider_list": ("e0000001", ("provider",), ["openai"]),
        "thinking_level_int": ("e000000a", ("thinkingLevel",), 3),
        "session_name_dict": ("e000000b", ("name",), {"n": 1}),
        "prune_data_list": ("e000000c", ("data",), [1, 2]),
        "prune_tokens_string": ("e000000c", ("data", "entries", "e0000004"), "ten"),
        "leaf_marker_data_string": ("e000000d", ("data",), "e0000007"),
        "leaf_marker_leafid_int": ("e000000d", ("data", "leafId"), 7),
        "tool_result_is_error_string": ("e0000004", ("message", "isError"), "no"),
        "id_int": ("e0000005", ("id",), 5),
        "type_int": ("e0000009", ("type",), 9),
    }
    for name, (entry_id, path, value) in wrong_types.items():
        files[f"wrong_type_{name}.jsonl"] = _lines(_set(base, entry_id, path, value))
    for name, version in {"3.0": 3.0, "str3": "3", "minus1": -1, "4": 4, "x": "x", "true": True}.items():
        files[f"version_{name}.jsonl"] = _lines(base, {**HEADER, "version": version})
    marker = {
        "type": "custom",
        "customType": "kompakt.leaf",
        "id": "ffffffff",
        "parentId": "ffffffff",
        "timestamp": _ts(50),
        "data": {"leafId": "ffffffff"},
    }
    files["self_parent_leaf_marker.jsonl"] = _lines([*base, marker])
    ring = [
        {
            "type": "custom",
            "customType": "kompakt.leaf",
            "id": "m1",
            "parentId": "m2",
            "timestamp": _ts(51),
            "data": {"leafId": "m2"},
        },
        {
            "type": "custom",
            "customType": "kompakt.leaf",
            "id": "m2",
            "parentId": "m1",
            "timestamp": _ts(52),
            "data": {"leafId": "m1"},
        },
    ]
    files["leaf_marker_ring.jsonl"] = _lines([*base, *ring])
    files["parent_cycle.jsonl"] = _lines(_set(base, "e0000001", ("parentId",), "e0000005"))
    files["self_parent_entry.jsonl"] = _lines(_set(base, "e0000002", ("parentId",), "e0000002"))
    files["duplicate_ids.jsonl"] = _lines([*base, *copy.deepcopy(base[1:4])])
    files["orphans.jsonl"] = _lines(_set(base, "e0000004", ("parentId",), "nowhere0"))
    files["first_kept_missing.jsonl"] = _lines(_set(base, "e0000006", ("firstKeptEntryId",), "nowhere0"))
    files["leaf_marker_unknown_target.jsonl"] = _lines(_set(base, "e000000d", ("data", "leafId"), "nowhere0"))
    surrogate = _lines(base).replace(b'"text":"done"', b'"text":"cut \\ud83d emoji \\ude00 here"')
    files["lone_surrogates.jsonl"] = surrogate
    deep = b'{"a":' * 1000 + b'"bottom"' + b"}" * 1000  # orjson cannot encode it: written as text
    files["deep_tool_arguments_1000.jsonl"] = _lines(base).replace(
        b'"arguments":{"path":"a.py"}', b'"arguments":' + deep
    )
    files["deep_tool_arguments_150.jsonl"] = _lines(
        _set(base, "e0000003", ("message", "content", 1, "arguments"), _nested(150))
    )
    files["deep_details_1100.jsonl"] = (
        _lines(base)
        + b'{"type":"custom","id":"deep0001","parentId":"e000000d",'
        + (
            b'"timestamp":"2026-01-01T01:00:00.000Z","customType":"x","data":'
            + b"[" * 1100
            + b"]" * 1100
            + b"}\n"
        )
    )
    healthy = _lines(base)
    lines = healthy.split(b"\n")
    files["corrupt_middle_line.jsonl"] = b"\n".join([*lines[:4], b'{"type":"message", broken', *lines[4:]])
    files["torn_last_line.jsonl"] = healthy + b'{"type":"message","id":"torn0001","parentId":"e00'
    files["no_trailing_newline.jsonl"] = healthy.rstrip(b"\n")
    files["blank_and_whitespace_lines.jsonl"] = b"\n\n   \n" + healthy.replace(b"\n", b"\n\t \n")
    files["invalid_utf8.jsonl"] = b"\n".join(
        [*lines[:3], b'{"type":"custom","id":"bad00001","x":"\xff\xfe"}', *lines[3:]]
    )
    files["nan_and_infinity.jsonl"] = (
        healthy
        + b'{"type":"custom","id":"nan00001","parentId":null,"timestamp":"t","customType":"x","data":NaN}\n'
    )
    files["not_objects.jsonl"] = healthy + b'[1,2,3]\n42\n"text"\nnull\n'
    files["empty.jsonl"] = b""
    files["header_only.jsonl"] = orjson.dumps(HEADER) + b"\n"
    files["no_header.jsonl"] = b"".join(orjson.dumps(r) + b"\n" for r in base)
    files["header_wrong_types.jsonl"] = _lines(base, {**HEADER, "cwd": ["/"]})
    files["binary_garbage.jsonl"] = bytes(range(256)) * 8
    files["huge_line_1mb.jsonl"] = _lines(
        _set(base, "e0000004", ("message", "content", 0, "text"), "x" * 1_000_000)
    )
    markup = _set(
        base,
        "e0000002",
        ("message", "content", 0, "text"),
        "[bold]x[/] [/nope] [link=file:///etc]y\x1b]52;c;aGk=\x07",
    )
    files["markup_and_escapes.jsonl"] = _lines(markup)
    files["many_roots.jsonl"] = _lines(
        [
            {
                "type": "message",
                "id": f"r{i:07d}",
                "parentId": None,
                "timestamp": _ts(i % 3600),
                "message": {"role": "user", "content": f"root {i}", "timestamp": i},
            }
            for i in range(3000)
        ]
    )
    return files


def main() -> None:
    HERE.mkdir(parents=True, exist_ok=True)
    for old in HERE.glob("*.jsonl"):
        old.unlink()
    for name, data in corpus().items():
        (HERE / name).write_bytes(data)
    print(f"{len(corpus())} files in {HERE}")


if __name__ == "__main__":
    main()
