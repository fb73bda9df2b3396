"""The HTML export: one self-contained page with the tree outline beside the messages of the active path.

Everything from the session is cleaned (escape sequences dropped, secrets redacted) and then HTML-escaped;
nothing in the page loads from anywhere. Above the messages, an inline SVG chart shows the context size over
the session (:mod:`tui.export.chart`). A Content-Security-Policy allows only the page's own style, its
one script (by hash) and ``data:`` images, so even a mistake in escaping could not run or fetch anything.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from tui.export.chart import chart_svg, context_series
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
from tui.export.outline import outline_html
from tui.export.page_assets import SCRIPT, STYLE, script_hash
from tui.session.content import content_text
from tui.session.entries import Entry, Message
from tui.session.labels import tool_call_label
from tui.session.redact import scrubber
from tui.session.store import SessionStore

# Outputs up to this many lines are shown open; longer ones start collapsed.
OPEN_OUTPUT_LINES = 12
_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_ENTRY_CLASSES = {"user": "user", "assistant": "assistant", "toolResult": "tool", "bashExecution": "tool"}


class _Page:
    """Renders one view's entries as HTML fragments."""

    def __init__(self, view: ExportView) -> None:
        self.view = view

    def text(self, value: Any) -> str:
        """Session text, cleaned and escaped."""
        return escape(self.view.clean(str(value)))

    def link(self, entry_id: str, text: str) -> str:
        if entry_id in self.view.rendered:
            return f'<a href="#{anchor(entry_id)}">{text}</a>'
        return text

    # --- entries ------------------------------------------------------------------------------
    def entry(self, entry: Entry, on_active_path: bool) -> str:
        kind = entry.get("type")
        if kind in ("model_change", "thinking_level_change"):
            return f'<div class="meta-line" id="{anchor(entry["id"])}">{self.text(role_heading(entry))}</div>'
        if kind not in ("message", "custom_message", "compaction", "branch_summary"):
            return ""
        message = entry.get("message") or {}
        classes = ["entry", self.entry_class(entry, message)]
        if on_active_path and kind != "compaction" and entry["id"] not in self.view.in_context:
            classes.append("compacted")
        return (
            f'<article class="{" ".join(classes)}" id="{anchor(entry["id"])}">'
            f"{self.header(entry, message, on_active_path)}{self.body(entry, message)}</article>"
        )

    def entry_class(self, entry: Entry, message: Message) -> str:
        kind = entry.get("type")
        if kind == "compaction":
            return "compaction"
        if kind == "branch_summary":
            return "summary"
        if message.get("isError") or message.get("errorMessage"):
            return "error"
        return _ENTRY_CLASSES.get(str(message.get("role")), "meta")

    def header(self, entry: Entry, message: Message, on_active_path: bool) -> str:
        parts = [f'<span class="role">{self.text(role_heading(entry))}</span>']
        if message.get("role") == "toolResult":
            parts.append(f"<code>{escape(self.view.result_label(message))}</code>")
            if message.get("isError"):
                parts.append('<span class="badge mark">error</span>')
        label = self.view.label(entry["id"])
        if label:
            parts.append(f'<span class="badge">{escape(label)}</span>')
        if on_active_path and entry.get("type") != "compaction" and entry["id"] not in self.view.in_context:
            parts.append('<span class="badge mark" title="summarised by a later compaction">compacted</span>')
        when = " · ".join(p for p in (entry_time(entry), self.text(entry["id"])) if p)
        parts.append(f'<span class="when mono">{when}</span>')
        return f"<header>{''.join(parts)}</header>"

    def body(self, entry: Entry, message: Message) -> str:
        kind = entry.get("type")
        if kind == "compaction":
            first = str(entry.get("firstKeptEntryId") or "")
            facts = [("First kept entry", self.link(first, f"<code>{self.text(first)}</code>"))]
            facts += [(name, self.text(value)) for name, value in compaction_facts(entry)]
            rows = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facts)
            return f'<dl class="facts">{rows}</dl>{self.summary(entry)}'
        if kind == "branch_summary":
            source = str(entry.get("fromId") or "")
            if source in self.view.tree:
                where = self.link(source, escape(self.view.row_text(source, LINK_TEXT_CHARS)))
            else:
                where = f"<code>{self.text(source)}</code>"
            return f'<p class="note">Summary of the branch left at {where}</p>{self.summary(entry)}'
        if kind == "custom_message":
            hidden = "" if entry.get("display", True) else '<p class="note">Not displayed in the chat.</p>'
            return hidden + self.content(entry.get("content"))
        role = message.get("role")
        if role == "assistant":
            return self.assistant(message)
        if role == "toolResult":
            content = message.get("content")
            return self.output("Output", content_text(content)) + self.images(content)
        if role == "bashExecution":
            status = bash_status(message)
            command = f'<pre class="mono">$ {self.text(message.get("command", ""))}</pre>'
            note = f'<p class="note">{escape(status)}</p>' if status else ""
            return command + self.output("Output", str(message.get("output") or "")) + note
        return self.content(message.get("content"))

    def summary(self, entry: Entry) -> str:
        return (
            '<details class="part" open><summary>Summary</summary>'
            f'<div class="text">{self.text(entry.get("summary") or "")}</div></details>'
        )

    def content(self, content: Any) -> str:
        parts = []
        for block in blocks(content):
            if block.get("type") == "text":
                parts.append(f'<div class="text">{self.text(block.get("text") or "")}</div>')
            elif block.get("type") == "image":
                parts.append(self.image(block))
        return "".join(parts)

    def images(self, content: Any) -> str:
        return "".join(self.image(b) for b in blocks(content) if b.get("type") == "image")

    def image(self, block: dict[str, Any]) -> str:
        """An attached image inline as a data URI, when it is a common raster type and valid base64."""
        mime, data = block.get("mimeType"), block.get("data")
        if mime in _IMAGE_TYPES and isinstance(data, str) and _BASE64.fullmatch(data):
            return f'<img class="attached" alt="attached image" src="data:{mime};base64,{data}">'
        return f'<p class="note">{self.text(image_note(block))}</p>'

    def assistant(self, message: Message) -> str:
        parts = []
        for block in blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text":
                parts.append(f'<div class="text">{self.text(block.get("text") or "")}</div>')
            elif kind == "thinking" and str(block.get("thinking") or "").strip():
                parts.append(
                    '<details class="part thinking"><summary>Thinking</summary>'
                    f'<div class="text">{self.text(block.get("thinking"))}</div></details>'
                )
            elif kind == "toolCall":
                label = tool_call_label(str(block.get("name") or ""), block.get("arguments"))
                shown, note = truncate_output(self.view.clean(arguments_json(block.get("arguments"))))
                extra = f'<p class="note">{escape(note)}</p>' if note else ""
                parts.append(
                    f'<details class="part tool-call"><summary>Tool call <code>{self.text(label)}</code>'
                    f"</summary><pre>{escape(shown)}</pre>{extra}</details>"
                )
            elif kind == "image":
                parts.append(self.image(block))
        if message.get("stopReason") == "aborted":
            parts.append('<p class="note">Aborted.</p>')
        if message.get("errorMessage"):
            parts.append(f'<p class="note">Error: {self.text(message["errorMessage"])}</p>')
        return "".join(parts)

    def output(self, title: str, text: str) -> str:
        """A tool output, collapsed when long, cut to a sane length with a note."""
        shown, note = truncate_output(self.view.clean(text))
        lines = text.count("\n") + 1
        opened = " open" if lines <= OPEN_OUTPUT_LINES else ""
        extra = f'<p class="note">{escape(note)}</p>' if note else ""
        return (
            f'<details class="part output"{opened}><summary>{title} · {lines} line{"" if lines == 1 else "s"}</summary>'
            f"<pre>{escape(shown)}</pre>{extra}</details>"
        )

    # --- page ---------------------------------------------------------------------------------
    def branches(self) -> str:
        sections = []
        for number, branch in enumerate(self.view.branches, 1):
            if branch.from_id is None:
                start = "the root"
            else:
                start = self.link(branch.from_id, escape(self.view.row_text(branch.from_id, LINK_TEXT_CHARS)))
            entries = "".join(self.entry(e, on_active_path=False) for e in branch.entries)
            sections.append(
                f'<section class="branch" id="branch-{number}"><h2>Branch from {start}</h2>{entries}</section>'
            )
        return "".join(sections)


