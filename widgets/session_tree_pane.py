"""The session tree pane: title and ``(i/n)`` footer, key hints, search line, the tree list and the entry detail.

:class:`SessionTreePane` hosts a :class:`~widgets.session_tree.SessionTreeView` and an
:class:`~widgets.entry_detail.EntryDetail` side by side when there is room, and stacked when the
pane is narrow, with the detail's height capped so the list keeps most of a short terminal. The
key hints take one row, in the longest wording that fits. It works as a toggleable side pane in the
main screen and inside the full-screen ``/tree`` screen. The hints are built from the configured keys
(a ``[keymap]`` setting shows up in them), the widest being pi 0.73.1's hint line. The view's messages (``NavigateRequested``,
``LabelRequested``, ``Closed``, ``Highlighted``) bubble through it unchanged; the pane only keeps its
own chrome in step.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.cells import cell_len
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Horizontal, Vertical
from textual.content import Content
from textual.geometry import Size
from textual.timer import Timer
from textual.widgets import Static

from tui.session.tree import TreeIndex
from tui.session.tree_view import FilterMode
from widgets.entry_detail import EntryDetail
from widgets.session_tree import LOADING_FOOTER, SessionTreeView

NARROW_WIDTH = 100  # below this the detail panel goes under the list
_FILTER_IDS = (
    "tree.filter.default",
    "tree.filter.no_tools",
    "tree.filter.user_only",
    "tree.filter.labeled_only",
    "tree.filter.all",
)
_MODIFIER_ORDER = ("shift", "ctrl", "alt", "meta", "super", "hyper")


def key_name(key: str) -> str:
    """One Textual key as pi names it: ``L`` → ``shift+l``, ``ctrl+shift+o`` → ``shift+ctrl+o``."""
    key = key.strip()
    if len(key) == 1 and key.isalpha() and key.isupper():
        return f"shift+{key.lower()}"
    *mods, base = key.split("+")
    mods.sort(key=lambda m: _MODIFIER_ORDER.index(m) if m in _MODIFIER_ORDER else len(_MODIFIER_ORDER))
    return "+".join([*mods, base])


def keys_text(keys: str) -> str:
    """A binding's key list as pi's hint shows it: distinct names joined by ``/``."""
    names = list(dict.fromkeys(key_name(k) for k in keys.split(",") if k.strip()))
    return "/".join(names)


def _short(name: str) -> str:
    """``shift+l`` → ``⇧L``, ``ctrl+d`` → ``^D``: the compact form of the narrower hints."""
    *mods, base = name.split("+")
    symbols = {"shift": "⇧", "ctrl": "^", "alt": "⌥"}
    return "".join(symbols.get(m, m + "+") for m in mods) + (base.upper() if len(base) == 1 else base)


def tree_hints(keys_of: Callable[[str], str]) -> tuple[str, ...]:
    """The key hints built from the configured keys, longest first; the first is pi 0.73.1's own line.

    ``keys_of(binding_id)`` gives a binding's current key list (``"L,shift+l"``).
    """
    label, times = keys_text(keys_of("tree.label")), keys_text(keys_of("tree.label_times"))
    filters = [keys_text(keys_of(i)) for i in _FILTER_IDS]
    cycle = [keys_text(keys_of("tree.filter.next")), keys_text(keys_of("tree.filter.previous"))]

    def short(text: str) -> str:
        return "/".join(_short(n) for n in text.split("/") if n)

    s_label, s_times = short(label), short(times)
    s_filters, s_cycle = "/".join(short(f) for f in filters), "/".join(short(c) for c in cycle)
    return (
        f"↑/↓: move. ←/→: page. ^←/^→ or Alt+←/Alt+→: fold/branch. {label}: label. "
        f"{'/'.join(filters)}: filters ({'/'.join(cycle)} cycle). {times}: label time",
        f"↑/↓ move · ←/→ page · ^←/^→ fold/branch · {s_label} label · {s_times} time · "
        f"{s_filters} filters ({s_cycle} cycle) · Enter go",
        f"↑↓ move · ←→ page · ^←^→ fold · {s_label} label · {s_filters.replace('/', '')} filters · F1 help",
        f"↑↓ move · ←→ page · ^←^→ fold · {s_label} label · F1 help",
        f"↑↓ ←→ ^←^→ {s_label} {s_filters.replace('/', '')} · F1 help",
    )


def default_keys(binding_id: str) -> str:
    """A tree binding's default keys (before any ``[keymap]`` setting)."""
    for binding in SessionTreeView.BINDINGS:
        if isinstance(binding, Binding) and binding.id == binding_id:
            return binding.key
    return ""


