"""The pi session format v3: entry types, ids, timestamps and pydantic models for validation.

In memory an entry is the plain ``dict`` decoded from its JSONL line, so unknown entry types and
unknown fields round-trip unchanged and loading stays fast. The pydantic models in
:mod:`tui.session.entry_models` describe the format; :func:`validate_entry` checks entries that kompakt
creates before they are written.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Container
from datetime import UTC, datetime
from typing import Any

Entry = dict[str, Any]
Message = dict[str, Any]

CURRENT_SESSION_VERSION = 3

KNOWN_ENTRY_TYPES = frozenset(
    {
        "message",
        "compaction",
        "branch_summary",
        "custom_message",
        "custom",
        "label",
        "model_change",
        "thinking_level_change",
        "session_info",
    }
)

# oh-my-pi 18 writes these besides pi's types. reset_boundary (omp's /clear) starts the context afresh;
# the others are metadata: kept unchanged, never sent, shown in the tree's "all" view.
RESET_BOUNDARY_TYPE = "reset_boundary"
OMP_METADATA_TYPES = frozenset(
    {
        "model_usage",
        "service_tier_change",
        "ttsr_injection",
        "credential_pin",
        "session_init",
        "mode_change",
        "title_change",
        "session_title",
    }
)

# kompakt's own extras live in `custom` entries, which pi ignores (DESIGN.md deviations 1 and 6).
LEAF_CUSTOM_TYPE = "kompakt.leaf"
PRUNE_CUSTOM_TYPE = "kompakt.prune"
MOA_CUSTOM_TYPE = "kompakt.moa"  # a Mixture-of-Agents record, just before the reply it produced
AUTO_CONTINUE_TYPE = "kompakt.auto_continue"  # the synthetic prompt after a threshold compaction


class EntryError(ValueError):
    """An entry does not follow the pi v3 format."""


def now_iso() -> str:
    """An ISO-8601 UTC timestamp with milliseconds and a trailing Z, as JavaScript writes it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_ms() -> int:
    return int(datetime.now(UTC).timestamp() * 1000)


def iso_to_ms(value: str | None) -> int:
    """Parse an ISO timestamp to Unix milliseconds; 0 when it is missing or unreadable."""
    if not value:
        return 0
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0


def uuid7() -> str:
    """A version-7 UUID (RFC 9562): 48 bits of Unix milliseconds, then random bits; pi's session ids.

    Python 3.11 has no ``uuid.uuid7``. Ids made in the same millisecond sort randomly among themselves,
    which is all RFC 9562's basic method promises.
    """
    value = (now_ms() & ((1 << 48) - 1)) << 80 | int.from_bytes(os.urandom(10))  # 80 random bits
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 4122 variant
    return str(uuid.UUID(int=value))


def generate_id(existing: Container[str]) -> str:
    """An 8-hex id not in ``existing``; after 100 collisions a full UUID, as pi does."""
    for _ in range(100):
        candidate = os.urandom(4).hex()  # as secrets.token_hex(4), without importing secrets (hmac, OpenSSL)
        if candidate not in existing:
            return candidate
    return str(uuid.uuid4())


MESSAGE_ROLES = frozenset({"user", "assistant", "toolResult", "bashExecution", "custom"})


def validate_entry(entry: Entry) -> None:
    """Raise :class:`EntryError` when a known entry type lacks a required field.

    Unknown entry types only need the common fields, so that newer formats pass through. The pydantic
    models live in :mod:`tui.session.entry_models`, imported on the first append (pydantic costs start-up
    time that opening a session does not need).
    """
    from pydantic import ValidationError

    from tui.session.entry_models import ENTRY_MODELS, EntryBase

    kind = entry.get("type")
    model = ENTRY_MODELS.get(kind) if isinstance(kind, str) else None
    try:
        (model or EntryBase).model_validate(entry)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "entry"
        raise EntryError(f"{kind or 'entry'}: {where}: {first['msg']}") from None
    if kind == "message":
        role = entry["message"].get("role")
        if role not in MESSAGE_ROLES:
            raise EntryError(f"message: unknown role {role!r}")


def session_info_name(entry: Entry) -> str | None:
    """The session name a ``session_info`` entry sets: trimmed, and None when empty (a clear)."""
    name = entry.get("name")
    return name.strip() or None if isinstance(name, str) else None


def is_custom(entry: Entry, custom_type: str) -> bool:
    return entry.get("type") == "custom" and entry.get("customType") == custom_type
