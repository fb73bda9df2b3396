"""The session picker (``/resume``): kompakt's sessions and the user's pi sessions, newest first.

The catalog is read in a thread worker (only each file's head is read) while the screen says "loading…". Each row
shows the session's name or first message, where it comes from (kompakt or pi), when it was last modified, its
size and its working directory; typing filters the rows, Enter opens the highlighted one. Names and messages come
from session files, so they are sanitised and never read as markup. The screen dismisses with the chosen file's
Path, or None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static

from tui.session.catalog import SessionSummary, list_sessions
from tui.session.sanitize import sanitize
from widgets.footer import KompaktFooter
from widgets.ordered_keys import OrderedInput
from widgets.table_widths import column_width

_TITLE_WIDTH = 60
_COLUMNS = ("Session", "Source", "Modified", "Size", "Directory")


def format_size(size: int) -> str:
    """A file size in the short form of ``ls -h``: 812 B, 4.2 KB, 13 MB."""
    value, unit = float(size), "B"
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            break
        value /= 1024
    if unit == "B":
        return f"{size} B"
    return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"


_MIN_TITLE, _MIN_DIRECTORY = 12, 14
# Modified ("2026-12-02 01:30") never shrinks; each of the five columns has a cell of padding either
# side, and the table keeps room for its scrollbar.
_FIXED_WIDTH = 16 + 2 * len(_COLUMNS) + 2


def session_title(summary: SessionSummary, width: int = _TITLE_WIDTH) -> str:
    """The session's name, else its first message, else its id, in at most ``width`` cells."""
    text = summary.name or summary.first_message or f"(empty) {summary.session_id}"
    text = " ".join(sanitize(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def short_cwd(cwd: str) -> str:
    home = str(Path.home())
    return "~" + cwd[len(home) :] if home != "/" and (cwd == home or cwd.startswith(home + "/")) else cwd


def fitted_directory(cwd: str, width: int) -> str:
    """The directory in at most ``width`` cells, its start dropped: the last folders name it best."""
    text = sanitize(short_cwd(cwd))
    return text if len(text) <= width else "…" + text[len(text) - width + 1 :]


def column_widths(table_width: int, shown: Sequence[SessionSummary]) -> tuple[int, int]:
    """(title, directory) widths so that Size and Directory stay on screen at ``table_width`` (D21):
    the directory gets a third of what the other columns leave (at least 14 cells), the title the rest."""
    source = max((len(s.source) for s in shown), default=0)
    size = max((len(format_size(s.size)) for s in shown), default=0)
    room = max(0, table_width - _FIXED_WIDTH - max(source, 6) - max(size, 4))
    longest = max((len(sanitize(short_cwd(s.cwd))) for s in shown), default=0)
    directory = min(longest, max(_MIN_DIRECTORY, room // 3))
    return max(_MIN_TITLE, min(_TITLE_WIDTH, room - directory)), directory


class SessionPicker(ModalScreen[Path | None]):
    """Choose a session to open; Enter opens, Esc cancels."""

    HELP = """\
## Sessions

kompakt's own sessions and your pi sessions (`~/.pi/agent/sessions`), newest first. Type to filter (every word
must match the name, first message, source or directory); **↑/↓**, **PgUp/PgDn** move, **Enter** opens,
**Esc** cancels.
"""

    DEFAULT_CSS = """
    SessionPicker { align: center middle; }
    SessionPicker > #session-picker {
        width: 95%; height: 90%; border: round $primary; background: $surface; padding: 0 1;
    }
    SessionPicker #session-picker-title { height: 1; text-style: bold; }
    SessionPicker #session-search { margin: 0 0 1 0; }
    SessionPicker #session-table { height: 1fr; }
    SessionPicker #session-status { height: 1; color: $foreground-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="session_picker.cancel"),
        # A modal screen hides the app's keys from its key chain: F1 is its own here (as in F5).
        Binding("f1", "app.help", "Help", id="session_picker.help"),
        Binding("down", "move('cursor_down')", "Next", show=False, id="session_picker.down"),
        Binding("up", "move('cursor_up')", "Previous", show=False, id="session_picker.up"),
        Binding("pagedown", "move('page_down')", "Page down", show=False, id="session_picker.page_down"),
        Binding("pageup", "move('page_up')", "Page up", show=False, id="session_picker.page_up"),
    ]

    def __init__(self, lister: Callable[[], Iterable[SessionSummary]] = list_sessions) -> None:
        super().__init__()
        self._lister = lister
        self._sessions: list[SessionSummary] | None = None
        self._query = ""
        self._fitted_to = 0  # the table width the rows were cut for

    def on_resize(self, event: events.Resize) -> None:
        # The titles and directories were cut for the old width: cut them again for the new one.
        if self._sessions is not None:
            self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        table = self.query_one(DataTable)
        if self._sessions is not None and table.size.width != self._fitted_to:
            self._show(self._query)

    def compose(self) -> ComposeResult:
        with Vertical(id="session-picker"):
            yield Static(Text("Open a session"), id="session-picker-title")
            yield OrderedInput(placeholder="Search sessions…", id="session-search")
            yield DataTable(id="session-table", cursor_type="row", zebra_stripes=True)
            yield Static(Text("loading…"), id="session-status")
        yield KompaktFooter()  # its own keys, not the main screen's showing through (QA item 19)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*_COLUMNS)  # the header shows while the listing loads
        self.query_one("#session-search", Input).focus()
        self._load()

    @work(thread=True, exclusive=True, group="session-picker-load")
    def _load(self) -> None:
        sessions = list(self._lister())
        self.app.call_from_thread(self._loaded, sessions)

    def _loaded(self, sessions: list[SessionSummary]) -> None:
        self._sessions = sessions
        self._show_once_laid_out()

    def _show_once_laid_out(self) -> None:
        # The listing can land before the table has a width, and rows cut for a guessed width stay cut for
        # it (no Resize follows): the rows wait for the table's first layout.
        if self.query_one(DataTable).size.width:
            self._show(self.query_one("#session-search", Input).value)
        else:
            self.call_after_refresh(self._show_once_laid_out)

    @staticmethod
    def _search_text(summary: SessionSummary) -> str:
        return f"{summary.name or ''} {summary.first_message} {summary.source} {summary.cwd}".lower()

    def _show(self, query: str) -> None:
        assert self._sessions is not None
        words = query.lower().split()
        shown = [s for s in self._sessions if all(w in self._search_text(s) for w in words)]
        table = self.query_one(DataTable)
        self._query = query
        self._fitted_to = table.size.width
        title_width, directory_width = column_widths(self._fitted_to, shown)
        rows = [
            (
                Text(session_title(summary, title_width), style="bold" if summary.name else ""),
                Text(summary.source, style="dim" if summary.source == "pi" else ""),
                Text(datetime.fromtimestamp(summary.modified).strftime("%Y-%m-%d %H:%M")),
                Text(format_size(summary.size), justify="right"),
                Text(fitted_directory(summary.cwd, directory_width), style="dim"),
            )
            for summary in shown
        ]
        table.clear(columns=True)
        for index, label in enumerate(_COLUMNS):
            table.add_column(label, width=column_width(label, (row[index] for row in rows)))
        for summary, row in zip(shown, rows, strict=True):
            table.add_row(*row, key=str(summary.path))
        total = len(self._sessions)
        if not total:
            status = "No sessions yet"
        elif len(shown) == total:
            status = f"{total} session{'s' if total != 1 else ''}"
        else:
            status = f"{len(shown)} of {total} sessions"
        self.query_one("#session-status", Static).update(Text(f"{status} · Enter opens · Esc cancels"))

    @property
    def visible_paths(self) -> list[Path]:
        """The sessions the table shows now, in order (after the filter)."""
        table = self.query_one(DataTable)
        return [
            Path(str(table.coordinate_to_cell_key((row, 0)).row_key.value)) for row in range(table.row_count)
        ]

    @on(Input.Changed, "#session-search")
    def _filter(self, event: Input.Changed) -> None:
        event.stop()
        if self._sessions is not None:
            self._show_once_laid_out()

    @on(Input.Submitted, "#session-search")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        table = self.query_one(DataTable)
        if table.row_count:
            self._open(table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value)

    @on(DataTable.RowSelected, "#session-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self._open(event.row_key.value)

    def _open(self, key: str | None) -> None:
        if key is not None:
            self.dismiss(Path(key))

    def action_move(self, action: str) -> None:
        getattr(self.query_one(DataTable), f"action_{action}")()

    def action_cancel(self) -> None:
        self.dismiss(None)
