"""New session files made from a branch of another: pi's JSONL export, ``/fork`` and ``/clone``.

* :func:`export_branch_jsonl` writes the path root → leaf as pi's ``/export file.jsonl`` does: a fresh
  header with the session's own id and cwd, then the entries of the path re-chained into one line of
  parents (kompakt's leaf markers are left out: they only record navigation).
* :func:`create_branched_session` is pi's ``createBranchedSession``: the path to an entry (without its
  label entries; an entry that was a label's child re-linked to its nearest kept ancestor) copied into a
  new session file beside the source, with a new UUIDv7 id and
  ``parentSession`` naming the source, then one label entry per labelled entry of that path, re-created
  with the time the label was originally set (so such an entry can be older than its parent).
* :func:`fork_point` is ``/fork``'s rule: a new session from the *parent* of a user message, with that
  message's text handed back for the prompt. ``/clone`` is :func:`create_branched_session` at an entry.

Each file is written whole under a temporary name, fsynced and renamed into place, so it is complete or
absent; it never replaces an existing file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tui.session.catalog import new_session_path
from tui.session.content import content_text
from tui.session.entries import (
    CURRENT_SESSION_VERSION,
    LEAF_CUSTOM_TYPE,
    Entry,
    generate_id,
    is_custom,
    now_iso,
    uuid7,
)
from tui.session.errors import EntryNotFoundError
from tui.session.store import SessionStore, encode_entry


def _write_new_file(target: Path, lines: Iterable[Entry], *, replace: bool = False) -> Path:
    """Write the entries as JSONL under a temporary name, fsync, then rename (never over a session)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if not replace and target.exists():
        raise FileExistsError(f"{target}: already exists")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(b"".join(encode_entry(line) for line in lines))
        handle.flush()
        os.fsync(handle.fileno())
    if replace:
        os.replace(tmp, target)
    else:
        try:
            os.link(tmp, target)  # fails if the name was taken meanwhile
        finally:
            tmp.unlink()
    fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return target


def _header(store: SessionStore, session_id: str, timestamp: str, parent_session: str | None) -> Entry:
    header: Entry = {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": session_id,
        "timestamp": timestamp,
        "cwd": str(store.header.get("cwd") or os.getcwd()),
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


# --- JSONL export -----------------------------------------------------------------------------------
def branch_jsonl_entries(store: SessionStore, leaf_id: str | None = None) -> list[Entry]:
    """pi's ``exportToJsonl``: the header (same id, new timestamp), then the path re-chained linearly."""
    leaf = store.leaf_id if leaf_id is None else leaf_id
    if leaf is not None:
        store.get(leaf)
    header = _header(store, store.session_id, now_iso(), None)
    lines: list[Entry] = [header]
    previous: str | None = None
    for entry in store.get_branch(leaf) if leaf is not None else []:
        if is_custom(entry, LEAF_CUSTOM_TYPE):
            continue
        lines.append({**entry, "parentId": previous})
        previous = entry["id"]
    return lines


def default_jsonl_export_path(session_path: Path) -> Path:
    """Beside the session: ``s.jsonl`` → ``s.branch.jsonl`` (never the session file itself)."""
    return session_path.with_name(f"{session_path.stem}.branch.jsonl")


def export_branch_jsonl(store: SessionStore, out: Path | None = None, leaf_id: str | None = None) -> Path:
    """Write the branch to ``out`` (default: beside the session) as a pi session file; returns the path."""
    target = out if out is not None else default_jsonl_export_path(store.path)
    if target.resolve() == store.path.resolve():
        raise FileExistsError(f"{target}: that is the session itself; choose another file")
    return _write_new_file(target, branch_jsonl_entries(store, leaf_id), replace=True)


# --- fork and clone ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class BranchedSession:
    """A session file made from a branch: where it is, and (for /fork) the text for the prompt."""

    path: Path
    prompt_text: str | None = None


def _without_labels(path: list[Entry]) -> list[Entry]:
    """The path without its label entries, an entry whose parent was one re-linked to the nearest kept
    ancestor. pi 0.73.1 leaves such a parent dangling, which cuts the clone's path at the first label
    set mid-branch (DESIGN.md deviation: kompakt re-links; every other entry is copied unchanged)."""
    kept: list[Entry] = []
    for entry in path:
        if entry.get("type") == "label":
            continue
        parent = kept[-1]["id"] if kept else None
        if entry.get("parentId") != parent and entry.get("parentId") is not None:
            entry = {**entry, "parentId": parent}
        kept.append(entry)
    return kept


def create_branched_session(
    store: SessionStore, leaf_id: str | None, directory: Path | None = None
) -> BranchedSession:
    """A new session file holding the path to ``leaf_id`` (None: an empty session) and its labels.

    It goes beside the source (or into ``directory``) as ``<timestamp>_<uuid7>.jsonl`` with
    ``parentSession`` set to the source's path, as pi 0.73.1 does.
    """
    session_id, timestamp = uuid7(), now_iso()
    cwd = str(store.header.get("cwd") or os.getcwd())
    name = new_session_path(cwd, session_id=session_id, timestamp=timestamp).name
    target = (directory or store.path.parent) / name
    header = _header(store, session_id, timestamp, str(store.path.resolve()))
    path = store.get_branch(leaf_id) if leaf_id is not None else []
    if leaf_id is not None and not path:
        raise EntryNotFoundError(leaf_id)
    copied = _without_labels(path)
    on_path = {e["id"] for e in copied}
    ids = set(on_path)
    labels: list[Entry] = []
    parent = copied[-1]["id"] if copied else None
    for target_id, label in store.tree.labels.items():
        if target_id not in on_path:
            continue
        entry: Entry = {
            "type": "label",
            "id": generate_id(ids),
            "parentId": parent,
            "timestamp": store.tree.label_time(target_id) or now_iso(),
            "targetId": target_id,
            "label": label,
        }
        ids.add(entry["id"])
        labels.append(entry)
        parent = entry["id"]
    return BranchedSession(_write_new_file(target, [header, *copied, *labels]))


def fork_point(store: SessionStore, user_entry_id: str) -> tuple[str | None, str]:
    """``/fork`` from a user message: the entry to branch at (its parent; None at a root) and its text."""
    entry = store.get(user_entry_id)
    message = entry.get("message") if entry.get("type") == "message" else None
    if not isinstance(message, dict) or message.get("role") != "user":
        raise ValueError(f"{user_entry_id}: /fork starts from a user message")
    return store.tree.parent_of(user_entry_id), content_text(message.get("content"))


def fork_session(store: SessionStore, user_entry_id: str, directory: Path | None = None) -> BranchedSession:
    """pi's ``/fork``: a new session up to the message before ``user_entry_id``; its text for the prompt."""
    parent, text = fork_point(store, user_entry_id)
    branched = create_branched_session(store, parent, directory)
    return BranchedSession(branched.path, text)


def user_messages_for_forking(store: SessionStore) -> list[tuple[str, str]]:
    """Every user message with text, in file order (all branches), as pi's ``/fork`` offers them."""
    found = []
    for entry in store.entries:
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "user":
            text = content_text(message.get("content"))
            if text:
                found.append((entry["id"], text))
    return found
