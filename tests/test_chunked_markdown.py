"""Seal points of streamed Markdown: a cut chosen on the text streamed so far must hold for any text that
follows, so that the sealed chunks parse (and so render) exactly like the whole reply.

Hypothesis builds replies from the blocks that make cutting hard (fences with blank lines, loose and
nested lists, numbered lists continued after a blank line, indented code, block quotes, tables, setext
headings) and checks every cut taken on a prefix against the finished reply.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it.token import Token

from widgets.chunked_markdown import has_reference_definitions, no_html_parser, seal_point

BLOCKS = [
    "A paragraph with `code` and *emphasis*.\n",
    "Two lines\nof one paragraph.\n",
    "```python\ndef f():\n\n    return 1\n```\n",
    "~~~\nunclosed until later\n\n~~~\n",
    "- one\n- two\n",
    "- loose one\n\n- loose two\n",
    "- item\n\n  continued inside the item\n",
    "- outer\n  - inner\n\n  - inner two\n",
    "1. first\n\n2. second\n",
    "3) third\n",
    "    indented code\n\n    more code\n",
    "> quoted\n> still quoted\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "Setext heading\n===\n",
    "Underlined\n---\n",
    "# ATX heading\n",
    "***\n",
    "a | b looks like a table row\n",
]

replies = st.lists(
    st.tuples(st.sampled_from(BLOCKS), st.sampled_from(["\n", "\n\n", "\n\n\n", "  \n\n", ""])),
    min_size=1,
    max_size=12,
).map(lambda parts: "".join(block + gap for block, gap in parts))


def shape(tokens: list[Token]) -> list[tuple]:
    """What a token stream renders to, without the line numbers."""
    return [
        (t.type, t.tag, t.nesting, t.level, t.content, t.info, t.markup, shape(t.children or []))
        for t in tokens
    ]


def parse(text: str) -> list[tuple]:
    return shape(no_html_parser().parse(text))


@settings(max_examples=150, deadline=None)
@given(replies, st.data())
def test_a_cut_on_a_prefix_holds_for_the_whole_reply(reply: str, data: st.DataObject) -> None:
    parser = no_html_parser()
    ends = data.draw(st.lists(st.integers(0, len(reply)), max_size=6))
    for end in sorted({*ends, len(reply)}):
        earliest = data.draw(st.integers(0, end))
        cut = seal_point(reply[:end], earliest, parser)
        if cut is None:
            continue
        assert earliest <= cut <= end
        assert parse(reply[:cut]) + parse(reply[cut:]) == parse(reply)


def test_cuts_only_after_a_blank_line_that_ends_a_closed_block() -> None:
    text = "Intro.\n\n```\ncode\n\nmore\n```\n\n- a\n\n- b\n\nEnd"
    assert seal_point(text, 0) == len("Intro.\n\n")
    assert seal_point(text, 9) == len("Intro.\n\n```\ncode\n\nmore\n```\n\n")
    assert seal_point(text, 30) is None  # not inside or after the list
    assert seal_point("Intro.\n\n```\ncode\n\nmore", 9) is None  # inside the open fence
    assert seal_point("- a\n\n", 0) is None  # a further item would join the list
    assert seal_point("Title\n", 0) is None  # "===" on the next line would make it a heading
    assert seal_point("Done.\n\n", 0) == len("Done.\n\n")


def test_reference_definitions_are_spotted() -> None:
    assert has_reference_definitions("See [docs].\n\n[docs]: https://example.com\n")
    assert not has_reference_definitions("See [docs](https://example.com) and [literal] text.\n")
