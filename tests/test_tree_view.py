"""pi's /tree, headless: row texts, prefix drawing, visibility, filters, search, keys and selection.

Conformance with pi-compaction.md §10 and the tree-selector behaviours 53–63 of §12. The trees are
built from pi-format entry dicts with explicit ids (as pi's own tree-selector tests do), in file
order with increasing timestamps. Expected rows were also checked against pi 0.73.1's real
TreeSelectorComponent. Row.plain() adds kompakt's "  ← active" after the leaf; pi has no such tag.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import (
    assistant,
    bash,
    branch_summary,
    compaction,
    custom,
    custom_message,
    label,
    message,
    model_change,
    session_info,
    thinking_change,
    tool_call,
    tool_result,
    user,
)
from tui.session.display import entry_text, search_text, tool_call_label, tool_calls_by_id
from tui.session.entries import LEAF_CUSTOM_TYPE
from tui.session.tree import TreeIndex
from tui.session.tree_view import FILTER_CYCLE, Row, TreeSelector, flatten, is_visible, render_tree

Entry = dict[str, Any]
Spec = tuple[str, str | None, Entry]
ACTIVE = "  ← active"


# --- builders ---------------------------------------------------------------------------------
def link(*specs: Spec) -> list[Entry]:
    """Give each (id, parent, entry) its ids and a timestamp one second after the previous one."""
    entries = []
    for second, (entry_id, parent, entry) in enumerate(specs):
        entry.update(
            id=entry_id, parentId=parent, timestamp=f"2025-01-01T00:{second // 60:02d}:{second % 60:02d}.000Z"
        )
        entries.append(entry)
    return entries


def index(*specs: Spec) -> TreeIndex:
    return TreeIndex(link(*specs))


def say(text: str) -> Entry:
    return assistant(text)


def tool_only(call_id: str, stop_reason: str | None = "toolUse") -> Entry:
    """An assistant turn with only a tool call (no text)."""
    entry = assistant(tool_calls=[tool_call("read", {"path": "test.ts"}, call_id)])
    if stop_reason is None:
        del entry["message"]["stopReason"]
    else:
        entry["message"]["stopReason"] = stop_reason
    return entry


def plain(rows: list[Row]) -> list[str]:
    return [row.plain() for row in rows]


def ids(rows: list[Row]) -> list[str]:
    return [row.entry_id for row in rows]


def branching() -> TreeIndex:
    """pi's tree-selector test tree: asst-2 branches into A (active, leaf asst-4a) and B."""
    return index(
        ("user-1", None, user("first message")),
        ("asst-1", "user-1", say("response 1")),
        ("user-2", "asst-1", user("second message")),
        ("asst-2", "user-2", say("response 2")),
        ("user-3a", "asst-2", user("branch A start")),
        ("asst-3a", "user-3a", say("branch A response")),
        ("user-4a", "asst-3a", user("branch A deep")),
        ("asst-4a", "user-4a", say("branch A leaf")),
        ("user-3b", "asst-2", user("branch B start")),
        ("asst-3b", "user-3b", say("branch B response")),
        ("user-4b", "asst-3b", user("branch B deep")),
    )


def two_user_branches() -> TreeIndex:
    """user-1 → asst-1, which branches into user-2 → asst-2 and user-3 (pi's filter-switch tree)."""
    return index(
        ("user-1", None, user("hello")),
        ("asst-1", "user-1", say("hi")),
        ("user-2", "asst-1", user("active branch")),
        ("asst-2", "user-2", say("response")),
        ("user-3", "asst-1", user("sibling branch")),
    )


def text_of(entry: Entry, calls: dict[str, tuple[str, Any]] | None = None) -> str:
    return entry_text(entry, calls or {})


# --- row texts (§10 "Entry text") ----------------------------------------------------------------
def test_user_and_assistant_text_is_one_trimmed_line() -> None:
    assert text_of(user("hello")) == "user: hello"
    assert text_of(
        user([{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}])
    ) == ("user: ab")
    assert text_of(user("  line one\nline\ttwo\n")) == "user: line one line two"
    assert text_of(say("done.\n\nNext")) == "assistant: done.  Next"


def test_message_text_is_capped_at_200_characters_before_trimming() -> None:
    assert text_of(user("x" * 300)) == "user: " + "x" * 200
    # pi caps the raw text first, so two leading blanks use up two of the 200 characters.
    assert text_of(user("  " + "y" * 300)) == "user: " + "y" * 198


