"""The Markdown transcript of a session: title, metadata, then every entry of the active path in order.

Assistant and user text is kept as written; tool calls, outputs and thinking go into fenced blocks
whose fence is longer than any backtick run inside them, so no content can close a fence early.
Compactions and branch summaries are headed sections with their summary quoted. With
``all_branches`` the abandoned branches follow, each in its own section.
"""

from __future__ import annotations

import re

from tui.export.common import (
    LINK_TEXT_CHARS,
    ExportView,
    anchor,
    arguments_json,
    bash_status,
    blocks,
    compaction_facts,
    entry_time,
    image_note,
    prepare_export,
    role_heading,
    truncate_output,
)
from tui.export.markdown_html import escape_html, escape_markdown_html
from tui.session.content import content_text
from tui.session.display import flat
from tui.session.entries import Entry
from tui.session.labels import tool_call_label
from tui.session.redact import scrubber
from tui.session.store import SessionStore

_BACKTICKS = re.compile(r"`+")


def fenced(text: str, info: str = "") -> str:
    """``text`` in a code fence longer than its longest backtick run (at least three)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text[:-1] if text.endswith("\n") else text
    return f"{fence}{info}\n{body}\n{fence}"


def inline_code(text: str) -> str:
    """``text`` as inline code that its own backticks cannot end."""
    text = flat(text)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def _output_block(view: ExportView, text: str, info: str = "") -> str:
    shown, note = truncate_output(view.clean(text))
    block = fenced(shown, info)
    return f"{block}\n\n*{note}*" if note else block


class _Writer:
    """Renders the entries of one view into Markdown parts."""

    def __init__(self, view: ExportView) -> None:
        self.view = view

    def entry(self, entry: Entry, on_active_path: bool) -> str | None:
        kind = entry.get("type")
        view = self.view
        if kind in ("model_change", "thinking_level_change"):
            return f"*{escape_html(flat(view.clean(role_heading(entry))))}*"
        if kind not in ("message", "custom_message", "compaction", "branch_summary"):
            return None
        heading = [escape_html(flat(view.clean(role_heading(entry))))]
        message = entry.get("message") or {}
        if message.get("role") == "toolResult":
            heading.append(inline_code(view.result_label(message)))
            if message.get("isError"):
                heading.append("error")
        if entry_time(entry):
            heading.append(entry_time(entry))
        heading.append(inline_code(view.clean(entry["id"])))
        label = view.label(entry["id"])
        if label:
            heading.append(f"label {inline_code(label)}")
        if on_active_path and kind != "compaction" and entry["id"] not in view.in_context:
            heading.append("*compacted*")
        parts = [f'<a id="{anchor(entry["id"])}"></a>', "### " + " · ".join(heading)]
        parts.append(self.body(entry))
        return "\n\n".join(p for p in parts if p)

    def body(self, entry: Entry) -> str:
        kind = entry.get("type")
        view = self.view
        if kind == "compaction":
            facts = [f"- **First kept entry:** {self.id_link(str(entry.get('firstKeptEntryId') or ''))}"]
            facts += [
                f"- **{name}:** {inline_code(view.clean(value))}" for name, value in compaction_facts(entry)
            ]
            return "\n".join(facts) + "\n\n" + self.summary(entry)
        if kind == "branch_summary":
            source = str(entry.get("fromId") or "")
            where = self.link(source) if source in view.tree else inline_code(view.clean(source))
            return f"Summary of the branch left at {where}:\n\n{self.summary(entry)}"
        if kind == "custom_message":
            hidden = "" if entry.get("display", True) else "*(not displayed in the chat)*\n\n"
            return hidden + self.content(entry.get("content"))
        message = entry.get("message") or {}
        role = message.get("role")
        if role == "toolResult":
            return _output_block(view, content_text(message.get("content"))) + self.images(
                message.get("content")
            )
        if role == "bashExecution":
            status = bash_status(message)
            text = f"$ {message.get('command', '')}\n{message.get('output') or ''}"
            return _output_block(view, text, "console") + (f"\n\n*{status}*" if status else "")
        if role == "assistant":
            return self.assistant(message)
        return self.content(message.get("content"))

    def summary(self, entry: Entry) -> str:
        # Summaries carry tags such as <read-files>; escaped, renderers show them instead of hiding them.
        text = escape_html(self.view.clean(str(entry.get("summary") or "")))
        return quoted(text)

    def content(self, content: object) -> str:
        parts = []
        for block in blocks(content):
            if block.get("type") == "text":
                parts.append(escape_markdown_html(self.view.clean(str(block.get("text") or ""))))
            elif block.get("type") == "image":
                parts.append(f"*{escape_html(self.view.clean(image_note(block)))}*")
        return "\n\n".join(p for p in parts if p)

    def images(self, content: object) -> str:
        notes = [image_note(b) for b in blocks(content) if b.get("type") == "image"]
        return "".join(f"\n\n*{escape_html(self.view.clean(n))}*" for n in notes)

    def assistant(self, message: dict[str, object]) -> str:
        view = self.view
        parts = []
        for block in blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text":
                parts.append(escape_markdown_html(view.clean(str(block.get("text") or ""))))
            elif kind == "thinking":
                thinking = view.clean(str(block.get("thinking") or ""))
                if thinking.strip():
                    parts.append(
                        f"<details><summary>Thinking</summary>\n\n{fenced(thinking, 'text')}\n\n</details>"
                    )
            elif kind == "toolCall":
                label = view.clean(tool_call_label(str(block.get("name") or ""), block.get("arguments")))
                call = _output_block(view, arguments_json(block.get("arguments")), "json")
                parts.append(f"**Tool call** {inline_code(label)}\n\n{call}")
            elif kind == "image":
                parts.append(f"*{escape_html(view.clean(image_note(block)))}*")
        if message.get("stopReason") == "aborted":
            parts.append("*(aborted)*")
        if message.get("errorMessage"):
            parts.append(quoted("**Error:** " + escape_html(view.clean(str(message["errorMessage"])))))
        return "\n\n".join(p for p in parts if p)

    def link(self, entry_id: str) -> str:
        """The entry's tree text, linked to it when the export shows it."""
        text = inline_code(self.view.row_text(entry_id, LINK_TEXT_CHARS))
        return f"[{text}](#{anchor(entry_id)})" if entry_id in self.view.rendered else text

    def id_link(self, entry_id: str) -> str:
        text = inline_code(self.view.clean(entry_id))
        return f"[{text}](#{anchor(entry_id)})" if entry_id in self.view.rendered else text


def export_markdown(store: SessionStore, leaf_id: str | None = None, all_branches: bool = False) -> str:
    """The Markdown transcript of the path to ``leaf_id`` (default: the leaf), optionally with all branches."""
    view = prepare_export(store, leaf_id, all_branches)
    writer = _Writer(view)
    parts = [f"# {escape_html(view.title)}"]
    parts.append("\n".join(f"- **{name}:** {inline_code(value)}" for name, value in view.metadata()))
    parts.append("## Active path")
    parts += [p for p in (writer.entry(e, on_active_path=True) for e in view.path) if p]
    for branch in view.branches:
        start = writer.link(branch.from_id) if branch.from_id else "the root"
        parts.append(f"## Branch from {start}")
        parts += [p for p in (writer.entry(e, on_active_path=False) for e in branch.entries) if p]
    # Every piece was scrubbed already; one more pass over the whole text costs little and catches joins.
    return scrubber()("\n\n".join(parts) + "\n")
