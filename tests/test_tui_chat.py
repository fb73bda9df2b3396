"""Chat pane: every message kind, tool call/result pairing, streaming, R6 literal output, windowing,
pruning, copy, edit-and-resend and keyboard movement (Pilot, with a small host app)."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Markdown

from tests import factories as f
from tests.pages import rendered_strips, screen_settled, until, wait_until_drawn
from tests.snap_apps.chat_app import every_kind_path
from widgets import chunked_markdown
from widgets.chat_messages import (
    AssistantMessage,
    BashMessage,
    BranchSummaryMessage,
    ChatMessage,
    CompactionSummaryMessage,
    CustomMessage,
    MessageHeader,
    ToolCallView,
    ToolResultMessage,
    UserMessage,
)
from widgets.chat_pane import ChatPane
from widgets.chunked_markdown import ChunkedMarkdown


class ChatHost(App):
    """A chat pane alone; records the messages the pane posts and what is copied."""

    def __init__(self, panes: int = 1) -> None:
        super().__init__()
        self.panes = panes
        self.edits: list[ChatPane.EditRequested] = []
        self.copied: list[str] = []

    def compose(self) -> ComposeResult:
        with Horizontal():
            for index in range(self.panes):
                yield ChatPane(id=f"pane{index}")

    def copy_to_clipboard(self, text: str) -> None:
        self.copied.append(text)

    def on_chat_message_edit_requested(self, event: ChatPane.EditRequested) -> None:
        self.edits.append(event)

    @property
    def pane(self) -> ChatPane:
        return self.query_one("#pane0", ChatPane)


def screen_lines(app: App) -> list[str]:
    return ["".join(seg.text for seg in strip) for strip in rendered_strips(app)]


def widget_text(app: App, widget: Widget) -> str:
    """What the screen shows inside ``widget``'s region."""
    strips = rendered_strips(app)
    region = widget.region
    return "\n".join(
        strips[y].crop(region.x, region.right).text.rstrip() for y in range(region.y, region.bottom)
    )


def all_segment_text(app: App) -> str:
    return "".join(seg.text for strip in rendered_strips(app) for seg in strip)


async def settle(pilot: Any) -> None:
    await screen_settled(pilot)


async def test_every_kind_has_its_widget_and_look() -> None:
    app = ChatHost()
    async with app.run_test(size=(120, 50)) as pilot:
        await app.pane.load_messages(every_kind_path())
        await settle(pilot)
        kinds = [type(w) for w in app.pane.message_widgets]
        assert kinds == [
            CompactionSummaryMessage,
            BranchSummaryMessage,
            UserMessage,
            AssistantMessage,
            BashMessage,
            BashMessage,
            CustomMessage,
            AssistantMessage,
        ]
        text = "\n".join(screen_lines(app))
        assert "Compacted from 123k tokens" in text
        assert "Branch summary (from 1a2b3c4d)" in text
        assert "[read: src/parser.py:10-49] ✓" in text
        assert "[bash: pytest -q tests/test_parser.py] ✗ error" in text
        assert "! make bench" in text and "exit 2" in text
        assert "◆ reminder" in text
        assert "Assistant · gpt-5" in text
        # Summaries and thinking start collapsed.
        assert "Make the parser fast" not in text
        assert "The user wants a profile first" not in text
        assert app.pane.message_widgets[5].has_class("-failed")
        assert not app.pane.message_widgets[4].has_class("-failed")


async def test_hidden_entries_are_skipped() -> None:
    path = f.chain(
        [
            f.user("hi"),
            f.custom("kompakt.leaf"),
            f.label("00000001", "start"),
            f.model_change("openai", "gpt-5"),
            f.custom_message("hidden", "not shown", display=False),
            f.assistant("hello"),
        ]
    )
    app = ChatHost()
    async with app.run_test(size=(80, 24)):
        await app.pane.load_messages(path)
        assert [type(w) for w in app.pane.message_widgets] == [UserMessage, AssistantMessage]


