"""A reply streamed into a chunk in pieces renders like the same text loaded at once, wherever the pieces
break and however the appends overlap (a stream's stop can start one append while another is running)."""

from __future__ import annotations

from textual.app import App
from textual.widgets.markdown import MarkdownBlock

from widgets.chunked_markdown import ChatMarkdown, ChunkedMarkdown

TEXT = (
    "1. first\n\n2. second\n\n"
    "Between.\n\n"
    "    indented code\n\n    after a blank line\n\n"
    "- loose\n\n- list\n\n"
    "Closing words.\n"
)


def shape(markdown: ChatMarkdown) -> list[tuple[str, str]]:
    """Every block the Markdown shows, nested ones too, with its text."""
    return [(type(block).__name__, str(block._content)) for block in markdown.query(MarkdownBlock)]


async def loaded_shape(app: App, text: str) -> list[tuple[str, str]]:
    loaded = ChatMarkdown(text)
    await app.mount(loaded)
    await loaded.lock.acquire()  # its first update holds the lock until its blocks are mounted
    loaded.lock.release()
    try:
        return shape(loaded)
    finally:
        await loaded.remove()


async def test_a_reply_streamed_in_two_pieces_renders_like_it_loaded_at_once_at_every_break() -> None:
    app = App()
    async with app.run_test():
        expected = await loaded_shape(app, TEXT)
        assert ("MarkdownOrderedList", "") in expected and len(expected) > 8
        wrong = []
        for cut in range(1, len(TEXT)):
            streamed = ChunkedMarkdown()
            await app.mount(streamed)
            await streamed.write(TEXT[:cut])
            await streamed.rendered()  # the first piece is on screen before the second arrives
            await streamed.write(TEXT[cut:])
            await streamed.stop()
            if shape(streamed.chunks[-1]) != expected:
                wrong.append(TEXT[:cut][-12:])
            await streamed.remove()
        assert wrong == []  # before the fix: "1. first\n\n2" then ". second" made a second list


async def test_appends_that_overlap_render_all_of_the_text() -> None:
    app = App()
    async with app.run_test():
        expected = await loaded_shape(app, TEXT)
        wrong = []
        for cut in range(1, len(TEXT), 5):
            for second in range(cut + 1, len(TEXT), 11):
                streamed = ChunkedMarkdown()
                await app.mount(streamed)
                chunk = streamed.chunks[-1]  # the tail a stream appends to
                pieces = (TEXT[:cut], TEXT[cut:second], TEXT[second:])
                appends = [chunk.append(piece) for piece in pieces]  # none waits for the one before
                for append in appends:
                    await append
                if shape(chunk) != expected:
                    wrong.append(pieces)
                await streamed.remove()
        assert wrong == []
