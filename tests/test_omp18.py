"""oh-my-pi 18 session files (pi-073-delta C): reset_boundary, empty branch summaries, compaction extras
(tokensAfter, method, warning) and omp's metadata entry types, on a real file kompakt loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests import factories as f
from tui.compaction.timeline import build_timeline
from tui.session.context import convert_to_llm, message_text
from tui.session.store import SessionStore
from tui.session.tree_view import render_tree
from widgets.entry_detail import describe_entry

OMP_METADATA = [
    {"type": "model_usage", "model": "anthropic/claude-sonnet-4-5", "input": 10, "output": 2},
    {"type": "service_tier_change", "serviceTier": "priority"},
    {"type": "ttsr_injection", "injectedRules": ["no-secrets", "tests-first"]},
    {"type": "credential_pin", "provider": "anthropic"},
    {"type": "session_init", "systemPrompt": "be brief", "task": "fix the loader", "tools": ["read"]},
    {"type": "mode_change", "mode": "plan", "data": {"x": 1}},
    {"type": "title_change", "title": "Loader work"},
]


def write_omp_file(tmp_path: Path, entries: list[dict[str, Any]]) -> Path:
    header = {"type": "session", "version": 3, "id": "omp-session", "timestamp": "2025-01-01T00:00:00.000Z"}
    path = tmp_path / "omp.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in (header | {"cwd": str(tmp_path)}, *entries)))
    return path


def sent_texts(store: SessionStore) -> list[str]:
    return [message_text(m) for m in convert_to_llm(store.build_context().messages)]


def test_a_reset_boundary_after_the_latest_compaction_starts_the_context_afresh(tmp_path: Path) -> None:
    entries = f.chain(
        [
            f.user("old question"),
            f.assistant("old answer"),
            f.user("kept question"),
            f.assistant("kept answer"),
            f.compaction("EARLIER NOTES", 2, tokens_before=900),
            f.user("after the compaction"),
            {"type": "reset_boundary", "id": None, "parentId": None, "timestamp": None},
            f.user("fresh start"),
            f.assistant("fresh answer"),
        ]
    )
    path = write_omp_file(tmp_path, entries)
    before = path.read_bytes()
    with SessionStore.open(path) as store:
        assert store.problems == []
        assert sent_texts(store) == ["fresh start", "fresh answer"]  # no summary, no kept tail
        # The tree shows the boundary as a row of its own, in the default view too.
        rows = render_tree(store.tree, store.leaf_id)
        assert "[clear]" in [r.text for r in rows]
        # At an entry before the boundary, the compaction applies as usual.
        at = store.build_context(entries[5]["id"])
        assert at.messages[0]["role"] == "compactionSummary" and len(at.messages) == 4
    assert path.read_bytes() == before  # the file keeps everything


def test_a_compaction_after_the_reset_boundary_wins(tmp_path: Path) -> None:
    entries = f.chain(
        [
            f.user("before the clear"),
            {"type": "reset_boundary", "id": None, "parentId": None, "timestamp": None},
            f.user("after the clear"),
            f.assistant("answer"),
            f.user("kept"),
            f.compaction("NOTES SINCE THE CLEAR", 4, tokens_before=500),
            f.assistant("latest"),
        ]
    )
    with SessionStore.open(write_omp_file(tmp_path, entries), read_only=True) as store:
        context = store.build_context().messages
        assert context[0]["role"] == "compactionSummary"
        assert [message_text(m) for m in context[1:]] == ["kept", "latest"]


def test_an_empty_branch_summary_gives_no_context_message(tmp_path: Path) -> None:
    entries = f.chain([f.user("q"), f.branch_summary(""), f.assistant("a")])
    with SessionStore.open(write_omp_file(tmp_path, entries), read_only=True) as store:
        assert [m["role"] for m in store.build_context().messages] == ["user", "assistant"]


def test_omp_metadata_is_kept_never_sent_and_named_in_the_all_view(tmp_path: Path) -> None:
    metadata = [{**m, "id": None, "parentId": None, "timestamp": None} for m in OMP_METADATA]
    entries = f.chain([f.user("question"), *metadata, f.assistant("answer")])
    path = write_omp_file(tmp_path, entries)
    before = path.read_bytes()
    with SessionStore.open(path) as store:
        assert store.problems == []
        assert [m["role"] for m in store.build_context().messages] == ["user", "assistant"]
        meta_ids = {e["id"] for e in entries[1:-1]}
        default = render_tree(store.tree, store.leaf_id)
        assert not meta_ids & {r.entry_id for r in default}
        shown = {r.entry_id: r.text for r in render_tree(store.tree, store.leaf_id, "all")}
        assert [shown[e["id"]] for e in entries[1:-1]] == [
            "[model usage: anthropic/claude-sonnet-4-5]",
            "[service tier: priority]",
            "[rules injected: 2]",
            "[credential pin: anthropic]",
            "[session init: fix the loader]",
            "[mode: plan]",
            "[title: Loader work]",
        ]
        assert [r.entry_id for r in render_tree(store.tree, store.leaf_id, "all", "tier")] == [
            entries[2]["id"]
        ]
        store.append_message(f.user("one more")["message"])  # appending leaves omp's lines as they were
    assert path.read_bytes().startswith(before)


def test_omp_compaction_extras_are_shown_in_the_detail_and_the_past_compactions(tmp_path: Path) -> None:
    compaction = f.compaction("NOTES", 2, tokens_before=12_000)
    compaction.update(tokensAfter=3_456, method="remote", warning="the summary was cut short")
    entries = f.chain([f.user("q1"), f.assistant("a1"), f.user("q2"), f.assistant("a2"), compaction])
    with SessionStore.open(write_omp_file(tmp_path, entries), read_only=True) as store:
        detail = describe_entry(store.get(entries[-1]["id"]), store.tree).plain
        assert "tokensAfter: 3,456" in detail
        assert "method: remote" in detail and "warning: the summary was cut short" in detail
        timeline = build_timeline(
            store.get_branch(), context_window=200_000, reserve_tokens=16_384, keep_recent_tokens=20_000
        )
        (past,) = timeline.compactions
        assert past.tokens_after == 3_456 and past.tokens_after_recorded
        assert past.method == "remote" and past.warning == "the summary was cut short"
