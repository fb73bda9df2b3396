"""Hermes's head+tail planner (``compaction.strategy = "head-tail"``), headless: estimate, trigger, cut.

Hermes keeps the opening of a session (the first N messages: the protected head, dropped after the first
compaction) and a recent tail chosen by a token budget, and summarises the middle. Its own estimate
(chars/4 plus a per-message overhead, the whole tool-call envelope, replay fields such as reasoning, and a
fixed price per image) serves both the trigger and the cut, so they never disagree. The trigger is a
fraction of the effective window, raised to 0.75 under 512K tokens and pulled below a degenerate window.
The tail walk has a soft ceiling of 1.5× the budget, a minimum message count, keeps the latest user
message and never splits a tool call from its results; the bridge rule starts the tail at the assistant
turn before that message rather than at the message itself.

Storing it as a pi ``compaction``: pi keeps one contiguous range (``firstKeptEntryId`` onward) after the
summary, so the tail is that range and **the head is folded into the summary message**, reproduced in
full (``head_copy``) in a ``<protected-messages>`` block ahead of the notes
(``head_tail_summary.fold_protected``). That is the only layout that keeps the order head → middle →
tail for pi as well without copying the tail: a separate message or re-appended copies of the head
would land after the tail. When the latest user message must fall on the summarised side (Hermes's
"causal coupling", or after the head decays), it is pinned in the same block, so it is always kept.
``details.kompakt`` records ``strategy``, ``headEntryIds``, ``pinnedEntryIds``, ``middleEntryIds``,
``tailStartId``, ``protectedRanges``, ``headChars`` (the block's length), ``estimatedTokensBefore`` and
(from the engine) ``estimatedTokensAfter``: Hermes's estimates, while ``tokensBefore`` and ``tokensAfter``
are pi 0.73.1's measure, as for keep-recent; the next compaction strips
the block from the previous summary and summarises those messages with the rest of the middle.
The effective window is the context window minus ``reserveTokens`` (Hermes's output reservation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tui.compaction.boundary import Boundary, compaction_boundary, tokens_before
from tui.compaction.file_ops import FileOps, compute_file_lists, extract_from_messages, seed_from_details
from tui.compaction.plan import (
    SKIP_ALREADY_COMPACTED,
    SKIP_TOO_SMALL,
    PlanSkip,
    effective_path,
)
from tui.compaction.tokens import json_compact
from tui.session.context import context_from_path, convert_to_llm, entry_to_message
from tui.session.entries import Entry, Message

if TYPE_CHECKING:
    from tui.config.model import CompactionSettings

STRATEGY = "head-tail"

SMALL_WINDOW_TOKENS = 512_000
SMALL_WINDOW_PERCENT = 0.75
MINIMUM_CONTEXT_TOKENS = 64_000
DEGENERATE_PERCENT = 0.85
TARGET_RATIO_MIN = 0.10
TARGET_RATIO_MAX = 0.80
SUMMARY_WINDOW_SHARE = 0.05
SUMMARY_TOKENS_CEILING = 10_000
SUMMARY_TOKENS_FLOOR = 2_000
SUMMARY_INPUT_SHARE = 0.20
SOFT_CEILING = 1.5
MIN_TAIL_MESSAGES = 3
MAX_TAIL_MESSAGE_FLOOR = 8
MESSAGE_OVERHEAD_TOKENS = 10
IMAGE_TOKENS = 1_600
CHARS_PER_TOKEN = 4
# Fields providers replay on every request (reasoning, encrypted items): counted, never changed.
REPLAY_KEYS = (
    "reasoning",
    "reasoning_content",
    "reasoning_details",
    "codex_reasoning_items",
    "codex_message_items",
)


# --- the estimate ----------------------------------------------------------------------------------


def _rough(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _serialized_len(value: Any) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, str):
        return len(value)
    return len(json_compact(value))


def _tool_call_envelope(block: Mapping[str, Any]) -> str:
    """The call as it goes over the wire (id, type, name, arguments as a JSON string), all counted."""
    arguments = block.get("arguments")
    return json_compact(
        {
            "id": block.get("id"),
            "type": "function",
            "function": {"name": block.get("name"), "arguments": json_compact(arguments or {})},
        }
    )


def _wire_tokens(message: Message) -> int:
    content = message.get("content")
    if isinstance(content, str):
        tokens = _rough(len(content))
    else:
        chars = calls = replay = 0
        for block in content or ():
            kind = block.get("type")
            if kind == "text":
                chars += len(block.get("text") or "")
            elif kind == "image":
                chars += IMAGE_TOKENS * CHARS_PER_TOKEN  # the base64 payload is never counted
            elif kind == "toolCall":
                calls += _rough(len(_tool_call_envelope(block)))
            elif kind == "thinking":
                replay += len(block.get("thinking") or "") + _serialized_len(block.get("thinkingSignature"))
        tokens = chars // CHARS_PER_TOKEN + calls + replay // CHARS_PER_TOKEN
    tokens += MESSAGE_OVERHEAD_TOKENS  # role and keys
    return tokens + sum(_serialized_len(message.get(key)) // CHARS_PER_TOKEN for key in REPLAY_KEYS)


def estimate_message_tokens(message: Message) -> int:
    """Hermes's budget estimate of one context message, after mapping it to the provider roles."""
    return sum(_wire_tokens(wire) for wire in convert_to_llm([message]))


