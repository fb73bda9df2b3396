"""What both exports show, decided once: the active path, the abandoned branches, metadata and cleaned text.

:func:`prepare_export` turns a session store into an :class:`ExportView`. The Markdown and HTML
renderers only lay it out. Every string from the session goes through :meth:`ExportView.clean`
(escape sequences and control characters dropped, secrets redacted) before a renderer uses it, and long
tool outputs are cut by :func:`truncate_output` the same way in both formats.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tui.compaction.token_text import format_tokens
from tui.session.content import content_text
from tui.session.context import context_from_path
from tui.session.display import entry_text, flat, tool_calls_by_id
from tui.session.entries import LEAF_CUSTOM_TYPE, Entry, Message, is_custom, iso_to_ms
from tui.session.labels import tool_call_label
from tui.session.redact import scrubber
from tui.session.sanitize import sanitize
from tui.session.store import SessionStore
from tui.session.tree import TreeIndex

OUTPUT_MAX_LINES = 50
OUTPUT_MAX_CHARS = 6000
LINK_TEXT_CHARS = 60
TITLE_CHARS = 80
# Entry types that appear in a transcript; labels, titles and kompakt's own records are shown otherwise.
SHOWN_TYPES = frozenset(
    {"message", "custom_message", "compaction", "branch_summary", "model_change", "thinking_level_change"}
)
_CONTENT_TYPES = frozenset({"message", "custom_message", "compaction", "branch_summary"})
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass
class Branch:
    """Entries of a branch that the export has not shown yet, and the shown entry it leaves from."""

    from_id: str | None  # None: a separate root (an orphaned sub-tree or a reset leaf)
    entries: list[Entry]


@dataclass
class ExportView:
    """A session prepared for export: paths to render, lookups, and the text cleaner."""

    header: Entry
    tree: TreeIndex
    leaf_id: str | None
    path: list[Entry]
    branches: list[Branch]
    model: str
    calls: dict[str, tuple[str, Any]]
    in_context: set[str]
    clean: Callable[[str], str]
    rendered: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.rendered = {e["id"] for e in self.path if e.get("type") in SHOWN_TYPES}
        for branch in self.branches:
            self.rendered.update(e["id"] for e in branch.entries if e.get("type") in SHOWN_TYPES)

    @property
    def title(self) -> str:
        """The session name, else its first user message, else its id."""
        if self.tree.name:
            return self.clean(flat(self.tree.name))
        for entry in self.path:
            message = entry.get("message") or {}
            if entry.get("type") == "message" and message.get("role") == "user":
                text = flat(self.clean(content_text(message.get("content"))))
                if text:
                    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"
        return f"Session {self.clean(str(self.header.get('id', '')))}"

    def metadata(self) -> list[tuple[str, str]]:
        """Label/value pairs for the export's header; nothing from the environment or the settings."""
        roles: dict[str, int] = {}
        for entry in self.path:
            if entry.get("type") == "message":
                role = str((entry.get("message") or {}).get("role"))
                roles[role] = roles.get(role, 0) + 1
        kinds = [e.get("type") for e in self.path]
        counts = [
            _count(roles.get("user", 0), "user message"),
            _count(roles.get("assistant", 0), "assistant message"),
            _count(roles.get("toolResult", 0) + roles.get("bashExecution", 0), "tool result"),
            _count(kinds.count("compaction"), "compaction"),
            _count(kinds.count("branch_summary"), "branch summary", "branch summaries"),
        ]
        rows = [
            ("Session", str(self.header.get("id", ""))),
            ("Working directory", str(self.header.get("cwd", ""))),
            ("Model", self.model or "unknown"),
            ("Started", format_time(iso_to_ms(self.header.get("timestamp")), with_date=True)),
            ("Leaf", self.leaf_id or "(none)"),
            ("Active path", f"{len(self.path)} entries: " + ", ".join(counts)),
            (
                "Tree",
                f"{_count(len(self.tree), 'entry', 'entries')}, "
                f"{_count(len(self.tree.branch_points()), 'branch point')}, "
                f"{_count(len(self.tree.labels), 'label')}",
            ),
        ]
        return [(name, self.clean(value)) for name, value in rows]

    def label(self, entry_id: str) -> str | None:
        label = self.tree.label(entry_id)
        return self.clean(flat(label)) if label else None

    def row_text(self, entry_id: str, cap: int | None = None) -> str:
        """The entry's one-line text as the session tree shows it, cut to ``cap`` characters."""
        text = self.clean(entry_text(self.tree.by_id[entry_id], self.calls))
        return text if cap is None or len(text) <= cap else text[: cap - 1] + "…"

    def result_label(self, message: Message) -> str:
        """A tool result named by the call that produced it, e.g. ``[read: src/app.py]``."""
        call = self.calls.get(str(message.get("toolCallId")))
        if call is None:
            return self.clean(f"[{message.get('toolName') or 'tool'}]")
        return self.clean(tool_call_label(call[0], call[1]))