def test_assistant_without_text_shows_aborted_error_or_no_content() -> None:
    aborted = assistant(stop_reason="aborted")
    assert text_of(aborted) == "assistant: (aborted)"
    errored = assistant(stop_reason="error")
    errored["message"]["errorMessage"] = "529 overloaded\n" + "e" * 200
    assert text_of(errored) == "assistant: " + ("529 overloaded " + "e" * 200)[:80]
    assert text_of(tool_only("c1")) == "assistant: (no content)"
    assert text_of(assistant(thinking="hmm")) == "assistant: (no content)"
    whitespace = say("   ")
    whitespace["message"]["stopReason"] = "aborted"
    assert text_of(whitespace) == "assistant: (aborted)"


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("read", {"path": "src/a.py"}, "[read: src/a.py]"),
        ("read", {"path": "src/a.py", "offset": 10, "limit": 50}, "[read: src/a.py:10-59]"),
        ("read", {"path": "src/a.py", "limit": 50}, "[read: src/a.py:1-50]"),
        # §10 writes path:offset-end; with no limit there is no end, and pi prints just the start.
        ("read", {"path": "src/a.py", "offset": 10}, "[read: src/a.py:10]"),
        ("read", {"file_path": "b.py"}, "[read: b.py]"),
        ("write", {"path": "out.txt", "content": "x"}, "[write: out.txt]"),
        ("edit", {"path": "e.py", "oldText": "a", "newText": "b"}, "[edit: e.py]"),
        ("bash", {"command": "git status"}, "[bash: git status]"),
        ("bash", {"command": "echo " + "a" * 60}, "[bash: echo " + "a" * 45 + "...]"),
        ("bash", {"command": "ls\n\tpwd"}, "[bash: ls  pwd]"),
        ("grep", {"pattern": "TODO", "path": "src"}, "[grep: /TODO/ in src]"),
        ("grep", {"pattern": "TODO"}, "[grep: /TODO/ in .]"),
        ("find", {"pattern": "*.py", "path": "tests"}, "[find: *.py in tests]"),
        ("find", {"pattern": "*.md"}, "[find: *.md in .]"),
        ("ls", {"path": "docs"}, "[ls: docs]"),
        ("ls", {}, "[ls: .]"),
        ("todo", {"items": ["a"]}, '[todo: {"items":["a"]}]'),
        ("web", {"query": "q" * 40}, '[web: {"query":"' + "q" * 30 + "...]"),
        ("web", {"query": "é"}, '[web: {"query":"é"}]'),
    ],
)
def test_tool_call_labels(name: str, args: dict[str, Any], expected: str) -> None:
    assert tool_call_label(name, args) == expected


