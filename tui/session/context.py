"""Build the message list the model sees from a session path, exactly as pi's ``buildSessionContext``.

The path runs from the root to the leaf. The latest compaction on it replaces everything before its
``firstKeptEntryId`` with a summary message. An oh-my-pi ``reset_boundary`` (its ``/clear``) that lies
after the latest compaction starts the context afresh: only the entries after it are sent (before the
compaction, the compaction wins as usual). kompakt's prune entries (DESIGN.md deviation 6) replace old
tool outputs here, at build time, so the file itself is never rewritten.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import prompts
from tui.session.content import content_text
from tui.session.entries import PRUNE_CUSTOM_TYPE, RESET_BOUNDARY_TYPE, Entry, Message, is_custom, iso_to_ms

_UNSET: Any = object()


@dataclass
class SessionContext:
    """The messages for the model plus the thinking level and model in force at the leaf."""

    messages: list[Message] = field(default_factory=list)
    thinking_level: str = "off"
    model: dict[str, str] | None = None
    # Entry id of each message (None for the synthetic compaction summary), parallel to `messages`.
    entry_ids: list[str | None] = field(default_factory=list)


def entry_to_message(entry: Entry) -> Message | None:
    """The context message an entry contributes, or None (pi's getMessageFromEntry mapping)."""
    kind = entry.get("type")
    if kind == "message":
        return entry.get("message")
    if kind == "custom_message":
        return {
            "role": "custom",
            "customType": entry.get("customType"),
            "content": entry.get("content"),
            "display": entry.get("display"),
            "details": entry.get("details"),
            "timestamp": iso_to_ms(entry.get("timestamp")),
        }
    if kind == "branch_summary":
        if not entry.get("summary"):
            return None
        return {
            "role": "branchSummary",
            "summary": entry["summary"],
            "fromId": entry.get("fromId"),
            "timestamp": iso_to_ms(entry.get("timestamp")),
        }
    if kind == "compaction":
        return compaction_summary_message(entry)
    return None


def compaction_summary_message(entry: Entry) -> Message:
    return {
        "role": "compactionSummary",
        "summary": entry.get("summary", ""),
        "tokensBefore": entry.get("tokensBefore", 0),
        "timestamp": iso_to_ms(entry.get("timestamp")),
    }


def path_to(by_id: Mapping[str, Entry], leaf_id: str) -> list[Entry]:
    """Entries from the root to ``leaf_id``; a missing parent ends the walk (an orphan's sub-path)."""
    path: list[Entry] = []
    seen: set[str] = set()
    current = by_id.get(leaf_id)
    while current is not None:
        path.append(current)
        seen.add(current["id"])
        parent = current.get("parentId")
        if parent is None or parent in seen:
            break
        current = by_id.get(parent)
    path.reverse()
    return path


def pruned_outputs(path: Sequence[Entry]) -> dict[str, int]:
    """Tool-result entry ids pruned by kompakt prune entries on this path, with their original tokens."""
    return path_prunes(path).outputs


@dataclass(frozen=True)
class PathPrunes:
    """The prune entries on a path: what they prune (:func:`pruned_outputs`) and where they stand."""

    outputs: dict[str, int] = field(default_factory=dict)  # read it, never change it (it may be kept)
    indices: tuple[int, ...] = ()  # each prune entry's index on the path


def path_prunes(path: Sequence[Entry]) -> PathPrunes:
    pruned: dict[str, int] = {}
    indices: list[int] = []
    for index, entry in enumerate(path):
        if is_custom(entry, PRUNE_CUSTOM_TYPE):
            indices.append(index)
            pruned.update(prune_targets(entry))
    return PathPrunes(pruned, tuple(indices))


def prune_targets(entry: Entry) -> dict[str, int]:
    """The tool-result entry ids one prune entry prunes, with their original tokens."""
    data = entry.get("data") or {}
    return {entry_id: int(tokens) for entry_id, tokens in (data.get("entries") or {}).items()}


def pruned_tool_result(message: Message, tokens: int) -> Message:
    """A tool result whose output was pruned: only a notice remains (images are dropped too)."""
    replaced = dict(message)
    replaced["content"] = [{"type": "text", "text": f"[Output truncated - {tokens} tokens]"}]
    return replaced


def build_session_context(
    entries: Sequence[Entry],
    leaf_id: str | None = _UNSET,
    by_id: Mapping[str, Entry] | None = None,
) -> SessionContext:
    """The context at ``leaf_id``: an unknown or omitted leaf falls back to the last entry, None is empty."""
    if leaf_id is None or not entries:
        return SessionContext()
    if by_id is None:
        by_id = {e["id"]: e for e in entries if "id" in e}
    if leaf_id is _UNSET or leaf_id not in by_id:
        leaf_id = entries[-1].get("id")
        if leaf_id is None:
            return SessionContext()
    path = path_to(by_id, leaf_id)
    return context_from_path(path)


def _note_settings(ctx: SessionContext, entry: Entry) -> None:
    """The thinking level and the model ``entry`` sets, if any (the latest on the path wins)."""
    kind = entry.get("type")
    if kind == "thinking_level_change":
        ctx.thinking_level = entry.get("thinkingLevel", "off")
    elif kind == "model_change":
        ctx.model = {"provider": entry.get("provider", ""), "modelId": entry.get("modelId", "")}
    elif kind == "message":
        msg = entry.get("message") or {}
        if msg.get("role") == "assistant":
            ctx.model = {"provider": msg.get("provider", ""), "modelId": msg.get("model", "")}


def _emit(ctx: SessionContext, entry: Entry, pruned: Mapping[str, int]) -> None:
    """Add the message ``entry`` contributes to the context (a pruned tool output as its notice)."""
    if entry.get("type") == "compaction":
        return
    message = entry_to_message(entry)
    if message is None:
        return
    if pruned and entry["id"] in pruned and message.get("role") == "toolResult":
        message = pruned_tool_result(message, pruned[entry["id"]])
    ctx.messages.append(message)
    ctx.entry_ids.append(entry["id"])


def context_from_path(path: Sequence[Entry]) -> SessionContext:
    return context_and_pruned(path)[0]


def context_and_pruned(path: Sequence[Entry]) -> tuple[SessionContext, PathPrunes]:
    """:func:`context_from_path`, and the path's prune entries it applied (:func:`path_prunes`)."""
    ctx = SessionContext()
    compaction_index = -1
    reset_index = -1
    for index, entry in enumerate(path):
        _note_settings(ctx, entry)
        kind = entry.get("type")
        if kind == "compaction":
            compaction_index = index
        elif kind == RESET_BOUNDARY_TYPE:
            reset_index = index
    prunes = path_prunes(path)
    pruned = prunes.outputs

    if reset_index > compaction_index:  # omp's /clear after the latest compaction (or without one)
        for entry in path[reset_index + 1 :]:
            _emit(ctx, entry, pruned)
        return ctx, prunes
    if compaction_index < 0:
        for entry in path:
            _emit(ctx, entry, pruned)
        return ctx, prunes

    compaction = path[compaction_index]
    ctx.messages.append(compaction_summary_message(compaction))
    ctx.entry_ids.append(compaction["id"])
    first_kept = compaction.get("firstKeptEntryId")
    keeping = False
    for entry in path[:compaction_index]:
        if entry.get("id") == first_kept:
            keeping = True
        if keeping:
            _emit(ctx, entry, pruned)
    for entry in path[compaction_index + 1 :]:
        _emit(ctx, entry, pruned)
    return ctx, prunes


def extended_context(
    ctx: SessionContext, prunes: PathPrunes, entry: Entry, index: int
) -> tuple[SessionContext, PathPrunes] | None:
    """The context and prune entries of a path one ``entry`` longer (``entry`` stands at ``index``) than
    the one ``ctx`` and ``prunes`` were built from, or None when they cannot answer it: then the path is
    built afresh. A long session's path is tens of thousands of entries, and each turn adds one.

    A message adds itself at the end; a prune entry prunes the outputs it names (:func:`pruned_context`);
    a reset boundary leaves no message; a compaction keeps a suffix of ``ctx`` (:func:`compacted_context`).
    An entry that a prune entry already names is built afresh. ``ctx`` and ``prunes`` are not changed.
    """
    if entry.get("id") in prunes.outputs:
        return None
    kind = entry.get("type")
    if kind == "compaction":
        compacted = compacted_context(ctx, entry)
        return None if compacted is None else (compacted, prunes)
    if is_custom(entry, PRUNE_CUSTOM_TYPE):
        targets = prune_targets(entry)
        grown_prunes = PathPrunes({**prunes.outputs, **targets}, (*prunes.indices, index))
        return pruned_context(ctx, targets), grown_prunes
    grown = copy_context(ctx)
    if kind == RESET_BOUNDARY_TYPE:  # the latest boundary on the path: nothing before it is sent
        grown.messages.clear()
        grown.entry_ids.clear()
        return grown, prunes
    _note_settings(grown, entry)
    _emit(grown, entry, prunes.outputs)
    return grown, prunes


def copy_context(ctx: SessionContext) -> SessionContext:
    """A copy of ``ctx`` whose lists and model can change without changing ``ctx``."""
    return SessionContext(
        list(ctx.messages),
        ctx.thinking_level,
        None if ctx.model is None else dict(ctx.model),
        list(ctx.entry_ids),
    )


def pruned_context(ctx: SessionContext, targets: Mapping[str, int]) -> SessionContext:
    """``ctx`` with the tool outputs ``targets`` names pruned (a newer count for one pruned before wins,
    as on a fresh build, which prunes each output once with its latest count)."""
    pruned = copy_context(ctx)
    for position, entry_id in enumerate(pruned.entry_ids):
        message = pruned.messages[position]
        if entry_id is not None and entry_id in targets and message.get("role") == "toolResult":
            pruned.messages[position] = pruned_tool_result(message, targets[entry_id])
    return pruned


def compacted_context(ctx: SessionContext, compaction: Entry) -> SessionContext | None:
    """The context after ``compaction`` is appended to the path ``ctx`` was built from, without walking
    the path again (a long session's path is tens of thousands of entries); None when ``ctx`` does not
    hold what it keeps.

    A fresh build keeps every message from ``firstKeptEntryId`` on. When that entry is a message of ``ctx``
    (and not an earlier compaction's summary), everything after it on the path is in ``ctx`` too, since a
    context is always a summary and then one unbroken run of the path. So the kept messages are that
    suffix of ``ctx``. Otherwise (the entry adds no message, lies before an earlier compaction's kept part
    or a reset boundary, or is not on the path) the caller builds afresh. A compaction sets neither the
    thinking level nor the model, and it prunes nothing.
    """
    first_kept = compaction.get("firstKeptEntryId")
    if not isinstance(first_kept, str):
        return None
    try:
        start = ctx.entry_ids.index(first_kept)
    except ValueError:
        return None
    if ctx.messages[start].get("role") == "compactionSummary":
        return None
    compacted = copy_context(ctx)
    compacted.messages[:start] = [compaction_summary_message(compaction)]
    compacted.entry_ids[:start] = [compaction["id"]]
    return compacted


def bash_execution_text(message: Message) -> str:
    output = message.get("output") or ""
    body = f"```\n{output}\n```" if output else "(no output)"
    status = ""
    if message.get("cancelled"):
        status = "\n\n(The command was cancelled.)"
    elif message.get("exitCode") not in (0, None):
        status = f"\n\nIt exited with code {message.get('exitCode')}."
    if message.get("truncated") and message.get("fullOutputPath"):
        status += f"\n\nThe output was truncated; the full output is in {message['fullOutputPath']}"
    return prompts.render("bash_execution", command=message.get("command", ""), output=body, status=status)


def convert_to_llm(messages: Sequence[Message]) -> list[Message]:
    """Map every context role onto the three the provider knows: user, assistant and toolResult."""
    out: list[Message] = []
    for message in messages:
        role = message.get("role")
        if role in ("user", "assistant", "toolResult"):
            out.append(message)
        elif role == "bashExecution":
            if message.get("excludeFromContext"):
                continue
            text = bash_execution_text(message)
            out.append(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                    "timestamp": message.get("timestamp"),
                }
            )
        elif role == "custom":
            content = message.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            out.append({"role": "user", "content": content, "timestamp": message.get("timestamp")})
        elif role == "branchSummary":
            text = prompts.render("branch_summary_context", summary=message.get("summary", ""))
            out.append(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                    "timestamp": message.get("timestamp"),
                }
            )
        elif role == "compactionSummary":
            text = prompts.render("compaction_context", summary=message.get("summary", ""))
            out.append(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                    "timestamp": message.get("timestamp"),
                }
            )
    return out


def message_text(message: Message) -> str:
    """The plain text of a message's text blocks (for display, search and tests)."""
    return content_text(message.get("content"))