def _count(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n} {singular if n == 1 else plural or singular + 's'}"


def prepare_export(store: SessionStore, leaf_id: str | None = None, all_branches: bool = False) -> ExportView:
    """The view of ``store`` at ``leaf_id`` (default: the store's leaf); unknown ids raise EntryNotFoundError."""
    leaf = store.leaf_id if leaf_id is None else store.get(leaf_id)["id"]
    # A pi entry appended after a kompakt leaf marker names the marker as its parent: leave markers out.
    path = [e for e in store.get_branch(leaf) if not is_custom(e, LEAF_CUSTOM_TYPE)] if leaf else []
    context = context_from_path(path)
    model = context.model or {}
    clean = _cleaner()
    branches = abandoned_branches(store.tree, [e["id"] for e in path]) if all_branches else []
    return ExportView(
        header=store.header,
        tree=store.tree,
        leaf_id=leaf,
        path=path,
        branches=branches,
        model="/".join(p for p in (model.get("provider"), model.get("modelId")) if p),
        calls=tool_calls_by_id(store.entries),
        in_context={i for i in context.entry_ids if i is not None},
        clean=clean,
    )


def _cleaner() -> Callable[[str], str]:
    scrub = scrubber()

    def clean(text: str) -> str:
        return scrub(sanitize(text))

    return clean


def _leaves_in_tree_order(tree: TreeIndex) -> Iterator[str]:
    for root in tree.roots:
        for node in (root, *tree.descendants(root)):
            if not tree.children.get(node):
                yield node


def abandoned_branches(tree: TreeIndex, active_ids: list[str]) -> list[Branch]:
    """Every part of the tree off the active path, one branch per leaf in tree order.

    A branch starts after the last entry already exported (the active path or an earlier branch), so
    nothing appears twice. Branches without messages or summaries (a lone label, say) are left out.
    """
    exported = set(active_ids)
    branches: list[Branch] = []
    for leaf in _leaves_in_tree_order(tree):
        if leaf in exported:
            continue
        # Walk up only to the first exported entry: a long shared trunk is not walked once per leaf.
        fresh: list[str] = []
        seen: set[str] = set()
        current: str | None = leaf
        while current is not None and current in tree.by_id and current not in exported:
            if current in seen:  # a parent cycle in a damaged file: treat the branch as a root
                current = None
                break
            seen.add(current)
            fresh.append(current)
            parent = tree.by_id[current].get("parentId")
            current = parent if parent != current else None
        fresh.reverse()
        exported.update(fresh)
        entries = [tree.by_id[i] for i in fresh if not is_custom(tree.by_id[i], LEAF_CUSTOM_TYPE)]
        if any(e.get("type") in _CONTENT_TYPES for e in entries):
            branches.append(Branch(current if current in exported else None, entries))
    return branches


def anchor(entry_id: str) -> str:
    """A fragment id for an entry that is safe in HTML and Markdown whatever the file holds."""
    if _SAFE_ID.fullmatch(entry_id):
        return f"e-{entry_id}"
    return "e-x" + entry_id.encode("utf-8", "replace").hex()[:32]


