"""pi's ``/tree`` as a headless model: filters, visibility, indentation, folding, search and navigation.

:func:`visible_forest` hangs every visible entry under its nearest visible ancestor (the active
branch first); :func:`flatten` turns that forest into display rows with pi's indentation (one level
per branch point plus one for the first generation after a branch, flat single-child chains, ``│``
gutters, ``├─``/``└─`` connectors carrying the fold glyph). :class:`TreeSelector` holds the cursor,
filter, query and folds and implements pi's keys (wrap, page, fold-or-up, unfold-or-down, filter
toggles and cycle). The CLI prints rows; the TUI widget renders the same rows.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from tui.session.display import assistant_has_text, entry_text, search_text, tool_calls_by_id
from tui.session.entries import LEAF_CUSTOM_TYPE, OMP_METADATA_TYPES, Entry, is_custom
from tui.session.tree import TreeIndex

FilterMode = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
FILTER_CYCLE: tuple[FilterMode, ...] = ("default", "no-tools", "user-only", "labeled-only", "all")
FILTER_TAGS: dict[str, str] = {
    "default": "",
    "no-tools": " [no-tools]",
    "user-only": " [user]",
    "labeled-only": " [labeled]",
    "all": " [all]",
}
LABEL_TIME_TAG = " [+label time]"
TEXT_COLUMNS = 30  # what a row keeps for its text when its prefix is wider than the rest of the line
_ROOT = "\0root"
# Bookkeeping entries that only the "all" (and labeled-only) views show.
_SETTINGS_TYPES = frozenset(
    {"label", "custom", "model_change", "thinking_level_change", "session_info", *OMP_METADATA_TYPES}
)  # oh-my-pi's metadata types too: only the "all" view shows them
_NORMAL_STOPS = ("stop", "toolUse")


# The drawn levels before a row's own connector, shared between rows as a linked list (parent, piece):
# a deep tree's prefixes grow with its depth, and building each as a string made flatten quadratic.
Lead = tuple["Lead", str] | None


@dataclass(slots=True)  # no dict per row: a 100k-row view is 78k of them, and the collector walks each
class Row:
    """One visible tree row."""

    entry_id: str
    lead: Lead  # the ancestors' │ gutters and blanks, shared with the siblings
    own: str  # this row's connector and fold glyph
    text_of: Callable[[str], str]  # gives the row text when it is drawn: a 100k-row view draws a screenful
    label: str | None
    on_active_path: bool
    is_leaf: bool
    kind: str  # user | assistant | tool | summary | compaction | meta
    foldable: bool
    folded: bool
    label_time: str | None = None  # ISO timestamp of the label entry that set ``label``
    width: int = 0  # characters in the whole prefix (each one cell wide)

    @property
    def text(self) -> str:
        return self.text_of(self.entry_id)

    @property
    def prefix(self) -> str:
        return self.prefix_tail(self.width)

    def shown_prefix(self, columns: int) -> str:
        """The prefix, or ``…`` and its last ``columns - 1`` characters when it is wider: a deep tree's
        rows keep their text on screen, and drawing one costs the width, not the tree's depth."""
        if self.width <= columns:
            return self.prefix
        return "…" + self.prefix_tail(columns - 1)

    def prefix_tail(self, columns: int) -> str:
        """The last ``columns`` characters of the prefix, built without walking the lead past them."""
        if columns <= 0:
            return ""
        pieces = [self.own]
        size = len(self.own)
        node = self.lead
        while node is not None and size < columns:
            node, piece = node
            pieces.append(piece)
            size += len(piece)
        text = "".join(reversed(pieces))
        return text[-columns:]

    def shown_label_time(self, now: datetime | None = None) -> str:
        """The muted ``<time> `` after the label while label times are on; '' without label or time."""
        if not (self.label and self.label_time):
            return ""
        formatted = format_label_time(self.label_time, now)
        return f"{formatted} " if formatted else ""

    def plain(self, label_times: bool = False) -> str:
        """The row as pi prints it (without the cursor), plus kompakt's ``← active`` on the leaf."""
        marker = "• " if self.on_active_path else ""
        label = f"[{self.label}] " if self.label else ""
        stamp = self.shown_label_time() if label_times else ""
        active = "  ← active" if self.is_leaf else ""
        return f"{self.prefix}{marker}{label}{stamp}{self.text}{active}"