def _chart_budgets(store: SessionStore, path: list[Entry]) -> tuple[int, int]:
    """The window of the session's model (else the default) and the reserve (the session's own, else pi's)."""
    from tui.agent.model_info import DEFAULT_CONTEXT_WINDOW
    from tui.agent.model_map import context_window
    from tui.agent.session_settings import read_overrides
    from tui.compaction.plan import RESERVE_TOKENS
    from tui.session.context import context_from_path

    model = context_from_path(path).model or {}
    window = None
    if model.get("modelId"):
        window = context_window(model["modelId"], model.get("provider"))
    reserve = read_overrides(store.entries).values.get("reserveTokens", RESERVE_TOKENS)
    return window or DEFAULT_CONTEXT_WINDOW, int(reserve)


def context_chart(store: SessionStore, path: list[Entry]) -> str:
    """The "Context size" section: the chart of :mod:`tui.export.chart` ("" for a session with no reply)."""
    samples = context_series(path)
    window, reserve = _chart_budgets(store, path)
    svg = chart_svg(samples, window, reserve)
    if not svg:
        return ""
    return (
        '<section class="chart"><h2>Context size</h2>'
        '<p class="note">Each reply\'s context (filled: measured by the provider; hollow: estimated), each '
        "compaction as a drop from before to after, the threshold and the window.</p>"
        f"{svg}</section>"
    )


def export_html(store: SessionStore, leaf_id: str | None = None, all_branches: bool = False) -> str:
    """One self-contained HTML page of the session at ``leaf_id`` (default: the leaf)."""
    view = prepare_export(store, leaf_id, all_branches)
    page = _Page(view)
    title = escape(view.title)
    meta = "".join(f"<dt>{escape(name)}</dt><dd>{escape(value)}</dd>" for name, value in view.metadata())
    policy = (
        f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src {script_hash()}; "
        "base-uri 'none'; form-action 'none'"
    )
    entries = "".join(page.entry(e, on_active_path=True) for e in view.path)
    branch_note = ""
    if view.tree.branch_points() and not all_branches:
        branch_note = '<p class="note">Other branches are outlined here but not included.</p>'
    document = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="kompakt">
<title>{title}</title>
<style>{STYLE}</style>
</head>
<body>
<header>
<h1>{title}</h1>
<dl class="meta">{meta}</dl>
<div class="tools">
<button type="button" hidden data-details="main" data-open="true">Expand all</button>
<button type="button" hidden data-details="main" data-open="false">Collapse all</button>
<button type="button" hidden data-details="nav" data-open="true">Open every branch</button>
</div>
</header>
<div class="layout">
<nav class="outline" aria-label="Session tree">
<h2>Tree</h2>
{outline_html(view)}
{branch_note}
</nav>
<main>
{context_chart(store, view.path)}
<h2>Active path</h2>
{entries}
{page.branches()}
</main>
</div>
<script>{SCRIPT}</script>
</body>
</html>
"""
    # Each piece was scrubbed before escaping; this pass over the page is a second line of defence.
    return scrubber()(document)
