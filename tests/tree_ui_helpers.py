"""A small hand-built session tree for the tree widget tests and snapshot apps.

Layout (ids in brackets)::

    [u1] user: fix the parser          (label "start")
    [a1] assistant, read call only     (hidden: tool-call-only)
    [t1] [read: src/parser.py]
    [a2] assistant: fixed the off-by-one
      ├─ [u2] user: now add tests       ← the active branch (first)
      │  [a3] assistant: tests added
      │  [c1] compaction, 45k tokens
      │  [u3] user: continue
      │  [a4] assistant: all green      ← active leaf
      └─ [u4] user: try a rewrite instead
         [s1] branch summary
         [a5] assistant with escape sequences and markup in its text
"""

from __future__ import annotations

from tests import factories as f
from tui.session.tree import TreeIndex

ESCAPED_TEXT = "RED\x1b[31m text \x1b]0;pwned\x07[bold]not bold[/bold]\x1b[0m end"
COMPACTION_SUMMARY = "## Goal\nFix the parser.\n\n## Progress\n- [x] off-by-one fixed"


def _at(entry: dict, entry_id: str, parent: str | None, second: int) -> dict:
    entry["id"] = entry_id
    entry["parentId"] = parent
    entry["timestamp"] = f"2025-01-01T00:{second // 60:02d}:{second % 60:02d}.000Z"
    return entry


def sample_entries() -> list[dict]:
    """The entries of the sample tree, in file order."""
    return [
        _at(f.user("fix the parser"), "u1", None, 1),
        _at(
            f.assistant(tool_calls=[f.tool_call("read", {"path": "src/parser.py"}, "call1")]),
            "a1",
            "u1",
            2,
        ),
        _at(f.tool_result("call1", "read", "def parse():\n    return 1\n"), "t1", "a1", 3),
        _at(f.assistant("fixed the off-by-one"), "a2", "t1", 4),
        _at(f.user("now add tests"), "u2", "a2", 5),
        _at(f.assistant("tests added"), "a3", "u2", 6),
        _at(
            f.compaction(
                COMPACTION_SUMMARY,
                "u2",
                tokens_before=45_210,
                details={"readFiles": ["src/parser.py"], "modifiedFiles": ["tests/test_parser.py"]},
            ),
            "c1",
            "a3",
            7,
        ),
        _at(f.user("continue"), "u3", "c1", 8),
        _at(f.assistant("all green"), "a4", "u3", 9),
        _at(f.user("try a rewrite instead"), "u4", "a2", 20),
        _at(f.branch_summary("We tried adding tests first.", from_id="a2"), "s1", "u4", 21),
        _at(f.assistant(ESCAPED_TEXT), "a5", "s1", 22),
        _at(f.label("u1", "start"), "l1", "a4", 23),
    ]


def sample_tree() -> tuple[TreeIndex, str]:
    """The sample tree and its active leaf (``a4``)."""
    return TreeIndex(sample_entries()), "a4"