def context_size(path_entries: Sequence[Entry]) -> tuple[int, int]:
    """``(messages, tokens)`` of the context a path builds, by Hermes's estimate (trigger and progress)."""
    messages = context_from_path(effective_path(path_entries)).messages
    return len(messages), sum(estimate_message_tokens(m) for m in messages)


# --- the trigger ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeadTailThreshold:
    """The trigger and the budgets derived from it (Hermes §1.2)."""

    context_window: int
    effective_window: int
    percent: float
    threshold_tokens: int
    tail_budget: int
    max_summary_tokens: int


def compute_threshold(
    context_window: int,
    percent: float = 0.50,
    *,
    max_tokens: int | None = None,
    cap: int | None = None,
    target_ratio: float = 0.20,
) -> HeadTailThreshold:
    """The compaction threshold for a window: small-window floor, output reservation, degenerate guard, cap."""
    pct = max(percent, SMALL_WINDOW_PERCENT) if context_window < SMALL_WINDOW_TOKENS else percent
    effective = context_window - (max_tokens if max_tokens and max_tokens > 0 else 0)
    if effective <= 0:
        effective = context_window
    floored = max(int(effective * pct), MINIMUM_CONTEXT_TOKENS)
    if floored >= effective:
        # The 64K floor would make the threshold unreachable on a small window (Hermes #14690).
        threshold = max(1, min(int(effective * DEGENERATE_PERCENT), effective - 1))
    else:
        threshold = floored
    if cap is not None:
        threshold = min(threshold, min(cap, context_window))
    ratio = min(max(target_ratio, TARGET_RATIO_MIN), TARGET_RATIO_MAX)
    return HeadTailThreshold(
        context_window=context_window,
        effective_window=effective,
        percent=pct,
        threshold_tokens=threshold,
        tail_budget=int(threshold * ratio),
        max_summary_tokens=min(int(context_window * SUMMARY_WINDOW_SHARE), SUMMARY_TOKENS_CEILING),
    )


