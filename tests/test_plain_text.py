"""Plain reply text (widgets/plain_text.py) is drawn without Markdown, exactly as Markdown draws it.

Hypothesis builds texts from words and the characters Markdown treats specially; every text that
``is_plain`` accepts must parse to paragraphs of literal text whose content is what ``PlainText``
shows. Replies of plain text are drawn both ways in a chat pane and compared cell by cell (colours
and attributes included), and a session whose first screen is plain opens without importing markdown-it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult
from textual.widgets._markdown import MarkdownParagraph

from tests.pages import rendered_strips, screen_settled, wait_until
from widgets import chat_messages
from widgets.chat_messages import AssistantMessage
from widgets.chat_pane import ChatPane
from widgets.chunked_markdown import ChatMarkdown, ChunkedMarkdown, no_html_parser
from widgets.plain_text import PLAIN_MAX_CHARS, PlainText, is_plain, paragraphs

PIECES = [
    "word", "Turn", "done", "é", "Ωmega", "x", "3", "42", "www", "http", "example", "com", "py",
    " ", "  ", ".", ". ", ", ", ";", ":", "://", "-", "--", "(", ")", "'", '"', "!", "?", "\n", "\n\n",
    "\n\n\n", " \n", "  \n", "\t", "@", "*", "_", "#", "1. ", "=", "===", "~", "`", "<", ">", "&", "|",
    "[", "]", "/", "\\", "+", "\u00a0", "…",
]  # fmt: skip

texts = st.lists(st.sampled_from(PIECES), min_size=1, max_size=30).map("".join)


def markdown_paragraphs(text: str) -> list[str] | None:
    """The paragraphs Markdown draws for ``text``, if it draws nothing but paragraphs of plain text."""
    tokens = no_html_parser().parse(text)
    if len(tokens) % 3:
        return None
    document = ChatMarkdown()
    shown = []
    for opening, inline, closing in zip(tokens[::3], tokens[1::3], tokens[2::3], strict=True):
        if (opening.type, inline.type, closing.type) != ("paragraph_open", "inline", "paragraph_close"):
            return None
        if opening.level or {child.type for child in inline.children or ()} - {"text", "softbreak"}:
            return None
        content = MarkdownParagraph(document, opening)._token_to_content(inline)
        if content.spans:
            return None
        shown.append(content.plain)
    return shown


@settings(max_examples=600, deadline=None)
@given(texts)
def test_plain_text_is_what_markdown_draws_as_literal_paragraphs(text: str) -> None:
    if is_plain(text):
        assert markdown_paragraphs(text) == paragraphs(text)


@pytest.mark.parametrize(
    "text",
    [
        "See **this**", "a_b_c", "Look at app.py", "Go to www.example.com now", "Mail me at a@b",
        "Visit http://x now", "# Heading", "Title\n===", "Title\n---", "- item", "1. first", "x  \ny",
        "> quoted", "a | b", "Use `code`", "Tom & Jerry", "a <b> c", "~~gone~~", "[link](u)", "a\\b",
        "    indented", "\tcode", " leading", "trailing ", "3 apples", "Pi is 3.14", "", "\n\n", "…",
        "non\u00a0breaking",
    ],
)  # fmt: skip
def test_text_with_markdown_syntax_or_doubt_is_not_plain(text: str) -> None:
    assert not is_plain(text)


def test_long_plain_text_is_left_to_markdown_which_mounts_it_in_chunks() -> None:
    from widgets.chunked_markdown import LOAD_CHUNKED_CHARS

    assert PLAIN_MAX_CHARS < LOAD_CHUNKED_CHARS
    assert is_plain("word " * (PLAIN_MAX_CHARS // 5 - 1) + "end")
    assert not is_plain("word " * (PLAIN_MAX_CHARS // 5) + "end")


def test_plain_paragraphs_join_lines_and_collapse_spaces() -> None:
    text = "Done with turn 3.\n\nOne line\nand the next,  with  spaces!\n\n\nLast (really)"
    assert is_plain(text)
    assert paragraphs(text) == ["Done with turn 3.", "One line and the next, with spaces!", "Last (really)"]
    assert markdown_paragraphs(text) == paragraphs(text)


REPLIES = [
    "Done with turn 1380. refactor summary context widget window entry tool path tree context model "
    "output tree token token branch error refactor entry the the retry test budget tool budget",
    "Short one.",
    "Two paragraphs: the first is here\nwith a second line, and  spaces.\n\nThe second (shorter) one!",
    "Ünïcödé wörds, Ωmega and 42 numbers; a question? Yes - and quotes 'single' and \"double\".",
]


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield ChatPane()


async def draw(replies: list[str], size: tuple[int, int]) -> tuple[list[list[object]], set[str]]:
    """The screen's cells (text and style) with ``replies`` in a chat pane, one focused, one dimmed;
    and the classes of the widgets that drew the text."""
    app = Host()
    async with app.run_test(size=size) as pilot:
        pane = app.query_one(ChatPane)
        await pane.load_messages([{"role": "assistant", "content": text} for text in replies])
        messages = await wait_until(
            pilot, lambda: len(pane.message_widgets) == len(replies) and pane.message_widgets, "the replies"
        )
        await wait_until(pilot, lambda: all(m.is_mounted for m in messages), "the replies mounted")
        messages[1].focus()
        messages[2].add_class("-summarised")
        await screen_settled(pilot)
        bodies = {type(widget).__name__ for m in messages for widget in m.query(".message--body")}
        return [seen_cells(strip) for strip in rendered_strips(app)], bodies


def seen_cells(strip) -> list[tuple[object, ...]]:
    """What each cell of a row looks like: its character, background, and (but on a blank) its colour and
    attributes. Not what no one sees: a blank's foreground, the offsets kept for mouse selection."""
    cells: list[tuple[object, ...]] = []
    for segment in strip:
        style = segment.style
        for char in segment.text:
            seen = None if style is None else (style.bgcolor,)
            if char != " " and style is not None:
                seen = (*seen, style.color, style.bold, style.italic, style.underline, style.dim, style.reverse)
            cells.append((char, seen))
    return cells


