"""The compaction inspector: what one compaction summarised, what it wrote, and what it kept, side by side.

Three parts under a header of facts: the summarised messages (each with its tokens), the summary
(rendered Markdown, the short summary, the file lists and the previous summary it updated), and the
kept messages. A head-tail compaction's protected head is a table of its own above the summarised
messages (head, then middle, then tail, left to right): copied into the summary, it is not "kept". The data is a :class:`~tui.compaction.inspect.CompactionInspection`, from a stored
compaction or from a preview (a draft not written yet). For a stored one, ``u`` asks the main screen to
undo it and ``g`` to go to it in the tree (Enter on a compaction row opens the inspector); for a preview, Enter writes exactly the summary shown (the main screen commits the draft, no
second model call) and Esc discards it. A preview opens before its summary exists (``inspection`` None):
the summary calls' text streams in (:meth:`CompactionInspector.stream`), Esc cancels them, and
:meth:`CompactionInspector.show` then draws the finished draft; Enter does nothing until then. The screen dismisses with ``"commit"``, ``"undo"``, ``"navigate"`` or None.
Text from the session or a model is sanitised; the summary's Markdown parses no HTML.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Collapsible, DataTable, Static

from tui.compaction.inspect import CompactionInspection, InspectedMessage
from tui.compaction.summary_stream import PART_SHORT, PART_SUMMARY, PART_TURN_PREFIX
from tui.compaction.token_text import format_tokens
from tui.session.sanitize import sanitize
from widgets.chunked_markdown import ChatMarkdown
from widgets.fitted_title import FittedTitle
from widgets.footer import KompaktFooter
from widgets.safe_text import safe_text
from widgets.streamed_text import StreamedText
from widgets.table_widths import column_width


def _tokens(value: int) -> str:
    return format_tokens(value, trim=False, millions=False)


def _title(wordings: list[str], tokens: int, id: str | None = None) -> FittedTitle:
    """A column's title on one row, the figures kept as the column narrows (it wrapped at 120 columns);
    every wording's tokens are the messages' estimates (chars/4), marked ≈; the tooltip says so."""
    figure = f"≈{_tokens(tokens)}"
    shown = [text.replace("{tokens}", figure) for text in wordings]  # not format: an id may hold braces
    tooltip = f"{shown[0]} (estimated tokens, about four characters a token)"
    return FittedTitle(shown, tooltip=tooltip, id=id, classes="inspector-title")


def _measured(flag: bool | None) -> str:
    return "measured" if flag else "unknown" if flag is None else "estimated"


def _writer(model: str | None, source: str | None) -> str:
    """Who wrote the summary: the model, else the deterministic summary, a hook or a remote endpoint."""
    if model:
        return f"model {model}"
    return {
        "fallback": "deterministic summary (no model)",
        "hook": "summary from a hook",
        "remote": "summary from the remote endpoint",
    }.get(source or "", "model unknown")


def header_lines(inspection: CompactionInspection, preview: bool) -> list[str]:
    """The facts as two lines of plain text (every unknown fact says so)."""
    facts = inspection.facts
    first = (
        f"{'Preview: not written' if preview else 'Compaction ' + inspection.compaction_id} · "
        f"{facts.tokens_before:,} ({_measured(facts.tokens_before_measured)}) → "
        f"{facts.tokens_after:,} ({_measured(facts.tokens_after_measured)}) tokens"
    )
    parts = [
        f"reason {facts.reason or 'unknown'}",
        _writer(facts.model, facts.summary_source),
        "duration unknown" if facts.duration_ms is None else f"{facts.duration_ms / 1000:.1f} s",
        "cost unknown" if facts.cost_usd is None else f"${facts.cost_usd:.4f}",
        f"keepRecentTokens {'unknown' if facts.keep_recent_tokens is None else f'{facts.keep_recent_tokens:,}'}",
        f"reserveTokens {'unknown' if facts.reserve_tokens is None else f'{facts.reserve_tokens:,}'}",
        f"strategy {facts.strategy or 'unknown'}",
    ]
    return [first, " · ".join(parts)]


class CompactionInspector(Screen[str | None]):
    """One compaction taken apart (see the module docstring)."""

    DEFAULT_CSS = """
    CompactionInspector { layout: vertical; }
    CompactionInspector #inspector-header { height: auto; padding: 0 1; background: $boost; }
    CompactionInspector #inspector-body { height: 1fr; }
    CompactionInspector .inspector-part { width: 1fr; border: round $foreground 30%; }
    CompactionInspector .inspector-part:focus-within { border: round $accent; }
    CompactionInspector #inspector-summary-part { width: 1.4fr; }
    CompactionInspector .inspector-title { text-style: bold; padding: 0 1; }
    CompactionInspector DataTable { height: 1fr; }
    CompactionInspector #inspector-protected { height: auto; max-height: 40%; }
    CompactionInspector .inspector-note { color: $text-muted; padding: 0 1; }
    CompactionInspector #inspector-summary { padding: 0 1; height: 1fr; }
    CompactionInspector #inspector-stream-part { height: 1fr; }
    CompactionInspector #inspector-stream { padding: 0 1; height: auto; }
    """
    # The order the streamed parts are shown in, and their headings.
    STREAM_PARTS = (
        (PART_SUMMARY, "Summary"),
        (PART_TURN_PREFIX, "Turn prefix"),
        (PART_SHORT, "Short summary"),
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="inspector.close"),
        # Priority: the tables' own Enter (select a row) must not swallow the commit of a preview.
        Binding("enter", "commit", "Write this summary", id="inspector.commit", priority=True),
        Binding("u", "undo", "Undo this compaction", id="inspector.undo"),
        Binding("g", "go", "Go to this compaction", id="inspector.go"),
        Binding("tab", "app.focus_next", "Next part", show=False, id="inspector.next"),
    ]

    def __init__(self, inspection: CompactionInspection | None, *, preview: bool = False) -> None:
        super().__init__()
        self.inspection = inspection
        self.preview = preview or inspection is None
        self._streamed: dict[str, str] = {}
        self._stream_dirty: set[str] = set()
        # One widget per known part, in STREAM_PARTS order; each redraws only its new text.
        self._stream_parts = {part: StreamedText(title) for part, title in self.STREAM_PARTS}

    @property
    def generating(self) -> bool:
        """A preview whose summary is still being written."""
        return self.inspection is None

    @property
    def streamed_text(self) -> str:
        """What the summary calls have written so far, as shown while generating."""
        return self._stream_text().plain

    def stream(self, part: str, text: str | None) -> None:
        """A piece of ``part``'s text (None: that call starts over after a retry); drawn at the next tick."""
        self._streamed[part] = "" if text is None else self._streamed.get(part, "") + text
        self._stream_dirty.add(part)

    def _stream_text(self) -> Text:
        known = dict(self.STREAM_PARTS)
        text = Text()
        for part in self._stream_order():
            if self._streamed.get(part):
                if text:
                    text.append("\n\n")
                text.append(known.get(part, part) + "\n", style="bold")
                text.append_text(safe_text(self._streamed[part]))
        return text or Text("Waiting for the model…", style="dim")

    def _stream_order(self) -> list[str]:
        known = [p for p, _ in self.STREAM_PARTS]
        return known + [p for p in self._streamed if p not in known]

    @property
    def stream_rendered_chars(self) -> int:
        """Characters drawn by the stream's redraws so far (each flush draws only what is new)."""
        return sum(part.rendered_chars for part in self._stream_parts.values())

    def _flush_stream(self) -> None:
        if self._stream_dirty and self.generating:
            dirty, self._stream_dirty = self._stream_dirty, set()
            scroll = self.query_one("#inspector-stream-part", VerticalScroll)
            following = scroll.scroll_y >= scroll.max_scroll_y - 1  # unless the user scrolled up to read
            box = self.query_one("#inspector-stream", Vertical)
            for part in self._stream_order():
                if part in dirty:
                    if part not in self._stream_parts:  # a part the screen does not know: at the end
                        self._stream_parts[part] = StreamedText(part)
                        box.mount(self._stream_parts[part])
                    self._stream_parts[part].set_text(self._streamed[part])
            waiting = self.query_one("#inspector-stream-waiting", Static)
            waiting.display = not any(self._streamed.values())
            if following:
                scroll.call_after_refresh(scroll.scroll_end, animate=False)

    async def show(self, inspection: CompactionInspection) -> None:
        """The preview's draft is ready: draw it (Enter then writes exactly this summary)."""
        self.inspection = inspection
        await self.recompose()
        self._fill_tables()
        self.refresh_bindings()

    def compose(self) -> ComposeResult:
        inspection = self.inspection
        if inspection is None:
            yield Static(
                Text("Preview: generating the summary · nothing is written · Esc cancels"),
                id="inspector-header",
            )
            with VerticalScroll(classes="inspector-part", id="inspector-stream-part"):
                yield Static(Text("Preview summary, as the model writes it"), classes="inspector-title")
                with Vertical(id="inspector-stream"):
                    yield Static(Text("Waiting for the model…", style="dim"), id="inspector-stream-waiting")
                    yield from self._stream_parts.values()
            yield KompaktFooter()
            return
        yield Static(Text("\n".join(header_lines(inspection, self.preview))), id="inspector-header")
        with Horizontal(id="inspector-body"):
            with Vertical(classes="inspector-part", id="inspector-summarised-part"):
                if inspection.protected:
                    count = len(inspection.protected)
                    yield _title(
                        [
                            f"Protected head: {count} messages · {{tokens}}",
                            f"Protected head: {count} · {{tokens}}",
                            f"Head {count} · {{tokens}}",
                        ],
                        inspection.protected_tokens,
                        id="inspector-protected-title",
                    )
                    yield Static(Text("in the summary, not kept"), classes="inspector-note")
                    yield DataTable(id="inspector-protected", cursor_type="row", zebra_stripes=True)
                count = len(inspection.summarised)
                yield _title(
                    [
                        f"Summarised: {count} messages · {{tokens}}",
                        f"Summarised {count} · {{tokens}}",
                        "Summarised {tokens}",
                    ],
                    inspection.summarised_tokens,
                )
                yield DataTable(id="inspector-summarised", cursor_type="row", zebra_stripes=True)
            with Vertical(classes="inspector-part", id="inspector-summary-part"):
                yield Static(
                    Text("Preview summary" if self.preview else "Summary"), classes="inspector-title"
                )
                with VerticalScroll(id="inspector-summary"):
                    yield ChatMarkdown(sanitize(inspection.summary), classes="inspector-markdown")
                    if inspection.short_summary:
                        yield Static(Text("Short summary", style="bold"))
                        yield Static(safe_text(inspection.short_summary))
                    yield Static(Text(self._files_text()), classes="inspector-note")
                    if inspection.previous_summary is not None:
                        with Collapsible(title="Previous summary (updated by this one)", collapsed=True):
                            yield ChatMarkdown(sanitize(inspection.previous_summary))
                if self.preview:
                    yield Static(
                        Text("Enter writes exactly this summary · Esc discards it"), classes="inspector-note"
                    )
            with Vertical(classes="inspector-part", id="inspector-kept-part"):
                kept_from = inspection.first_kept_entry_id or "?"
                count = len(inspection.kept)
                yield _title(
                    [
                        f"Kept from ▼ {kept_from}: {count} messages · {{tokens}}",
                        f"Kept: {count} messages · {{tokens}} · ▼ {kept_from}",
                        f"Kept: {count} messages · {{tokens}}",
                        f"Kept {count} · {{tokens}}",
                    ],
                    inspection.kept_tokens,
                )
                yield DataTable(id="inspector-kept", cursor_type="row", zebra_stripes=True)
        yield KompaktFooter()

    def _files_text(self) -> str:
        assert self.inspection is not None
        read, modified = self.inspection.read_files, self.inspection.modified_files
        lines = [
            f"Read: {', '.join(read) if read else 'none'}",
            f"Modified: {', '.join(modified) if modified else 'none'}",
        ]
        return sanitize("\n".join(lines))

    def on_mount(self) -> None:
        if self.inspection is None:
            # Many small deltas: redraw the streamed text at most ten times a second.
            self.set_interval(0.1, self._flush_stream)
            return
        self._fill_tables()

    def _fill_tables(self) -> None:
        assert self.inspection is not None
        parts = [
            ("#inspector-summarised", self.inspection.summarised),
            ("#inspector-kept", self.inspection.kept),
        ]
        if self.inspection.protected:
            parts.append(("#inspector-protected", self.inspection.protected))
        for table_id, rows in parts:
            self._fill(self.query_one(table_id, DataTable), rows)
        self.query_one("#inspector-summarised", DataTable).focus()

    @staticmethod
    def _fill(table: DataTable, rows: list[InspectedMessage]) -> None:
        # The DataTable draws only the visible rows, so thousands of summarised messages stay cheap.
        cells = [(Text(f"{row.tokens:,}", justify="right"), safe_text(row.text[:200])) for row in rows]
        table.add_column("≈tokens", key="tokens", width=column_width("≈tokens", (t for t, _ in cells)))
        table.add_column("message", key="message", width=column_width("message", (m for _, m in cells)))
        table.add_rows(cells)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "commit":
            return self.preview and not self.generating
        if action in ("undo", "go"):
            return not self.preview
        return True

    def action_close(self) -> None:
        self.dismiss(None)

    def action_commit(self) -> None:
        if self.preview and not self.generating:
            self.dismiss("commit")

    def action_go(self) -> None:
        if not self.preview:
            self.dismiss("navigate")

    def action_undo(self) -> None:
        if not self.preview:
            self.dismiss("undo")
