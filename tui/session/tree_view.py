"""pi's ``/tree`` as a headless model: filters, visibility, indentation, folding, search and navigation.

:func:`flatten` turns a :class:`TreeIndex` into display rows (pi's indentation: one level per branch
point, flat single-child chains, the active branch first). :class:`TreeSelector` holds the cursor,
filter, query and folds and implements pi's keys (wrap, page, fold-or-up, unfold-or-down, filter
cycle). The CLI prints rows; the TUI widget renders the same rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from tui.session.display import assistant_has_text, entry_text, search_text, tool_calls_by_id
from tui.session.entries import LEAF_CUSTOM_TYPE, Entry, is_custom
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
_ROOT = "\0root"
_DEFAULT_HIDDEN = frozenset({"label", "custom", "model_change", "thinking_level_change"})


@dataclass
class Row:
    """One visible tree row."""

    entry_id: str
    prefix: str
    text: str
    label: str | None
    on_active_path: bool
    is_leaf: bool
    kind: str  # user | assistant | tool | summary | compaction | meta
    foldable: bool
    folded: bool

    def plain(self) -> str:
        """The row as pi prints it (without the cursor)."""
        marker = "• " if self.on_active_path else ""
        label = f"[{self.label}] " if self.label else ""
        active = "  ← active" if self.is_leaf else ""
        return f"{self.prefix}{marker}{label}{self.text}{active}"


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


def is_visible(entry: Entry, mode: FilterMode, leaf_id: str | None, label: str | None) -> bool:
    if is_custom(entry, LEAF_CUSTOM_TYPE):
        return False
    kind = entry.get("type")
    message = (entry.get("message") or {}) if kind == "message" else {}
    role = message.get("role")
    tool_call_only = role == "assistant" and not assistant_has_text(message)
    if tool_call_only and entry.get("id") != leaf_id and message.get("stopReason") in ("stop", "toolUse", None):
        return False  # hidden in every mode, unless it is the leaf or ended abnormally
    if mode == "all":
        return True
    if mode == "labeled-only":
        return label is not None
    if mode == "user-only":
        return role == "user"
    if kind in _DEFAULT_HIDDEN:
        return False
    return not (mode == "no-tools" and role == "toolResult")


@dataclass
class VisibleForest:
    """Visible nodes with their nearest visible parents and ordered visible children."""

    children: dict[str, list[str]] = field(default_factory=dict)
    parent: dict[str, str] = field(default_factory=dict)

    def roots(self) -> list[str]:
        return self.children.get(_ROOT, [])

    def is_root(self, node: str) -> bool:
        return self.parent.get(node) == _ROOT

    def segment_start(self, node: str) -> bool:
        parent = self.parent.get(node)
        return parent == _ROOT or len(self.children.get(parent or "", [])) > 1

    def foldable(self, node: str) -> bool:
        return bool(self.children.get(node)) and self.segment_start(node)


def visible_forest(tree: TreeIndex, visible: Callable[[Entry], bool], active: set[str]) -> VisibleForest:
    forest = VisibleForest(children={_ROOT: []})

    def ordered(ids: list[str]) -> list[str]:
        return sorted(ids, key=lambda i: i not in active) if active else ids

    stack = [(r, _ROOT) for r in reversed(ordered(tree.roots))]
    while stack:
        node, vparent = stack.pop()
        if visible(tree.by_id[node]):
            forest.children[vparent].append(node)
            forest.children[node] = []
            forest.parent[node] = vparent
            vparent = node
        stack.extend((c, vparent) for c in reversed(ordered(tree.children.get(node, []))))
    return forest


def flatten(
    tree: TreeIndex, forest: VisibleForest, leaf_id: str | None, active: set[str], folded: set[str]
) -> list[Row]:
    calls = tool_calls_by_id(tree.by_id.values())
    rows: list[Row] = []
    # (node, is_last flags of the enclosing branch levels, is a direct child of a branch point)
    stack: list[tuple[str, tuple[bool, ...], bool]] = [(r, (), False) for r in reversed(forest.roots())]
    while stack:
        node, levels, branch_child = stack.pop()
        entry = tree.by_id[node]
        is_folded = node in folded
        foldable = forest.foldable(node)
        rows.append(
            Row(
                node,
                _prefix(levels, branch_child, foldable, is_folded),
                entry_text(entry, calls),
                tree.labels.get(node),
                node in active,
                node == leaf_id,
                row_kind(entry),
                foldable,
                is_folded,
            )
        )
        if is_folded:
            continue
        kids = forest.children.get(node, [])
        if len(kids) > 1:
            last = len(kids) - 1
            stack.extend((k, (*levels, i == last), True) for i, k in reversed(list(enumerate(kids))))
        elif kids:
            stack.append((kids[0], levels, False))
    return rows


def _prefix(levels: tuple[bool, ...], branch_child: bool, foldable: bool, folded: bool) -> str:
    if not levels:
        return "⊞ " if folded else ""
    gutter = "".join("   " if last else "│  " for last in levels[:-1])
    last = levels[-1]
    if not branch_child:
        return gutter + ("   " if last else "│  ")
    middle = "⊞" if folded else "⊟" if foldable else "─"
    return gutter + ("└" if last else "├") + middle + " "


def render_tree(
    tree: TreeIndex, leaf_id: str | None, mode: FilterMode = "default", query: str = ""
) -> list[Row]:
    """All visible rows for a filter and search query (no folds)."""
    return TreeSelector(tree, leaf_id, mode=mode, query=query).rows


class TreeSelector:
    """The state behind the tree view: rows, the selected entry, filter, search query and folds."""

    def __init__(
        self,
        tree: TreeIndex,
        leaf_id: str | None,
        *,
        mode: FilterMode = "default",
        query: str = "",
        selected_id: str | None = None,
        page_size: int = 10,
    ) -> None:
        self.tree = tree
        self.leaf_id = leaf_id
        self.mode: FilterMode = mode
        self.query = query
        self.page_size = page_size
        self.folded: set[str] = set()
        self.rows: list[Row] = []
        self.forest = VisibleForest()
        self._index: dict[str, int] = {}
        self._remembered: str | None = selected_id or leaf_id
        self.selected_id: str | None = None
        self.refresh()

    # --- building -----------------------------------------------------------------------------
    def refresh(self, leaf_id: str | object | None = ...) -> None:
        """Recompute rows (after appends, a leaf move or a filter change), keeping the selection."""
        if leaf_id is not ...:
            self.leaf_id = leaf_id  # type: ignore[assignment]
        active = set(self.tree.path_ids(self.leaf_id))
        tokens = self.query.lower().split()
        labels = self.tree.labels

        def visible(entry: Entry) -> bool:
            entry_id = entry["id"]
            if not is_visible(entry, self.mode, self.leaf_id, labels.get(entry_id)):
                return False
            if tokens:
                haystack = search_text(entry, labels.get(entry_id))
                return all(t in haystack for t in tokens)
            return True

        self.forest = visible_forest(self.tree, visible, active)
        self.folded &= set(self.forest.parent)
        self.rows = flatten(self.tree, self.forest, self.leaf_id, active, self.folded)
        self._index = {row.entry_id: i for i, row in enumerate(self.rows)}
        self._reselect()

    def _reselect(self) -> None:
        target = self._remembered
        while target is not None and target not in self._index:
            entry = self.tree.by_id.get(target)
            parent = entry.get("parentId") if entry else None
            target = parent if parent != target else None
        if target is None and self.rows:
            target = self.rows[-1].entry_id
        self.selected_id = target

    @property
    def selected_index(self) -> int:
        return self._index.get(self.selected_id or "", -1)

    @property
    def selected_row(self) -> Row | None:
        index = self.selected_index
        return self.rows[index] if index >= 0 else None

    def footer(self) -> str:
        position = self.selected_index + 1 if self.rows else 0
        return f"({position}/{len(self.rows)}){FILTER_TAGS[self.mode]}"

    def select(self, entry_id: str) -> None:
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
        if self.rows:
            index = max(self.selected_index, 0) + direction * self.page_size
            self._select_index(min(max(index, 0), len(self.rows) - 1))

    def fold_or_up(self) -> None:
        node = self.selected_id
        if node is None or node not in self.forest.parent:
            return
        if self.forest.foldable(node) and node not in self.folded:
            self._set_folds(self.folded | {node}, node)
            return
        parent = self.forest.parent.get(node)
        while parent not in (None, _ROOT):
            if self.forest.segment_start(parent):
                self.select(parent)
                return
            parent = self.forest.parent.get(parent)

    def unfold_or_down(self) -> None:
        node = self.selected_id
        if node is None or node not in self.forest.parent:
            return
        if node in self.folded:
            self._set_folds(self.folded - {node}, node)
            return
        while True:
            kids = self.forest.children.get(node, [])
            if not kids:
                break
            if len(kids) > 1:
                node = kids[0]
                break
            node = kids[0]
        self.select(node)

    def _set_folds(self, folds: set[str], keep: str) -> None:
        self.folded = folds
        self._remembered = keep
        self.refresh()

    # --- filter and search --------------------------------------------------------------------
    def set_filter(self, mode: FilterMode) -> None:
        """Switch filter (clears folds); the same entry or its nearest visible ancestor stays selected."""
        if self.selected_id is not None:
            self._remembered = self.selected_id
        self.mode = mode
        self.folded = set()
        remembered = self._remembered
        self.refresh()
        if not self.rows:
            self._remembered = remembered  # an empty view keeps the real selection for later

    def toggle_filter(self, mode: FilterMode) -> None:
        self.set_filter("default" if self.mode == mode else mode)

    def cycle_filter(self, step: int = 1) -> None:
        index = FILTER_CYCLE.index(self.mode)
        self.set_filter(FILTER_CYCLE[(index + step) % len(FILTER_CYCLE)])

    def type_text(self, text: str) -> None:
        if text and text.isprintable():
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
        if self.selected_id is not None:
            self._remembered = self.selected_id
        self.query = query
        self.folded = set()
        self.refresh()
