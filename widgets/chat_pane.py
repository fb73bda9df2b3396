"""The chat pane: a scrolling log of the session's messages that stays fast on long sessions.

``load_messages`` shows a path (session entries or context messages, in order): tool results are
paired with their calls, and only the newest messages up to a line budget are mounted. Scrolling to the
top loads older ones back, keeping what is on screen in place; while the log follows new output, the
oldest widgets are pruned once it grows past a high-water mark. New messages arrive through
``add_message`` / ``add_tool_result`` and streaming replies through ``begin_assistant``. The pane uses
``layout: stream`` and ``anchor()`` so it follows the bottom until the user scrolls away.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from textual import on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.await_remove import AwaitRemove
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.events import Click, Key
from textual.message import Message as TextualMessage
from textual.widgets import Static

from tui.agent.moa_record import MoaRecord
from tui.session.context import entry_to_message
from tui.session.entries import Entry, Message
from widgets.assistant_stream import AssistantStream
from widgets.chat_history import FoldRow, FoldState, HistoryRow, history_items, row_item, row_widget
from widgets.chat_messages import (
    OUTPUT_LINES,
    AssistantMessage,
    ChatMessage,
    MessageHeader,
    assistant_parts,
    error_line_message,
    message_widget,
    result_text,
    type_through,
    user_text,
)
from widgets.moa_group import MOA_ROLE, MoaGroup, moa_message, record_message

DISPLAYED_ROLES = frozenset(
    {"user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)


@dataclass
class ChatItem:
    """One displayed message; an assistant item carries the results of its tool calls."""

    message: Message
    entry_id: str | None = None
    results: dict[str, Message] = field(default_factory=dict)
    summarised: bool = False  # in a compaction's fold (history view): drawn dimmed
    row: HistoryRow | None = None  # a history view row (divider, fold, boundary) rather than a message


def as_message(entry_or_message: Entry | Message) -> tuple[Message | None, str | None]:
    """A context message and its entry id, from a session entry or an already-built message."""
    if "role" in entry_or_message:
        return entry_or_message, None
    moa = moa_message(entry_or_message)  # a Mixture-of-Agents turn's reference answers (not context)
    if moa is not None:
        return moa, entry_or_message.get("id")
    if entry_or_message.get("type") == "custom_message" and not entry_or_message.get("display", True):
        return None, None
    message = entry_to_message(entry_or_message)
    if message is None or message.get("role") not in DISPLAYED_ROLES:
        return None, None
    if message.get("role") == "custom" and not message.get("display", True):
        return None, None
    return message, entry_or_message.get("id")


def paired_items(
    entries: Sequence[Entry | Message], *, compaction_marks: bool = False
) -> list[ChatItem | None]:
    """One item per entry (None where nothing is drawn); a tool result joins its call's item.

    With ``compaction_marks`` compaction entries draw nothing here (the history view draws their rows)."""
    out: list[ChatItem | None] = []
    calls: dict[str, ChatItem] = {}
    for entry in entries:
        if compaction_marks and entry.get("type") == "compaction":
            out.append(None)
            continue
        message, entry_id = as_message(entry)
        item = None
        if message is None:
            pass
        elif message.get("role") == "toolResult" and str(message.get("toolCallId")) in calls:
            calls[str(message.get("toolCallId"))].results[str(message.get("toolCallId"))] = message
        else:
            item = ChatItem(message, entry_id)
            for call_id in tool_call_ids(message):
                calls[call_id] = item
        out.append(item)
    return out


def tool_call_ids(message: Message) -> list[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [str(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]


def estimate_lines(item: ChatItem, width: int = 100) -> int:
    """A rough height of an item, to decide how many fit the initial window and a backfill."""
    message = item.message
    role = message.get("role")
    if item.row is not None or role in ("branchSummary", "compactionSummary"):
        return 2
    if role == "assistant":  # the header and the margin; a text part and the blank row after it; a row
        # per closed thinking or tool call block (counting them closer mounted a 10k session's first
        # screen with 7 messages, not 10 of which 4 were above the view)
        lines = 2
        for kind, payload in assistant_parts(message):
            lines += 2 + payload.count("\n") + len(payload) // width if kind == "text" else 1
        return lines
    if role == "toolResult":
        text = result_text(message)
    elif role == "bashExecution":
        text = str(message.get("output") or "")
    else:
        text = user_text(message.get("content"))
    return 3 + min(OUTPUT_LINES, text.count("\n") + len(text) // width)


class LoadMoreBar(Static):
    """The top row while older messages are not mounted; a click loads them."""

    DEFAULT_CSS = """
    LoadMoreBar { color: $text-muted; text-align: center; height: 1; margin-bottom: 1; }
    LoadMoreBar:hover { color: $accent; }
    LoadMoreBar.-none { display: none; }
    """

    class Pressed(TextualMessage):
        pass

    def show_count(self, count: int) -> None:
        self.set_class(count == 0, "-none")
        self.update(Content(f"▲ {count:,} earlier messages (scroll up or click to load)"))

    def on_click(self, event: Click) -> None:
        event.stop()
        self.post_message(self.Pressed())


class NewerBar(Static):
    """The bottom row after a far jump, while the newer messages are not mounted; a click returns."""

    DEFAULT_CSS = """
    NewerBar { color: $text-muted; text-align: center; height: 1; margin-top: 1; }
    NewerBar:hover { color: $accent; }
    """

    class Pressed(TextualMessage):
        pass

    def show_count(self, count: int) -> None:
        self.update(Content(f"▼ {count:,} newer messages (click or End to return to the latest)"))

    def on_click(self, event: Click) -> None:
        event.stop()
        self.post_message(self.Pressed())


class ChatPane(VerticalScroll):
    """Scrolling log of chat messages with windowed loading, pruning and streaming replies."""

    DEFAULT_CSS = """
    ChatPane { layout: stream; height: 1fr; padding: 0 1; scrollbar-gutter: stable; }
    ChatPane > .-summarised { opacity: 55%; }
    """
    HELP = """