async def test_tool_call_expands_to_args_and_output() -> None:
    app = ChatHost()
    async with app.run_test(size=(120, 60)) as pilot:
        await app.pane.load_messages(every_kind_path())
        await settle(pilot)
        views = list(app.pane.query(ToolCallView))
        assert [v.call_id for v in views] == ["c1", "c2"]
        ok, failed = views
        assert failed.has_class("-error") and not ok.has_class("-error")
        ok.collapsed = False
        failed.collapsed = False
        await settle(pilot)
        text = widget_text(app, app.pane.message_widgets[3])
        assert '"path": "src/parser.py"' in text
        assert "return list(tokenize(text))" in text
        assert "1 failed, 12 passed" in text


async def test_summaries_expand() -> None:
    app = ChatHost()
    async with app.run_test(size=(120, 60)) as pilot:
        await app.pane.load_messages(every_kind_path())
        await settle(pilot)
        compaction = app.pane.message_widgets[0]
        await wait_until_drawn(pilot, compaction.query_one("CollapsibleTitle"))
        await pilot.click(compaction.query_one("CollapsibleTitle"))
        await settle(pilot)
        assert "Make the parser fast." in widget_text(app, compaction)


async def test_long_tool_output_is_truncated() -> None:
    output = "\n".join(f"line {n}" for n in range(5000))
    path = f.chain(
        [
            f.assistant(tool_calls=[f.tool_call("bash", {"command": "seq"}, "c1")]),
            f.tool_result("c1", "bash", output),
        ]
    )
    app = ChatHost()
    async with app.run_test(size=(100, 80)) as pilot:
        await app.pane.load_messages(path)
        view = app.pane.query_one(ToolCallView)
        view.collapsed = False
        await settle(pilot)
        text = widget_text(app, app.pane.message_widgets[0])
        assert "line 39" in text
        assert "line 40" not in text
        assert "truncated (5,000 lines" in text


async def test_orphan_tool_result_gets_its_own_row() -> None:
    app = ChatHost()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.pane.add_message(f.tool_result("zz", "grep", "match", is_error=True) | {"id": "e1"})
        await settle(pilot)
        (widget,) = app.pane.message_widgets
        assert isinstance(widget, ToolResultMessage) and widget.has_class("-error")
        assert "Tool result [grep] ✗ error" in widget_text(app, widget)


async def test_markup_and_escapes_stay_literal() -> None:
    """R6: Rich markup, ANSI and OSC in model, tool and user text are shown literally or dropped."""
    evil = "[bold red]loud[/] \x1b[31mred\x1b[0m \x1b]0;title\x07 \x1b]52;c;ZXZpbA==\x07 <b>html</b>"
    path = f.chain(
        [
            f.user("user " + evil),
            f.assistant("model " + evil, tool_calls=[f.tool_call("bash", {"command": "x\x1b[2J"}, "c1")]),
            f.tool_result("c1", "bash", "tool " + evil),
            f.bash("echo \x1b[31m", "bash " + evil, exit_code=0),
        ]
    )
    app = ChatHost()
    async with app.run_test(size=(140, 40)) as pilot:
        await app.pane.load_messages(path)
        app.pane.query_one(ToolCallView).collapsed = False
        await settle(pilot)
        text = "\n".join(screen_lines(app))
        for who in ("user", "model", "tool", "bash"):
            assert f"{who} [bold red]loud[/] red" in text
        assert "<b>html</b>" in text
        raw = all_segment_text(app)
        assert "\x1b" not in raw and "\x07" not in raw
        assert "ZXZpbA" not in raw and "title" not in raw
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "[bold&#160;red]loud[/]" in svg


async def stream_done(pilot: Any, markdown: Markdown, expected: str) -> None:
    """Wait until the stream has handed every fragment to the widget and it has rendered."""
    for _ in range(200):
        if markdown.source == expected:
            break
        await pilot.pause(0.02)  # deltas reach the Markdown on a short flush timer
    async with markdown.lock:
        pass
    await settle(pilot)


FENCE_TEXT = (
    "Here is the fix:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n"
    "- one\n- two with `code`\n\nDone \\[not a link\\] [literal] text.\n"
)