def format_time(ms: int, with_date: bool = False) -> str:
    if not ms:
        return ""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC" if with_date else "%H:%M:%S")


def entry_time(entry: Entry) -> str:
    return format_time(iso_to_ms(entry.get("timestamp")))


def truncate_output(text: str) -> tuple[str, str | None]:
    """The head of a long output and a note on what was left out (None when nothing was)."""
    lines = text.split("\n")
    shown = "\n".join(lines[:OUTPUT_MAX_LINES])
    if len(shown) > OUTPUT_MAX_CHARS:
        shown = shown[:OUTPUT_MAX_CHARS]
    if len(shown) == len(text):
        return text, None
    hidden_lines = len(lines) - shown.count("\n") - 1
    what = f"{hidden_lines} more lines" if hidden_lines > 0 else f"{len(text) - len(shown)} more characters"
    return shown, f"… {what} not shown ({len(lines)} lines, {len(text):,} characters in all)"


def blocks(content: Any) -> list[dict[str, Any]]:
    """Message content as a list of blocks (a plain string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def arguments_json(arguments: Any) -> str:
    """Tool-call arguments as indented JSON (arguments kept as a string are decoded first)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    return json.dumps(arguments if arguments is not None else {}, indent=2, ensure_ascii=False, default=str)


def image_note(block: dict[str, Any]) -> str:
    data = block.get("data")
    size = f", {len(data) * 3 // 4 // 1024} KB" if isinstance(data, str) else ""
    return f"[image: {block.get('mimeType') or 'unknown type'}{size}]"


def compaction_title(entry: Entry) -> str:
    tokens = int(entry.get("tokensBefore") or 0)
    return f"Compacted: {_round_k(tokens)} tokens → summary"


def _round_k(tokens: int) -> str:
    return format_tokens(tokens, whole_k_from=0, half_up=True, millions=False)


def compaction_facts(entry: Entry) -> list[tuple[str, str]]:
    """What a compaction entry records besides its summary and first kept entry, as label/value pairs."""
    details = entry.get("details") if isinstance(entry.get("details"), dict) else {}
    own = details.get("kompakt") if isinstance(details.get("kompakt"), dict) else {}
    facts: list[tuple[str, str]] = []
    if own.get("reason"):
        facts.append(("Reason", str(own["reason"])))
    if isinstance(own.get("tokensAfter"), int):
        facts.append(("Tokens after", f"{own['tokensAfter']:,}"))
    if isinstance(own.get("durationMs"), int | float):
        facts.append(("Took", f"{own['durationMs'] / 1000:.1f} s"))
    if entry.get("fromHook"):
        facts.append(("From", "a hook"))
    for key, name in (("readFiles", "Read files"), ("modifiedFiles", "Modified files")):
        files = details.get(key)
        if isinstance(files, list) and files:
            facts.append((name, ", ".join(str(f) for f in files)))
    return facts


def role_heading(entry: Entry) -> str:
    """The heading of a shown entry: its role or kind."""
    kind = entry.get("type")
    if kind == "message":
        role = (entry.get("message") or {}).get("role")
        return {
            "user": "User",
            "assistant": "Assistant",
            "toolResult": "Tool result",
            "bashExecution": "Bash",
            "custom": "Custom message",
        }.get(str(role), str(role))
    if kind == "custom_message":
        return f"Custom message ({entry.get('customType', '')})"
    if kind == "branch_summary":
        return "Branch summary"
    if kind == "compaction":
        return compaction_title(entry)
    if kind == "model_change":
        return f"Model: {entry.get('provider', '')}/{entry.get('modelId', '')}"
    if kind == "thinking_level_change":
        return f"Thinking level: {entry.get('thinkingLevel', '')}"
    return str(kind)


def bash_status(message: Message) -> str:
    if message.get("cancelled"):
        return "cancelled"
    code = message.get("exitCode")
    return f"exit code {code}" if code is not None else ""