@dataclass(frozen=True)
class HeadTailConfig:
    """The head-tail knobs of ``[compaction]``."""

    threshold_percent: float = 0.50
    target_ratio: float = 0.20
    protect_first_n: int = 3
    protect_last_n: int = 20

    @classmethod
    def from_settings(cls, compaction: CompactionSettings) -> HeadTailConfig:
        return cls(
            threshold_percent=compaction.head_tail_threshold,
            target_ratio=compaction.head_tail_target_ratio,
            protect_first_n=compaction.head_tail_protect_first,
            protect_last_n=compaction.head_tail_protect_last,
        )

    def threshold(self, context_window: int, reserve_tokens: int) -> HeadTailThreshold:
        return compute_threshold(
            context_window, self.threshold_percent, max_tokens=reserve_tokens, target_ratio=self.target_ratio
        )


def should_compact(
    path_entries: Sequence[Entry], context_window: int, reserve_tokens: int, config: HeadTailConfig
) -> bool:
    """Hermes's trigger: the estimated context has reached the threshold."""
    return context_size(path_entries)[1] >= config.threshold(context_window, reserve_tokens).threshold_tokens


def saved_enough(orig_tokens: int, new_tokens: int) -> bool:
    """Hermes §4.1's token rule: *more* than 5 % fewer tokens (exactly 5 % is no progress).
    Integer arithmetic, so that 1,000 → 950 is not decided by a float rounding."""
    return orig_tokens > 0 and new_tokens * 100 < orig_tokens * 95


def made_progress(orig_len: int, new_len: int, orig_tokens: int, new_tokens: int) -> bool:
    """Hermes §4.1: fewer messages, or more than 5 % fewer tokens."""
    return new_len < orig_len or saved_enough(orig_tokens, new_tokens)


def summary_target_tokens(middle_tokens: int, max_summary_tokens: int) -> int:
    """The size the summary prompt asks for (guidance only, Hermes §2.5)."""
    return max(SUMMARY_TOKENS_FLOOR, min(int(SUMMARY_INPUT_SHARE * middle_tokens), max_summary_tokens))


# --- the plan ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Item:
    """One context message; ``virtual`` ones were protected by the previous compaction (folded in it)."""

    index: int
    entry_id: str
    message: Message
    tokens: int
    virtual: bool = False