## Chat
The current branch. **F9** switches between the history view (the default: every message of the branch,
with what each compaction summarised folded behind a divider, and a ▼ line where the kept messages start)
and the context view (exactly what the model sees). Scroll to the top to load older messages. Pointing at
a message far back (the timeline, the tree) shows a few messages around it; **End**, the ▼ bar at the
bottom or sending a message returns to the latest.
- **up / down**: move between messages (when one is focused)
- **ctrl+c**: copy the focused message, **ctrl+e**: edit and resend your message
- Typing while the chat or a message has focus goes to the prompt: nothing typed triggers an action.
- Click a tool call, a thinking block or a summary to expand it.
"""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "previous_message", "Previous message", id="chat.previous", show=False),
        Binding("down", "next_message", "Next message", id="chat.next", show=False),
    ]

    EditRequested = ChatMessage.EditRequested

    # The first frame lays out every mounted widget: mount about one screen, backfill the rest on demand.
    INITIAL_ITEMS = 16
    BACKFILL_ITEMS = 30
    BACKFILL_LINES = 300
    # scroll_to_entry mounts at most this many older messages to reach one (a few seconds' work);
    # farther back it shows a window around it instead: JUMP_BEFORE older and JUMP_AFTER newer ones.
    JUMP_ITEMS = 90
    JUMP_BEFORE = 3
    JUMP_AFTER = 20
    PRUNE_HIGH = 3000
    PRUNE_LOW = 1500

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._items: list[ChatItem] = []
        self._mounted: list[ChatMessage] = []
        self._first = 0
        self._calls: dict[str, int] = {}
        self._backfilling: int | None = None  # the drawing (_drawn) a backfill is loading into
        self._bar = LoadMoreBar()
        self._stream: AssistantStream | None = None
        self._stream_item: ChatItem | None = None
        self._stream_calls: list[str] = []  # the streaming reply's tool calls (its message has none yet)
        # Counts whole redraws (load_items, a far jump, its return), which replace the items or the window.
        # The pane's tasks interleave at their awaits (a backfill, the timeline's jump, the follow, the
        # agent): each changes the lists before its first await and, after one, stops if this moved on.
        self._drawn = 0
        # After a far jump, the newer items that are not in _items (shown in the window) yet; the
        # pane works on _items as ever (mounted == _items[_first:]) and rejoins them before any append.
        self._tail: list[ChatItem] | None = None
        self._newer_bar: NewerBar | None = None
        self.view = "history"  # or "context" (tui/screens/chat_view.py draws either)
        # Where printable keys typed on the chat go (the prompt); None leaves them unused.
        self.type_target: Callable[[str], None] | None = None

    @property
    def first_loaded(self) -> int:
        """Index of the oldest mounted item (0 when everything is mounted)."""
        return self._first

    @property
    def items(self) -> list[ChatItem]:
        """Every item of the chat (a far jump's window and the newer ones after it)."""
        return self._items if self._tail is None else [*self._items, *self._tail]

    @property
    def jumped(self) -> bool:
        """Whether a far jump's window is shown (the newest messages are not mounted)."""
        return self._tail is not None

    @property
    def message_widgets(self) -> list[ChatMessage]:
        return list(self._mounted)

    def compose(self) -> ComposeResult:
        yield self._bar

    def on_unmount(self) -> None:
        if self._stream is not None:
            self._stream.close()

    def on_key(self, event: Key) -> None:
        type_through(self, event)

    def take_typing(self, text: str) -> None:
        """Hand typed text to :attr:`type_target` (the screen's prompt) at once, in the key's own queue."""
        if self.type_target is not None:
            self.type_target(text)

    def on_mount(self) -> None:
        self._bar.show_count(0)
        self.anchor()

    # Loading ---------------------------------------------------------------------------------------

    async def load_messages(self, entries: Iterable[Entry | Message]) -> None:
        """Show a sequence of entries or messages in order (the context view: ``displayed_entries``)."""
        await self.load_items([item for item in paired_items(list(entries)) if item is not None])

    async def load_history(self, path: Sequence[Entry]) -> None:
        """Show the whole active path with each compaction's summarised messages folded (the history view).

        A fold the user opened stays open, as far as it was shown, through the redraw (a reply, a
        navigation or a compaction redraws the whole path)."""
        opened = {
            item.row.fold.compaction_id: item.row.state.shown
            for item in self.items  # after a far jump, the newer folds too
            if item.row is not None and item.row.kind == "fold" and item.row.state and item.row.state.expanded
        }
        items = history_items(path)
        if opened:
            items = self._reopen(items, opened)
        await self.load_items(items)

    @staticmethod
    def _reopen(items: list[ChatItem], opened: dict[str, int]) -> list[ChatItem]:
        out: list[ChatItem] = []
        for item in items:
            out.append(item)
            state = item.row.state if item.row is not None and item.row.kind == "fold" else None
            if state is None or item.row is None or item.row.fold.compaction_id not in opened:
                continue
            state.expanded = True
            state.shown = min(max(opened[item.row.fold.compaction_id], 1), len(state.items))
            out += state.items[: state.shown]
            if state.shown < len(state.items):
                state.more_item = row_item("more", state.fold, state)
                out.append(state.more_item)
        return out

    async def load_items(self, items: list[ChatItem]) -> None:
        """Show these items; only the newest part is mounted.

        A reply still streaming is not in the store yet, so no path holds it: it stays, below the path.
        (A redraw comes at any await of the stream: a navigation, a compaction or a follow while it runs.)"""
        live = self._live_reply()
        removing = self.clear(keep=live)
        self._items = items
        self._reindex()
        self._first = self._window_start(len(items), self.INITIAL_ITEMS, max(self.app.size.height, 10))
        self._mounted = [self._widget(item) for item in items[self._first :]]
        mounting = None
        if live is not None and self._stream_item is not None:
            if self._mounted:
                mounting = self.mount_all(self._mounted, before=live)
            self._items.append(self._stream_item)
            self._mounted.append(live)
            self._reindex()  # the reply's calls, at its new index
        else:
            mounting = self.mount_all(self._mounted)
        self._bar.show_count(self._first)
        self.anchor()
        self.call_after_refresh(self._fill_viewport)
        await removing
        if mounting is not None:
            await mounting

    def _reindex(self) -> None:
        """Which item shows each tool call (after items were inserted or removed above the end)."""
        self._calls = {
            call_id: index
            for index, item in enumerate(self._items)
            for call_id in tool_call_ids(item.message)
        }
        streaming = self._index_of(self._stream_item) if self._stream_item is not None else None
        if streaming is not None:
            for call_id in self._stream_calls:
                self._calls[call_id] = streaming

    def _fill_viewport(self) -> None:
        """Heights are estimated before mounting, and Markdown joins single newlines, so text of many
        short lines draws far shorter than estimated: load earlier messages until the pane is full."""
        if self._first > 0 and not self._loading and self.virtual_size.height <= self.size.height:
            self.run_worker(self._fill_worker(), group="chat.backfill")

    async def _fill_worker(self) -> None:
        while self._first > 0 and self.virtual_size.height <= self.size.height:
            if not await self.load_earlier():
                return

    def _live_reply(self) -> AssistantMessage | None:
        stream = self._stream
        if stream is None or stream.finished or stream.widget not in self.children:
            return None
        return stream.widget

    def set_read_only(self, read_only: bool) -> None:
        """A read-only session's messages offer no edit & resend (their headers leave the word out)."""
        self.set_class(read_only, "-read-only")
        for header in self.query(MessageHeader):
            header.refresh()

    def clear(self, keep: ChatMessage | None = None) -> AwaitRemove:
        """Remove every message (but ``keep``); the lists are empty at once, the widgets gone when awaited."""
        self._drawn += 1
        self._tail = None  # a redraw replaces every item, a far jump's window too
        self._drop_newer_bar()
        removing = self.remove_children([widget for widget in self._mounted if widget is not keep])
        self._items, self._mounted, self._calls, self._first = [], [], {}, 0
        self._bar.show_count(0)
        return removing

    def _window_start(self, end: int, max_items: int, max_lines: int) -> int:
        start, lines = end, 0
        while start > 0 and end - start < max_items and (lines < max_lines or start == end):
            start -= 1
            lines += estimate_lines(self._items[start])
        return start

    def _widget(self, item: ChatItem) -> ChatMessage:
        widget: ChatMessage | None
        if item.row is not None:
            widget = row_widget(item.row)
        elif item.message.get("role") == MOA_ROLE:
            widget = MoaGroup(item.message, item.entry_id)
        else:
            widget = message_widget(item.message, item.entry_id, item.results)
        assert widget is not None  # items only hold displayed roles
        if item.summarised:
            widget.add_class("-summarised")
        return widget

    @property
    def _loading(self) -> bool:
        """Whether a backfill of what is drawn now is running (one of a replaced drawing does not count)."""
        return self._backfilling == self._drawn

    async def load_earlier(self) -> int:
        """Mount older messages above the current ones, keeping the visible ones in place; how many (0
        when a redraw or a far jump replaced the window meanwhile)."""
        if self._first == 0 or self._loading:
            return 0
        start = self._window_start(self._first, self.BACKFILL_ITEMS, self.BACKFILL_LINES)
        widgets = [self._widget(item) for item in self._items[start : self._first]]
        anchor = self._mounted[0] if self._mounted else None
        before_y = anchor.virtual_region.y if anchor else 0
        self._mounted[0:0] = widgets
        self._first = start
        self._bar.show_count(start)
        drawn = self._backfilling = self._drawn
        try:
            await self.mount_all(widgets, after=self._bar)
            if anchor is not None:
                await self._hold_in_place(anchor, before_y, drawn)
        finally:
            if self._backfilling == drawn:
                self._backfilling = None
        return len(widgets) if drawn == self._drawn else 0

    async def _hold_in_place(self, anchor: ChatMessage, before_y: int, drawn: int) -> None:
        """Scroll by what the messages mounted above ``anchor`` moved it down, as their heights settle over
        a few refreshes (Markdown mounts its blocks after the message); not once redrawn (it is gone)."""
        for _ in range(3):
            await self._next_refresh()
            if drawn != self._drawn:
                return
            shift = anchor.virtual_region.y - before_y
            if shift:
                self.scroll_to(y=self.scroll_y + shift, animate=False, immediate=True)
                before_y = anchor.virtual_region.y

    async def _next_refresh(self) -> None:
        done = asyncio.Event()
        self.call_after_refresh(done.set)
        await done.wait()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        for widget in self._mounted:
            if isinstance(widget, AssistantMessage):
                widget.reveal_folds()
        if new_value <= 0 < old_value and self._first > 0 and not self._loading:
            self.run_worker(self.load_earlier(), group="chat.backfill")

    # Folds (history view) ------------------------------------------------------------------------

    def _index_of(self, item: ChatItem) -> int | None:
        return next((i for i, shown in enumerate(self._items) if shown is item), None)

    @on(FoldRow.Toggled)
    async def _fold_toggled(self, event: FoldRow.Toggled) -> None:
        event.stop()
        await self.toggle_fold(event.row.state, more=event.more)

    async def toggle_fold(self, state: FoldState, *, more: bool = False) -> None:
        """Show the first chunk of a fold's summarised messages, the next chunk (``more``), or fold them."""
        at = self._index_of(state.fold_item) if state.fold_item is not None else None
        if at is None or at < self._first:
            return  # not drawn (a redraw replaced it)
        self.release_anchor()  # the rows above stay where they are: the user is reading here
        drawn = self._drawn
        if more:
            await self._show_chunk(state, at)
        elif state.expanded:
            await self._fold(state, at)
        else:
            state.expanded = True
            await self._show_chunk(state, at)
        at = self._index_of(state.fold_item) if state.fold_item is not None else None
        if drawn != self._drawn or at is None or at < self._first:
            return  # redrawn (its own rows are up to date), or pruned, meanwhile
        fold_widget = self._mounted[at - self._first]
        if isinstance(fold_widget, FoldRow):
            fold_widget.refresh_text()

    async def _show_chunk(self, state: FoldState, at: int) -> None:
        # The lists change before the first await: a redraw in between (another handler) then
        # replaces them whole and removes these widgets with the rest, leaving none behind.
        insert_at = at + 1 + state.shown
        end = state.shown
        lines = 0
        while (
            end < len(state.items) and end - state.shown < self.BACKFILL_ITEMS and lines < self.BACKFILL_LINES
        ):
            lines += estimate_lines(state.items[end])
            end += 1
        chunk = state.items[state.shown : end]
        more_shown = state.more_item is not None and self._index_of(state.more_item) is not None
        if end < len(state.items) and not more_shown:
            state.more_item = state.more_item or row_item("more", state.fold, state)
            chunk = [*chunk, state.more_item]
        widgets = [self._widget(item) for item in chunk]
        state.shown = end
        offset = insert_at - self._first
        before = self._mounted[offset] if offset < len(self._mounted) else None
        self._items[insert_at:insert_at] = chunk
        self._mounted[offset:offset] = widgets
        self._reindex()
        if before is None and self._newer_bar is not None:
            before = self._newer_bar  # the window's last row stays the bar
        drawn = self._drawn
        if before is not None:
            await self.mount_all(widgets, before=before)
        else:
            await self.mount_all(widgets)
        more_at = self._index_of(state.more_item) if more_shown and state.more_item is not None else None
        if drawn != self._drawn or more_at is None or more_at < self._first:
            return
        if end == len(state.items) and state.more_item is not None:
            await self._remove_items([state.more_item])
        elif isinstance(more := self._mounted[more_at - self._first], FoldRow):
            more.refresh_text()

    async def _fold(self, state: FoldState, at: int) -> None:
        shown = self._items[at + 1 : at + 1 + state.shown]
        if state.more_item is not None and self._index_of(state.more_item) is not None:
            shown.append(state.more_item)
        state.shown, state.expanded = 0, False
        await self._remove_items(shown)

    async def _remove_items(self, items: list[ChatItem]) -> None:
        gone = {id(item) for item in items}
        keep = [(item, index) for index, item in enumerate(self._items) if id(item) not in gone]
        widgets = [
            widget
            for index, widget in enumerate(self._mounted)
            if id(self._items[self._first + index]) in gone
        ]
        focused = self.screen.focused
        if focused is not None and any(w is focused or w in focused.ancestors for w in widgets):
            self.focus()
        self._mounted = [w for w in self._mounted if w not in widgets]
        self._items = [item for item, _ in keep]
        self._reindex()
        await self.remove_children(widgets)

    @on(LoadMoreBar.Pressed)
    def _load_more_pressed(self, event: LoadMoreBar.Pressed) -> None:
        event.stop()
        self.run_worker(self.load_earlier(), group="chat.backfill")

    async def scroll_to_entry(self, entry_id: str) -> bool:
        """Scroll so the message of ``entry_id`` is at the top, loading older messages until it is
        mounted and opening the fold that holds it (history view); False when the chat does not show
        that entry (a tool result shows with its call), or it would take mounting more than
        :attr:`JUMP_ITEMS` messages to get there."""

        def find() -> int | None:
            return next((i for i, item in enumerate(self._items) if item.entry_id == entry_id), None)

        index = find()
        if index is None and self._tail is not None:
            index = next(
                (len(self._items) + i for i, t in enumerate(self._tail) if t.entry_id == entry_id), None
            )
            if index is not None:
                if not await self._jump_window(index):  # a newer message of the hidden tail
                    return False
                index = find()
        if index is not None and self._first - index > self.JUMP_ITEMS:
            if not await self._jump_window(index):
                return False
            index = find()
        if index is None and (state := self._fold_holding(entry_id)) is not None:
            fold_at = self._index_of(state.fold_item) if state.fold_item is not None else None
            everything = self.items
            whole_at = next((i for i, item in enumerate(everything) if item is state.fold_item), None)
            if whole_at is not None and (fold_at is None or self._first - fold_at > self.JUMP_ITEMS):
                if not await self._jump_window(whole_at):  # a fold far back (or among the newer ones hidden)
                    return False
                fold_at = self._index_of(state.fold_item) if state.fold_item is not None else None
            if fold_at is None or not await self._mount_from(fold_at):
                return False
            position = next(i for i, folded in enumerate(state.items) if folded.entry_id == entry_id)
            if position - state.shown > self.JUMP_ITEMS:
                return False  # deep in a long fold: too many messages to mount for one jump
            if not state.expanded:
                await self.toggle_fold(state)
            while (index := find()) is None and state.expanded and state.shown < len(state.items):
                shown = state.shown
                await self.toggle_fold(state, more=True)
                if state.shown == shown:
                    break
        drawn = self._drawn
        if index is None or not await self._mount_from(index):
            return False
        if drawn != self._drawn or not 0 <= index - self._first < len(self._mounted):
            return False  # pruned or redrawn meanwhile
        widget = self._mounted[index - self._first]
        await self._next_refresh()  # the freshly mounted messages need their heights first
        if drawn != self._drawn:
            return False
        self.scroll_to_widget(widget, top=True, animate=False, immediate=True)
        return True

    async def _jump_window(self, index: int) -> bool:
        """Show item ``index`` of :attr:`items` with a few messages around it, not the messages up to the
        newest (mounting each takes tens of ms); the bars say what is above and below. Not while a
        reply streams: its widget stays last. False when not shown, or replaced before it was mounted."""
        if self._live_reply() is not None:
            return False
        everything = self.items
        stop = min(len(everything), index + 1 + self.JUMP_AFTER)
        removing = self.remove_children(list(self._mounted))
        self._drop_newer_bar()
        self._drawn += 1  # like a redraw: a fold toggle or a backfill in flight stops
        drawn = self._drawn
        self._items, tail = everything[:stop], everything[stop:]
        self._tail = tail or None
        self._first = max(0, index - self.JUMP_BEFORE)
        self._mounted = [self._widget(item) for item in self._items[self._first :]]
        self._reindex()
        mounting = [self.mount_all(self._mounted)]
        self._bar.show_count(self._first)
        if tail:
            self._newer_bar = NewerBar()
            self._newer_bar.show_count(len(tail))
            mounting.append(self.mount(self._newer_bar))
        self.release_anchor()  # reading here: new rows must not pull the view down
        await removing
        for mounted in mounting:
            await mounted
        return drawn == self._drawn

    def return_to_latest(self) -> None:
        """Leave a far jump's window: the newest messages are shown again (mounted from the bottom up
        as the pane fills, as at start-up). Synchronous, so a reply can begin at once."""
        if self._tail is None:
            return
        removed = list(self._mounted)
        self._drawn += 1  # a backfill or a jump into the window in flight stops
        self._items = [*self._items, *self._tail]
        self._tail = None
        self._drop_newer_bar()
        self._first, self._mounted = len(self._items), []
        self._reindex()
        self.remove_children(removed)
        self._bar.show_count(self._first)
        self.anchor()
        self.call_after_refresh(self._fill_viewport)

    def _drop_newer_bar(self) -> None:
        if self._newer_bar is not None:
            self._newer_bar.remove()
            self._newer_bar = None

    @on(NewerBar.Pressed)
    def _newer_pressed(self, event: NewerBar.Pressed) -> None:
        event.stop()
        self.return_to_latest()

    def action_scroll_end(self) -> None:
        self.return_to_latest()
        super().action_scroll_end()

    def _fold_holding(self, entry_id: str) -> FoldState | None:
        """The folded run (history view) whose summarised messages hold ``entry_id``."""
        for item in self.items:
            row = item.row
            folded = row.state.items if row is not None and row.kind == "fold" and row.state else ()
            if any(message.entry_id == entry_id for message in folded):
                return row.state if row is not None else None
        return None

    async def _mount_from(self, index: int) -> bool:
        """Load older messages until item ``index`` is mounted; False if that cannot happen, or would take
        more than :attr:`JUMP_ITEMS` of them (each message widget takes tens of ms to mount: 484 took 16 s)."""
        if self._first - index > self.JUMP_ITEMS:
            return False
        drawn = self._drawn
        while drawn == self._drawn and index < self._first:
            if not await self.load_earlier():
                if self._loading:  # a backfill is running: let it finish, then go on
                    await self._next_refresh()
                    continue
                return False
        return drawn == self._drawn

    # Appending -------------------------------------------------------------------------------------

    def shows_entry(self, entry_id: str | None) -> bool:
        """Whether the entry is in the chat already (a redraw of the whole path may have drawn it before
        the event that announces it arrived)."""
        return entry_id is not None and any(item.entry_id == entry_id for item in reversed(self.items))

    async def add_message(self, entry_or_message: Entry | Message) -> ChatMessage | None:
        """Append one entry or context message; a tool result joins its call when that is shown."""
        message, entry_id = as_message(entry_or_message)
        if message is None:
            return None
        if message.get("role") == "toolResult":
            return await self.add_tool_result(message, entry_id)
        return await self._append(ChatItem(message, entry_id))

    async def add_error_line(self, text: str) -> ChatMessage:
        """Append a red line that only the chat shows (not an entry: a redraw of the path drops it)."""
        return await self._append(ChatItem(error_line_message(text)))

    async def add_tool_result(self, message: Message, entry_id: str | None = None) -> ChatMessage | None:
        """Attach a tool result to its call's widget; without a known call it gets its own row."""
        call_id = str(message.get("toolCallId"))
        self.return_to_latest()
        index = self._calls.get(call_id)
        if index is None:
            return await self._append(ChatItem(message, entry_id))
        self._items[index].results[call_id] = message
        if index >= self._first:
            widget = self._mounted[index - self._first]
            if isinstance(widget, AssistantMessage):
                widget.set_tool_result(message)
            return widget
        return None

    async def _append(self, item: ChatItem) -> ChatMessage:
        self.return_to_latest()
        for call_id in tool_call_ids(item.message):
            self._calls[call_id] = len(self._items)
        self._items.append(item)
        widget = self._widget(item)
        self._mounted.append(widget)
        await self.mount(widget)
        self.call_after_refresh(self.prune)
        return widget

    def begin_assistant(self) -> AssistantStream:
        """Start a streaming assistant reply at the bottom of the log."""
        if self._stream is not None:
            self._stream.close()  # a reply that never finished (an error upstream) must not pin GC off
        self.return_to_latest()
        item = ChatItem({"role": "assistant", "content": []})
        self._items.append(item)
        widget = AssistantMessage(item.message)
        self._mounted.append(widget)

        self._stream_calls = []

        def register_call(call_id: str) -> None:
            # Looked up now: a redraw while the reply streamed moved it (and _reindex keeps it after one)
            self._stream_calls.append(call_id)
            self._calls[call_id] = next(i for i, shown in enumerate(self._items) if shown is item)

        def on_finish(message: Message, entry_id: str | None) -> None:
            item.message, item.entry_id = message, entry_id

        self.call_after_refresh(self.prune)
        self._stream, self._stream_item = (
            AssistantStream(widget, self.mount(widget), register_call, on_finish),
            item,
        )
        return self._stream

    def end_stream(self) -> None:
        """End the streaming reply, if any: it is no longer kept through redraws."""
        if self._stream is not None:
            self._stream.close()

    async def discard_stream(self) -> None:
        """Drop the streaming reply's widget: a redraw drew the finished reply from the store first."""
        live = self._live_reply()
        if self._stream is not None:
            self._stream.close()
        if live is not None:
            self._items = [item for item in self._items if item is not self._stream_item]
            self._mounted.remove(live)
            self._reindex()  # its calls point at the stored reply, not past the end
            await live.remove()

    async def begin_moa(self, models: Sequence[str], aggregator: str) -> MoaGroup:
        """Show a Mixture-of-Agents group with every reference waiting; feed it the MoA events."""
        self.return_to_latest()
        item = ChatItem(record_message(MoaRecord(aggregator), models))

        def on_finish(message: Message, entry_id: str | None) -> None:
            item.message, item.entry_id = message, entry_id

        self._items.append(item)
        widget = MoaGroup(item.message, on_finish=on_finish)
        self._mounted.append(widget)
        await self.mount(widget)
        self.call_after_refresh(self.prune)
        return widget

    def prune(self) -> None:
        """While following the bottom, drop the oldest widgets once the log is taller than the high mark."""
        following = self.scroll_y >= self.max_scroll_y - 1
        height = self.virtual_size.height
        if self._loading or not following or height <= self.PRUNE_HIGH:
            return
        removed: list[ChatMessage] = []
        for widget in self._mounted[:-1]:
            if height <= self.PRUNE_LOW:
                break
            height -= widget.outer_size.height + 1  # the one-line margin between messages
            removed.append(widget)
        del self._mounted[: len(removed)]
        self._first += len(removed)
        self._bar.show_count(self._first)
        self.remove_children(removed)

    # Keyboard --------------------------------------------------------------------------------------

    def _focused_index(self) -> int | None:
        node = self.screen.focused
        while node is not None and node is not self:
            if isinstance(node, ChatMessage) and node in self._mounted:
                return self._mounted.index(node)
            node = node.parent
        return None

    def _load_earlier_if_at_top(self) -> None:
        # Scrolling to the top loads older messages, but a key pressed already at the top scrolls
        # nowhere (and a window shorter than the pane cannot scroll at all): load them for the key.
        if self.scroll_y <= 0 and self._first > 0 and not self._loading:
            self.run_worker(self.load_earlier(), group="chat.backfill")

    def _scroll_or_load(self, scroll: Callable[[], None]) -> None:
        try:
            scroll()
        except SkipAction:  # nothing to scroll: the key still loads older messages, if there are any
            if self._first == 0:
                raise
        self._load_earlier_if_at_top()

    def action_scroll_home(self) -> None:
        self._scroll_or_load(super().action_scroll_home)

    def action_page_up(self) -> None:
        self._scroll_or_load(super().action_page_up)

    async def action_previous_message(self) -> None:
        index = self._focused_index()
        if index is None:
            self.scroll_up()
            self._load_earlier_if_at_top()
            return
        if index == 0:
            index += await self.load_earlier()
            if index == 0:
                return
        self._mounted[index - 1].focus()

    def action_next_message(self) -> None:
        index = self._focused_index()
        if index is None:
            self.scroll_down()
        elif index + 1 < len(self._mounted):
            self._mounted[index + 1].focus()