def format_label_time(stamp: str, now: datetime | None = None) -> str:
    """pi's label time in local time: ``HH:MM`` today, ``M/D HH:MM`` this year, else ``YY/M/D HH:MM``.

    '' when the timestamp cannot be read (pi would print NaN; a blank says the same more kindly).
    """
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone()
    except (ValueError, OSError, OverflowError):
        return ""
    now = (now or datetime.now().astimezone()).astimezone()
    clock = f"{moment.hour:02d}:{moment.minute:02d}"
    if moment.date() == now.date():
        return clock
    if moment.year == now.year:
        return f"{moment.month}/{moment.day} {clock}"
    return f"{moment.year % 100:02d}/{moment.month}/{moment.day} {clock}"


def row_kind(entry: Entry) -> str:
    kind = entry.get("type")
    if kind == "message":
        role = (entry.get("message") or {}).get("role")
        return {"user": "user", "assistant": "assistant", "toolResult": "tool", "bashExecution": "tool"}.get(
            str(role), "meta"
        )
    if kind == "compaction":
        return "compaction"
    if kind == "branch_summary":
        return "summary"
    return "meta"


# What the filters need to know about an entry; computed once per entry and cached by the selector.
_MARKER, _QUIET, _USER, _TOOL_RESULT, _SETTINGS, _OTHER = range(6)
_SHOWN_BY_MODE: dict[str, frozenset[int]] = {
    "default": frozenset({_USER, _TOOL_RESULT, _OTHER}),
    "no-tools": frozenset({_USER, _OTHER}),
    "user-only": frozenset({_USER}),
    "all": frozenset({_USER, _TOOL_RESULT, _SETTINGS, _OTHER}),
}


def _category(entry: Entry) -> int:
    if is_custom(entry, LEAF_CUSTOM_TYPE):
        return _MARKER
    kind = entry.get("type")
    if kind in _SETTINGS_TYPES:
        return _SETTINGS
    if kind != "message":
        return _OTHER
    message = entry.get("message") or {}
    role = message.get("role")
    if role == "user":
        return _USER
    if role == "toolResult":
        return _TOOL_RESULT
    if role == "assistant" and not assistant_has_text(message):
        stop = message.get("stopReason")
        if not stop or stop in _NORMAL_STOPS:
            return _QUIET  # a tool-call-only turn
    return _OTHER


def _passes(category: int, is_leaf: bool, mode: FilterMode, labeled: bool) -> bool:
    if category == _MARKER:
        return False
    if category == _QUIET:
        if not is_leaf:
            return False  # hidden in every mode unless it is the leaf (abnormal ends are not _QUIET)
        category = _OTHER
    if mode == "labeled-only":
        return labeled
    return category in _SHOWN_BY_MODE[mode]


def is_visible(entry: Entry, mode: FilterMode, leaf_id: str | None, label: str | None) -> bool:
    """Whether ``entry`` passes the filter ``mode`` (search aside)."""
    return _passes(_category(entry), entry.get("id") == leaf_id, mode, label is not None)


@dataclass
class VisibleForest:
    """Visible nodes with their nearest visible parents and ordered visible children."""

    children: dict[str, list[str]] = field(default_factory=dict)
    parent: dict[str, str] = field(default_factory=dict)

    def roots(self) -> list[str]:
        return self.children.get(_ROOT, [])

    def segment_start(self, node: str) -> bool:
        """A root, or a child of a node with more than one visible child."""
        parent = self.parent.get(node)
        return parent == _ROOT or len(self.children.get(parent or "", [])) > 1

    def foldable(self, node: str) -> bool:
        return bool(self.children.get(node)) and self.segment_start(node)


