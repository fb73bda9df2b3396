"""tool_call_label: the tree/row text of a tool call, as pi's session tree renders it."""

import pytest

from tui.agent.tools import tool_call_label


@pytest.mark.parametrize(
    ("name", "args", "label"),
    [
        ("read", {"path": "src/a.py"}, "[read: src/a.py]"),
        ("read", {"path": "src/a.py", "offset": 10, "limit": 20}, "[read: src/a.py:10-29]"),
        ("read", {"path": "src/a.py", "offset": 10}, "[read: src/a.py:10]"),
        ("read", {"path": "src/a.py", "limit": 5}, "[read: src/a.py:1-5]"),
        ("write", {"path": "out.txt", "content": "x"}, "[write: out.txt]"),
        ("edit", {"path": "m.py", "old_text": "a", "new_text": "b"}, "[edit: m.py]"),
        ("bash", {"command": "git status"}, "[bash: git status]"),
        ("bash", {"command": "x" * 60}, "[bash: " + "x" * 50 + "...]"),
        ("bash", {"command": "echo a\necho b"}, "[bash: echo a echo b]"),
        ("grep", {"pattern": "TODO", "path": "src"}, "[grep: /TODO/ in src]"),
        ("grep", {"pattern": "TODO"}, "[grep: /TODO/ in .]"),
        ("find", {"pattern": "*.py", "path": "tests"}, "[find: *.py in tests]"),
        ("find", {"pattern": "*.py"}, "[find: *.py in .]"),
        ("ls", {"path": "src"}, "[ls: src]"),
        ("ls", {}, "[ls: .]"),
        ("web", {"q": "hi"}, '[web: {"q":"hi"}]'),
        ("web", {"query": "a" * 50}, '[web: {"query":"' + "a" * 30 + "...]"),
    ],
)
def test_labels(name, args, label):
    assert tool_call_label(name, args) == label


def test_home_is_shortened(monkeypatch):
    monkeypatch.setenv("HOME", "/home/ada")
    assert tool_call_label("read", {"path": "/home/ada/notes.md"}) == "[read: ~/notes.md]"
    assert tool_call_label("ls", {"path": "/home/adam"}) == "[ls: /home/adam]"
    assert tool_call_label("grep", {"pattern": "x", "path": "/home/ada/p"}) == "[grep: /x/ in ~/p]"


def test_json_string_arguments():
    assert tool_call_label("edit", '{"path": "a.py"}') == "[edit: a.py]"
    assert tool_call_label("bash", "{not json") == "[bash: {not json]"
