"""The --demo session shows every kind of thing kompakt draws, and is a valid pi session."""

from __future__ import annotations

from pathlib import Path

from tui.compaction.plan import CompactionPlan, prepare_compaction
from tui.demo import build_demo
from tui.session.store import SessionStore


def test_demo_has_branches_compactions_summaries_and_labels(tmp_path: Path) -> None:
    path = build_demo(tmp_path / "demo.jsonl")
    with SessionStore.open(path) as store:
        kinds = [e["type"] for e in store.entries]
        assert kinds.count("compaction") == 2 and kinds.count("branch_summary") == 1
        assert len(store.tree.branch_points()) == 1 and len(store.tree.labels) == 2
        assert store.problems == [] and store.name
        path_kinds = [e["type"] for e in store.get_branch()]
        assert path_kinds.count("compaction") == 2  # both compactions are on the active path
        context = store.build_context()
        assert context.messages[0]["role"] == "compactionSummary"
        assert isinstance(prepare_compaction(store.get_branch()), CompactionPlan)


def test_demo_is_deterministic(tmp_path: Path) -> None:
    assert build_demo(tmp_path / "a.jsonl").read_bytes() == build_demo(tmp_path / "b.jsonl").read_bytes()