def test_tool_paths_under_home_start_with_tilde(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/ada")
    assert (
        tool_call_label("read", {"path": "/home/ada/x.py", "offset": 1, "limit": 1}) == "[read: ~/x.py:1-1]"
    )
    assert tool_call_label("edit", {"path": "/home/ada/p/e.py"}) == "[edit: ~/p/e.py]"
    assert tool_call_label("ls", {"path": "/home/ada"}) == "[ls: ~]"
    assert tool_call_label("grep", {"pattern": "x", "path": "/home/ada/src"}) == "[grep: /x/ in ~/src]"
    assert tool_call_label("write", {"path": "/srv/x"}) == "[write: /srv/x]"


def test_tool_result_is_described_by_its_tool_call() -> None:
    call = assistant(tool_calls=[tool_call("bash", {"command": "make test"}, "c9")])
    calls = tool_calls_by_id([call])
    assert text_of(tool_result("c9", "bash", "ok"), calls) == "[bash: make test]"
    assert text_of(tool_result("zz", "mystery", "ok"), calls) == "[mystery]"
    nameless = tool_result("zz", "x")
    del nameless["message"]["toolName"]
    assert text_of(nameless, calls) == "[tool]"


def test_other_entry_types() -> None:
    assert text_of(bash("ls -la\n")) == "[bash]: ls -la"
    assert text_of(custom_message("note", "remember\nthis")) == "[note]: remember this"
    assert text_of(custom_message("note", [{"type": "text", "text": "block"}])) == "[note]: block"
    assert text_of(compaction("s", "x", tokens_before=12_345)) == "[compaction: 12k tokens]"
    # round(tokensBefore/1000) as JavaScript rounds: halves go up (Python's round() would say 2k).
    assert text_of(compaction("s", "x", tokens_before=2_500)) == "[compaction: 3k tokens]"
    assert text_of(compaction("s", "x", tokens_before=0)) == "[compaction: 0k tokens]"
    assert text_of(branch_summary("tried\tX")) == "[branch summary]: tried X"
    assert text_of(model_change("openai", "gpt-5")) == "[model: gpt-5]"
    assert text_of(thinking_change("high")) == "[thinking: high]"
    assert text_of(custom("ext.state")) == "[custom: ext.state]"
    assert text_of(label("abc", "checkpoint")) == "[label: checkpoint]"
    assert text_of(label("abc", None)) == "[label: (cleared)]"
    # session_info is not in §10; pi 0.73.1 shows it as a title row (hidden in default views).
    assert text_of(session_info("My session")) == "[title: My session]"


# --- searchable text (§10 "Search") ---------------------------------------------------------------
def test_search_text_covers_label_role_text_and_command() -> None:
    assert search_text(user("Fix The Bug"), "Keep") == "keep user fix the bug"
    assert "bashexecution" in search_text(bash("git push"), None)
    assert "git push" in search_text(bash("git push"), None)
    assert search_text(tool_result("c", "read", "File Body"), None) == " toolresult file body"
    assert search_text(custom_message("note", "Hi"), None) == " note hi"
    assert search_text(compaction("secret summary", "x"), None) == " compaction"
    assert search_text(branch_summary("Tried X"), None) == " branch summary tried x"
    assert search_text(model_change("p", "GPT-5"), None) == " model gpt-5"
    assert search_text(thinking_change("high"), None) == " thinking high"
    assert search_text(custom("ext.state"), None) == " custom ext.state"
    assert search_text(label("t", "Milestone"), None) == " label milestone"


# --- drawing (§10 "Prefix", "Indentation", "Ordering") ----------------------------------------------
def test_single_chain_is_flat_with_active_markers() -> None:
    tree = index(("u1", None, user("hi")), ("a1", "u1", say("hello")), ("u2", "a1", user("more")))
    assert plain(render_tree(tree, "a1")) == ["• user: hi", "• assistant: hello" + ACTIVE, "user: more"]
    assert plain(render_tree(tree, None)) == ["user: hi", "assistant: hello", "user: more"]


def test_branch_children_get_connectors_and_the_first_generation_one_more_level() -> None:
    rows = render_tree(branching(), "asst-4a")
    assert plain(rows) == [
        "• user: first message",
        "• assistant: response 1",
        "• user: second message",
        "• assistant: response 2",
        "├⊟ • user: branch A start",
        "│     • assistant: branch A response",
        "│     • user: branch A deep",
        "│     • assistant: branch A leaf" + ACTIVE,
        "└⊟ user: branch B start",
        "      assistant: branch B response",
        "      user: branch B deep",
    ]
    assert [r.on_active_path for r in rows] == [True] * 8 + [False] * 3
    assert [r.is_leaf for r in rows].count(True) == 1 and rows[7].is_leaf


def test_nested_branches_draw_gutters_for_open_ancestors() -> None:
    tree = index(
        ("r", None, user("root")),
        ("a", "r", user("a")),
        ("a1", "a", user("a1")),
        ("a1x", "a1", user("a1x")),
        ("a2", "a", user("a2")),
        ("b", "r", user("b")),
        ("b1", "b", user("b1")),
        ("b2", "b", user("b2")),
    )
    assert plain(render_tree(tree, None)) == [
        "user: root",
        "├⊟ user: a",
        "│  ├⊟ user: a1",
        "│  │     user: a1x",
        "│  └─ user: a2",
        "└⊟ user: b",
        "   ├─ user: b1",
        "   └─ user: b2",
    ]


def test_a_chain_after_a_branch_that_branches_again() -> None:
    tree = index(
        ("r", None, user("root")),
        ("a", "r", user("a")),
        ("a-next", "a", user("a next")),
        ("x", "a-next", user("x")),
        ("y", "a-next", user("y")),
        ("y-next", "y", user("y next")),
        ("b", "r", user("b")),
    )
    assert plain(render_tree(tree, None)) == [
        "user: root",
        "├⊟ user: a",
        "│     user: a next",
        "│     ├─ user: x",
        "│     └⊟ user: y",
        "│           user: y next",
        "└─ user: b",
    ]


def test_several_roots_hang_under_a_virtual_root_without_connectors() -> None:
    tree = index(
        ("user-1", None, user("first root")),
        ("asst-1", "user-1", say("response 1")),
        ("more-1", "asst-1", user("again")),
        ("user-2", None, user("second root")),
        ("asst-2", "user-2", say("response 2")),
    )
    rows = render_tree(tree, "asst-2")
    # The root holding the leaf comes first; each root's chain sits one level in, without gutters.
    assert plain(rows) == [
        "• user: second root",
        "   • assistant: response 2" + ACTIVE,
        "user: first root",
        "   assistant: response 1",
        "   user: again",
    ]


def test_the_branch_holding_the_leaf_is_listed_first() -> None:
    tree = two_user_branches()
    assert ids(render_tree(tree, "user-3")) == ["user-1", "asst-1", "user-3", "user-2", "asst-2"]
    assert plain(render_tree(tree, "user-3"))[2:4] == [
        "├─ • user: sibling branch" + ACTIVE,
        "└⊟ user: active branch",
    ]
    # Without a leaf the children keep timestamp order.
    assert ids(render_tree(tree, None)) == ["user-1", "asst-1", "user-2", "asst-2", "user-3"]


def test_labels_are_shown_in_brackets_before_the_text() -> None:
    tree = index(("u1", None, user("hi")), ("a1", "u1", say("yo")), ("l1", "a1", label("u1", "start")))
    assert plain(render_tree(tree, "a1"))[0] == "• [start] user: hi"
    assert render_tree(tree, "a1")[0].label == "start"


def test_fold_glyphs_and_folded_roots() -> None:
    selector = TreeSelector(branching(), "asst-4a")
    assert [r.foldable for r in selector.rows if r.prefix.startswith(("├", "└"))] == [True, True]
    selector.select("user-3b")
    selector.fold_or_up()
    assert plain(selector.rows)[-1] == "└⊞ user: branch B start"
    assert selector.selected_row is not None and selector.selected_row.folded
    selector.select("user-1")
    selector.fold_or_up()
    assert plain(selector.rows) == ["⊞ • user: first message"]


def test_leaf_branch_child_without_children_is_not_foldable() -> None:
    tree = two_user_branches()
    rows = render_tree(tree, "asst-2")
    assert plain(rows)[2:] == [
        "├⊟ • user: active branch",
        "│     • assistant: response" + ACTIVE,
        "└─ user: sibling branch",
    ]
    assert [r.foldable for r in rows] == [True, False, True, False, False]


def test_row_kinds() -> None:
    tree = index(
        ("u", None, user("q")),
        ("a", "u", say("r")),
        ("t", "a", tool_result("c", "read", "x")),
        ("b", "t", bash("ls")),
        ("c", "b", compaction("s", "u", tokens_before=1000)),
        ("s", "c", branch_summary("s")),
        ("m", "s", custom_message("note", "n")),
    )
    assert [r.kind for r in render_tree(tree, None)] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "compaction",
        "summary",
        "meta",
    ]


