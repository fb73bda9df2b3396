"""buildSessionContext as pi: paths, compactions, branch summaries, model and thinking tracking, pruning."""

from __future__ import annotations

from tui.session.context import build_session_context, convert_to_llm, message_text
from tui.session.entries import PRUNE_CUSTOM_TYPE

TS = "2030-01-01T00:00:00.000Z"


def msg(entry_id: str, parent: str | None, role: str, text: str, **extra) -> dict:
    message = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 0, **extra}
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": TS, "message": message}


def texts(ctx) -> list[str]:
    out = []
    for m in ctx.messages:
        out.append(m["summary"] if "summary" in m else message_text(m))
    return out


def linear(*specs) -> list[dict]:
    entries, parent = [], None
    for i, (role, text) in enumerate(specs):
        entries.append(msg(f"e{i}", parent, role, text))
        parent = f"e{i}"
    return entries


def test_empty_and_null_leaf() -> None:
    ctx = build_session_context([])
    assert (ctx.messages, ctx.thinking_level, ctx.model) == ([], "off", None)
    entries = linear(("user", "u"))
    assert build_session_context(entries, None).messages == []


def test_plain_path_and_model_from_assistant() -> None:
    entries = linear(("user", "u1"), ("assistant", "a1"), ("user", "u2"), ("assistant", "a2"))
    entries[1]["message"].update(provider="openai", model="gpt-4")
    entries[3]["message"].update(provider="anthropic", model="claude")
    ctx = build_session_context(entries)
    assert [m["role"] for m in ctx.messages] == ["user", "assistant", "user", "assistant"]
    assert ctx.model == {"provider": "anthropic", "modelId": "claude"}


def test_thinking_level_and_model_change_then_assistant_overrides() -> None:
    entries = [
        msg("u1", None, "user", "u"),
        {
            "type": "thinking_level_change",
            "id": "t",
            "parentId": "u1",
            "timestamp": TS,
            "thinkingLevel": "high",
        },
        {
            "type": "model_change",
            "id": "m",
            "parentId": "t",
            "timestamp": TS,
            "provider": "openai",
            "modelId": "gpt-4",
        },
        msg("a1", "m", "assistant", "a", provider="anthropic", model="claude-x"),
    ]
    ctx = build_session_context(entries)
    assert ctx.thinking_level == "high" and len(ctx.messages) == 2
    assert ctx.model == {"provider": "anthropic", "modelId": "claude-x"}


def test_compaction_keeps_from_first_kept_and_what_follows() -> None:
    entries = linear(("user", "u1"), ("assistant", "a1"), ("user", "u2"), ("assistant", "a2"))
    entries.append(
        {
            "type": "compaction",
            "id": "c",
            "parentId": "e3",
            "timestamp": TS,
            "summary": "SUM",
            "firstKeptEntryId": "e2",
            "tokensBefore": 100,
        }
    )
    entries.append(msg("u3", "c", "user", "u3"))
    entries.append(msg("a3", "u3", "assistant", "a3"))
    ctx = build_session_context(entries)
    assert texts(ctx) == ["SUM", "u2", "a2", "u3", "a3"]
    assert ctx.messages[0]["role"] == "compactionSummary"
    llm = convert_to_llm(ctx.messages)
    assert (
        "SUM" in llm[0]["content"][0]["text"] and "<summary>\nSUM\n</summary>" in llm[0]["content"][0]["text"]
    )


def test_compaction_keeping_first_entry_keeps_everything() -> None:
    entries = linear(("user", "u1"), ("assistant", "a1"))
    entries.append(
        {
            "type": "compaction",
            "id": "c",
            "parentId": "e1",
            "timestamp": TS,
            "summary": "S",
            "firstKeptEntryId": "e0",
            "tokensBefore": 1,
        }
    )
    assert texts(build_session_context(entries)) == ["S", "u1", "a1"]