def _hang_visible(
    roots: list[str],
    children: Mapping[str, list[str]],
    visible: Callable[[str], bool],
    order: Callable[[list[str]], list[str]] | None = None,
) -> VisibleForest:
    """Walk ``children`` from ``roots`` depth first; each visible node hangs under its nearest visible ancestor.

    ``order`` sorts the children of a branch point before they are walked (single children need none).
    """
    forest = VisibleForest(children={_ROOT: []})
    hung, parents = forest.children, forest.parent
    stack = [(r, _ROOT) for r in reversed(roots)]
    while stack:
        node, vparent = stack.pop()
        if visible(node):
            hung[vparent].append(node)
            hung[node] = []
            parents[node] = vparent
            vparent = node
        kids = children.get(node)
        if not kids:
            continue
        if len(kids) == 1:  # the common case: a chain
            stack.append((kids[0], vparent))
        else:
            stack.extend((c, vparent) for c in reversed(order(kids) if order else kids))
    return forest


def visible_forest(tree: TreeIndex, visible: Callable[[str], bool], active: set[str]) -> VisibleForest:
    """Visible entries under their nearest visible ancestors; the child holding the leaf comes first."""

    def ordered(ids: list[str]) -> list[str]:
        return sorted(ids, key=lambda i: i not in active)  # stable: timestamp order otherwise

    roots = ordered(tree.roots) if active and len(tree.roots) > 1 else tree.roots
    return _hang_visible(roots, tree.children, visible, ordered if active else None)


def narrow_forest(previous: VisibleForest, visible: Callable[[str], bool]) -> VisibleForest:
    """The forest of the entries of ``previous`` that stay ``visible``: a search that only got longer.

    Walking the previous forest in its own order gives the same forest as :func:`visible_forest` over
    the whole tree, because hanging nodes under their nearest visible ancestor twice is hanging them
    once under the nearest one of both tests; it only visits what the previous keystroke showed.
    """
    return _hang_visible(previous.roots(), previous.children, visible)


def _refines(tokens: tuple[str, ...], previous: tuple[str, ...]) -> bool:
    """Whatever matches ``tokens`` also matched ``previous``: each old word lies inside a new one."""
    return all(any(old in new for new in tokens) for old in previous)


def flatten(
    tree: TreeIndex,
    forest: VisibleForest,
    leaf_id: str | None,
    active: set[str],
    folded: set[str],
    text_of: Callable[[str], str] | None = None,
    kind_of: Callable[[str], str] | None = None,
) -> list[Row]:
    """Display rows in pi's order and indentation; descendants of folded nodes are left out.

    ``text_of`` and ``kind_of`` give an entry's row text and kind (the selector passes caches); by
    default they are computed.
    """
    if kind_of is None:

        def kind_of(entry_id: str) -> str:
            return row_kind(tree.by_id[entry_id])

    if text_of is None:
        calls = tool_calls_by_id(tree.by_id.values())

        def text_of(entry_id: str) -> str:
            return entry_text(tree.by_id[entry_id], calls)

    rows: list[Row] = []
    roots = forest.roots()
    # Several roots hang under a virtual root that branches but draws no connector, so their
    # children get the one extra level that the first generation after a branch gets.
    several = len(roots) > 1
    # (node, indent in levels, first generation after a branch, draws a connector, last sibling,
    #  lead = the drawn levels before the node's own last level: ancestors' │ gutters or blanks,
    #  and the lead's width in characters)
    stack: list[tuple[str, int, bool, bool, bool, Lead, int]] = [
        (r, 0, several, False, i == len(roots) - 1, None, 0) for i, r in enumerate(roots)
    ]
    stack.reverse()
    children, labels, label_times = forest.children, tree.labels, tree.label_times
    while stack:
        node, indent, after_branch, connector, last, lead, lead_width = stack.pop()
        is_folded = node in folded
        kids = children.get(node) or ()
        # forest.foldable inlined (this loop runs once per row): children, and the start of a segment
        foldable = bool(kids) and (connector or (indent == 0 and forest.segment_start(node)))
        if connector:
            glyph = "⊞" if is_folded else "⊟" if foldable else "─"
            own = ("└" if last else "├") + glyph + " "
            row_lead, row_width = lead, lead_width
        else:
            own = "⊞ " if is_folded else ""
            row_lead, row_width = ((lead, "   "), lead_width + 3) if indent else (None, 0)
        rows.append(
            Row(
                node,
                row_lead,
                own,
                text_of,
                labels.get(node),
                node in active,
                node == leaf_id,
                kind_of(node),
                foldable,
                is_folded,
                label_times.get(node),
                row_width + len(own),
            )
        )
        if is_folded:
            continue
        branches = len(kids) > 1
        if branches or after_branch:
            # One level deeper; this node's connector turns into a gutter while siblings follow.
            child_indent = indent + 1
            if indent:
                child_lead: Lead = (lead, "│  " if connector and not last else "   ")
                child_width = lead_width + 3
            else:
                child_lead, child_width = None, 0
        else:
            child_indent, child_lead, child_width = indent, lead, lead_width  # a chain stays flat
        for i in range(len(kids) - 1, -1, -1):
            stack.append(
                (kids[i], child_indent, branches, branches, i == len(kids) - 1, child_lead, child_width)
            )
    return rows