# --- visibility and filters (§10 "Visibility and filters") -----------------------------------------
def every_kind() -> TreeIndex:
    return index(
        ("u1", None, user("question")),
        ("mc", "u1", model_change("openai", "gpt-5")),
        ("tl", "mc", thinking_change("high")),
        ("a1", "tl", assistant("looking", tool_calls=[tool_call("read", {"path": "a.py"}, "c1")])),
        ("tr", "a1", tool_result("c1", "read", "code")),
        ("bx", "tr", bash("make")),
        ("cu", "bx", custom("ext.state")),
        ("cm", "cu", custom_message("note", "fyi")),
        ("lb", "cm", label("u1", "start")),
        ("si", "lb", session_info("Named")),
        ("cp", "si", compaction("sum", "u1", tokens_before=50_000)),
        ("bs", "cp", branch_summary("went elsewhere")),
        ("a2", "bs", say("answer")),
    )


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("default", ["u1", "a1", "tr", "bx", "cm", "cp", "bs", "a2"]),
        ("no-tools", ["u1", "a1", "bx", "cm", "cp", "bs", "a2"]),
        ("user-only", ["u1"]),
        ("labeled-only", ["u1"]),
        ("all", ["u1", "mc", "tl", "a1", "tr", "bx", "cu", "cm", "lb", "si", "cp", "bs", "a2"]),
    ],
)
def test_filter_modes(mode: str, expected: list[str]) -> None:
    assert ids(render_tree(every_kind(), "a2", mode)) == expected  # type: ignore[arg-type]


def test_hidden_entries_hang_visible_nodes_under_their_nearest_visible_ancestor() -> None:
    tree = two_user_branches()
    rows = render_tree(tree, "asst-2", "user-only")
    # asst-1 (the branch point) is hidden: the two users become branches of user-1.
    assert plain(rows) == ["• user: hello", "├─ • user: active branch", "└─ user: sibling branch"]


@pytest.mark.parametrize("mode", FILTER_CYCLE)
def test_tool_call_only_assistants_are_hidden_in_every_mode(mode: str) -> None:
    tree = index(
        ("u1", None, user("go")),
        ("t1", "u1", tool_only("c1")),
        ("l1", "t1", label("t1", "tagged")),
        ("r1", "l1", tool_result("c1", "read", "x")),
        ("n1", "r1", tool_only("c2", stop_reason=None)),
        ("a1", "n1", say("done")),
    )
    assert "t1" not in ids(render_tree(tree, "a1", mode))  # type: ignore[arg-type]
    assert "n1" not in ids(render_tree(tree, "a1", mode))  # type: ignore[arg-type]


def test_tool_call_only_assistant_is_shown_as_leaf_or_after_an_abnormal_stop() -> None:
    tree = index(
        ("u1", None, user("go")),
        ("t1", "u1", tool_only("c1")),
        ("e1", "t1", tool_only("c2", stop_reason="error")),
        ("x1", "e1", tool_only("c3", stop_reason="aborted")),
        ("m1", "x1", tool_only("c4", stop_reason="length")),
        ("t2", "m1", tool_only("c5")),
    )
    assert ids(render_tree(tree, "t2")) == ["u1", "e1", "x1", "m1", "t2"]
    assert ids(render_tree(tree, "u1")) == ["u1", "e1", "x1", "m1"]
    assert plain(render_tree(tree, "t2"))[-1] == "• assistant: (no content)" + ACTIVE
    assert ids(render_tree(tree, "t2", "user-only")) == ["u1"]


def test_is_visible_rules() -> None:
    quiet = link(("q", None, tool_only("c")))[0]
    assert not is_visible(quiet, "all", None, None)
    assert is_visible(quiet, "default", "q", None)
    assert not is_visible(quiet, "user-only", "q", None)
    assert not is_visible(quiet, "labeled-only", None, "tag")
    assert is_visible(quiet, "labeled-only", "q", "tag")
    assert is_visible(link(("m", None, model_change("p", "m")))[0], "labeled-only", None, "tag")
    assert not is_visible(link(("m", None, model_change("p", "m")))[0], "no-tools", None, None)


def test_kompakt_leaf_markers_are_never_shown() -> None:
    marker = custom(LEAF_CUSTOM_TYPE, {"leafId": "a1"})
    tree = index(
        ("u1", None, user("one")),
        ("a1", "u1", say("two")),
        ("u2", "a1", user("three")),
        ("mk", "u2", marker),
        # pi appends after the marker; the index hangs this under the marker's parent (u2).
        ("u3", "mk", user("four")),
    )
    for mode in FILTER_CYCLE:
        assert "mk" not in ids(render_tree(tree, "u3", mode))
    assert plain(render_tree(tree, "u3", "all")) == [
        "• user: one",
        "• assistant: two",
        "• user: three",
        "• user: four" + ACTIVE,
    ]
    assert "mk" not in ids(render_tree(tree, "u3", "all", "custom"))


