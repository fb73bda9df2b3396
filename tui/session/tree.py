"""The tree index over a session's entries: children by timestamp, roots, paths, branch points, labels.

It is updated entry by entry on append (no full rebuild), so a live session and watch mode stay cheap.
The path to the leaf asked for last is kept (:class:`PathSnapshot`) and grown by one entry when the next
one asked for is a new child of it, so an agent turn walks a long path once, not at every look. kompakt's leaf markers (DESIGN.md deviation 1) are kept out of the tree: they would otherwise turn
every navigation target into a false branch point.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from tui.session.entries import LEAF_CUSTOM_TYPE, Entry, is_custom, iso_to_ms, session_info_name

# The most new entries below the kept path's leaf that extend it instead of a walk from the new leaf.
PATH_GROWTH = 64


@dataclass(frozen=True, eq=False)
class PathSnapshot:
    """The root-to-``leaf`` path as :func:`path_ids` walked it when the index's ``rewrites`` was
    ``rewrites``. It stays the path while no entry is replaced or removed and ``dangling`` (the missing
    parent the walk stopped at, if any) does not turn up: appends elsewhere do not change it. Never
    changed once made, so readers on other threads can hold it."""

    rewrites: int
    leaf: str
    ids: tuple[str, ...]
    entries: tuple[Entry, ...]
    dangling: str | None
    members: set[str]  # a superset of ``ids`` (shared by the snapshots grown from one walk), for cycles


class TreeIndex:
    """Parent/child links, labels and the session name over a growing list of entries.

    The name comes from the latest ``session_info`` in file order, whatever it holds: an empty name is
    an explicit clear (pi 0.73.1), not a line to skip.
    """

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        # Views and caches key on these, not on the size: a repeated id replaces an entry without
        # growing the index, and a failed fsync takes entries out of it (:meth:`reset`).
        self.version = 0  # bumped by every change
        self.rewrites = 0  # bumped when an entry is replaced or removed: append-only caches start over
        self._clear()
        for entry in entries:
            self.add(entry)

    def _clear(self) -> None:
        self.by_id: dict[str, Entry] = {}
        self.children: dict[str, list[str]] = {}
        self.roots: list[str] = []
        self.labels: dict[str, str] = {}
        self.label_times: dict[str, str] = {}  # target → timestamp of the label entry that set its label
        self.name: str | None = None
        self._sort_keys: dict[str, tuple[int, int]] = {}
        self._waiting: dict[str, list[str]] = {}  # missing parent id → orphans that name it
        self._markers: dict[str, str | None] = {}  # leaf marker id → the entry it points at
        self._order = 0
        self._path_memo: PathSnapshot | None = None  # replaced whole, never changed (threads read it)

    def reset(self, entries: Iterable[Entry]) -> None:
        """Index ``entries`` again in place (some were removed): whoever holds this index sees the change."""
        self.rewrites += 1
        self._clear()
        self.version += 1
        for entry in entries:
            self.add(entry)
        self.rewrites += 1  # again once whole: a path walked meanwhile (on a reader's thread) is stale

    # --- building -----------------------------------------------------------------------------
    def add(self, entry: Entry) -> None:
        entry_id = entry.get("id")
        if not isinstance(entry_id, str):
            return
        self.version += 1
        replaced = entry_id in self.by_id
        if entry_id in self._sort_keys:
            self._detach(entry_id)  # a repeated id in a damaged file: the last line wins, placed once
        self.by_id[entry_id] = entry
        if replaced:
            self.rewrites += 1  # after the replacement: a path walked before it is stale
        kind = entry.get("type")
        if kind == "label":
            target, label = entry.get("targetId"), entry.get("label")
            if isinstance(target, str):
                if label:
                    self.labels[target] = str(label)
                    stamp = entry.get("timestamp")
                    if isinstance(stamp, str):
                        self.label_times[target] = stamp
                    else:
                        self.label_times.pop(target, None)
                else:
                    self.labels.pop(target, None)
                    self.label_times.pop(target, None)
        elif kind == "session_info":
            self.name = session_info_name(entry)
        if is_custom(entry, LEAF_CUSTOM_TYPE):
            self._markers[entry_id] = self._resolve_parent(entry.get("parentId"))
            return
        self._order += 1
        self._sort_keys[entry_id] = (iso_to_ms(entry.get("timestamp")), self._order)
        self.children.setdefault(entry_id, [])
        parent = self._resolve_parent(entry.get("parentId"))
        # Roots stay in file order (pi's getTree sorts only children by timestamp).
        if parent is None or parent == entry_id:
            self.roots.append(entry_id)
        elif self.children[entry_id] and parent in self.children and entry_id in self.path_ids(parent):
            self.roots.append(entry_id)  # re-placed under its own descendant: a cycle, so a root
        elif parent in self.children:
            self._insert(self.children[parent], entry_id)
        else:
            # An orphan is a root until (if ever) its parent shows up.
            self.roots.append(entry_id)
            self._waiting.setdefault(parent, []).append(entry_id)
        for orphan in self._waiting.pop(entry_id, []):
            if orphan in self.path_ids(entry_id):
                continue  # a parent cycle in a damaged file: the orphan stays a root
            self.roots.remove(orphan)
            self._insert(self.children[entry_id], orphan)

    def _detach(self, entry_id: str) -> None:
        """Take ``entry_id`` out of its parent's children (or the roots) before it is placed again."""
        if entry_id in self.roots:
            self.roots.remove(entry_id)
        else:
            parent = self._resolve_parent(self.by_id[entry_id].get("parentId"))
            siblings = self.children.get(parent, [])  # type: ignore[arg-type]
            if entry_id in siblings:
                siblings.remove(entry_id)
        for orphans in self._waiting.values():
            if entry_id in orphans:
                orphans.remove(entry_id)

    def _resolve_parent(self, parent: str | None) -> str | None:
        # pi appends after our leaf marker; such an entry hangs under the entry the marker points at.
        # A damaged file can hold a marker that points at itself or a ring of markers: stop there.
        seen: set[str] = set()
        while parent in self._markers and parent not in seen:
            seen.add(parent)
            parent = self._markers[parent]
        return None if parent in self._markers else parent

    def through_markers(self, entry_id: str | None) -> str | None:
        """The entry a leaf marker points at (following markers), or ``entry_id`` itself."""
        return self._resolve_parent(entry_id)

    def is_marker(self, entry_id: str) -> bool:
        return entry_id in self._markers

    def _insert(self, siblings: list[str], entry_id: str) -> None:
        keys = self._sort_keys
        if not siblings or keys[siblings[-1]] <= keys[entry_id]:
            siblings.append(entry_id)  # the usual case: entries arrive in timestamp order
        else:
            bisect.insort(siblings, entry_id, key=lambda i: keys[i])

    # --- queries ------------------------------------------------------------------------------
    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.by_id

    def __len__(self) -> int:
        return len(self._sort_keys)

    def parent_of(self, entry_id: str) -> str | None:
        parent = self._resolve_parent(self.by_id[entry_id].get("parentId"))
        return parent if parent in self.children and parent != entry_id else None

    def path_ids(self, entry_id: str | None) -> list[str]:
        """Ids from the root to ``entry_id`` (inclusive); [] for None."""
        snapshot = self.path_snapshot(entry_id)
        return [] if snapshot is None else list(snapshot.ids)

    def path(self, entry_id: str | None) -> list[Entry]:
        snapshot = self.path_snapshot(entry_id)
        return [] if snapshot is None else list(snapshot.entries)

    def is_current(self, snapshot: PathSnapshot) -> bool:
        """Whether ``snapshot`` is still the path to its leaf."""
        return snapshot.rewrites == self.rewrites and (
            snapshot.dangling is None or snapshot.dangling not in self.by_id
        )

    def path_snapshot(self, entry_id: str | None) -> PathSnapshot | None:
        """The path to ``entry_id`` (None when it is not indexed): the kept one when it still holds, that
        one plus the entries down to ``entry_id`` when it descends from its leaf by a few new entries, else a
        new walk."""
        by_id = self.by_id
        if entry_id is None or entry_id not in by_id:
            return None
        memo = self._path_memo
        if memo is not None and self.is_current(memo):
            if memo.leaf == entry_id:
                return memo
            tail = self._tail_after(memo, entry_id)
            if tail:
                memo.members.update(tail)
                grown = PathSnapshot(
                    memo.rewrites,
                    entry_id,
                    (*memo.ids, *tail),
                    (*memo.entries, *(by_id[i] for i in tail)),
                    memo.dangling,
                    memo.members,
                )
                self._path_memo = grown
                return grown
        rewrites = self.rewrites  # read before the walk: a rewrite during it leaves the result stale
        ids = path_ids(by_id, entry_id)
        root_parent = by_id[ids[0]].get("parentId")
        dangling = root_parent if isinstance(root_parent, str) and root_parent not in by_id else None
        snapshot = PathSnapshot(
            rewrites, entry_id, tuple(ids), tuple(by_id[i] for i in ids), dangling, set(ids)
        )
        self._path_memo = snapshot
        return snapshot

    def _tail_after(self, memo: PathSnapshot, entry_id: str) -> list[str]:
        """The ids from ``memo``'s leaf (exclusive) down to ``entry_id`` when ``entry_id`` descends from
        it by at most :data:`PATH_GROWTH` new entries (a turn, or a compaction's prune entry and itself);
        else []."""
        by_id = self.by_id
        tail: list[str] = []
        current: str | None = entry_id
        while (
            current is not None
            and current in by_id
            and current not in memo.members
            and len(tail) < PATH_GROWTH
        ):
            if tail and current in tail:  # a cycle among the new entries
                return []
            tail.append(current)
            parent = by_id[current].get("parentId")
            if parent == memo.leaf:
                tail.reverse()
                return tail
            current = parent if isinstance(parent, str) and parent != current else None
        return []

    def common_ancestor(self, a: str | None, b: str | None) -> str | None:
        """The deepest entry on both root paths, or None."""
        if a is None or b is None:
            return None
        on_a = set(self.path_ids(a))
        for entry_id in reversed(self.path_ids(b)):
            if entry_id in on_a:
                return entry_id
        return None

    def branch_points(self) -> list[str]:
        return [i for i, kids in self.children.items() if len(kids) > 1]

    def leaves(self) -> list[str]:
        return [i for i, kids in self.children.items() if not kids]

    def descendants(self, entry_id: str) -> Iterator[str]:
        stack = list(reversed(self.children.get(entry_id, [])))
        while stack:
            current = stack.pop()
            yield current
            stack.extend(reversed(self.children.get(current, [])))

    def label(self, entry_id: str) -> str | None:
        return self.labels.get(entry_id)

    def label_time(self, entry_id: str) -> str | None:
        """pi's ``labelTimestamp``: when the current label was set (None without a label)."""
        return self.label_times.get(entry_id)


def path_ids(by_id: dict[str, Entry], entry_id: str | None) -> list[str]:
    """Ids from the root to ``entry_id`` (inclusive) by the entries' parent ids; [] for None. Needs only
    the entries by id, so a store can give the active path before its index is built."""
    path: list[str] = []
    seen: set[str] = set()
    current = entry_id
    while current is not None and current in by_id and current not in seen:
        path.append(current)
        seen.add(current)
        parent = by_id[current].get("parentId")
        current = parent if parent != current else None
    path.reverse()
    return path
