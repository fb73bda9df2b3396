"""The side panel that shows one session entry in full.

:class:`EntryDetail` shows the entry highlighted in the session tree: a message's text, thinking and
tool calls with their arguments, a tool result with the call that produced it, a branch summary, or
a compaction with its summary, short summary, read and modified files, ``tokensBefore`` and
``firstKeptEntryId``, plus the id, parent, timestamp and label of every entry. All of it is untrusted
session text, so it is sanitised and assembled as plain :class:`~textual.content.Content` (no
markup is parsed); theme variables colour the field names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from weakref import WeakKeyDictionary

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.compaction.tokens import estimate_tokens
from tui.session.content import content_text
from tui.session.context import pruned_tool_result
from tui.session.entries import PRUNE_CUSTOM_TYPE, Entry, is_custom
from tui.session.sanitize import sanitize
from tui.session.tree import TreeIndex

Part = tuple[str, str]
_KEY = "$text-muted"
_HEADING = "bold $text-primary"
_CALL_SEARCH_DEPTH = 64  # how far up the path a tool result looks for its call


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


class _Builder:
    """Collects styled parts; every piece of text is sanitised on the way in."""

    def __init__(self) -> None:
        self.parts: list[Part] = []

    def heading(self, title: str) -> None:
        if self.parts:
            self.parts.append(("\n", ""))
        self.parts.append((sanitize(title) + "\n", _HEADING))

    def field(self, name: str, value: object) -> None:
        if value is None or value == "":
            return
        self.parts += [(f"{name}: ", _KEY), (sanitize(str(value)) + "\n", "")]

    def text(self, text: str, style: str = "") -> None:
        if text:
            self.parts.append((sanitize(text).rstrip("\n") + "\n", style))

    def files(self, name: str, files: object) -> None:
        if isinstance(files, list) and files:
            self.parts.append((f"{name}:\n", _KEY))
            self.parts += [(f"  {sanitize(str(f))}\n", "") for f in files]

    def content(self) -> Content:
        return Content.assemble(*self.parts)


def describe_entry(entry: Entry, tree: TreeIndex | None = None) -> Content:
    """The full, sanitised description of one entry."""
    out = _Builder()
    kind = str(entry.get("type", ""))
    message = entry.get("message") if kind == "message" else None
    title = f"{kind} · {message.get('role', '?')}" if isinstance(message, Mapping) else kind
    out.heading(title)
    out.field("id", entry.get("id"))
    out.field("parent", entry.get("parentId"))
    out.field("timestamp", entry.get("timestamp"))
    if tree is not None and isinstance(entry.get("id"), str):
        out.field("label", tree.labels.get(entry["id"]))
    if isinstance(message, Mapping):
        _message(out, message, entry, tree)
    elif kind == "compaction":
        _compaction(out, entry)
    elif kind == "branch_summary":
        out.field("fromId", entry.get("fromId"))
        if entry.get("fromHook"):
            out.field("fromHook", "true")
        out.heading("Summary")
        out.text(str(entry.get("summary") or ""))
        _details_files(out, entry.get("details"))
    elif kind == "custom_message":
        out.field("customType", entry.get("customType"))
        out.field("display", entry.get("display"))
        out.heading("Content")
        out.text(content_text(entry.get("content")))
    else:
        if is_custom(entry, PRUNE_CUSTOM_TYPE) and isinstance(entry.get("data"), Mapping):
            data = entry["data"]
            count = len(data.get("entries") or {})
            saved = data.get("tokensSaved")
            out.field(
                "pruned", f"{count} tool outputs, {saved:,} tokens saved" if isinstance(saved, int) else count
            )
        extra = {k: v for k, v in entry.items() if k not in ("type", "id", "parentId", "timestamp")}
        if extra:
            out.heading("Fields")
            out.text(_json(extra))
    return out.content()


def _compaction(out: _Builder, entry: Entry) -> None:
    tokens = entry.get("tokensBefore")
    out.field("tokensBefore", f"{tokens:,}" if isinstance(tokens, int) else tokens)
    after = entry.get("tokensAfter")  # oh-my-pi 18: tokensAfter, method and warning on the entry
    if after is not None:
        out.field("tokensAfter", f"{after:,}" if isinstance(after, int) else after)
    out.field("firstKeptEntryId", entry.get("firstKeptEntryId"))
    out.field("method", entry.get("method"))
    out.field("warning", entry.get("warning"))
    if entry.get("fromHook"):
        out.field("fromHook", "true")
    details = entry.get("details") if isinstance(entry.get("details"), Mapping) else {}
    short = entry.get("shortSummary") or details.get("shortSummary")
    if short:
        out.heading("Short summary")
        out.text(str(short))
    out.heading("Summary")
    out.text(str(entry.get("summary") or ""))
    _details_files(out, details)


def _details_files(out: _Builder, details: object) -> None:
    if isinstance(details, Mapping):
        out.files("readFiles", details.get("readFiles"))
        out.files("modifiedFiles", details.get("modifiedFiles"))


def _message(out: _Builder, message: Mapping[str, Any], entry: Entry, tree: TreeIndex | None) -> None:
    role = message.get("role")
    if role == "assistant":
        out.field("model", "/".join(str(message[k]) for k in ("provider", "model") if message.get(k)))
        out.field("stopReason", message.get("stopReason"))
        usage = message.get("usage")
        if isinstance(usage, Mapping):
            out.field(
                "usage",
                ", ".join(
                    f"{k} {usage[k]:,}"
                    for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
                    if isinstance(usage.get(k), int)
                ),
            )
        out.field("error", message.get("errorMessage"))
    elif role == "toolResult":
        out.field("tool", message.get("toolName"))
        out.field("toolCallId", message.get("toolCallId"))
        if message.get("isError"):
            out.field("isError", "true")
        pruned = _prune_of(tree, entry) if tree is not None else None
        if pruned is not None:
            prune_id, tokens = pruned
            saved = max(0, tokens - estimate_tokens(pruned_tool_result(dict(message), tokens)))
            out.field("context", f"pruned, {saved:,} tokens saved (prune entry {prune_id})")
        call = _find_call(tree, entry, str(message.get("toolCallId"))) if tree is not None else None
        if call is not None:
            out.heading(f"Call: {call.get('name', '')}")
            out.text(_json(call.get("arguments")))
    elif role == "bashExecution":
        out.field("command", message.get("command"))
        out.field("exitCode", message.get("exitCode"))
        out.heading("Output")
        out.text(str(message.get("output") or ""))
        return
    elif role == "custom":
        out.field("customType", message.get("customType"))
    _blocks(out, message.get("content"), "Output" if role == "toolResult" else "Text")


def _blocks(out: _Builder, content: object, text_title: str) -> None:
    if isinstance(content, str):
        out.heading(text_title)
        out.text(content)
        return
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            out.heading(text_title)
            out.text(str(block.get("text") or ""))
        elif kind == "thinking":
            out.heading("Thinking")
            out.text(str(block.get("thinking") or ""), "italic $text-muted")
        elif kind == "toolCall":
            out.heading(f"Tool call: {block.get('name', '')} ({block.get('id', '')})")
            out.text(_json(block.get("arguments")))
        elif kind == "image":
            out.heading("Image")
            out.text(str(block.get("mimeType") or "image"))


def _find_call(tree: TreeIndex, entry: Entry, call_id: str) -> Mapping[str, Any] | None:
    """The toolCall block a result answers, looked up on the entry's own path (usually its parent)."""
    current = entry.get("parentId")
    for _ in range(_CALL_SEARCH_DEPTH):
        parent = tree.by_id.get(current) if isinstance(current, str) else None
        if parent is None:
            return None
        message = parent.get("message") if parent.get("type") == "message" else None
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            for block in message.get("content") or ():
                if (
                    isinstance(block, Mapping)
                    and block.get("type") == "toolCall"
                    and block.get("id") == call_id
                ):
                    return block
        current = parent.get("parentId")
    return None