def test_cycle_order_toggles_and_footer_tags() -> None:
    selector = TreeSelector(every_kind(), "a2")
    seen = []
    for _ in range(5):
        seen.append((selector.mode, selector.footer().split(")", 1)[1]))
        selector.cycle_filter(1)
    assert seen == [
        ("default", ""),
        ("no-tools", " [no-tools]"),
        ("user-only", " [user]"),
        ("labeled-only", " [labeled]"),
        ("all", " [all]"),
    ]
    assert selector.mode == "default"
    selector.cycle_filter(-1)
    assert selector.mode == "all"
    selector.cycle_filter(-1)
    assert selector.mode == "labeled-only"
    selector.toggle_filter("no-tools")
    assert selector.mode == "no-tools"
    selector.toggle_filter("no-tools")
    assert selector.mode == "default"
    selector.toggle_filter("all")
    selector.toggle_filter("user-only")
    assert selector.mode == "user-only"
    selector.set_filter("default")
    # user-only moved the selection to u1 (a2's visible ancestor), and it stays there.
    assert selector.selected_id == "u1" and selector.footer() == "(1/8)"


def test_footer_counts_position_and_an_empty_view() -> None:
    selector = TreeSelector(branching(), "asst-4a")
    assert selector.footer() == "(8/11)"
    selector.set_filter("labeled-only")
    assert selector.rows == [] and selector.selected_row is None
    assert selector.footer() == "(0/0) [labeled]"


# --- search (§10 "Search") -------------------------------------------------------------------------
def searchable() -> TreeIndex:
    return index(
        ("u1", None, user("Fix the parser bug")),
        ("a1", "u1", say("The parser is fixed")),
        ("b1", "a1", bash("pytest -k parser")),
        ("l1", "b1", label("a1", "Milestone")),
        ("c1", "l1", compaction("a summary about parser", "u1", tokens_before=9000)),
        ("u2", "c1", user("now the lexer")),
    )


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("parser", ["u1", "a1", "b1"]),
        ("PARSER fix", ["u1", "a1"]),
        ("parser   assistant", ["a1"]),
        ("milestone", ["a1"]),
        ("pytest", ["b1"]),
        ("compaction", ["c1"]),
        ("summary", []),  # a compaction is found by the word "compaction" only
        ("user lexer", ["u2"]),
        ("label", []),  # label entries are hidden by the default filter before search applies
    ],
)
def test_search_tokens_are_and_ed_case_insensitive_substrings(query: str, expected: list[str]) -> None:
    assert ids(render_tree(searchable(), "u2", query=query)) == expected


def test_search_applies_on_top_of_the_filter() -> None:
    assert ids(render_tree(searchable(), "u2", "all", "label")) == ["l1"]


def test_typing_backspace_and_escape() -> None:
    selector = TreeSelector(searchable(), "u2")
    for ch in "lexer":
        selector.type_text(ch)
    assert selector.query == "lexer" and ids(selector.rows) == ["u2"]
    selector.type_text("\x1b[A")  # an escape sequence is not text
    selector.type_text("\x7f")
    selector.type_text("\u0085")  # C1 control
    assert selector.query == "lexer"
    selector.backspace()
    assert selector.query == "lexe"
    assert selector.escape() is True
    assert selector.query == "" and len(selector.rows) == 5
    assert selector.escape() is False  # an empty query: the caller closes the tree
    selector.type_text("a b")  # a pasted space is text
    assert selector.query == "a b"


# --- keys: movement ----------------------------------------------------------------------------------
def test_up_and_down_wrap_at_both_ends() -> None:
    selector = TreeSelector(branching(), "asst-4a")
    selector.select("user-1")
    selector.move(-1)
    assert selector.selected_id == "user-4b"
    selector.move(1)
    assert selector.selected_id == "user-1"
    selector.move(1)
    assert selector.selected_id == "asst-1"


def test_page_moves_by_the_page_size_and_clamps() -> None:
    selector = TreeSelector(branching(), "asst-4a", page_size=3)
    selector.page(-1)
    assert selector.selected_id == "user-3a"  # index 7 → 4
    selector.page(-1)
    selector.page(-1)
    assert selector.selected_id == "user-1"  # clamped at 0, no wrap
    selector.page(1)
    assert selector.selected_id == "asst-2"  # index 0 → 3
    for _ in range(4):
        selector.page(1)
    assert selector.selected_id == "user-4b"  # clamped at the last row


def test_movement_on_an_empty_view_does_nothing() -> None:
    selector = TreeSelector(branching(), "asst-4a", mode="labeled-only")
    for action in (
        lambda: selector.move(1),
        lambda: selector.page(1),
        selector.fold_or_up,
        selector.unfold_or_down,
    ):
        action()
        assert selector.selected_id is None and selector.footer() == "(0/0) [labeled]"


# --- behaviours 53–63 -----------------------------------------------------------------------------
@pytest.mark.parametrize("setting", [model_change("anthropic", "claude-sonnet-4"), thinking_change("high")])
def test_b53_leaf_on_a_hidden_setting_entry_selects_its_visible_parent(setting: Entry) -> None:
    tree = index(
        ("user-1", None, user("hello")),
        ("asst-1", "user-1", say("hi")),
        ("user-2", "asst-1", user("active branch")),
        ("setting", "user-2", setting),
        ("user-3", "asst-1", user("sibling branch")),
    )
    selector = TreeSelector(tree, "setting")
    assert selector.selected_id == "user-2"  # not user-3, the last row


def test_b54_filter_switch_selects_the_visible_ancestor_and_keeps_it() -> None:
    selector = TreeSelector(two_user_branches(), "asst-2")
    assert selector.selected_id == "asst-2"
    selector.toggle_filter("user-only")  # Ctrl+U
    assert selector.selected_id == "user-2"
    selector.set_filter("default")  # Ctrl+D
    assert selector.selected_id == "user-2"


