"""Migrate pi session entries from format v1 and v2 to v3, in place, as pi does on load.

v1 has no ids: every entry gets a fresh 8-hex id and the previous entry as parent, and compaction
``firstKeptEntryIndex`` (an index into the whole file, header included) becomes ``firstKeptEntryId``.
v2 → v3 renames the message role ``hookMessage`` to ``custom``.
"""

from __future__ import annotations

import orjson

from tui.session.entries import CURRENT_SESSION_VERSION, Entry, generate_id
from tui.session.errors import SessionVersionError

KNOWN_VERSIONS = frozenset({1, 2, CURRENT_SESSION_VERSION})


def header_version(header: Entry) -> int:
    """The header's format version: missing means v1 (as in pi); ``3.0`` and ``"3"`` mean 3.

    Raises :class:`SessionVersionError` for anything else (``-1``, ``4``, ``"x"``, ``true``): guessing v1
    would regenerate every id and flatten the tree.
    """
    version = header.get("version")
    if version is None:
        return 1
    number: int | None = None
    if isinstance(version, int) and not isinstance(version, bool):
        number = version
    elif isinstance(version, float) and version.is_integer():
        number = int(version)
    elif isinstance(version, str) and version.strip().isdigit():
        number = int(version.strip())
    if number not in KNOWN_VERSIONS:
        known = ", ".join(str(v) for v in sorted(KNOWN_VERSIONS))
        raise SessionVersionError(
            f"unsupported session format version {orjson.dumps(version).decode()} (kompakt reads {known}); "
            "the file is left unchanged"
        )
    return number


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
