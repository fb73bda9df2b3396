"""Start-up work for the first frame (issue 13): what runs before it, and what is left for after it."""

from __future__ import annotations

import gc
import re
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Collapsible

from tests.pages import screen_settled, wait_until
from tui.app import KompaktApp
from tui.launch import Launch
from widgets import gc_pause
from widgets.chat_pane import ChatPane


class Recording(KompaktApp):
    """Counts the cyclic collector's passes from the main screen's creation until the first frame."""

    def __init__(self, launch: Launch) -> None:
        super().__init__(launch, start_background=False)
        self.passes_before_frame: int | None = None
        self.gc_enabled_after_frame: bool | None = None
        self._passes = 0
        self._counting = False

    def get_default_screen(self) -> Any:
        self._counting = True  # the session, the chat and the layout are made from here on
        return super().get_default_screen()

    def count(self, phase: str, _info: dict[str, Any]) -> None:
        if phase == "start" and self._counting and self.passes_before_frame is None:
            self._passes += 1

    async def _after_first_frame(self) -> None:
        self.passes_before_frame = self._passes
        await super()._after_first_frame()
        self.gc_enabled_after_frame = gc.isenabled()


async def test_no_collector_pass_before_the_first_frame_and_it_is_back_after(tmp_path: Path) -> None:
    assert gc.isenabled()
    app = Recording(Launch("new", cwd=tmp_path))
    gc.callbacks.append(app.count)
    try:
        async with app.run_test() as pilot:
            await wait_until(pilot, lambda: app.gc_enabled_after_frame is not None, "the first frame")
            assert app.passes_before_frame == 0
            assert app.gc_enabled_after_frame is True
            assert gc_pause.streams_open() == 0
    finally:
        gc.callbacks.remove(app.count)
    assert gc.isenabled()


class ChatHost(App[None]):
    def compose(self) -> ComposeResult:
        yield ChatPane()


async def test_mounting_collapsed_blocks_restyles_none_of_them() -> None:
    """A collapsed tool call, thinking block or summary is styled once, as it mounts: Collapsible's own
    mount handler used to add ``-collapsed`` then and restyle the block's whole subtree again."""
    reply = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "why"},
            {"type": "text", "text": "reading"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}},
        ],
    }
    result = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [{"type": "text", "text": "x"}],
    }
    summary = {"role": "compactionSummary", "summary": "what came before", "tokensBefore": 900}
    app = ChatHost()
    restyled: list[object] = []
    async with app.run_test() as pilot:
        pane = app.query_one(ChatPane)
        update_styles = app.update_styles

        def counting(node: Any = None, **options: Any) -> None:
            if isinstance(node, Collapsible):
                restyled.append(node)
            update_styles(node, **options)

        app.update_styles = counting  # type: ignore[method-assign]
        await pane.load_messages([summary, {"role": "user", "content": "go"}, reply, result])
        blocks = await wait_until(pilot, lambda: list(pane.query(Collapsible)), "the blocks mounted")
        await wait_until(pilot, lambda: all(block.is_mounted for block in blocks), "the blocks mounted")
        assert {type(block).__name__ for block in blocks} >= {"ToolCallView", "ThinkingBlock", "SummaryBlock"}
        assert all(block.collapsed and block.has_class("-collapsed") for block in blocks)
        assert restyled == []
        blocks[0].collapsed = False  # expanding still works as before
        await wait_until(pilot, lambda: not blocks[0].has_class("-collapsed"), "the block expanded")