@dataclass(frozen=True)
class HeadTailPlan:
    """A head-tail compaction, shaped like :class:`~tui.compaction.plan.CompactionPlan` where the engine,
    the hooks and the summarizer read it (no split turn, no turn prefix).

    Indices are into the (effective) path. ``head_*`` are copied into the summary, ``pinned_*`` is the
    latest user message when the tail starts after it, ``summarize_*`` is the middle (including the
    previous compaction's protected messages) and ``kept_*`` the tail from ``first_kept_entry_id`` on.
    """

    first_kept_entry_id: str
    first_kept_index: int
    tokens_before: int  # pi 0.73.1's figure (boundary.tokens_before), stored as for keep-recent
    estimated_tokens: int  # Hermes's estimate of the context: what the trigger compares
    threshold: HeadTailThreshold
    previous_compaction_id: str | None
    previous_summary: str | None
    head_entry_ids: list[str]
    head_indices: list[int]
    head_messages: list[Message]
    pinned_entry_ids: list[str]
    pinned_messages: list[Message]
    summarize_entry_ids: list[str]
    summarize_indices: list[int]
    messages_to_summarize: list[Message]
    kept_entry_ids: list[str]
    recent_messages: list[Message]
    entry_tokens: dict[str, int]
    head_tokens: int
    summarized_tokens: int
    kept_tokens: int
    bridged: bool
    boundary_end: int
    file_ops: FileOps = field(default_factory=FileOps)
    strategy: str = STRATEGY
    is_split_turn: bool = False
    turn_start_index: int = -1
    turn_start_id: str | None = None
    turn_prefix_messages: list[Message] = field(default_factory=list)
    turn_prefix_entry_ids: list[str] = field(default_factory=list)
    history_empty: bool = False

    @property
    def protected_messages(self) -> list[Message]:
        """What the summary reproduces in full (``head_copy``): the head, then the pinned request."""
        return [*self.head_messages, *self.pinned_messages]

    @property
    def summary_target_tokens(self) -> int:
        return summary_target_tokens(self.summarized_tokens, self.threshold.max_summary_tokens)

    def kompakt_details(self, head_chars: int) -> dict[str, Any]:
        """The head-tail part of ``details.kompakt``."""
        head = self.head_entry_ids
        return {
            "strategy": STRATEGY,
            "headEntryIds": list(head),
            "pinnedEntryIds": list(self.pinned_entry_ids),
            "middleEntryIds": list(self.summarize_entry_ids),
            "tailStartId": self.first_kept_entry_id,
            "protectedRanges": {
                "head": [head[0], head[-1]] if head else None,
                "tail": [self.first_kept_entry_id, self.kept_entry_ids[-1]],
            },
            "headChars": head_chars,
            # tokensBefore is pi's figure; this is Hermes's estimate of the same context (the trigger's).
            "estimatedTokensBefore": self.estimated_tokens,
            "thresholdTokens": self.threshold.threshold_tokens,
            "tailBudget": self.threshold.tail_budget,
        }

    def to_json(self) -> dict[str, Any]:
        read_files, modified_files = compute_file_lists(self.file_ops)
        return {
            "skip": False,
            "strategy": STRATEGY,
            "firstKeptEntryId": self.first_kept_entry_id,
            "firstKeptIndex": self.first_kept_index,
            "tokensBefore": self.tokens_before,
            "estimatedTokens": self.estimated_tokens,
            "thresholdTokens": self.threshold.threshold_tokens,
            "tailBudget": self.threshold.tail_budget,
            "previousCompactionId": self.previous_compaction_id,
            "previousSummary": self.previous_summary,
            "headEntryIds": self.head_entry_ids,
            "pinnedEntryIds": self.pinned_entry_ids,
            "summarizeEntryIds": self.summarize_entry_ids,
            "keptEntryIds": self.kept_entry_ids,
            "entryTokens": self.entry_tokens,
            "headTokens": self.head_tokens,
            "summarizedTokens": self.summarized_tokens,
            "keptTokens": self.kept_tokens,
            "bridged": self.bridged,
            "readFiles": read_files,
            "modifiedFiles": modified_files,
        }


def kompakt_record(entry: Entry) -> dict[str, Any]:
    """``details.kompakt`` of a compaction entry, or ``{}``."""
    details = entry.get("details")
    record = details.get("kompakt") if isinstance(details, dict) else None
    return record if isinstance(record, dict) else {}


def is_head_tail(entry: Entry) -> bool:
    return entry.get("type") == "compaction" and kompakt_record(entry).get("strategy") == STRATEGY


def protected_entry_ids(entry: Entry) -> list[str]:
    """The messages a head-tail compaction copied into its summary (none for other compactions)."""
    if not is_head_tail(entry):
        return []
    record = kompakt_record(entry)
    ids = [*(record.get("headEntryIds") or ()), *(record.get("pinnedEntryIds") or ())]
    return [str(i) for i in ids]


def previous_notes(entry: Entry) -> str:
    """A compaction's summary without the protected block a head-tail compaction put in front of it."""
    summary = str(entry.get("summary") or "")
    head_chars = kompakt_record(entry).get("headChars") if is_head_tail(entry) else None
    if isinstance(head_chars, int) and 0 < head_chars <= len(summary):
        return summary[head_chars:]
    return summary


def _role(item: _Item) -> str | None:
    return item.message.get("role")


def _call_ids(message: Message) -> set[str]:
    return {
        str(block.get("id"))
        for block in message.get("content") or ()
        if isinstance(block, dict) and block.get("type") == "toolCall"
    }


def _is_request(message: Message) -> bool:
    """An actionable user message: role user with some text or an image."""
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    return any(
        (b.get("type") == "text" and (b.get("text") or "").strip()) or b.get("type") == "image"
        for b in content or ()
    )


