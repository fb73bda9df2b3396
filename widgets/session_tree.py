"""The session tree list: pi's ``/tree`` rows drawn with Textual's line API.

:class:`SessionTreeView` renders the rows of the headless :class:`~tui.session.tree_view.TreeSelector`
(cursor, dim prefix, fold glyphs, active-path marker, labels, kind-coloured text, ``← active``) and
maps pi's keys onto it: wrapping movement, paging, fold-or-up / unfold-or-down, the five filters and
the cycle, and search as you type. Only visible rows are formatted, and formatted rows are cached as
strips, so a cursor move on a 10k-entry session repaints two lines (or one scroll step). It posts
messages upward and never reaches into its parents; chrome (title, search line, footer) belongs to
the pane that hosts it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events, on
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import Worker

from tui.session.display import flat
from tui.session.sanitize import sanitize
from tui.session.tree import TreeIndex
from tui.session.tree_view import FILTER_CYCLE, TEXT_COLUMNS, BuiltView, FilterMode, Row, TreeSelector
from widgets.footer import FooterKeys
from widgets.read_only import session_read_only
from widgets.worker_failures import pass_failure_on

LOADING_TEXT = "Loading the session tree…"
LOADING_FOOTER = "(loading…)"
BUSY_TAG = " …"  # after the footer while a big tree's rows for a new filter or query are being built
BUSY_TEXT = "Searching…"
_ROLE_PREFIXES = {"user": "user:", "assistant": "assistant:"}
_KIND_CLASSES = {
    "user": "session-tree--text",
    "assistant": "session-tree--text",
    "tool": "session-tree--tool",
    "summary": "session-tree--summary",
    "compaction": "session-tree--compaction",
    "meta": "session-tree--meta",
}


class _ViewMessage(Message):
    """A message from one :class:`SessionTreeView`, which is its ``control`` (for ``@on`` selectors)."""

    def __init__(self, view: SessionTreeView) -> None:
        super().__init__()
        self.view = view

    @property
    def control(self) -> SessionTreeView:
        return self.view


_ACTIVE_MARKER = "  ← active"  # after the leaf's text (one cell a character)
_MIN_TEXT_BESIDE_MARKER = 12  # a narrower row cuts the marker with the text, as any other row


class SessionTreeView(ScrollView, can_focus=True):
    """pi's session tree as a virtual list over a :class:`TreeSelector`."""

    HELP = """\
## Session tree

- **↑/↓** move (wrapping), **←/→**, **PgUp/PgDn**, **Ctrl+B/Ctrl+F** page, **Home/End** first/last row
- **Ctrl+←/Alt+←** fold the branch, or jump to the previous branch start
- **Ctrl+→/Alt+→** unfold, or jump down to the next branch point
- **Ctrl+D** default filter, **Ctrl+T** no tools, **Ctrl+U** user only, **Ctrl+L** labelled, **Ctrl+A** all;
  **Ctrl+O / Ctrl+Shift+O** cycle the filters
- Type to search (every word must match); **Backspace** deletes, **Esc** clears the search or closes
- **Enter** goes to the entry, **Shift+L** labels it, **Shift+T** shows when each label was set;
  click selects, double click goes there
"""

    DEFAULT_CSS = """
    SessionTreeView {
        overflow-x: hidden;
        overflow-y: auto;
        background: $surface;
    }
    SessionTreeView > .session-tree--cursor { color: $text-accent; text-style: bold; }
    SessionTreeView > .session-tree--prefix { color: $foreground-muted; }
    SessionTreeView > .session-tree--active { color: $text-success; }
    SessionTreeView > .session-tree--label { color: $text-warning; }
    SessionTreeView > .session-tree--label-time { color: $foreground-muted; }
    SessionTreeView > .session-tree--user { color: $text-primary; }
    SessionTreeView > .session-tree--assistant { color: $text-warning; }
    SessionTreeView > .session-tree--text { color: $foreground; }
    SessionTreeView > .session-tree--tool { color: $foreground-muted; }
    SessionTreeView > .session-tree--summary { color: $text-success; }
    SessionTreeView > .session-tree--compaction { color: $text-accent; text-style: bold; }
    SessionTreeView > .session-tree--meta { color: $foreground-muted; text-style: italic; }
    SessionTreeView > .session-tree--leaf { color: $text-success; text-style: bold; }
    SessionTreeView > .session-tree--selected { background: $primary 25%; text-style: bold; }
    SessionTreeView:focus > .session-tree--selected { background: $primary 45%; }
    SessionTreeView > .session-tree--empty { color: $foreground-muted; text-style: italic; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "session-tree--cursor",
        "session-tree--prefix",
        "session-tree--active",
        "session-tree--label",
        "session-tree--label-time",
        "session-tree--user",
        "session-tree--assistant",
        "session-tree--text",
        "session-tree--tool",
        "session-tree--summary",
        "session-tree--compaction",
        "session-tree--meta",
        "session-tree--leaf",
        "session-tree--selected",
        "session-tree--empty",
    }

    # The footer's keys, kept to the last as the row narrows: the fold and filter keys, which the pane's
    # hint line names too, go first, then the screen's; the key that closes the tree (F2 for the pane, F3
    # for the full tree) stays with Enter and Shift+L (widgets/footer.py).
    FOOTER_KEYS: ClassVar[FooterKeys] = {
        "navigate": (None, None),
        "label": (None, None),
        "command('toggle_tree')": (None, None),
        "close": (None, None),
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False, id="tree.up"),
        Binding("down", "cursor_down", "Down", show=False, id="tree.down"),
        Binding("left,pageup,ctrl+b", "page_up", "Page up", show=False, id="tree.page_up"),
        Binding("right,pagedown,ctrl+f", "page_down", "Page down", show=False, id="tree.page_down"),
        Binding("home", "edge(-1)", "First row", show=False, id="tree.first"),
        Binding("end", "edge(1)", "Last row", show=False, id="tree.last"),
        Binding("ctrl+left,alt+left", "fold_or_up", "Fold/up", id="tree.fold_or_up"),
        Binding("ctrl+right,alt+right", "unfold_or_down", "Unfold/down", id="tree.unfold_or_down"),
        Binding("ctrl+d", "set_filter('default')", "Default filter", show=False, id="tree.filter.default"),
        Binding("ctrl+t", "toggle_filter('no-tools')", "No tools", show=False, id="tree.filter.no_tools"),
        Binding("ctrl+u", "toggle_filter('user-only')", "User only", show=False, id="tree.filter.user_only"),
        Binding(
            "ctrl+l", "toggle_filter('labeled-only')", "Labelled", show=False, id="tree.filter.labeled_only"
        ),
        Binding("ctrl+a", "toggle_filter('all')", "All entries", show=False, id="tree.filter.all"),
        Binding("ctrl+o", "cycle_filter(1)", "Next filter", id="tree.filter.next"),
        Binding("ctrl+shift+o", "cycle_filter(-1)", "Previous filter", show=False, id="tree.filter.previous"),
        Binding("enter", "navigate", "Go here", id="tree.navigate"),
        Binding("L,shift+l", "label", "Label", id="tree.label"),
        # Bound, so a capital L or T never reaches the search (as in pi 0.73.1).
        Binding("T,shift+t", "toggle_label_times", "Label times", show=False, id="tree.label_times"),
        Binding("U,shift+u", "compaction('uncompact')", "Undo compaction", show=False, id="tree.uncompact"),
        Binding("I,shift+i", "compaction('inspect')", "Inspect compaction", show=False, id="tree.inspect"),
        Binding("backspace", "backspace", "Delete search char", show=False, id="tree.search.backspace"),
        Binding("escape", "escape", "Clear search / close", show=False, id="tree.escape"),
    ]

    class Highlighted(_ViewMessage):
        """The cursor moved to another entry."""

        def __init__(self, view: SessionTreeView, entry_id: str | None) -> None:
            super().__init__(view)
            self.entry_id = entry_id

    class NavigateRequested(_ViewMessage):
        """Enter (or a double click) on an entry: the host decides what navigating means."""

        def __init__(self, view: SessionTreeView, entry_id: str) -> None:
            super().__init__(view)
            self.entry_id = entry_id

    class LabelRequested(_ViewMessage):
        """Shift+L on an entry; ``current_label`` pre-fills the label prompt."""

        def __init__(self, view: SessionTreeView, entry_id: str, current_label: str | None) -> None:
            super().__init__(view)
            self.entry_id = entry_id
            self.current_label = current_label

    class CompactionActionRequested(_ViewMessage):
        """Shift+U / Shift+I on a row: undo or inspect that compaction (the main screen says so when it is
        not one); ``action`` is "uncompact" or "inspect"."""

        def __init__(self, view: SessionTreeView, entry_id: str, action: str) -> None:
            super().__init__(view)
            self.entry_id = entry_id
            self.action = action

    class Closed(_ViewMessage):
        """Escape with an empty search query."""

    class StatusChanged(_ViewMessage):
        """The search query or the ``(i/n) [filter]`` footer changed."""

        def __init__(self, view: SessionTreeView, query: str, footer: str) -> None:
            super().__init__(view)
            self.query = query
            self.footer = footer

    class _Built(Message):
        """A worker thread built the rows of ``selector``'s wanted view."""

        def __init__(self, selector: TreeSelector, built: BuiltView | None) -> None:
            super().__init__()
            self.selector = selector
            self.built = built

    background_from: ClassVar[int] = 20_000
    """Trees of at least this many entries build their rows on a worker thread, off the event loop
    (about 0.1 s of building at 10k entries, 1 s at 100k); smaller ones build at once."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.selector: TreeSelector | None = None
        self._building = False  # a worker thread is building rows
        self._build_queued = False  # a build starts once the keys already queued are handled
        self._strips: LRUCache[tuple[str, bool, int], Strip] = LRUCache(1024)
        self._styles: dict[str, Style] = {}
        self._cached_rows: list[Row] | None = None
        self._status: tuple[str, str] = ("", "")

    # --- public API ---------------------------------------------------------------------------
    def set_session(
        self,
        tree_index: TreeIndex,
        leaf_id: str | None,
        *,
        filter_mode: FilterMode = "default",
        selected_id: str | None = None,
    ) -> None:
        """Show a session's tree, selecting ``selected_id`` (default: the leaf)."""
        self.selector = TreeSelector(
            tree_index,
            leaf_id,
            mode=filter_mode,
            selected_id=selected_id,
            page_size=self._page_size(),
            deferred=len(tree_index.by_id) >= self.background_from,
        )
        self._after_change(None, -1, None)

    def show_loading(self) -> None:
        """Drop the rows and show the loading line until :meth:`set_session`."""
        self.selector = None
        self._cached_rows = None
        self._status = ("", LOADING_FOOTER)
        self.virtual_size = Size(0, 1)
        self.refresh()

    def refresh_tree(self, leaf_id: str | object | None = ...) -> None:
        """Rebuild the rows after appends or a leaf move (pass ``leaf_id`` when the leaf changed)."""
        if self.selector is None:
            return
        selector = self.selector
        before = (selector.rows, selector.selected_index, selector.selected_id)
        selector.refresh(leaf_id)
        self._after_change(*before)

    def select(self, entry_id: str, *, centre: bool = True) -> None:
        """Move the cursor to an entry (or its nearest visible ancestor)."""
        self._apply(lambda s: s.select(entry_id), centre=centre)

    @property
    def selected_id(self) -> str | None:
        return self.selector.selected_id if self.selector else None

    @property
    def search_query(self) -> str:
        return self.selector.query if self.selector else ""

    @property
    def footer(self) -> str:
        selector = self.selector
        if selector is None or (self.busy and not selector.has_view):
            return LOADING_FOOTER
        return selector.footer() + (BUSY_TAG if self.busy else "")

    @property
    def busy(self) -> bool:
        """The rows shown are not yet those of the filter and query (a big tree's worker builds them)."""
        return self.selector is not None and (self.selector.stale or self._building)

    # --- state changes ------------------------------------------------------------------------
    def _apply(self, change: Callable[[TreeSelector], object], *, centre: bool = True) -> None:
        selector = self.selector
        if selector is None:
            return
        before = (selector.rows, selector.selected_index, selector.selected_id)
        change(selector)
        self._after_change(*before, centre=centre)

    def _after_change(
        self, old_rows: list[Row] | None, old_index: int, old_id: str | None, *, centre: bool = True
    ) -> None:
        """Repaint what changed: everything when rows changed, else the two cursor lines."""
        selector = self.selector
        assert selector is not None
        rows_changed = selector.rows is not old_rows
        if rows_changed:
            self.virtual_size = Size(0, len(selector.rows))
            self.refresh()
        scrolled = centre and self._centre()
        if rows_changed and centre:
            # More rows than before (Esc clearing a search, a wider filter): the scroll range grows
            # only with the next layout, so scrolling now stops short and the cursor stays off screen.
            self.call_after_refresh(self._centre)
        if not rows_changed and not scrolled and old_index != selector.selected_index:
            if old_index >= 0:
                self.refresh_line(old_index)
            self.refresh_line(selector.selected_index)
        if selector.selected_id != old_id:
            self.post_message(self.Highlighted(self, selector.selected_id))
        if selector.stale:
            self._queue_build()
        status = (selector.query, self.footer)
        if status != self._status:
            self._status = status
            self.post_message(self.StatusChanged(self, *status))

    # --- building big trees off the event loop -----------------------------------------------
    def _queue_build(self) -> None:
        """Build the wanted rows on a worker thread once the keys already queued are handled, so a
        burst of keys costs one build; while one runs, the next waits for it (the latest query wins)."""
        if not (self._building or self._build_queued):
            self._build_queued = True
            self.call_later(self._start_build)

    def _start_build(self) -> None:
        self._build_queued = False
        selector = self.selector
        if selector is None or not selector.stale or self._building:
            return
        self._building = True
        self.run_worker(
            partial(self._build_rows, selector), thread=True, group="tree-build", exit_on_error=False
        )

    def _build_rows(self, selector: TreeSelector) -> None:
        try:
            built = selector.build()
        except BaseException:
            self.post_message(self._Built(selector, None))
            raise
        self.post_message(self._Built(selector, built))

    @on(_Built)
    def _built(self, event: _Built) -> None:
        event.stop()
        self._building = False
        selector = self.selector
        if selector is None:
            return
        if event.selector is not selector:
            # Another session was shown meanwhile: its build waited for this one, it starts now.
            if selector.stale:
                self._queue_build()
            return
        before = (selector.rows, selector.selected_index, selector.selected_id)
        if event.built is None:
            selector.stale = False  # the worker's error is reported; the last rows stay
        elif not selector.show(event.built):
            selector.stale = True  # superseded (a newer key): build what is wanted now
        self._after_change(*before)  # still stale (superseded, or an append meanwhile): builds again

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        pass_failure_on(self, event)  # a failed build is reported by the screen

    def _page_size(self) -> int:
        return max(1, self.scrollable_content_region.height or 10)

    def _centre(self) -> bool:
        """Keep the selected row centred where possible; True when this scrolled."""
        selector = self.selector
        height = self.scrollable_content_region.height
        if selector is None or height <= 0 or selector.selected_index < 0:
            return False
        top = max(0, min(selector.selected_index - height // 2, len(selector.rows) - height))
        if top == self.scroll_offset.y:
            return False
        # force: the scrollbar (which allows a scroll) comes with the next layout; in the full tree, whose
        # footer recomposes as the screen opens, both tries ran before it and the leaf stayed off screen.
        self.scroll_to(y=top, animate=False, immediate=True, force=True)
        return True

    def on_resize(self, event: events.Resize) -> None:
        if self.selector is not None:
            self.selector.page_size = self._page_size()
            self._centre()

    # --- rendering ----------------------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._strips.clear()

    @on(events.Focus)
    @on(events.Blur)
    def _restyle(self) -> None:
        # The rows' component styles depend on :focus.
        self._styles.clear()
        self._strips.clear()

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(name, partial=True)
        return style

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self._styles.get("")
        if base is None:
            base = self._styles[""] = self.rich_style
        selector = self.selector
        if selector is None or not selector.rows:
            if y == 0:
                # Before the rows arrive (a big session takes a moment) say so, never a blank list.
                if selector is None or (self.busy and not selector.has_view):
                    text = f"  {LOADING_TEXT}"
                else:
                    text = f"  {BUSY_TEXT}" if self.busy else "  No entries found"
                empty = Strip([Segment(text, base + self._style("session-tree--empty"))])
                return empty.crop_extend(0, width, base)
            return Strip.blank(width, base)
        if selector.rows is not self._cached_rows:
            self._cached_rows = selector.rows
            self._strips.clear()
        index = self.scroll_offset.y + y
        if index >= len(selector.rows):
            return Strip.blank(width, base)
        row = selector.rows[index]
        selected = index == selector.selected_index
        key = (row.entry_id, selected, width)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._strips[key] = self._format_row(row, selected, width, base)
        return strip

    def _format_row(self, row: Row, selected: bool, width: int, base: Style) -> Strip:
        s = self._style
        highlight = s("session-tree--selected") if selected else Style()
        parts: list[tuple[str, Style]] = [("› " if selected else "  ", s("session-tree--cursor"))]
        if prefix := row.shown_prefix(max(8, width - 2 - TEXT_COLUMNS)):  # as `kompakt tree` elides it
            parts.append((prefix, s("session-tree--prefix")))
        if row.on_active_path:
            parts.append(("• ", s("session-tree--active")))
        if row.label:
            parts.append((f"[{flat(sanitize(row.label))}] ", s("session-tree--label")))
            if self.selector is not None and self.selector.show_label_times:
                parts.append((row.shown_label_time(), s("session-tree--label-time")))
        text = flat(sanitize(row.text))  # a row is one line, whatever a name or label holds
        role = _ROLE_PREFIXES.get(row.kind)
        if role and text.startswith(role):
            parts.append((role, s(f"session-tree--{row.kind}")))
            text = text[len(role) :]
        parts.append((text, s(_KIND_CLASSES.get(row.kind, "session-tree--text"))))
        # A long leaf row keeps its "← active" whole: the text before it is cut (unless the pane is too
        # narrow to show any text beside it, when the row is cut as one).
        marker = [Segment(_ACTIVE_MARKER, base + s("session-tree--leaf") + highlight)] if row.is_leaf else []
        if marker and width - len(_ACTIVE_MARKER) < _MIN_TEXT_BESIDE_MARKER:
            parts.append((_ACTIVE_MARKER, s("session-tree--leaf")))
            marker = []
        strip = Strip([Segment(t, base + style + highlight) for t, style in parts if t])
        line_style = base + highlight
        room = width - (len(_ACTIVE_MARKER) if marker else 0)
        if strip.cell_length > room:
            cropped = list(strip.crop(0, max(0, room - 1)))
            strip = Strip([*cropped, Segment("…", cropped[-1].style if cropped else line_style)])
        return Strip([*strip, *marker]).extend_cell_length(width, line_style)

    # --- keys and mouse -----------------------------------------------------------------------
    def action_cursor_up(self) -> None:
        self._apply(lambda s: s.move(-1))

    def action_cursor_down(self) -> None:
        self._apply(lambda s: s.move(1))

    def action_page_up(self) -> None:
        self._apply(lambda s: s.page(-1))

    def action_page_down(self) -> None:
        self._apply(lambda s: s.page(1))

    def action_edge(self, direction: int) -> None:
        self._apply(lambda s: s.edge(direction))

    def action_fold_or_up(self) -> None:
        self._apply(lambda s: s.fold_or_up())

    def action_unfold_or_down(self) -> None:
        self._apply(lambda s: s.unfold_or_down())

    def action_set_filter(self, mode: str) -> None:
        if mode in FILTER_CYCLE:
            self._apply(lambda s: s.set_filter(mode))  # type: ignore[arg-type]

    def action_toggle_filter(self, mode: str) -> None:
        if mode in FILTER_CYCLE:
            self._apply(lambda s: s.toggle_filter(mode))  # type: ignore[arg-type]

    def action_cycle_filter(self, step: int) -> None:
        self._apply(lambda s: s.cycle_filter(step))

    def action_backspace(self) -> None:
        self._apply(lambda s: s.backspace())

    def action_escape(self) -> None:
        selector = self.selector
        if selector is not None and selector.query:
            self._apply(lambda s: s.escape())
        else:
            self.post_message(self.Closed(self))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Read-only sessions: labels and undoing a compaction would write; they are not offered (D5).
        if action in ("label", "compaction") and session_read_only(self.app):
            return action == "compaction" and parameters == ("inspect",)
        return True

    def action_navigate(self) -> None:
        if self.selected_id is not None:
            self.post_message(self.NavigateRequested(self, self.selected_id))

    def action_label(self) -> None:
        selector = self.selector
        if selector is not None and selector.selected_id is not None:
            current = selector.tree.labels.get(selector.selected_id)
            self.post_message(self.LabelRequested(self, selector.selected_id, current))

    def action_compaction(self, action: str) -> None:
        if self.selected_id is not None:
            self.post_message(self.CompactionActionRequested(self, self.selected_id, action))

    def action_toggle_label_times(self) -> None:
        if self.selector is None:
            return
        self._strips.clear()  # every labelled row changes; the rows themselves do not
        self.refresh()
        self._apply(lambda s: s.toggle_label_times())

    def on_key(self, event: events.Key) -> None:
        # Search as you type: printable keys that are not bound to an action extend the query.
        if not (event.is_printable and event.character) or event.key in self._bindings.key_to_bindings:
            return
        event.stop()
        event.prevent_default()
        character = event.character
        self._apply(lambda s: s.type_text(character))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        selector = self.selector
        if offset is None or selector is None:
            return
        index = self.scroll_offset.y + offset.y
        if 0 <= index < len(selector.rows):
            entry_id = selector.rows[index].entry_id
            self.select(entry_id, centre=False)  # keep the row under the pointer for a double click
            if event.chain >= 2:
                self.post_message(self.NavigateRequested(self, entry_id))