async def test_streamed_text_renders_like_the_final_message() -> None:
    chunks = [
        "Here is the ",
        "fix:\n\n`",
        "``py",
        "thon\ndef add(a, b):\n",
        "    return a + b\n`",
        "``\n\n- one\n- tw",
    ]
    chunks += ["o with `co", "de`\n\nDone \\[not a link\\] [lit", "eral] text.\n"]
    assert "".join(chunks) == FENCE_TEXT
    final = f.assistant(FENCE_TEXT)["message"]
    app = ChatHost(panes=2)
    async with app.run_test(size=(160, 40)) as pilot:
        streamed_pane = app.query_one("#pane0", ChatPane)
        loaded_pane = app.query_one("#pane1", ChatPane)
        stream = streamed_pane.begin_assistant()
        for chunk in chunks:
            await stream.append_text(chunk)
        markdown = stream.widget.query_one(Markdown)
        await stream_done(pilot, markdown, FENCE_TEXT)
        await loaded_pane.add_message(final)
        await settle(pilot)
        streamed = widget_text(app, streamed_pane.message_widgets[0])
        loaded = widget_text(app, loaded_pane.message_widgets[0])
        # The header differs (the streamed reply has no model yet); the rendered body is identical.
        assert streamed.splitlines()[1:] == loaded.splitlines()[1:]
        assert "    return a + b" in streamed and "[literal] text." in streamed
        await stream.finish(final, entry_id="e42")
        await settle(pilot)
        assert markdown.source == FENCE_TEXT
        assert markdown.is_mounted  # finished in place: no rebuild needed
        assert streamed_pane.items[-1].message is final and stream.widget.entry_id == "e42"
        assert widget_text(app, streamed_pane.message_widgets[0]) == loaded


async def test_stream_sanitises_escapes_split_across_deltas() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 20)) as pilot:
        stream = app.pane.begin_assistant()
        for chunk in ["red: \x1b", "[31mRED\x1b[", "0m and title\x1b]0;ev", "il\x07 done\r", "\nnext"]:
            await stream.append_text(chunk)
        await stream.finish(
            f.assistant("red: \x1b[31mRED\x1b[0m and title\x1b]0;evil\x07 done\r\nnext")["message"]
        )
        await settle(pilot)
        markdown = stream.widget.query_one(Markdown)
        assert markdown.source == "red: RED and title done\nnext"
        assert "\x1b" not in all_segment_text(app)


async def test_streaming_thinking_tool_calls_and_results() -> None:
    app = ChatHost()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.pane.add_message(f.user("read a.py"))
        stream = app.pane.begin_assistant()
        await stream.append_thinking("I should read ")
        await stream.append_thinking("the file.")
        await stream.append_text("Reading it now.")
        await stream.tool_call_started("t1", "read")
        await stream.tool_call_args("t1", '{"path": "a.')
        view = app.pane.query_one(ToolCallView)
        assert view.has_class("-running")
        await stream.tool_call_args("t1", '{"path": "a.py"}')
        assert "[read: a.py]" in str(view.title)
        final = f.assistant(
            "Reading it now.",
            thinking="I should read the file.",
            tool_calls=[f.tool_call("read", {"path": "a.py"}, "t1")],
        )["message"]
        await stream.finish(final)
        await app.pane.add_tool_result(f.tool_result("t1", "read", "print('hi')")["message"])
        await settle(pilot)
        assert app.pane.query_one(ToolCallView) is view  # kept in place
        assert not view.has_class("-running")
        assert str(view.title).endswith("✓")
        assert app.pane.items[-1].results["t1"]["content"][0]["text"] == "print('hi')"
        view.collapsed = False
        thinking = stream.widget.query_one("ThinkingBlock")
        thinking.collapsed = False
        await settle(pilot)
        text = widget_text(app, stream.widget)
        assert "I should read the file." in text
        assert "print('hi')" in text
        assert len(app.pane.message_widgets) == 2