def test_b55_empty_labeled_filter_keeps_the_previous_selection() -> None:
    tree = index(
        ("user-1", None, user("hello")),
        ("asst-1", "user-1", say("hi")),
        ("user-2", "asst-1", user("bye")),
        ("asst-2", "user-2", say("goodbye")),
    )
    selector = TreeSelector(tree, "asst-2")
    selector.toggle_filter("labeled-only")  # Ctrl+L
    assert selector.selected_id is None and selector.selected_row is None
    selector.set_filter("default")  # Ctrl+D
    assert selector.selected_id == "asst-2"


def test_b55_repeated_empty_filter_switches() -> None:
    tree = index(("user-1", None, user("hello")), ("asst-1", "user-1", say("hi")))
    selector = TreeSelector(tree, "asst-1")
    selector.toggle_filter("labeled-only")
    assert selector.selected_id is None
    selector.toggle_filter("labeled-only")  # Ctrl+L again: back to default
    assert selector.mode == "default" and selector.selected_id == "asst-1"
    selector.toggle_filter("labeled-only")
    assert selector.selected_id is None
    selector.set_filter("default")
    assert selector.selected_id == "asst-1"


def test_b56_fold_and_segment_navigation_on_the_active_branch() -> None:
    selector = TreeSelector(branching(), "asst-4a")
    steps = [
        (selector.fold_or_up, "user-3a"),  # up to the segment start
        (selector.fold_or_up, "user-3a"),  # folds it
        (lambda: selector.move(1), "user-3b"),  # its children are hidden
        (lambda: selector.move(-1), "user-3a"),
        (selector.unfold_or_down, "user-3a"),  # unfolds
        (lambda: selector.move(1), "asst-3a"),  # children are back
        (selector.fold_or_up, "user-3a"),
        (selector.unfold_or_down, "asst-4a"),  # down to the leaf
    ]
    folded_after = [set(), {"user-3a"}, {"user-3a"}, {"user-3a"}, set(), set(), set(), set()]
    for (action, expected), folds in zip(steps, folded_after, strict=True):
        action()
        assert selector.selected_id == expected
        assert selector.folded == folds


def test_b57_alt_arrows_are_the_same_keys() -> None:
    # The headless model has one method per action; the TUI binds both Ctrl and Alt arrows to it.
    # pi's Alt sequence: up, fold, unfold, down.
    selector = TreeSelector(branching(), "asst-4a")
    selector.fold_or_up()
    assert selector.selected_id == "user-3a"
    selector.fold_or_up()
    assert selector.folded == {"user-3a"}
    selector.unfold_or_down()
    assert selector.selected_id == "user-3a" and not selector.folded
    selector.unfold_or_down()
    assert selector.selected_id == "asst-4a"


def test_b58_folding_the_root_keeps_nested_folds() -> None:
    selector = TreeSelector(branching(), "asst-4a")
    selector.fold_or_up()
    selector.fold_or_up()  # user-3a folded
    selector.fold_or_up()
    assert selector.selected_id == "user-1"
    selector.fold_or_up()
    assert ids(selector.rows) == ["user-1"] and selector.folded == {"user-1", "user-3a"}
    selector.move(1)
    assert selector.selected_id == "user-1"  # wraps onto the only row
    selector.unfold_or_down()
    assert selector.selected_id == "user-1" and selector.folded == {"user-3a"}
    selector.unfold_or_down()
    assert selector.selected_id == "user-3a"
    assert selector.selected_row is not None and selector.selected_row.folded
    selector.move(1)
    assert selector.selected_id == "user-3b"


def test_b59_navigation_on_a_non_active_branch() -> None:
    selector = TreeSelector(branching(), "asst-4a")
    while selector.selected_id != "user-3b":
        selector.move(1)
    selector.unfold_or_down()
    assert selector.selected_id == "user-4b"
    selector.fold_or_up()
    assert selector.selected_id == "user-3b"
    selector.fold_or_up()
    assert selector.selected_id == "user-3b" and selector.folded == {"user-3b"}
    selector.fold_or_up()
    assert selector.selected_id == "user-1"


def test_b60_two_roots() -> None:
    tree = index(
        ("user-1", None, user("first root")),
        ("asst-1", "user-1", say("response 1")),
        ("user-2", None, user("second root")),
        ("asst-2", "user-2", say("response 2")),
    )
    selector = TreeSelector(tree, "asst-1")
    assert selector.selected_id == "asst-1"
    selector.fold_or_up()
    assert selector.selected_id == "user-1"
    selector.fold_or_up()
    assert selector.folded == {"user-1"}
    selector.move(1)
    assert selector.selected_id == "user-2"
    selector.unfold_or_down()
    assert selector.selected_id == "asst-2"
    selector.fold_or_up()
    assert selector.selected_id == "user-2"
    selector.fold_or_up()
    assert selector.folded == {"user-1", "user-2"}
    selector.fold_or_up()  # a folded root: nowhere further up
    assert selector.selected_id == "user-2"
    assert plain(selector.rows) == ["⊞ • user: first root", "⊞ user: second root"]


def test_b61_folding_the_root_hides_descendants_behind_hidden_entries() -> None:
    tree = index(
        ("user-1", None, user("hello")),
        ("tool-asst-1", "user-1", tool_only("tc-1")),
        ("user-2", "tool-asst-1", user("follow up")),
        ("asst-2", "user-2", say("response")),
    )
    selector = TreeSelector(tree, "asst-2")
    selector.fold_or_up()
    assert selector.selected_id == "user-1"
    selector.fold_or_up()
    assert ids(selector.rows) == ["user-1"]
    selector.move(1)
    assert selector.selected_id == "user-1"