async def test_collapsed_blocks_build_their_bodies_only_when_first_opened() -> None:
    """A stored reply's tool call and thinking mount their title alone (issue 13: their bodies were a fifth
    of a long session's first-screen widgets); opening one shows what it always showed, and a result or
    streamed arguments that came while it was closed are in it."""
    from tests.test_tui_chat import widget_text
    from widgets.chat_messages import AssistantMessage, ThinkingBlock, ToolCallView
    from widgets.chunked_markdown import ChunkedMarkdown

    reply = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "first **why**"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}},
            {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "ls"}},
        ],
    }
    result = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [{"type": "text", "text": "x = 1"}],
    }
    app = ChatHost()
    async with app.run_test(size=(100, 40)) as pilot:
        pane = app.query_one(ChatPane)
        await pane.load_messages([{"role": "user", "content": "go"}, reply, result])
        message = await wait_until(pilot, lambda: next(iter(pane.query(AssistantMessage)), None), "the reply")
        await wait_until(pilot, lambda: message.is_mounted, "the reply mounted")
        thinking = message.query_one(ThinkingBlock)
        read, bash = message.query(ToolCallView)
        assert not list(message.query(ChunkedMarkdown)) and not list(message.query(".tool--args"))
        assert not (thinking.body_built or read.body_built or bash.body_built)
        # Not even an empty Contents: a closed block is its title alone until it is first opened.
        assert [type(w).__name__ for w in read.children] == ["CollapsibleTitle"]
        bash.set_args_text('{"command": "ls -')  # arrives (streams) while it is closed
        bash.set_result({"role": "toolResult", "toolCallId": "c2", "content": "total 0"})
        for block in (thinking, read, bash):
            block.collapsed = False
        await wait_until(pilot, lambda: len(message.query(".tool--output")) == 2, "the bodies")
        await screen_settled(pilot)
        text = widget_text(app, message)
        assert "first why" in text and '"path": "a.py"' in text and "x = 1" in text
        assert '{"command": "ls -' in text and "total 0" in text
        thinking.collapsed = True
        thinking.collapsed = False  # built once
        await screen_settled(pilot)
        assert len(message.query(ChunkedMarkdown)) == 1


async def test_a_summary_makes_its_markdown_only_when_first_opened() -> None:
    """A compaction or branch summary mounts collapsed with no Markdown in it (issue 13: in a long
    session's first screen it was the one Markdown left); opened, it shows its summary as Markdown."""
    from tests.test_tui_chat import widget_text
    from widgets.chat_messages import SummaryBlock
    from widgets.chunked_markdown import ChatMarkdown

    summaries = [
        {"role": "compactionSummary", "summary": "Goal: **parse** the file", "tokensBefore": 900},
        {"role": "branchSummary", "summary": "Tried `ls` on the branch", "fromId": "ab12cd34"},
    ]
    app = ChatHost()
    async with app.run_test(size=(100, 40)) as pilot:
        pane = app.query_one(ChatPane)
        await pane.load_messages(summaries)
        blocks = await wait_until(pilot, lambda: list(pane.query(SummaryBlock)), "the summaries")
        await wait_until(pilot, lambda: len(blocks) == 2 and all(b.is_mounted for b in blocks), "mounted")
        assert not pane.query(ChatMarkdown) and not any(block.body_built for block in blocks)
        for block in blocks:
            block.collapsed = False
        await wait_until(pilot, lambda: len(pane.query(ChatMarkdown)) == 2, "the Markdown of both")
        await screen_settled(pilot)
        text = widget_text(app, pane)
        assert "Goal: parse the file" in text and "Tried ls on the branch" in text


def test_opening_a_session_copies_its_bytes_no_more_than_once(tmp_path: Path) -> None:
    """The file is read once; the load neither strips it nor slices its body off the header (each a
    whole copy of tens of megabytes on a big session, ~40 ms of a 10k session's first frame)."""
    import tracemalloc

    from bench.gen_session import generate
    from tui.session.store import SessionStore

    path = generate(tmp_path / "s.jsonl", entries=300, seed=2)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        store = SessionStore.open(path, read_only=True)
        retained, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(store.entries) > 250
    # At the peak: the file's bytes and the entries decoded so far; a copy of the body would add ~size.
    assert peak - retained < 1.5 * size, (peak - retained, size)
    assert store._lines == path.read_bytes().count(b"\n")


