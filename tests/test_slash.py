"""Prompt parsing: slash commands, ! and !! shell lines, and plain messages."""

from tui.slash import parse
from widgets.slash_commands import complete


def test_commands_and_arguments() -> None:
    assert parse("/compact focus on the parser ") == parse("/compact focus on the parser")
    p = parse("/compact focus on the parser")
    assert (p.kind, p.name, p.argument) == ("command", "compact", "focus on the parser")
    assert parse("/tree").name == "tree" and parse("/tree").argument == ""
    assert parse("/bogus x").kind == "unknown"


def test_paths_and_double_slash_are_messages() -> None:
    assert parse("/etc/hosts is broken").kind == "message"
    assert parse("//comment").kind == "message"
    assert parse("//comment").argument == "/comment"  # D19: // escapes a leading slash
    assert parse("hello").argument == "hello"


def test_bash_lines() -> None:
    assert (parse("!ls -la").kind, parse("!ls -la").argument) == ("bash", "ls -la")
    hidden = parse("!!cat secret")
    assert hidden.kind == "bash" and hidden.exclude_from_context and hidden.argument == "cat secret"
    assert parse("!").kind == "message"


def test_completions() -> None:
    assert [c.name for c in complete("/co")] == ["/compact", "/continue"]
    assert [c.name for c in complete("/com")] == ["/compact"]
    assert len(complete("/")) > 8
    assert complete("/compact x") == [] and complete("hi") == []
