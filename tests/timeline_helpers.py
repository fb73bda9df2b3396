"""Hand-built paths with a compaction for the timeline tests and snapshot apps.

:func:`compacted_path` gives a fixed root→leaf path: three turns summarised by a compaction whose
``firstKeptEntryId`` is the third turn's user message, then turns after it with tool calls and
provider usage. Token sizes are exact multiples of four characters so estimates are round numbers.
"""

from __future__ import annotations

from typing import Any

from tests import factories as f

WINDOW = 64_000
RESERVE = 8_000
KEEP = 6_000


def turn(
    n: int, *, user_tokens: int, tool_tokens: int, reply_tokens: int, usage: int | None = None
) -> list[dict]:
    """One turn: a user prompt, a tool call and its output, and a final reply (optionally with usage)."""
    call = f"call_{n}"
    return [
        f.user(f.text_of(user_tokens * 4)),
        f.assistant(tool_calls=[f.tool_call("read", {"path": f"src/file_{n}.py"}, call)]),
        f.tool_result(call, "read", f.text_of(tool_tokens * 4)),
        f.assistant(
            f.text_of(reply_tokens * 4),
            usage=f.usage(input=usage, output=reply_tokens) if usage is not None else None,
        ),
    ]


def compacted_path(*, usage: bool = False, reason: str | None = "threshold") -> list[dict]:
    """Turns 1–2 summarised, turn 3 kept (first kept = entry 8), the compaction at 12, turns 4–7 after."""
    entries: list[dict] = []
    for n in (1, 2, 3):
        entries += turn(n, user_tokens=500, tool_tokens=6_000, reply_tokens=500)
    details: dict[str, Any] = {"readFiles": ["src/file_1.py"], "modifiedFiles": []}
    if reason is not None:
        details["kompakt"] = {"reason": reason, "tokensAfter": 9_100, "durationMs": 3_200}
    entries.append(f.compaction(f.text_of(2_000 * 4), first_kept=8, tokens_before=21_000, details=details))
    for n in (4, 5, 6, 7):
        entries += turn(
            n,
            user_tokens=250,
            tool_tokens=3_000,
            reply_tokens=250,
            usage=(9_800 + (n - 3) * 3_600) if usage else None,
        )
    return f.chain(entries)