def _visible_text(message: Message) -> bool:
    return any(
        isinstance(b, dict) and b.get("type") == "text" and (b.get("text") or "").strip()
        for b in message.get("content") or ()
    )


def _group_start(items: Sequence[_Item], i: int) -> int:
    """The assistant that holds the calls of the tool-result run containing ``i`` (``i`` otherwise)."""
    j = i
    while j > 0 and _role(items[j]) == "toolResult":
        j -= 1
    if _role(items[j]) == "assistant" and _call_ids(items[j].message):
        return j
    return i


def _skip_results(items: Sequence[_Item], i: int) -> int:
    """The first index at or after ``i`` that is not a tool result (a clean place to start a range)."""
    while i < len(items) and _role(items[i]) == "toolResult":
        i += 1
    return i


def _walk(items: Sequence[_Item], head_end: int, limit: int, min_tail: int) -> int:
    """Walk back adding estimates; stop before the message that would pass ``limit`` (tail ≥ min_tail)."""
    n = len(items)
    total = 0
    cut = n
    for i in range(n - 1, head_end - 1, -1):
        if total + items[i].tokens > limit and n - cut >= min_tail:
            break
        total += items[i].tokens
        cut = i
    return cut


def _tail_cut(items: Sequence[_Item], head_end: int, budget: int, protect_last_n: int) -> tuple[int, bool]:
    """Where the tail starts (Hermes §2.3) and whether the bridge rule moved it."""
    n = len(items)
    available = max(0, n - head_end - 1)
    floor = max(MIN_TAIL_MESSAGES, min(protect_last_n, MAX_TAIL_MESSAGE_FLOOR))
    min_tail = min(floor, max(MIN_TAIL_MESSAGES, available - 2), available) if available > 1 else 0
    cut = _walk(items, head_end, int(budget * SOFT_CEILING), min_tail)
    if cut <= head_end:
        # Everything fits under the soft ceiling: use the plain budget, so something is summarised.
        cut = _walk(items, head_end, budget, min_tail)
    cut = min(cut, n - min_tail)
    if cut <= head_end:
        cut = max(n - min_tail, head_end + 1)
    if cut < n:
        cut = _group_start(items, cut)  # a tool group stays whole in the tail

    request = next((i for i in range(n - 1, -1, -1) if _is_request(items[i].message)), None)
    if request is not None and head_end <= request < cut:
        cut = request
    if request == head_end and cut <= head_end:
        # Causal coupling: the request cannot open the tail without emptying the middle, so the tail
        # starts after its reply and tool results; the request itself is pinned in the summary.
        cut = request + 1
        if cut < n and _role(items[cut]) == "assistant":
            cut += 1
    # Hermes §2.3 step 6 (#29824): the last assistant message with visible text stays in the tail (else
    # the last assistant message), so the model still sees what it last told the user.
    assistants = [i for i in range(n) if _role(items[i]) == "assistant"]
    spoken = [i for i in assistants if _visible_text(items[i].message)] or assistants
    if spoken and head_end < spoken[-1] < cut:
        cut = spoken[-1]
    cut = _skip_results(items, max(cut, head_end + 1))

    # The bridge rule: open the tail with the assistant turn before the request, not the request.
    if cut < n and cut == request and cut - 1 > head_end:
        before = _group_start(items, cut - 1)
        if before > head_end and _role(items[before]) == "assistant":
            return before, True
    return cut, False


