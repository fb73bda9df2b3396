"""The history view's rows: compaction dividers, folds of summarised messages, the ▼ kept boundary.

:func:`history_items` turns a whole active path into the chat pane's items: every message in order,
with each compaction's summarised run (:func:`tui.compaction.history.history_layout`) replaced by a
divider (what happened, and the summary card; Enter opens the inspector) and a fold row (Enter or a
click shows the summarised messages, dimmed, a chunk at a time). The summarised messages are built
as items only when something asks for them (a fold opened, a search, a jump to an entry): on a long
session most of the path is folded, and building it all cost a 10k-entry session's first frame
15-20 ms. The latest compaction's ``firstKeptEntryId`` is a ▼ line where the kept region starts, and
each compaction entry leaves a ◆ mark where it was written.
Text from the session is sanitised and never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.events import Click
from textual.message import Message as TextualMessage
from textual.widgets import Static

from tui.compaction.history import CompactionFold, divider_text, history_layout, tokens_short
from tui.session.entries import Entry
from tui.session.sanitize import sanitize
from widgets.chat_messages import ChatMessage, SummaryBlock

if TYPE_CHECKING:
    from widgets.chat_pane import ChatItem

ROW_ROLE = "kompakt.historyRow"  # the role of a row item's placeholder message (no context message has it)


@dataclass(eq=False)
class FoldState:
    """A fold's summarised messages (built when first asked for, not mounted) and how many the pane shows."""

    fold: CompactionFold
    build: Callable[[], list[ChatItem]] | None = None  # makes ``items`` (once); None: the fold is empty
    shown: int = 0
    expanded: bool = False
    fold_item: ChatItem | None = None  # the fold row's item in the pane
    more_item: ChatItem | None = None  # the "more" row below a shown chunk, once there is one
    _items: list[ChatItem] | None = None

    @property
    def items(self) -> list[ChatItem]:
        if self._items is None:
            build, self.build = self.build, None
            self._items = build() if build is not None else []
        return self._items


@dataclass(eq=False)
class HistoryRow:
    """What a row item stands for: ``kind`` is divider, fold, more, boundary or mark."""

    kind: str
    fold: CompactionFold
    state: FoldState | None = None


def row_item(kind: str, fold: CompactionFold, state: FoldState | None = None) -> ChatItem:
    from widgets.chat_pane import ChatItem

    entry_id = fold.compaction_id if kind == "divider" else None
    return ChatItem({"role": ROW_ROLE}, entry_id, row=HistoryRow(kind, fold, state))


def history_items(path: Sequence[Entry]) -> list[ChatItem]:
    """The chat items of the history view of ``path`` (see the module docstring)."""
    from widgets.chat_pane import paired_items

    layout = history_layout(path)
    folds_at: dict[int, list[CompactionFold]] = {}
    folded = [False] * len(path)
    for fold in layout.folds:
        folds_at.setdefault(fold.start, []).append(fold)
        folded[fold.start : fold.end] = [True] * (fold.end - fold.start)
    marks = {fold.index: fold for fold in layout.folds}
    latest = layout.latest
    boundary = latest.kept_from if latest is not None else None
    # What is drawn unfolded, paired now (a tool result joins its call across a fold, as the path has it);
    # each fold pairs its own messages when it is built.
    shown = [i for i in range(len(path)) if not folded[i]]
    per_entry = dict(zip(shown, paired_items([path[i] for i in shown], compaction_marks=True), strict=True))

    def entry_item(i: int, item: ChatItem | None, out: list[ChatItem]) -> None:
        if i in marks:
            out.append(row_item("mark", marks[i]))
        if item is not None:
            out.append(item)

    def fold_items(fold: CompactionFold) -> Callable[[], list[ChatItem]]:
        def build() -> list[ChatItem]:
            out: list[ChatItem] = []
            run = path[fold.start : fold.end]
            for i, item in enumerate(paired_items(run, compaction_marks=True), fold.start):
                if item is not None:
                    item.summarised = fold.summarises(path[i])  # else kept (pinned)
                entry_item(i, item, out)
            return out

        return build

    items: list[ChatItem] = []
    i = 0
    while i < len(path):
        starting = folds_at.pop(i, None)
        if starting:  # a fold that ends where the next one starts: that one is drawn next round
            for fold in starting:
                state = FoldState(fold, fold_items(fold) if fold.end > fold.start else None)
                state.fold_item = row_item("fold", fold, state)
                items += [row_item("divider", fold), state.fold_item]
                i = max(i, fold.end)
            continue
        if i == boundary and latest is not None:
            items.append(row_item("boundary", latest))
        entry_item(i, per_entry.get(i), items)
        i += 1
    for folds in folds_at.values():  # folds that start at the end of the path (nothing after them)
        for fold in folds:
            state = FoldState(fold)
            state.fold_item = row_item("fold", fold, state)
            items += [row_item("divider", fold), state.fold_item]
    return items


def message_count(item: ChatItem) -> int:
    """How many session messages an item draws (an assistant reply draws its tool results too)."""
    return 0 if item.row is not None else 1 + len(item.results)