class FirstFrame(KompaktApp):
    """Records, up to the first frame, how often each widget was styled and how often the screen was laid out."""

    def __init__(self, launch: Launch) -> None:
        super().__init__(launch, start_background=False)
        self.styled: dict[int, int] = {}
        self.layouts = 0
        self.frame_done = False
        apply = self.stylesheet.apply

        def counting(node: Any, *args: Any, **kwargs: Any) -> None:
            if not self.frame_done:
                self.styled[id(node)] = self.styled.get(id(node), 0) + 1
            apply(node, *args, **kwargs)

        self.stylesheet.apply = counting  # type: ignore[method-assign]

    def get_default_screen(self) -> Any:
        screen = super().get_default_screen()
        refresh_layout = screen._refresh_layout

        def counting(*args: Any, **kwargs: Any) -> None:
            if not self.frame_done:
                self.layouts += 1
            refresh_layout(*args, **kwargs)

        screen._refresh_layout = counting  # type: ignore[method-assign]
        return screen

    async def _after_first_frame(self) -> None:
        self.frame_done = True
        self.chat_widgets = list(self.main.chat.query("*"))
        await super()._after_first_frame()


async def test_the_first_frame_styles_each_chat_widget_once_and_lays_out_twice(tmp_path: Path) -> None:
    """Before the first frame, every widget of the chat was styled three times (as it mounted, when the
    screen resumed, when the first Resize set the height's breakpoint class) and the screen was laid out
    five times (three Resizes of the size it already had)."""
    from bench.gen_session import generate

    path = generate(tmp_path / "s.jsonl", entries=400, seed=3, cwd=str(tmp_path))
    app = FirstFrame(Launch("open", path, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.frame_done, "the first frame")
        assert len(app.chat_widgets) > 20
        counts = [app.styled.get(id(widget), 0) for widget in app.chat_widgets]
        # No second pass over them (one widget whose own class changes after it mounts is restyled).
        assert sum(counts) < 1.2 * len(counts), [
            (type(w).__name__, c) for w, c in zip(app.chat_widgets, counts, strict=True)
        ]
        # The resume's layout, and the one the scroll bars' new virtual sizes ask for.
        assert app.layouts <= 2, app.layouts
        assert app.main.has_class("-roomy")
        # A real resize still lays out and changes the breakpoint class.
        tall = app.main.chat.size.height
        await pilot.resize_terminal(120, 20)
        await wait_until(pilot, lambda: app.main.has_class("-low"), "the -low class")
        assert not app.main.has_class("-roomy")
        await wait_until(pilot, lambda: 0 < app.main.chat.size.height < tall, "the chat laid out shorter")


class Frame(KompaktApp):
    """Keeps what the first frame showed, and whether the session's tree index existed by then."""

    def __init__(self, launch: Launch) -> None:
        super().__init__(launch, start_background=False)
        self.frame_text: str | None = None
        self.tree_built_at_frame: bool | None = None

    async def _after_first_frame(self) -> None:
        from tests.pages import rendered_text

        self.frame_text = rendered_text(self)
        self.tree_built_at_frame = self.store.tree_built
        await super()._after_first_frame()


async def test_the_tree_index_is_built_after_a_complete_first_frame(tmp_path: Path) -> None:
    """The first frame shows the chat's newest message without the tree index (20-30 ms of a 10k
    session's first frame); right after it the index is built, equal to one built from the entries,
    and the status and timeline arrive as before."""
    from bench.gen_session import generate
    from tests.pages import MainPage
    from tui.session.tree import TreeIndex

    path = generate(tmp_path / "s.jsonl", entries=400, seed=4, cwd=str(tmp_path))
    app = Frame(Launch("open", path, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        page = MainPage(pilot)
        screen = await page.ready()
        assert app.tree_built_at_frame is False
        assert app.store.tree_built
        fresh = TreeIndex(app.store.entries)
        assert app.store.tree.children == fresh.children and app.store.tree.roots == fresh.roots
        last = page.chat_texts()[-1].strip().splitlines()[-1].strip()
        assert last and last[:40] in (app.frame_text or ""), (last, app.frame_text)
        assert screen.timeline.timeline is not None
        figure = re.compile(r"\d[\d.]*k/\d[\d.]*k \(\d+%\)")  # the context figure: 103.2k/128.0k (81%)
        await wait_until(pilot, lambda: figure.search(page.status_text()), "the status figure")