def render_tree(
    tree: TreeIndex, leaf_id: str | None, mode: FilterMode = "default", query: str = ""
) -> list[Row]:
    """All visible rows for a filter and search query (no folds)."""
    return TreeSelector(tree, leaf_id, mode=mode, query=query).rows


class _EntryCache:
    """Filter categories, row and search texts per entry, brought up to date when the tree grows.

    A session only grows by appending, and every change that matters here (a new tool call, a
    label) is an appended entry: the entries after the last size are all there is to look at.
    """

    def __init__(self, tree: TreeIndex) -> None:
        self.tree = tree
        self.size = -1
        self.version = -1  # the tree's version and rewrites when last synced
        self.rewrites = -1
        self.calls: dict[str, tuple[str, Any]] = {}
        self.categories: dict[str, int] = {}
        self.rows: dict[str, str] = {}
        self.kinds: dict[str, str] = {}
        self.search: dict[str, str] = {}
        self._path: tuple[str | None, set[str]] = (None, set())

    def sync(self) -> None:
        if self.tree.version == self.version:
            return
        # Read before the copy: an entry added meanwhile is in the copy, and the next sync finds no more.
        version, rewrites = self.tree.version, self.tree.rewrites
        # A copy (one C-level step) to read: on a worker thread the session may grow meanwhile.
        entries = dict(self.tree.by_id)
        ids = list(entries)
        if rewrites != self.rewrites or len(ids) < self.size or self.size < 0:  # not an append: everything
            self.calls = tool_calls_by_id(entries.values())
            self.categories = {i: _category(e) for i, e in entries.items()}
            self.rows.clear()
            self.kinds.clear()
            self.search.clear()
        else:  # appended: only the new entries (a whole pass took 0.5 s at 100k entries)
            added = [(i, entries[i]) for i in ids[self.size :]]
            calls = tool_calls_by_id(e for _, e in added)
            if calls:
                self.calls.update(calls)
                self.rows.clear()  # a tool result's row names its call; rows are made as drawn
            for entry_id, entry in added:
                self.categories[entry_id] = _category(entry)
                if entry.get("type") == "label":  # the target's searchable text holds its label
                    self.search.pop(str(entry.get("targetId")), None)
        self.size, self.version, self.rewrites = len(ids), version, rewrites
        self._path = (None, set())

    def active_path(self, leaf_id: str | None) -> set[str]:
        """Ids from the root to the leaf; the walk is cached because the leaf rarely moves."""
        if self._path[0] != leaf_id:
            self._path = (leaf_id, set(self.tree.path_ids(leaf_id)))
        return self._path[1]

    def row(self, entry_id: str) -> str:
        text = self.rows.get(entry_id)
        if text is None:
            text = self.rows[entry_id] = entry_text(self.tree.by_id[entry_id], self.calls)
        return text

    def kind(self, entry_id: str) -> str:
        kind = self.kinds.get(entry_id)
        if kind is None:
            kind = self.kinds[entry_id] = row_kind(self.tree.by_id[entry_id])
        return kind

    def searchable(self, entry_id: str) -> str:
        text = self.search.get(entry_id)
        if text is None:
            entry = self.tree.by_id[entry_id]
            text = self.search[entry_id] = search_text(entry, self.tree.labels.get(entry_id))
        return text