class _Row(ChatMessage):
    """A one-line row of the history view (focusable, so ↑/↓ walk through it like a message)."""

    DEFAULT_CSS = """
    _Row { border-left: none; padding: 0 1; height: auto; color: $text-muted; }
    """
    ACTIONS = ()

    def __init__(self, row: HistoryRow, *, classes: str = "") -> None:
        super().__init__({"role": ROW_ROLE}, None, classes=classes)  # the divider stands for the entry
        self.row = row

    def text(self) -> str:
        return ""

    def copy_text(self) -> str:
        return self.text()

    def compose(self) -> ComposeResult:
        yield Static(Content(sanitize(self.text())), classes="row--text")


class CompactionDivider(ChatMessage):
    """Where a compaction's summarised messages were: what happened, and its summary (Enter: inspector)."""

    DEFAULT_CSS = """
    CompactionDivider {
        border-left: none; border-top: heavy $warning 60%; padding: 0 1;
        & > MessageHeader > .message--title { color: $warning; }
        & > Collapsible { background: transparent; border-top: none; padding: 0; }
        & CollapsibleTitle { color: $warning 80%; }
        & Collapsible > Contents { padding: 0 0 0 2; }
    }
    """
    HELP = """
## Compaction divider
What a compaction did: the messages it summarised (folded below), tokens before → after, why, how long.
- **enter**: open the compaction inspector
- click **summary** to read the summary it wrote
"""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "inspect", "Inspect", id="chat.inspect"),
    ]
    ACTIONS = ("inspect", "copy")
    HEADER_WRAPS = True

    class InspectRequested(TextualMessage):
        """Open the compaction inspector on ``compaction_id``."""

        def __init__(self, compaction_id: str) -> None:
            super().__init__()
            self.compaction_id = compaction_id

    def __init__(self, row: HistoryRow) -> None:
        super().__init__({"role": ROW_ROLE}, row.fold.compaction_id)
        self.row = row

    @property
    def summary(self) -> str:
        return str(self.row.fold.compaction.get("summary") or "")

    def title(self) -> Content:
        return Content("━ " + sanitize(divider_text(self.row.fold)))

    def copy_text(self) -> str:
        return f"{divider_text(self.row.fold)}\n\n{self.summary}"

    def compose_body(self) -> ComposeResult:
        fold = self.row.fold
        yield SummaryBlock(
            sanitize(self.summary),
            f"Summary ({tokens_short(fold.tokens_after)} tokens in the context after it)",
        )

    def action_inspect(self) -> None:
        self.post_message(self.InspectRequested(self.row.fold.compaction_id))


class FoldRow(_Row):
    """The fold of a compaction's summarised messages: Enter or a click shows or hides them."""

    DEFAULT_CSS = """
    FoldRow:hover { color: $accent; }
    """
    HELP = """
## Folded messages
The messages a compaction summarised: the model no longer sees them, only the summary above.
- **enter** or a click: show them (dimmed), or fold them again
"""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_fold", "Show/fold", id="chat.fold"),
    ]

    class Toggled(TextualMessage):
        """Show (or fold again) the summarised messages of ``state``."""

        def __init__(self, row: FoldRow, more: bool = False) -> None:
            super().__init__()
            self.row = row
            self.more = more

    @property
    def state(self) -> FoldState:
        assert self.row.state is not None
        return self.row.state

    def text(self) -> str:
        count = self.row.fold.messages
        noun = "message" if count == 1 else "messages"
        if not self.state.items:
            return f"  ({count:,} summarised {noun}: none of them is on this path)"
        if self.state.expanded:
            return f"▾ {count:,} summarised {noun}, dimmed below (enter or click folds them)"
        return f"▸ {count:,} summarised {noun} folded (enter or click shows them)"

    def refresh_text(self) -> None:
        self.query_one(".row--text", Static).update(Content(sanitize(self.text())))

    def action_toggle_fold(self) -> None:
        self.post_message(self.Toggled(self))

    def on_click(self, event: Click) -> None:
        event.stop()
        self.focus()
        self.post_message(self.Toggled(self))


class MoreRow(FoldRow):
    """Below a chunk of an opened fold: Enter or a click shows the next chunk."""

    def text(self) -> str:
        rest = sum(message_count(item) for item in self.state.items[self.state.shown :])
        return f"▸ {rest:,} more summarised messages (enter or click shows more)"

    def action_toggle_fold(self) -> None:
        self.post_message(self.Toggled(self, more=True))

    def on_click(self, event: Click) -> None:
        event.stop()
        self.focus()
        self.post_message(self.Toggled(self, more=True))


class BoundaryLine(_Row):
    """▼ where the latest compaction's kept region starts (its ``firstKeptEntryId``)."""

    DEFAULT_CSS = """
    BoundaryLine { color: $success; text-style: bold; border-top: dashed $success 60%; }
    """

    def text(self) -> str:
        kept = str(self.row.fold.compaction.get("firstKeptEntryId") or "")
        return f"▼ kept from here (firstKeptEntryId {kept}): the model sees the summary and everything below"


class CompactionMark(_Row):
    """◆ where a compaction entry was written (its summary is at its divider, above)."""

    def text(self) -> str:
        return f"◆ compaction {self.row.fold.compaction_id} written here; its summary is at the divider above"


_ROWS: dict[str, type[ChatMessage]] = {
    "fold": FoldRow,
    "more": MoreRow,
    "boundary": BoundaryLine,
    "mark": CompactionMark,
}


def row_widget(row: HistoryRow) -> ChatMessage:
    if row.kind == "divider":
        return CompactionDivider(row)
    widget = _ROWS[row.kind]
    assert issubclass(widget, _Row)
    return widget(row)