# Per tree: its size when indexed, and each pruned output's (prune entry id, original tokens). Scanning
# every entry for prune entries on each cursor rest took 0.13 s on a 100k-entry session.
_PRUNES: WeakKeyDictionary[TreeIndex, tuple[int, dict[str, tuple[str, int]]]] = WeakKeyDictionary()


def _prune_of(tree: TreeIndex, entry: Entry) -> tuple[str, int] | None:
    """The prune entry below ``entry`` that lists it, with the output's original tokens, if any."""
    known = _PRUNES.get(tree)
    if known is None or known[0] != tree.version:  # entries were added: index them again
        index: dict[str, tuple[str, int]] = {}
        for candidate in tree.by_id.values():
            if is_custom(candidate, PRUNE_CUSTOM_TYPE):
                for entry_id, tokens in ((candidate.get("data") or {}).get("entries") or {}).items():
                    if isinstance(tokens, int):
                        index.setdefault(entry_id, (str(candidate.get("id")), tokens))
        known = _PRUNES[tree] = (tree.version, index)
    return known[1].get(str(entry.get("id")))


class EntryDetail(VerticalScroll):
    """A scrollable panel with one entry in full."""

    HELP = """\
## Entry detail

The entry under the tree cursor, in full: text, tool calls and their arguments, summaries, files
and token counts. Scroll with the mouse or focus it and use the arrow keys.
"""

    DEFAULT_CSS = """
    EntryDetail {
        background: $surface;
        padding: 0 1;
    }
    EntryDetail > #entry-detail-body { width: 1fr; }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._body = Static(Content("No entry selected."), id="entry-detail-body")
        self.entry_id: str | None = None

    def compose(self) -> ComposeResult:
        yield self._body

    def show_entry(self, entry: Entry | None, tree: TreeIndex | None = None) -> None:
        """Show an entry (None clears the panel)."""
        self.entry_id = entry.get("id") if entry else None
        self._body.update(describe_entry(entry, tree) if entry else Content("No entry selected."))
        self.scroll_home(animate=False)