async def test_a_reply_streaming_through_redraws_of_the_path_stays_and_finishes() -> None:
    """A navigation, compaction or follow redraws the whole path at any await of a streaming reply (CI
    once crashed finishing a reply whose widget a redraw had removed): the reply stays, below the path."""
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        path = [f.user("first"), f.assistant("answer one")]
        await app.pane.load_messages(path)
        stream = app.pane.begin_assistant()
        await app.pane.load_messages(path)  # before the reply's widget has even mounted
        await stream.append_text("streamed ")
        await app.pane.load_messages([*path, f.user("second")])  # mid-stream, a longer path
        await stream.append_text("reply")
        await stream.tool_call_started("t9", "read")
        await app.pane.load_messages(path)
        await stream.finish(
            f.assistant("streamed reply", tool_calls=[f.tool_call("read", {}, "t9")])["message"]
        )
        await settle(pilot)
        widgets = app.pane.message_widgets
        assert widgets[-1] is stream.widget and stream.widget.is_attached
        assert [type(w) for w in widgets] == [UserMessage, AssistantMessage, AssistantMessage]
        assert "streamed reply" in widget_text(app, stream.widget)
        assert app.pane.items[-1].message["content"][0]["text"] == "streamed reply"
        await app.pane.add_tool_result(f.tool_result("t9", "read", "contents")["message"])
        assert app.pane.items[-1].results["t9"]["content"][0]["text"] == "contents"  # the call's new index
        await app.pane.load_messages(path)  # once finished, a redraw shows the path alone
        assert len(app.pane.message_widgets) == 2 and not stream.widget.is_attached


async def test_a_reply_whose_widget_was_taken_away_is_lost_and_never_raises() -> None:
    """Under load, a removal of the whole chat can take a reply's widget between two of its events (CI saw
    MountError from the next delta and from finish): the stream says it is lost and does nothing more."""
    app = ChatHost()
    async with app.run_test(size=(100, 30)):
        stream = app.pane.begin_assistant()
        await stream.append_text("first part ")
        assert not stream.lost
        await stream.widget.remove()
        assert stream.lost
        await stream.append_text("after removal")
        await stream.append_thinking("thought")
        await stream.tool_call_started("t1", "read")
        await stream.tool_call_args("t1", "{}")
        await stream.finish(f.assistant("first part after removal")["message"])
        assert not stream.widget.is_attached and stream.finished


async def test_a_reply_the_redraw_drew_from_the_store_is_not_shown_twice() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        stream = app.pane.begin_assistant()
        await stream.append_text("the reply")
        question, stored = f.chain([f.user("q"), f.assistant("the reply")])
        await app.pane.load_messages([question, stored])  # the store had it before its MessageEnd
        assert app.pane.shows_entry(stored["id"])
        await app.pane.discard_stream()
        await settle(pilot)
        assert len(app.pane.message_widgets) == 2 and not stream.widget.is_attached and stream.finished


async def test_a_tool_result_after_a_discarded_stream_joins_the_stored_reply() -> None:
    """The stream's tool calls pointed past the end once discard_stream dropped it, and the tool result
    that follows (its MessageEnd) raised IndexError in the screen's agent-event handler, exiting the app."""
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.pane
        stream = pane.begin_assistant()
        await stream.tool_call_started("t1", "read")  # the reply streams a tool call
        call = f.tool_call("read", {"path": "a.txt"}, call_id="t1")
        question, stored, result = f.chain(
            [f.user("q"), f.assistant(tool_calls=[call]), f.tool_result("t1", "read", "file text")]
        )
        await pane.load_messages([question, stored])  # a redraw (F9, a navigation) drew it from the store
        assert pane.shows_entry(stored["id"])
        await pane.discard_stream()  # its MessageEnd: the stored reply is shown, the stream goes
        await pane.add_tool_result(result["message"], result["id"])
        await screen_settled(pilot)
        (reply,) = [w for w in pane.message_widgets if isinstance(w, AssistantMessage)]
        assert "t1" in pane.items[pane.message_widgets.index(reply)].results
        assert reply.query_one(ToolCallView).result is not None