def _fold_user_3a() -> TreeSelector:
    selector = TreeSelector(branching(), "asst-4a")
    selector.fold_or_up()
    selector.fold_or_up()
    selector.move(1)
    assert selector.selected_id == "user-3b" and selector.folded == {"user-3a"}
    return selector


def _assert_user_3a_unfolded(selector: TreeSelector) -> None:
    assert not selector.folded
    selector.select("user-3a")
    selector.move(1)
    assert selector.selected_id == "asst-3a"  # not user-3b: the children are visible again


def test_b62_search_resets_folds() -> None:
    selector = _fold_user_3a()
    selector.type_text("b")
    assert not selector.folded
    selector.escape()
    _assert_user_3a_unfolded(selector)


def test_b63_filter_change_resets_folds() -> None:
    selector = _fold_user_3a()
    selector.toggle_filter("user-only")
    selector.set_filter("default")
    _assert_user_3a_unfolded(selector)


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.cycle_filter(1),
        lambda s: s.cycle_filter(-1),
        lambda s: s.toggle_filter("all"),
        lambda s: s.set_filter("default"),
        lambda s: s.type_text("x"),
    ],
)
def test_any_filter_or_search_change_clears_folds(change: Any) -> None:
    selector = _fold_user_3a()
    change(selector)
    assert not selector.folded
    assert all(not row.folded for row in selector.rows)


def test_backspace_clears_folds_but_an_empty_backspace_does_not() -> None:
    selector = _fold_user_3a()
    selector.backspace()
    assert selector.folded == {"user-3a"}
    selector.type_text("r")
    selector.select("user-3a")
    selector.fold_or_up()
    assert selector.folded == {"user-3a"}
    selector.backspace()
    assert not selector.folded


# --- segment navigation details ----------------------------------------------------------------------
def test_unfold_or_down_stops_at_a_folded_node_on_the_way() -> None:
    tree = index(
        ("r", None, user("root")),
        ("a", "r", user("a")),
        ("a1", "a", user("a1")),
        ("a2", "a", user("a2")),
        ("b", "r", user("b")),
    )
    selector = TreeSelector(tree, None)
    selector.select("a")
    selector.fold_or_up()
    selector.select("r")
    selector.unfold_or_down()  # first child of r's branch
    assert selector.selected_id == "a"
    selector.select("r")
    selector.fold_or_up()  # fold the root
    selector.unfold_or_down()  # unfold it
    selector.unfold_or_down()
    assert selector.selected_id == "a" and selector.selected_row is not None and selector.selected_row.folded


def test_fold_or_up_walks_past_chain_nodes_to_the_segment_start() -> None:
    selector = TreeSelector(branching(), "asst-4a")
    selector.select("user-4b")
    selector.fold_or_up()
    assert selector.selected_id == "user-3b"
    selector.select("asst-2")  # on the trunk: the segment start is the root
    selector.fold_or_up()
    assert selector.selected_id == "user-1"
    selector.select("asst-3a")  # not foldable (no branch above it): goes up
    selector.fold_or_up()
    assert selector.selected_id == "user-3a" and not selector.folded


# --- selection preservation (§10 "Selection preservation") ------------------------------------------
def test_initial_selection_prefers_selected_id_then_leaf() -> None:
    assert TreeSelector(branching(), "asst-4a", selected_id="user-2").selected_id == "user-2"
    assert TreeSelector(branching(), "asst-4a").selected_id == "asst-4a"
    assert TreeSelector(branching(), None).selected_id == "user-4b"  # no leaf: the last row


def test_initial_selection_of_a_hidden_entry_falls_back_to_an_ancestor_or_the_last_row() -> None:
    tree = index(
        ("mc", None, model_change("p", "m")),
        ("u1", "mc", user("hi")),
        ("t1", "u1", tool_only("c1")),
        ("r1", "t1", tool_result("c1", "read", "x")),
        ("a1", "r1", say("done")),
    )
    assert TreeSelector(tree, "a1", selected_id="t1").selected_id == "u1"
    assert TreeSelector(tree, "a1", selected_id="mc").selected_id == "a1"  # no visible ancestor
    assert TreeSelector(tree, "a1", selected_id="missing").selected_id == "a1"


def test_filter_change_keeps_the_same_entry_when_it_stays_visible() -> None:
    selector = TreeSelector(every_kind(), "a2")
    selector.select("bx")
    selector.set_filter("no-tools")
    assert selector.selected_id == "bx"
    selector.set_filter("all")
    assert selector.selected_id == "bx"
    selector.set_filter("user-only")
    assert selector.selected_id == "u1"


def test_search_keeps_the_selection_or_moves_to_an_ancestor() -> None:
    selector = TreeSelector(searchable(), "u2")
    selector.select("b1")
    selector.type_text("parser")
    assert selector.selected_id == "b1"
    selector.type_text(" fix")
    assert selector.selected_id == "a1"  # b1 no longer matches; its visible ancestor does
    selector.escape()
    assert selector.selected_id == "a1"