def test_only_latest_compaction_counts() -> None:
    entries = linear(("user", "u1"), ("assistant", "a1"), ("user", "u2"))
    entries.append(
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "e2",
            "timestamp": TS,
            "summary": "S1",
            "firstKeptEntryId": "e1",
            "tokensBefore": 1,
        }
    )
    entries.append(msg("u3", "c1", "user", "u3"))
    entries.append(
        {
            "type": "compaction",
            "id": "c2",
            "parentId": "u3",
            "timestamp": TS,
            "summary": "S2",
            "firstKeptEntryId": "u3",
            "tokensBefore": 1,
        }
    )
    entries.append(msg("u4", "c2", "user", "u4"))
    assert texts(build_session_context(entries)) == ["S2", "u3", "u4"]


def test_branches_and_branch_summary_and_orphans() -> None:
    entries = [
        msg("1", None, "user", "one"),
        msg("2", "1", "assistant", "two"),
        msg("3", "2", "user", "branch A"),
        msg("4", "2", "user", "branch B"),
    ]
    assert texts(build_session_context(entries, "3")) == ["one", "two", "branch A"]
    assert texts(build_session_context(entries, "4")) == ["one", "two", "branch B"]
    entries.append(
        {
            "type": "branch_summary",
            "id": "b",
            "parentId": "2",
            "timestamp": TS,
            "fromId": "2",
            "summary": "went elsewhere",
        }
    )
    ctx = build_session_context(entries, "b")
    assert ctx.messages[-1]["role"] == "branchSummary" and texts(ctx)[-1] == "went elsewhere"
    assert texts(build_session_context(entries, "unknown")) == ["one", "two", "went elsewhere"]
    orphan = [*entries, msg("o", "gone", "user", "orphan")]
    assert texts(build_session_context(orphan, "o")) == ["orphan"]


def test_labels_custom_and_leaf_markers_are_not_context() -> None:
    entries = [
        msg("1", None, "user", "u"),
        {"type": "label", "id": "l", "parentId": "1", "timestamp": TS, "targetId": "1", "label": "x"},
        {"type": "custom", "id": "c", "parentId": "l", "timestamp": TS, "customType": "kompakt.leaf"},
        {
            "type": "custom_message",
            "id": "cm",
            "parentId": "c",
            "timestamp": TS,
            "customType": "note",
            "content": "visible",
            "display": True,
        },
    ]
    ctx = build_session_context(entries)
    assert [m["role"] for m in ctx.messages] == ["user", "custom"]
    assert convert_to_llm(ctx.messages)[1] == {
        "role": "user",
        "content": [{"type": "text", "text": "visible"}],
        "timestamp": ctx.messages[1]["timestamp"],
    }


def test_prune_entry_replaces_output_in_context_only() -> None:
    result = {
        "type": "message",
        "id": "r",
        "parentId": "a",
        "timestamp": TS,
        "message": {
            "role": "toolResult",
            "toolCallId": "t1",
            "toolName": "bash",
            "content": [{"type": "text", "text": "BIG" * 100}, {"type": "image", "data": "x"}],
            "isError": False,
            "timestamp": 0,
        },
    }
    entries = [
        msg("u", None, "user", "go"),
        msg("a", "u", "assistant", "calling"),
        result,
        {
            "type": "custom",
            "id": "p",
            "parentId": "r",
            "timestamp": TS,
            "customType": PRUNE_CUSTOM_TYPE,
            "data": {"entries": {"r": 75}, "tokensSaved": 70},
        },
    ]
    ctx = build_session_context(entries)
    assert ctx.messages[-1]["content"] == [{"type": "text", "text": "[Output truncated - 75 tokens]"}]
    assert result["message"]["content"][0]["text"].startswith("BIG")  # the stored entry is untouched


def test_bash_execution_conversion_and_exclusion() -> None:
    llm = convert_to_llm(
        [
            {"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0},
            {
                "role": "bashExecution",
                "command": "secret",
                "output": "x",
                "exitCode": 0,
                "excludeFromContext": True,
            },
            {
                "role": "bashExecution",
                "command": "sleep",
                "output": "o",
                "cancelled": True,
                "truncated": True,
                "fullOutputPath": "/tmp/full.txt",
            },
        ]
    )
    assert len(llm) == 2
    assert "(no output)" in llm[0]["content"][0]["text"]
    assert "cancelled" in llm[1]["content"][0]["text"] and "/tmp/full.txt" in llm[1]["content"][0]["text"]