async def test_finish_rebuilds_when_the_final_message_differs() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 20)) as pilot:
        stream = app.pane.begin_assistant()
        await stream.append_text("partial")
        final = f.assistant(thinking="hidden reasoning", text="complete answer")["message"] | {
            "stopReason": "aborted"
        }
        await stream.finish(final)
        await settle(pilot)
        text = widget_text(app, stream.widget)
        assert "complete answer" in text and "partial" not in text
        assert "▶ Thinking" in text and "(aborted)" in text


def long_path(pairs: int) -> list[dict]:
    entries = []
    for n in range(pairs):
        entries.append(f.user(f"question {n}"))
        entries.append(f.assistant(f"answer {n}\n\nwith a second paragraph"))
    return f.chain(entries)


async def test_long_path_mounts_a_window_and_backfills_at_the_top() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.pane.load_messages(long_path(1000))
        await settle(pilot)
        pane = app.pane
        assert len(pane.items) == 2000
        mounted = len(pane.message_widgets)
        assert 0 < mounted <= ChatPane.INITIAL_ITEMS
        assert pane.first_loaded == 2000 - mounted
        assert "answer 999" in "\n".join(screen_lines(app))
        top = pane.message_widgets[0]
        pane.scroll_home(animate=False, immediate=True)
        await settle(pilot)
        screen_y = top.region.y
        for _ in range(50):
            if pane.first_loaded < 2000 - mounted:
                break
            await pilot.pause()
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert pane.first_loaded < 2000 - mounted
        assert len(pane.message_widgets) == 2000 - pane.first_loaded
        assert top.region.y == screen_y  # what was on screen stayed in place
        assert pane.scroll_y > 0


async def test_a_window_shorter_than_estimated_is_filled_to_the_pane() -> None:
    # Markdown joins single newlines into one paragraph: 200 short lines are estimated at 200 rows and
    # drawn in about 20, so the one item that fills the line budget leaves the pane part empty.
    text = "\n".join(f"line {n}" for n in range(200))
    path = f.chain([f.assistant(text) for _ in range(40)])
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.pane.load_messages(path)
        pane = app.pane
        for _ in range(100):
            if pane.virtual_size.height > pane.size.height:
                break
            await pilot.pause()
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert 0 < pane.first_loaded < 39
        assert pane.virtual_size.height > pane.size.height
        assert len(pane.message_widgets) == 40 - pane.first_loaded


@pytest.mark.parametrize("key", ["up", "pageup", "home"])
async def test_keys_at_the_top_load_earlier_messages(monkeypatch, key: str) -> None:
    # A window that cannot scroll (here: the fill after the first frame is switched off) sits at the
    # top already, so no scroll reaches the top to load more: the key itself must.
    monkeypatch.setattr(ChatPane, "_fill_viewport", lambda self: None)
    text = "\n".join(f"line {n}" for n in range(200))
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.pane
        await pane.load_messages(f.chain([f.assistant(text) for _ in range(5)]))
        await settle(pilot)
        assert pane.first_loaded == 4 and pane.scroll_y <= 0  # (a short window sits at the bottom)
        pane.focus()
        await pilot.press(key)
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert pane.first_loaded < 4 and len(pane.message_widgets) == 5 - pane.first_loaded


async def test_load_more_bar_click_backfills() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.pane.load_messages(long_path(200))
        before = app.pane.first_loaded
        assert before > 0
        assert await app.pane.load_earlier() > 0
        assert app.pane.first_loaded < before
        await settle(pilot)


async def test_prunes_old_widgets_while_following() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.pane
        pane.PRUNE_HIGH, pane.PRUNE_LOW = 60, 30
        for n in range(40):
            await pane.add_message(f.user(f"message {n}\nsecond line"))
            await pilot.pause()
        await settle(pilot)
        assert pane.first_loaded > 0
        assert len(pane.message_widgets) == 40 - pane.first_loaded
        assert pane.virtual_size.height <= pane.PRUNE_HIGH + 10
        assert "message 39" in "\n".join(screen_lines(app))


