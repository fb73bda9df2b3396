"""Migrate pi session entries from format v1 and v2 to v3, in place, as pi does on load.

v1 has no ids: every entry gets a fresh 8-hex id and the previous entry as parent, and compaction
``firstKeptEntryIndex`` (an index into the whole file, header included) becomes ``firstKeptEntryId``.
v2 → v3 renames the message role ``hookMessage`` to ``custom``.
"""

from __future__ import annotations

from tui.session.entries import CURRENT_SESSION_VERSION, Entry, generate_id


def header_version(header: Entry) -> int:
    version = header.get("version")
    return version if isinstance(version, int) else 1


def migrate_entries(header: Entry, entries: list[Entry]) -> bool:
    """Bring ``header`` and ``entries`` to the current version; True when anything changed."""
    version = header_version(header)
    if version >= CURRENT_SESSION_VERSION:
        return False
    if version < 2:
        _v1_to_v2(header, entries)
    if version < 3:
        _v2_to_v3(header, entries)
    return True


def _v1_to_v2(header: Entry, entries: list[Entry]) -> None:
    used: set[str] = set()
    previous: str | None = None
    file_order = [header, *entries]  # v1 indexes count the header as position 0
    for entry in entries:
        entry_id = generate_id(used)
        used.add(entry_id)
        entry["id"] = entry_id
        entry["parentId"] = previous
        previous = entry_id
    for entry in entries:
        if entry.get("type") == "compaction" and "firstKeptEntryIndex" in entry:
            index = entry.pop("firstKeptEntryIndex")
            if isinstance(index, int) and 0 < index < len(file_order):
                entry["firstKeptEntryId"] = file_order[index]["id"]
            elif entries:
                entry["firstKeptEntryId"] = entries[0]["id"]
    header["version"] = 2


def _v2_to_v3(header: Entry, entries: list[Entry]) -> None:
    for entry in entries:
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"
    header["version"] = CURRENT_SESSION_VERSION