_View = tuple[VisibleForest, list[Row], dict[str, int]]
_ViewKey = tuple[int, str | None, str, tuple[str, ...]]  # (tree version, leaf, filter, search words)
_VIEWS_KEPT = 8  # a view of 100k rows is tens of MB: keep only a few
_ROWS_KEPT = 250_000  # … and, beyond the newest two, no more rows in all (three views of a 100k tree)


@dataclass(frozen=True)
class BuiltView:
    """The unfolded forest and rows of one (tree size, leaf, filter, query), from :meth:`TreeSelector.build`."""

    key: _ViewKey
    active: set[str]
    forest: VisibleForest
    rows: list[Row]
    index: dict[str, int]


@contextmanager
def _collector_paused() -> Iterator[None]:
    # Building a view makes hundreds of thousands of rows and tuples and no cycles; the cyclic
    # collector's passes over them and the session's parsed entries took half of a 100k-entry build.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class TreeSelector:
    """The state behind the tree view: rows, the selected entry, filter, search query and folds.

    A change (a filter, a search key, a leaf move) rebuilds the rows at once, or with ``deferred`` only
    marks the view :attr:`stale`: the host then runs :meth:`build` (safe on a worker thread: it changes
    nothing that is shown) and hands the result to :meth:`show`, which takes it only while it is still
    the view wanted, so the latest query wins.
    """

    def __init__(
        self,
        tree: TreeIndex,
        leaf_id: str | None,
        *,
        mode: FilterMode = "default",
        query: str = "",
        selected_id: str | None = None,
        page_size: int = 10,
        deferred: bool = False,
    ) -> None:
        self.tree = tree
        self.leaf_id = leaf_id
        self.mode: FilterMode = mode
        self.query = query
        self.page_size = page_size
        self.deferred = deferred
        self.stale = False  # (deferred) the rows shown are not those of the leaf, filter and query
        self.builds = 0  # views walked and flattened (not taken from the views kept)
        self.folded: set[str] = set()
        self.show_label_times = False  # Shift+T (pi 0.73.1)
        self.rows: list[Row] = []
        self.forest = VisibleForest()
        self.selected_id: str | None = None
        self._active: set[str] = set()
        self._index: dict[str, int] = {}
        self._cache = _EntryCache(tree)
        # Unfolded views of the last few keys, newest last; a worker thread's build and a fold on the
        # event loop may both store one.
        self._views: OrderedDict[_ViewKey, _View] = OrderedDict()
        self._views_lock = threading.Lock()
        self._last_built: tuple[_ViewKey, VisibleForest] | None = None  # what a longer search narrows
        self._shown_key: _ViewKey | None = None
        # pi's "last real selection": kept while a filter shows nothing, so it comes back later.
        self._remembered: str | None = selected_id or leaf_id
        self.refresh()

    # --- building -----------------------------------------------------------------------------
    def refresh(self, leaf_id: str | object | None = ...) -> None:
        """Recompute rows (after appends, a leaf move or a filter change), keeping the selection."""
        if leaf_id is not ...:
            self.leaf_id = leaf_id  # type: ignore[assignment]
        if self.deferred:
            self.stale = True
            return
        self.show(self.build())

    def wanted_key(self) -> _ViewKey:
        """The key of the view the current tree, leaf, filter and query call for."""
        return (self.tree.version, self.leaf_id, self.mode, tuple(self.query.lower().split()))

    def build(self) -> BuiltView:
        """The unfolded view of the current leaf, filter and query (from the views kept when it can).

        It reads the tree and fills the entry caches but changes nothing that is shown, so it can run
        on a worker thread while the event loop draws and moves the cursor; one build at a time.
        """
        with _collector_paused():
            return self._build()

    def _build(self) -> BuiltView:
        leaf, mode, tokens = self.leaf_id, self.mode, tuple(self.query.lower().split())
        cache = self._cache
        cache.sync()
        active = cache.active_path(leaf)
        key = (cache.version, leaf, mode, tokens)
        with self._views_lock:
            view = self._views.get(key)
            if view is not None:  # a filter toggled back, a backspace, an Esc: built before
                self._views.move_to_end(key)
        if view is not None:
            forest, rows, index = view
        else:
            labels, categories = self.tree.labels, cache.categories

            def visible(entry_id: str) -> bool:
                # .get: an entry appended while a worker thread builds waits for the next build
                if not _passes(categories.get(entry_id, _MARKER), entry_id == leaf, mode, entry_id in labels):
                    return False
                if tokens:
                    haystack = cache.searchable(entry_id)
                    return all(t in haystack for t in tokens)
                return True

            last = self._last_built
            if last is not None and last[0][:3] == key[:3] and _refines(tokens, last[0][3]):
                # The search got longer: only what the last keystroke showed can still match.
                forest = narrow_forest(last[1], visible)
            else:
                forest = visible_forest(self.tree, visible, active)
            rows = flatten(self.tree, forest, leaf, active, set(), cache.row, cache.kind)
            index = {row.entry_id: i for i, row in enumerate(rows)}
            self._keep_view(key, (forest, rows, index))
            self.builds += 1
        self._last_built = (key, forest)
        return BuiltView(key, active, forest, rows, index)

    def _keep_view(self, key: _ViewKey, view: _View) -> None:
        with self._views_lock:
            self._views[key] = view
            self._views.move_to_end(key)
            views = self._views
            while len(views) > _VIEWS_KEPT or (
                len(views) > 2 and sum(len(rows) for _, rows, _ in views.values()) > _ROWS_KEPT
            ):
                views.popitem(last=False)

    def show(self, built: BuiltView) -> bool:
        """Show ``built`` if it is the wanted view, or one of the same filter and query that appends have
        overtaken (an older tree version, and the leaf each append moved); False, and nothing changes, if
        its filter or query differ. An overtaken view is shown and the view stays :attr:`stale`, so the
        host builds again: a big tree appended to faster than it builds shows its rows, a few appends
        behind, instead of "Loading…" (or rows older still) for good."""
        wanted = self.wanted_key()
        if built.key[2:] != wanted[2:]:
            return False
        self.stale = built.key != wanted
        self._shown_key = built.key
        self._active, self.forest = built.active, built.forest
        if self.folded:
            self.folded &= set(self.forest.parent)
        if self.folded:
            self._layout()
        else:
            self.rows, self._index = built.rows, built.index
            self._reselect()
        return True

    def _layout(self) -> None:
        """Rows from the current forest and folds; the selection stays on the same entry or an ancestor."""
        cache = self._cache
        with _collector_paused():
            self.rows = flatten(
                self.tree, self.forest, self.leaf_id, self._active, self.folded, cache.row, cache.kind
            )
            self._index = {row.entry_id: i for i, row in enumerate(self.rows)}
        if not self.folded and self._shown_key is not None:
            self._keep_view(self._shown_key, (self.forest, self.rows, self._index))
        self._reselect()

    def _reselect(self) -> None:
        if not self.rows:
            self.selected_id = None  # _remembered stays: an empty view keeps the real selection
            return
        target = self._remembered
        seen: set[str] = set()
        while target is not None and target not in self._index and target not in seen:
            seen.add(target)
            entry = self.tree.by_id.get(target)
            target = entry.get("parentId") if entry else None
        if target not in self._index:
            target = self.rows[-1].entry_id
        self.selected_id = self._remembered = target

    @property
    def has_view(self) -> bool:
        """Rows have been shown (a deferred selector has none until its first build is shown)."""
        return self._shown_key is not None

    @property
    def selected_index(self) -> int:
        return self._index.get(self.selected_id or "", -1)

    @property
    def selected_row(self) -> Row | None:
        index = self.selected_index
        return self.rows[index] if index >= 0 else None

    def footer(self) -> str:
        """``(i/n)`` plus the filter tag and `` [+label time]`` while label times show, as under pi's list."""
        position = self.selected_index + 1 if self.rows else 0
        times = LABEL_TIME_TAG if self.show_label_times else ""
        return f"({position}/{len(self.rows)}){FILTER_TAGS[self.mode]}{times}"

    def toggle_label_times(self) -> None:
        """Shift+T: show or hide when each label was set."""
        self.show_label_times = not self.show_label_times

    def select(self, entry_id: str) -> None:
        """Select ``entry_id``, or its nearest visible ancestor."""
        self._remembered = entry_id
        self._reselect()

    def _select_index(self, index: int) -> None:
        if self.rows:
            self.select(self.rows[index].entry_id)

    # --- movement -----------------------------------------------------------------------------
    def move(self, delta: int) -> None:
        """Up/down by one, wrapping at both ends."""
        if self.rows:
            self._select_index((max(self.selected_index, 0) + delta) % len(self.rows))

    def page(self, direction: int) -> None:
        """A page up (-1) or down (+1), clamped to the first and last row."""
        if self.rows:
            index = max(self.selected_index, 0) + direction * self.page_size
            self._select_index(min(max(index, 0), len(self.rows) - 1))

    def edge(self, direction: int) -> None:
        """Home (-1) or End (+1): the first or the last row."""
        if self.rows:
            self._select_index(0 if direction < 0 else len(self.rows) - 1)

    def fold_or_up(self) -> None:
        """Fold the selected node if it can fold, else jump to the start of its branch segment."""
        node = self.selected_id
        if node is None:
            return
        if self.forest.foldable(node) and node not in self.folded:
            self.folded.add(node)
            self._layout()
            return
        parent = self.forest.parent.get(node)
        while parent is not None and parent != _ROOT:
            if self.forest.segment_start(parent):
                self.select(parent)
                return
            parent = self.forest.parent.get(parent)

    def unfold_or_down(self) -> None:
        """Unfold the selected node if folded, else follow first children to the next branch or leaf."""
        node = self.selected_id
        if node is None:
            return
        if node in self.folded:
            self.folded.discard(node)
            self._layout()
            return
        while node not in self.folded:  # a folded node shows no children: the walk stops there
            kids = self.forest.children.get(node, [])
            if not kids:
                break
            node = kids[0]
            if len(kids) > 1:
                break
        self.select(node)

    # --- filter and search --------------------------------------------------------------------
    def set_filter(self, mode: FilterMode) -> None:
        """Switch filter (clears folds); the same entry or its nearest visible ancestor stays selected."""
        self.mode = mode
        self.folded = set()
        self.refresh()

    def toggle_filter(self, mode: FilterMode) -> None:
        """pi's Ctrl+T/U/L/A: switch to ``mode``, or back to default when it is already on."""
        self.set_filter("default" if self.mode == mode else mode)

    def cycle_filter(self, step: int = 1) -> None:
        """Ctrl+O (+1) / Shift+Ctrl+O (-1) through default → no-tools → user-only → labeled-only → all."""
        index = FILTER_CYCLE.index(self.mode)
        self.set_filter(FILTER_CYCLE[(index + step) % len(FILTER_CYCLE)])

    def type_text(self, text: str) -> None:
        """Append typed text to the query; keystrokes with control characters are ignored."""
        if text and not any(_is_control(ch) for ch in text):
            self._set_query(self.query + text)

    def backspace(self) -> None:
        if self.query:
            self._set_query(self.query[:-1])

    def escape(self) -> bool:
        """Clear a non-empty query (True), or report that the tree should close (False)."""
        if self.query:
            self._set_query("")
            return True
        return False

    def _set_query(self, query: str) -> None:
        self.query = query
        self.folded = set()
        self.refresh()


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return code < 32 or code == 0x7F or 0x80 <= code <= 0x9F