def _context_items(path: Sequence[Entry], boundary: Boundary) -> list[_Item]:
    """The context messages of the path (the previous summary excluded), the protected ones first.

    They start where pi 0.73.1's boundary starts (the previous compaction's first kept entry), and
    never after the previous compaction: everything after it is in the context.
    """
    previous = boundary.previous
    indices = range(min(boundary.start, previous + 1) if previous >= 0 else boundary.start, len(path))
    items = []
    virtual: list[_Item] = []
    if previous >= 0:
        protected = set(protected_entry_ids(path[previous]))
        for i in range(previous if protected else 0):
            message = entry_to_message(path[i]) if path[i].get("id") in protected else None
            if message is not None:
                virtual.append(_Item(i, path[i]["id"], message, estimate_message_tokens(message), True))
    for i in indices:
        entry = path[i]
        if entry.get("type") == "compaction" or not entry.get("id"):
            continue
        message = entry_to_message(entry)
        if message is not None:
            items.append(_Item(i, entry["id"], message, estimate_message_tokens(message)))
    return virtual + items


def plan_head_tail(
    path_entries: Sequence[Entry],
    *,
    context_window: int,
    reserve_tokens: int,
    config: HeadTailConfig | None = None,
) -> HeadTailPlan | PlanSkip:
    """Plan a head-tail compaction of a root→leaf path, or say why there is nothing to compact."""
    config = config or HeadTailConfig()
    if path_entries and path_entries[-1].get("type") == "compaction":
        return PlanSkip(SKIP_ALREADY_COMPACTED)
    path = effective_path(path_entries)
    boundary = compaction_boundary(path)
    previous = boundary.previous
    threshold = config.threshold(context_window, reserve_tokens)
    _, estimated = context_size(path)
    before = tokens_before(path)

    items = _context_items(path, boundary)
    n = len(items)
    first_real = sum(1 for item in items if item.virtual)
    # The head decays to nothing once the session has been compacted (Hermes #11996).
    head_end = first_real
    if previous < 0 and config.protect_first_n > 0:
        head_end = _skip_results(items, min(config.protect_first_n, n))
    if n - head_end <= MIN_TAIL_MESSAGES + 1:
        return PlanSkip(SKIP_TOO_SMALL, before)

    cut, bridged = _tail_cut(items, head_end, threshold.tail_budget, config.protect_last_n)
    if cut >= n:
        return PlanSkip(SKIP_TOO_SMALL, before)
    # The cut is always past the head, so the middle holds at least one message.
    middle = [*items[:first_real], *items[head_end:cut]]
    head = items[first_real:head_end]
    tail = items[cut:]
    request = next((i for i in range(n - 1, -1, -1) if _is_request(items[i].message)), None)
    pinned = (
        [items[request]]
        if request is not None and request < cut and not first_real <= request < head_end
        else []
    )

    file_ops = FileOps()
    previous_summary = None
    previous_id = None
    if previous >= 0:
        previous_summary = previous_notes(path[previous])
        previous_id = path[previous].get("id")
        seed_from_details(path[previous], file_ops)
    extract_from_messages([item.message for item in middle], file_ops)

    return HeadTailPlan(
        first_kept_entry_id=tail[0].entry_id,
        first_kept_index=tail[0].index,
        tokens_before=before,
        estimated_tokens=estimated,
        threshold=threshold,
        previous_compaction_id=previous_id,
        previous_summary=previous_summary,
        head_entry_ids=[item.entry_id for item in head],
        head_indices=[item.index for item in head],
        head_messages=[item.message for item in head],
        pinned_entry_ids=[item.entry_id for item in pinned],
        pinned_messages=[item.message for item in pinned],
        summarize_entry_ids=[item.entry_id for item in middle],
        summarize_indices=[item.index for item in middle],
        # A pinned request is reproduced beside the notes: it is not summarised as well.
        messages_to_summarize=[item.message for item in middle if item not in pinned],
        kept_entry_ids=[item.entry_id for item in tail],
        recent_messages=[item.message for item in tail],
        entry_tokens={item.entry_id: item.tokens for item in items},
        head_tokens=sum(item.tokens for item in head),
        summarized_tokens=sum(item.tokens for item in middle),
        kept_tokens=sum(item.tokens for item in tail),
        bridged=bridged,
        boundary_end=len(path),
        file_ops=file_ops,
    )