# The hints with the default keys; the pane rebuilds them from the app's keymap.
HINTS = tree_hints(default_keys)
MIN_TREE_ROWS = 12  # a stacked detail panel never squeezes the list below this many rows
MIN_DETAIL_ROWS = 4  # … nor shrinks below this (its border and three lines)
DETAIL_SHARE = 0.4  # the stacked detail's height as a share of the body, when there is room


class SessionTreePane(Vertical):
    """The tree list with its chrome and the detail of the highlighted entry."""

    HELP = SessionTreeView.HELP

    DEFAULT_CSS = """
    SessionTreePane { height: 1fr; background: $surface; }
    SessionTreePane > #tree-header { height: 1; padding: 0 1; }
    SessionTreePane #tree-title { width: 1fr; text-style: bold; }
    SessionTreePane #tree-footer { width: auto; color: $text-muted; }
    SessionTreePane > #tree-hint { color: $text-muted; padding: 0 1; height: 1; text-wrap: nowrap;
        text-overflow: ellipsis; }
    SessionTreePane > #tree-search { padding: 0 1; border-bottom: solid $foreground 20%; }
    SessionTreePane > #tree-body { layout: horizontal; height: 1fr; }
    SessionTreePane.-narrow > #tree-body { layout: vertical; }
    SessionTreePane #tree-view { width: 1fr; height: 1fr; }
    SessionTreePane #tree-detail { width: 45%; height: 1fr; border-left: solid $foreground 20%; }
    SessionTreePane.-narrow #tree-detail { width: 1fr; border-left: none;
        border-top: solid $foreground 20%; }
    """

    detail_delay: float = 0.08
    """Seconds the cursor must rest before the detail panel follows it (0: at once)."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.view = SessionTreeView(id="tree-view")
        self.detail = EntryDetail(id="tree-detail")
        self._query = ""
        self._search = Static(self._search_content(""), id="tree-search", markup=False)
        # Until set_session gives it rows the pane says it is loading, never an empty "(0/0)".
        self._footer = Static(LOADING_FOOTER, id="tree-footer", markup=False)
        self._footer_text = LOADING_FOOTER
        self._hint = Static(HINTS[0], id="tree-hint", markup=False)
        self._body = Container(id="tree-body")
        self._detail_rows: int | None = None
        self._detail_timer: Timer | None = None
        self._pending_detail: str | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="tree-header"):
            yield Static("Session Tree", id="tree-title", markup=False)
            yield self._footer
        yield self._hint
        yield self._search
        with self._body:
            yield self.view
            yield self.detail

    # --- public API (delegates to the view) ---------------------------------------------------
    def set_session(
        self,
        tree_index: TreeIndex,
        leaf_id: str | None,
        *,
        filter_mode: FilterMode = "default",
        selected_id: str | None = None,
    ) -> None:
        """Show a session's tree; see :meth:`SessionTreeView.set_session`."""
        self.view.set_session(tree_index, leaf_id, filter_mode=filter_mode, selected_id=selected_id)

    def show_loading(self) -> None:
        """Say the rows are coming (a big session's tree takes a moment); set_session replaces it."""
        self.view.show_loading()
        self._set_footer(LOADING_FOOTER)

    def refresh_tree(self, leaf_id: str | object | None = ...) -> None:
        """Rebuild after appends or a leaf move, and redraw the detail (a label may have changed)."""
        self.view.refresh_tree(leaf_id)
        self._show_detail(self.view.selected_id)

    def select(self, entry_id: str) -> None:
        self.view.select(entry_id)

    # --- keeping the chrome in step -----------------------------------------------------------
    @staticmethod
    def _search_content(query: str) -> Content:
        return Content.assemble(("Type to search: ", "$text-muted"), (query, "bold"))

    @on(SessionTreeView.StatusChanged)
    def _status_changed(self, event: SessionTreeView.StatusChanged) -> None:
        event.stop()
        if event.query != self._query:  # a cursor move changes only the footer
            self._query = event.query
            self._search.update(self._search_content(event.query), layout=False)
        # The footer is as wide as its text: a longer one (a filter tag after "(i/n)") needs a new
        # layout, else it is cut to the old width. A cursor move that keeps the length does not.
        self._set_footer(event.footer)

    def _set_footer(self, text: str) -> None:
        self._footer.update(text, layout=len(text) != len(self._footer_text))
        self._footer_text = text

    @on(SessionTreeView.Highlighted)
    def _highlighted(self, event: SessionTreeView.Highlighted) -> None:
        # A big tool output takes a while to lay out: follow the cursor once it rests, so that
        # holding ↓ stays fluid.
        if self.detail_delay <= 0:
            self._show_detail(event.entry_id)
            return
        self._pending_detail = event.entry_id
        if self._detail_timer is None:
            # One paused interval, restarted on each move: no new timer task per key press.
            self._detail_timer = self.set_interval(self.detail_delay, self._show_pending_detail, pause=True)
        self._detail_timer.reset()

    def _show_pending_detail(self) -> None:
        if self._detail_timer is not None:
            self._detail_timer.pause()
        self._show_detail(self._pending_detail)

    def _show_detail(self, entry_id: str | None) -> None:
        selector = self.view.selector
        entry = selector.tree.by_id.get(entry_id) if selector and entry_id else None
        self.detail.show_entry(entry, selector.tree if selector else None)

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        # Decided at every layout, not on Resize: a pane shown with display=True during a scroll-only
        # reflow gets no Resize event, and then kept the side-by-side layout at 54 columns.
        if size.width:
            narrow = size.width < NARROW_WIDTH
            self.set_class(narrow, "-narrow")
            room = size.width - self.styles.gutter.width - self._hint.styles.gutter.width
            hints = tree_hints(self._configured_keys)
            hint = next((h for h in hints if cell_len(h) <= room), hints[-1])
            if self._hint.content != hint:
                self._hint.update(hint, layout=False)
            self._size_detail(narrow, size.height)
        return super()._size_updated(size, virtual_size, container_size, layout)

    def _configured_keys(self, binding_id: str) -> str:
        # Textual keeps the keymap on the app and applies it lazily to each node's bindings.
        keymap: dict[str, str] = getattr(self.app, "_keymap", {}) or {}
        return keymap.get(binding_id) or default_keys(binding_id)

    def _size_detail(self, narrow: bool, height: int) -> None:
        """Stacked, the detail takes its share of the body but leaves the list ``MIN_TREE_ROWS`` rows."""
        rows = None  # beside the list: the stylesheet's full height
        if narrow:
            chrome = sum(child.outer_size.height for child in self.children if child is not self._body)
            body = height - chrome
            rows = max(MIN_DETAIL_ROWS, min(round(body * DETAIL_SHARE), body - MIN_TREE_ROWS))
        # Only on a change: every assignment asks for another layout, which comes back here.
        if rows != self._detail_rows:
            self._detail_rows = rows
            self.detail.styles.height = rows