async def test_copy_with_key_and_click() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.pane.load_messages(f.chain([f.user("copy \x1b[1mme"), f.assistant("the answer")]))
        await settle(pilot)
        user, assistant = app.pane.message_widgets
        user.focus()
        await pilot.press("ctrl+c")
        header = assistant.query_one(MessageHeader)
        await wait_until_drawn(pilot, header)
        await pilot.click(header, offset=header.word_offset("copy"))
        assert app.copied == ["copy me", "the answer"]


async def test_a_header_cuts_or_wraps_its_title_and_keeps_its_words_at_the_right() -> None:
    """One widget draws a message's header: a long title is cut with an ellipsis (or, on a compaction
    divider, wrapped in a column) and the action words stay on its first line at the right edge."""

    class Host(App):
        def compose(self) -> ComposeResult:
            yield MessageHeader(Content("You " + "said a lot " * 10), ("copy", "edit"))
            yield MessageHeader(Content("━ compacted " + "many messages " * 8), ("inspect", "copy"), wrap=True)

    app = Host()
    async with app.run_test(size=(40, 12)) as pilot:
        cut, wrapped = app.query(MessageHeader)
        await until(pilot, lambda: cut.size.width == 40 and wrapped.size.height > 1)
        line = cut.render().plain
        assert len(line) == 40 and line.endswith("… copy edit") and line.startswith("You said")
        lines = wrapped.render().wrap(40)
        assert wrapped.size.height == len(lines) > 2  # as tall as its text, no taller
        assert lines[0].plain.endswith(" inspect copy") and len(lines[0].plain) == 40
        assert "inspect" not in "".join(x.plain for x in lines[1:])
        assert " ".join(x.plain.strip() for x in lines).startswith("━ compacted many messages")
        # Measured at the width the layout asks about, not at its size so far (a chat's stream layout asks
        # before the size is set: a divider measured at width 0 was one character wide and hundreds tall).
        narrow = Size(24, 12)
        assert wrapped.get_content_height(narrow, narrow, 24) == len(wrapped._content(24).wrap(24)) > len(lines)


async def test_line_breaks_in_a_model_or_tool_name_keep_the_header_and_the_block_one_row() -> None:
    """QA: a model name with a newline (from any session file) put the header's second line, and with it
    the "copy" word, out of the one-row header; a tool name with one made its closed block two rows."""
    reply = f.assistant(
        "ok", [f.tool_call("a\nb\rc", {})], model="evil\x1b[31m\nsecond line"
    )
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.pane.load_messages(f.chain([reply]))
        await settle(pilot)
        (message,) = app.pane.message_widgets
        header = message.query_one(MessageHeader)
        await wait_until_drawn(pilot, header)
        line = header.render().plain
        assert "\n" not in line and line.startswith("Assistant · evil second line") and line.endswith(" copy")
        await pilot.click(header, offset=header.word_offset("copy"))
        assert app.copied == ["ok"]
        view = message.query_one(ToolCallView)
        await until(pilot, lambda: view.size.height == 1)
        assert view.size.height == 1 and "a b c" in widget_text(app, view)


async def test_edit_and_resend_posts_edit_requested() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.pane.load_messages(f.chain([f.user("first try"), f.assistant("ok")]))
        await settle(pilot)
        user = app.pane.message_widgets[0]
        user.focus()
        await pilot.press("ctrl+e")
        header = user.query_one(MessageHeader)
        await wait_until_drawn(pilot, header)
        assert header.render().plain.endswith(" copy edit")
        await pilot.click(header, offset=header.word_offset("edit"))
        await settle(pilot)
        assert [(e.entry_id, e.text) for e in app.edits] == [("00000001", "first try")] * 2
        assert app.pane.message_widgets[1].query_one(MessageHeader).word_offset("edit") is None


