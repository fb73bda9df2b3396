"""Why an automatic compaction over the threshold had nothing to summarise, in numbers (issue 13, D10).

The planner's skip says only "nothing to compact". Over the threshold that leaves the user with a
full context and no idea what to change, so this names the cause from the path itself (the newest
message or the newest turn alone is larger than keepRecentTokens, everything since the last compaction fits the budget,
or the last entry is already a compaction) and the two ways out. ``skip_state`` is what must change
before the advice is worth repeating: the skip's reason, the latest compaction and the budgets.
"""

from __future__ import annotations

from collections.abc import Sequence

import prompts
from tui.compaction.boundary import compaction_boundary, latest_compaction_index
from tui.compaction.plan import SKIP_ALREADY_COMPACTED, effective_path
from tui.compaction.tokens import estimate_tokens
from tui.session.entries import Entry


def explain_skip(
    path_entries: Sequence[Entry],
    skip_reason: str,
    *,
    context_tokens: int,
    threshold: int,
    keep_recent_tokens: int,
) -> str:
    """The advice for an automatic compaction that skipped while ``context_tokens`` > ``threshold``."""
    path = effective_path(path_entries)
    messages = [e for e in path[compaction_boundary(path).start :] if e.get("type") == "message"]
    sizes = [estimate_tokens(e["message"]) for e in messages]
    newest = sizes[-1] if sizes else 0
    tail = sum(sizes)
    # The newest turn starts at the last user message; it is kept whole, whatever keepRecentTokens says.
    turn_start = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i]["message"].get("role") == "user"), 0
    )
    turn = sum(sizes[turn_start:])
    if skip_reason == SKIP_ALREADY_COMPACTED:
        why = "the last entry is already a compaction, and its summary with the messages it kept is what fills it"
    elif newest >= keep_recent_tokens:
        why = (
            f"the newest message alone is about {newest:,} tokens, more than keepRecentTokens "
            f"({keep_recent_tokens:,}), and the newest turn is always kept"
        )
    elif turn >= keep_recent_tokens:
        after = len(messages) - turn_start - 1
        why = (
            f"the newest turn (the last user message and the {after} message{'s' if after != 1 else ''} "
            f"after it) is about {turn:,} tokens, more than keepRecentTokens ({keep_recent_tokens:,}), "
            "and the newest turn is always kept"
        )
    else:
        count = len(messages)
        why = (
            f"the {count} message{'s' if count != 1 else ''} since the last compaction (about {tail:,} "
            f"tokens by estimate) fit in keepRecentTokens ({keep_recent_tokens:,}); the rest of the "
            "context is what the provider counts beyond them (system prompt, tool definitions)"
        )
    return prompts.render(
        "compaction_nothing_over_threshold",
        tokens=f"{context_tokens:,}",
        threshold=f"{threshold:,}",
        why=why,
        keep=f"{keep_recent_tokens:,}",
    )


def skip_state(
    path_entries: Sequence[Entry], skip_reason: str, keep_recent_tokens: int, reserve_tokens: int
) -> tuple[str, str | None, int, int]:
    """What must change before the advice is shown again (not the token count, which grows each turn)."""
    latest = latest_compaction_index(path_entries)
    compaction_id = path_entries[latest].get("id") if latest >= 0 else None
    return skip_reason, compaction_id, keep_recent_tokens, reserve_tokens