# --- live updates ------------------------------------------------------------------------------------
def test_refresh_after_appends_shows_new_rows_labels_and_tool_texts() -> None:
    entries = link(
        ("u1", None, user("go")),
        ("a1", "u1", assistant("reading", tool_calls=[tool_call("read", {"path": "a.py"}, "c1")])),
    )
    tree = TreeIndex(entries)
    selector = TreeSelector(tree, "a1")
    before = selector.rows
    extra = link(
        ("u1", None, user("go")),
        ("a1", "u1", say("x")),
        ("r1", "a1", tool_result("c1", "read", "code")),
        ("l1", "r1", label("u1", "kickoff")),
    )[2:]
    for entry in extra:
        tree.add(entry)
    selector.refresh(leaf_id="l1")
    assert selector.rows is not before
    assert plain(selector.rows) == ["• [kickoff] user: go", "• assistant: reading", "• [read: a.py]"]
    assert selector.selected_id == "a1"  # the selection stays where it was


def test_flatten_without_a_text_cache_matches_the_selector() -> None:
    selector = TreeSelector(branching(), "asst-4a")
    rows = flatten(selector.tree, selector.forest, "asst-4a", set(selector.tree.path_ids("asst-4a")), set())
    assert plain(rows) == plain(selector.rows)


def test_message_factory_roles_outside_pi_show_their_role() -> None:
    assert text_of(message({"role": "system", "content": "x"})) == "[system]"


# --- label times and Shift+T (pi 0.73.1, delta A.9 and A.11) -----------------------------------------
@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    """Local time = UTC, so that the label times below read the same on every machine."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def labelled_tree() -> TreeIndex:
    return index(
        ("u1", None, user("question")),
        ("a1", "u1", say("answer")),
        ("l1", "a1", label("u1", "first")),
        ("l2", "l1", label("u1", "second")),  # the last label sets the time too
        ("l3", "l2", label("a1", "gone")),
        ("l4", "l3", label("a1", None)),  # a clear removes the time with the label
    )


def test_label_timestamp_comes_from_the_label_entry_and_clears_with_the_label() -> None:
    tree = labelled_tree()
    assert tree.label_time("u1") == "2025-01-01T00:00:03.000Z"
    assert tree.label_time("a1") is None and tree.label("a1") is None
    rows = {r.entry_id: r for r in TreeSelector(tree, "a1").rows}
    assert rows["u1"].label_time == "2025-01-01T00:00:03.000Z" and rows["a1"].label_time is None


def test_label_time_format_today_this_year_and_older() -> None:
    from datetime import datetime, timedelta

    from tui.session.tree_view import format_label_time

    now = datetime.now().astimezone().replace(month=6, day=15, hour=12, minute=0)

    def iso(moment: datetime) -> str:
        return moment.isoformat()

    assert format_label_time(iso(now.replace(hour=9, minute=5)), now) == "09:05"
    assert format_label_time(iso(now.replace(month=3, day=7, hour=8, minute=1)), now) == "3/7 08:01"
    older = now.replace(year=now.year - 1, month=11, day=2, hour=23, minute=59)
    assert format_label_time(iso(older), now) == f"{(now.year - 1) % 100:02d}/11/2 23:59"
    assert format_label_time(iso(now - timedelta(days=1)), now).startswith("6/14 ")
    assert format_label_time("not a time", now) == ""


def test_shift_t_shows_label_times_after_the_label_and_tags_the_footer(utc: None) -> None:
    selector = TreeSelector(labelled_tree(), "a1")
    assert selector.footer() == "(2/2)"
    selector.toggle_label_times()
    assert selector.footer() == "(2/2) [+label time]"
    assert [r.plain(selector.show_label_times) for r in selector.rows] == [
        "• [second] 25/1/1 00:00 user: question",
        "• assistant: answer" + ACTIVE,
    ]
    selector.set_filter("labeled-only")
    assert selector.footer() == "(1/1) [labeled] [+label time]"
    selector.type_text("zzz")
    assert selector.rows == [] and selector.footer() == "(0/0) [labeled] [+label time]"
    selector.toggle_label_times()
    assert selector.footer() == "(0/0) [labeled]"


def test_session_info_rows_are_settings_entries_shown_when_labelled() -> None:
    tree = index(
        ("u1", None, user("question")),
        ("s1", "u1", session_info("Parser work")),
        ("s2", "s1", session_info("")),
        ("l1", "s2", label("s1", "named")),
    )
    rows = render_tree(tree, "l1", "all")
    assert [r.text for r in rows if r.entry_id in ("s1", "s2")] == ["[title: Parser work]", "[title: empty]"]
    assert [r.entry_id for r in render_tree(tree, "l1", "labeled-only")] == ["s1"]
    assert "s1" not in [r.entry_id for r in render_tree(tree, "l1", "default")]
    assert [r.entry_id for r in render_tree(tree, "l1", "all", "title parser")] == ["s1"]


def test_roots_keep_file_order_like_pi() -> None:
    # pi's getTree sorts children by timestamp but leaves the roots in file order.
    entries = link(("r1", None, user("first root")), ("r2", None, user("second root")))
    entries[1]["timestamp"] = "2024-01-01T00:00:00.000Z"  # older than r1, yet listed after it
    tree = TreeIndex(entries)
    assert tree.roots == ["r1", "r2"]
    assert [r.entry_id for r in render_tree(tree, "r2")] == ["r2", "r1"]  # the active root first
    assert [r.entry_id for r in render_tree(tree, None)] == ["r1", "r2"]