async def test_up_and_down_move_between_messages() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.pane.load_messages(f.chain([f.user("a"), f.assistant("b"), f.user("c")]))
        await settle(pilot)
        first, second, third = app.pane.message_widgets
        third.focus()
        await pilot.press("up")
        assert app.focused is second
        await pilot.press("up", "up")
        assert app.focused is first
        await pilot.press("down")
        assert app.focused is second
        assert isinstance(app.focused, ChatMessage)


CHUNKY_TEXT = (
    "Intro paragraph with `inline code`.\n\n"
    "```python\ndef first():\n\n    return 1\n```\n\n"
    "- loose one\n\n- loose two\n  continued\n\n"
    "A paragraph after the list.\n\n"
    "## A heading\n\n"
    "1. first\n\n2. second\n\n"
    "Between.\n\n"
    "> a quote\n> on two lines\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "Setext heading\n===\n\n"
    "    indented code\n\n    after a blank line\n\n"
    "Then a rule.\n\n"
    "***\n\n"
    "```\nfence right after a rule\n```\n\n"
    "- outer\n  - inner\n\n"
    "# Last heading\n\nClosing words.\n"
)


def deltas(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def stream_reply(pilot: Any, pane: ChatPane, text: str) -> Any:
    """Stream ``text`` in small deltas, pausing now and then so flushes land at many places."""
    stream = pane.begin_assistant()
    for n, delta in enumerate(deltas(text)):
        await stream.append_text(delta)
        if n % 5 == 0:
            await pilot.pause(0.01)
    markdown = stream.widget.query_one(ChunkedMarkdown)
    for _ in range(200):
        if markdown.source == text:
            break
        await pilot.pause(0.02)
    await markdown.rendered()
    await settle(pilot)
    return stream


async def test_reply_sealed_into_chunks_renders_like_the_reply_loaded_at_once(monkeypatch) -> None:
    monkeypatch.setattr(chunked_markdown, "SEAL_CHARS", 1)  # seal at every boundary
    final = f.assistant(CHUNKY_TEXT)["message"]
    app = ChatHost(panes=2)
    async with app.run_test(size=(160, 130)) as pilot:
        streamed_pane, loaded_pane = app.query_one("#pane0", ChatPane), app.query_one("#pane1", ChatPane)
        stream = await stream_reply(pilot, streamed_pane, CHUNKY_TEXT)
        await loaded_pane.add_message(final)
        await settle(pilot)
        markdown = stream.widget.query_one(ChunkedMarkdown)
        starts = [chunk.source[:3] for chunk in markdown.chunks]
        assert not markdown.folds
        # A chunk starts at each kind of block: the margins between them must come out the same.
        assert starts == [
            "Int",
            "```",
            "- l",
            "## ",
            "1. ",
            "> a",
            "| a",
            "Set",
            "   ",
            "***",
            "```",
            "- o",
            "Clo",
        ]

        def lines() -> tuple[list[str], list[str]]:
            loaded = widget_text(app, loaded_pane.message_widgets[0])
            return widget_text(app, stream.widget).splitlines()[1:], loaded.splitlines()[1:]

        await until(pilot, lambda: lines()[0] == lines()[1])  # both panes lay out in their own time
        streamed, loaded_lines = lines()
        assert streamed == loaded_lines
        await stream.finish(final)
        loaded = widget_text(app, loaded_pane.message_widgets[0])
        await until(pilot, lambda: widget_text(app, stream.widget) == loaded)
        assert len(markdown.chunks) == len(starts)  # finished in place
        assert widget_text(app, stream.widget) == loaded


async def test_reference_definitions_render_the_finished_reply_as_one_document(monkeypatch) -> None:
    monkeypatch.setattr(chunked_markdown, "SEAL_CHARS", 10)
    text = "See [the docs] first.\n\nMore text here.\n\n[the docs]: https://example.com\n"
    final = f.assistant(text)["message"]
    app = ChatHost(panes=2)
    async with app.run_test(size=(160, 30)) as pilot:
        streamed_pane, loaded_pane = app.query_one("#pane0", ChatPane), app.query_one("#pane1", ChatPane)
        stream = await stream_reply(pilot, streamed_pane, text)
        markdown = stream.widget.query_one(ChunkedMarkdown)
        assert len(markdown.chunks) > 1
        await stream.finish(final)
        await loaded_pane.add_message(final)
        await settle(pilot)
        assert len(markdown.chunks) == 1 and markdown.source == text
        assert widget_text(app, stream.widget) == widget_text(app, loaded_pane.message_widgets[0])


async def test_a_long_reply_from_the_file_is_mounted_in_chunks_and_reads_like_one_document(
    monkeypatch,
) -> None:
    # As one Markdown, an 80 KB reply took seconds before the first frame; chunked, the first frame
    # shows at once, the rest mounts after it, and far chunks fold.
    text = "".join(f"Paragraph {n} " + "word " * 30 + f"end {n}.\n\n" for n in range(60))
    final = f.assistant(text)["message"]
    app = ChatHost(panes=2)
    async with app.run_test(size=(160, 24)) as pilot:
        whole_pane, chunked_pane = app.query_one("#pane0", ChatPane), app.query_one("#pane1", ChatPane)
        monkeypatch.setattr(chunked_markdown, "LOAD_CHUNKED_CHARS", len(text) + 1)
        await whole_pane.add_message(final)
        monkeypatch.setattr(chunked_markdown, "LOAD_CHUNKED_CHARS", 2000)
        monkeypatch.setattr(chunked_markdown, "SEAL_CHARS", 500)
        await chunked_pane.add_message(final)
        await app.workers.wait_for_complete()
        await settle(pilot)
        whole = whole_pane.message_widgets[0].query_one(ChunkedMarkdown)
        chunked = chunked_pane.message_widgets[0].query_one(ChunkedMarkdown)
        assert len(whole.chunks) == 1 and not whole.folds
        assert chunked.folds and len(chunked.chunks) + len(chunked.folds) > 10
        assert chunked.source == whole.source == text
        assert chunked_pane.virtual_size.height == whole_pane.virtual_size.height
        for y in (chunked_pane.max_scroll_y, chunked_pane.max_scroll_y // 2, 0):
            for pane in (whole_pane, chunked_pane):
                pane.scroll_to(y=y, animate=False, immediate=True)
            await app.workers.wait_for_complete()
            await settle(pilot)
            assert widget_text(app, chunked_pane) == widget_text(app, whole_pane)
        assert "Paragraph 0 " in widget_text(app, chunked_pane)


async def test_far_chunks_fold_and_come_back_when_scrolled_to(monkeypatch) -> None:
    monkeypatch.setattr(chunked_markdown, "SEAL_CHARS", 200)
    text = "".join(f"Paragraph {n} " + "word " * 30 + f"end {n}.\n\n" for n in range(60))
    final = f.assistant(text)["message"]
    app = ChatHost(panes=2)
    async with app.run_test(size=(160, 24)) as pilot:
        streamed_pane, loaded_pane = app.query_one("#pane0", ChatPane), app.query_one("#pane1", ChatPane)
        stream = await stream_reply(pilot, streamed_pane, text)
        await stream.finish(final)
        await loaded_pane.add_message(final)
        await settle(pilot)
        markdown = stream.widget.query_one(ChunkedMarkdown)
        assert markdown.folds and markdown.source == text
        assert "Paragraph 0 " not in "".join(chunk.source for chunk in markdown.chunks)
        # Folds keep the exact height: both panes scroll over the same lines.
        assert streamed_pane.virtual_size.height == loaded_pane.virtual_size.height
        for y in (0, streamed_pane.max_scroll_y // 2):
            for pane in (streamed_pane, loaded_pane):
                pane.scroll_to(y=y, animate=False, immediate=True)
            await app.workers.wait_for_complete()
            await settle(pilot)
            assert widget_text(app, streamed_pane) == widget_text(app, loaded_pane)
            if y == 0:
                assert "Paragraph 0 " in widget_text(app, streamed_pane)  # unfolded again
        await pilot.resize_terminal(120, 24)  # another width: every fold is rendered again
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert not markdown.folds and markdown.source == text