@pytest.mark.parametrize("size", [(120, 40), (44, 40)], ids=["120x40", "44x40-wrapping"])
async def test_plain_replies_look_exactly_as_their_markdown(
    size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert all(is_plain(text) for text in REPLIES)
    plain, plain_bodies = await draw(REPLIES, size)
    monkeypatch.setattr(chat_messages, "is_plain", lambda _text: False)
    markdown, markdown_bodies = await draw(REPLIES, size)
    assert (plain_bodies, markdown_bodies) == ({PlainText.__name__}, {ChunkedMarkdown.__name__})
    assert plain == markdown


async def test_a_plain_reply_streamed_and_finished_is_shown_as_streamed() -> None:
    """A streamed reply keeps its Markdown (it wrote into it); the stored reply of the same text is plain."""
    app = Host()
    async with app.run_test() as pilot:
        pane = app.query_one(ChatPane)
        message = AssistantMessage({"role": "assistant", "content": []})
        await pane.mount(message)
        await message.stream_text("Plain words")
        final = {"role": "assistant", "content": [{"type": "text", "text": "Plain words"}]}
        await message.finish(final)
        await wait_until(
            pilot, lambda: "Plain words" in str(message.query(ChunkedMarkdown)[0].source), "text"
        )
        assert not message.query(PlainText)


FIRST_FRAME = """
import sys
from pathlib import Path
from tui.app import KompaktApp
from tui.launch import Launch
class Probe(KompaktApp):
    async def _after_first_frame(self):
        plain = len(self.main.chat.query("PlainText"))
        print("frame", plain, "markdown_it" in sys.modules, "secrets" in sys.modules, flush=True)
        await super()._after_first_frame()
        self.set_interval(0.05, self.loaded)
    def loaded(self):
        if "widgets.chunked_markdown" in sys.modules:
            print("loaded", flush=True)
            self.exit()
Probe(Launch("open", Path(sys.argv[1]), Path(sys.argv[2]))).run(headless=True, size=(120, 40))
"""


def test_a_plain_first_screen_leaves_markdown_to_the_background_load(tmp_path: Path) -> None:
    """A session whose first screen holds only plain replies (the generated ones) draws its first frame
    without importing markdown-it; the background load after it imports the Markdown widgets."""
    from bench.gen_session import generate

    path = generate(tmp_path / "s.jsonl", entries=300, seed=5, cwd=str(tmp_path))
    script = tmp_path / "probe.py"
    script.write_text(FIRST_FRAME)
    home = tmp_path / "home"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "KOMPAKT_HOME": str(home),
        "KOMPAKT_CONFIG_DIR": str(home / "config"),
        "KOMPAKT_PI_SESSIONS": str(home / "pi"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    out = subprocess.run(
        [sys.executable, str(script), str(path), str(tmp_path)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False,
    )  # fmt: skip
    lines = out.stdout.split()
    assert out.returncode == 0 and "loaded" in lines, out.stdout + out.stderr
    frame = out.stdout.splitlines()[0].split()
    assert frame[0] == "frame" and int(frame[1]) > 0 and frame[2] == "False", out.stdout
    assert frame[3] == "False", "secrets (hmac, OpenSSL's hashes) was imported for the first frame"
