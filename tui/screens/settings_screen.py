"""The settings screen: edit every setting, save the valid edits to the user or project file.

It hosts a :class:`~widgets.settings_form.SettingsForm` and owns what the form does not: the target file (the
user's settings.toml by default, or the project's ``./.kompakt/settings.toml``), saving with Ctrl+S through the
comment-keeping writer in a thread worker, reloading the layered settings afterwards, and closing (asking first
when edits would be lost). While compaction.keepRecentTokens or compaction.reserveTokens is edited it posts
:class:`SettingsScreen.WhatIf` with the candidate values so the app can preview the compaction boundary. It
dismisses with the new Settings when anything was saved, else None; each save also posts
:class:`SettingsScreen.Saved`.

F5 opens fast on a big session: the first frame has the rows that fit and a pending line where the preview goes;
the preview is drawn (and the form's other rows mounted) after that frame. :attr:`SettingsScreen.ready` says
when both are there. Until then Python's cyclic collector is held (widgets/gc_pause.py): with a 10k-entry
session loaded, one full pass took ~0.2 s and landed in the opening about every other time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Label, Static, Switch

from tui.config import LoadResult, Settings, SettingsError, load_settings
from tui.config.loader import project_settings_path, user_settings_path
from widgets import gc_pause
from widgets.button_row import ButtonRow
from widgets.footer import KompaktFooter
from widgets.settings_form import SettingsForm
from widgets.timeline import CompactionTimeline

KEEP_RECENT_KEY = "compaction.keepRecentTokens"
RESERVE_KEY = "compaction.reserveTokens"


class ConfirmDiscard(ModalScreen[bool]):
    """Asks whether unsaved edits may be thrown away; True discards."""

    DEFAULT_CSS = """
    ConfirmDiscard { align: center middle; }
    ConfirmDiscard > Vertical {
        width: 56; height: auto; padding: 1 2; border: thick $warning; background: $panel;
    }
    ConfirmDiscard ButtonRow { height: auto; margin-top: 1; align-horizontal: right; }
    ConfirmDiscard Button { margin-left: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Discard", id="settings.discard.yes"),
        Binding("n,escape", "answer(False)", "Keep editing", id="settings.discard.no"),
    ]

    def __init__(self, count: int) -> None:
        super().__init__()
        self._count = count

    def compose(self) -> ComposeResult:
        with Vertical():
            plural = "s" if self._count != 1 else ""
            yield Label(f"Discard {self._count} unsaved edit{plural}?")
            with ButtonRow():
                yield Button("Keep editing", id="keep")
                yield Button("Discard", id="discard", variant="warning")

    def action_answer(self, discard: bool) -> None:
        self.dismiss(discard)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "discard")


class SettingsScreen(ModalScreen[Settings | None]):
    """Every setting, editable; Ctrl+S saves the valid edits, Esc closes."""

    HELP = SettingsForm.HELP + (
        "\n- **Ctrl+S** saves the valid edits (comments in the file are kept), **Ctrl+T** switches between the "
        "user and the project file, **Esc** closes\n"
    )

    DEFAULT_CSS = """
    SettingsScreen { align: center middle; }
    SettingsScreen > #settings-dialog {
        width: 100%; height: 100%; border: round $primary; background: $surface; padding: 0;
    }
    SettingsScreen #settings-title { height: 1; padding: 0 1; text-style: bold; }
    SettingsScreen #settings-target-bar { height: 1; padding: 0 1; }
    SettingsScreen #settings-target-bar Switch { border: none; padding: 0; height: 1; width: auto; margin: 0 1; }
    SettingsScreen #settings-target-bar Switch:focus { background: $accent 30%; }
    SettingsScreen #settings-target-path { width: 1fr; color: $foreground-muted; }
    SettingsScreen #settings-preview { margin: 0 1; display: none; }
    SettingsScreen #settings-preview.-filled { display: block; }
    SettingsScreen #settings-preview-pending { height: 1; margin: 0 1; color: $foreground-muted; }
    SettingsScreen #settings-status { height: 1; padding: 0 1; color: $foreground-muted; }
    SettingsScreen #settings-status.-invalid { color: $text-error; }
    /* QA item 14: on a short terminal the form and the footer's Save / Close keys come first. */
    SettingsScreen.-short #settings-preview, SettingsScreen.-cramped #settings-preview,
    SettingsScreen.-tiny #settings-preview, SettingsScreen.-short #settings-preview-pending,
    SettingsScreen.-cramped #settings-preview-pending, SettingsScreen.-tiny #settings-preview-pending {
        display: none;
    }
    SettingsScreen.-cramped #settings-title, SettingsScreen.-tiny #settings-title { display: none; }
    SettingsScreen.-cramped #settings-form-help { height: 2; }
    /* Under 13 rows only the rows, the file they go to and the status stay (at 40x10: three settings). */
    SettingsScreen.-tiny > #settings-dialog { border: none; }
    SettingsScreen.-tiny #settings-form-help { display: none; }
    SettingsScreen.-tiny .settings-form--section { margin: 0; }
    /* Every problem is listed; past eight lines the box scrolls (the mouse wheel; it takes no focus). */
    SettingsScreen #settings-file-problems-box { height: auto; max-height: 8; }
    SettingsScreen #settings-file-problems { display: none; height: auto; padding: 0 1; color: $text-error; }
    """

    # Below 21 rows the what-if preview goes, below 16 the title and most of the help box, below 13 the help
    # box and the border (DEFAULT_CSS).
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [
        (0, "-tiny"),
        (13, "-cramped"),
        (16, "-short"),
        (21, "-tall"),
    ]

    BINDINGS: ClassVar[list[BindingType]] = [
        # Save and Close first: a narrow footer drops the keys at its end (at 40 columns, Ctrl+T's).
        Binding("ctrl+s", "save", "Save", id="settings.save"),
        Binding("escape", "close", "Close", id="settings.close"),
        Binding("ctrl+t", "toggle_target", "User/project file", id="settings.target"),
        # A modal screen hides the app's keys from its footer and its key chain: F1 is its own here.
        Binding("f1", "app.help", "Help", id="settings.help"),
    ]

    class WhatIf(Message):
        """Candidate compaction budgets while they are edited (valid values only, nothing saved yet)."""

        def __init__(self, keep_recent_tokens: int, reserve_tokens: int) -> None:
            super().__init__()
            self.keep_recent_tokens = keep_recent_tokens
            self.reserve_tokens = reserve_tokens

    class Saved(Message):
        """Edits were written to ``path``; ``settings`` is the reloaded effective settings."""

        def __init__(self, settings: Settings, path: Path, changes: dict[str, Any]) -> None:
            super().__init__()
            self.settings = settings
            self.path = path
            self.changes = changes

    def __init__(
        self,
        load_result: LoadResult,
        save_path: Path | None = None,
        ignore_hashes: set[str] | None = None,
        *,
        project_path: Path | None = None,
        preview: Callable[[CompactionTimeline], None] | None = None,
        session_values: Mapping[str, Any] | None = None,
        on_what_if: Callable[[int, int], None] | None = None,
    ) -> None:
        """``preview`` fills a timeline with the open session, shown at the top as a live what-if;
        ``session_values`` (dotted keys) are the open session's own settings, shown as source "session";
        ``on_what_if`` hears the candidate budgets (keepRecentTokens, reserveTokens) as they are edited."""
        super().__init__()
        self._session_values = dict(session_values or {})
        self._preview = preview
        self._on_what_if = on_what_if
        self._result = load_result
        self._user_path = save_path or load_result.user_file or user_settings_path()
        self._project_path = project_path or load_result.project_file or project_settings_path()
        self._ignore_hashes = ignore_hashes
        self._saved: Settings | None = None
        self._disk_note: str | None = None  # what the last change of the files on disk did to F5
        compaction = load_result.settings.compaction
        self._budgets = (compaction.keep_recent_tokens, compaction.reserve_tokens)
        self._last_what_if = self._budgets
        self._preview_filled = preview is None
        self._gc_held = False

    @classmethod
    def _height_class(cls, height: int) -> str:
        return next(
            name for least, name in sorted(cls.VERTICAL_BREAKPOINTS or [], reverse=True) if height >= least
        )

    @property
    def ready(self) -> bool:
        """Whether everything the first frame left for later is there: every row, and the preview drawn."""
        return self._preview_filled and self.query_one(SettingsForm).complete

    @property
    def target_path(self) -> Path:
        """The file Ctrl+S writes to."""
        return self._project_path if self._to_project else self._user_path

    @property
    def _to_project(self) -> bool:
        return self.query_one("#settings-target", Switch).value

    def compose(self) -> ComposeResult:
        gc_pause.pause()  # until ready (or closed): the screen is being built from here on
        self._gc_held = True
        # The breakpoint class before the children exist: set by the first Resize, it restyled every row again.
        self.set_class(True, self._height_class(self.app.size.height))
        with Vertical(id="settings-dialog"):
            yield Static(Text("Settings"), id="settings-title")
            if self._preview is not None:
                preview = CompactionTimeline(id="settings-preview")
                # A picture of the edit, not a control: otherwise it takes the first focus, the footer
                # shows its keys instead of the screen's, and +/- nudge it instead of editing a value.
                preview.can_focus = False
                yield Static(Text("What-if preview: drawing the session…"), id="settings-preview-pending")
                yield preview
            with Horizontal(id="settings-target-bar"):
                yield Label(self._target_label(False), id="settings-target-label")
                yield Switch(False, id="settings-target")
                yield Static(self._target_text(self._user_path), id="settings-target-path")
            with VerticalScroll(id="settings-file-problems-box", can_focus=False):
                yield Static("", id="settings-file-problems")
            yield SettingsForm(self._result, session_values=self._session_values, id="settings-form")
            yield Static("No unsaved edits", id="settings-status")
        yield KompaktFooter()

    def on_mount(self) -> None:
        if self._preview is not None:
            # Drawing a 10k-entry session's timeline takes ~0.1 s: after the first frame, not before it.
            self.screen_layout_refresh_signal.subscribe(self, self._first_frame)
        self._check_files()

    def _first_frame(self, _screen: Screen[Any]) -> None:
        self.screen_layout_refresh_signal.unsubscribe(self)
        self.call_later(self._fill_preview)

    def _fill_preview(self) -> None:
        """Draw the session on the preview, then show it instead of the pending line (never a blank bar)."""
        if self._preview is None or not self.is_attached:
            return
        preview = self.query_one("#settings-preview", CompactionTimeline)
        self._preview(preview)
        if self._last_what_if != self._budgets:
            preview.set_what_if(*self._last_what_if)  # edited before the preview was drawn
        preview.add_class("-filled")
        self.query_one("#settings-preview-pending").display = False
        self._preview_filled = True
        self._release_gc_when_ready()

    @on(SettingsForm.Complete)
    def _form_complete(self, event: SettingsForm.Complete) -> None:
        event.stop()
        self._release_gc_when_ready()

    def _release_gc_when_ready(self) -> None:
        if self._gc_held and self.ready:
            self._release_gc()

    def _release_gc(self) -> None:
        if self._gc_held:
            self._gc_held = False
            gc_pause.resume()

    def on_unmount(self) -> None:
        self._release_gc()  # closed before everything was there

    def settings_files_changed(self, load_result: LoadResult | None) -> None:
        """The app's watcher saw the files change while F5 is open (D13): follow them. ``load_result`` is
        the new valid load, or None when the files are now invalid (the banner lists every problem)."""
        self._check_files()
        if load_result is None:
            self._disk_note = "The settings file on disk changed and is invalid (see above)"
            self._show_status()
            return
        self._result = load_result
        kept = self.query_one(SettingsForm).follow_file(load_result)
        if self._preview_filled and self._preview is not None:
            self._preview(self.query_one("#settings-preview", CompactionTimeline))
        note = f"; kept your edit of {', '.join(kept)}" if kept else ""
        self._disk_note = f"Reloaded from disk{note}"
        self._show_status()

    @work(thread=True, exclusive=True, group="settings-check", exit_on_error=False)
    def _check_files(self) -> None:
        """Read the files as they are on disk now: an invalid one (the app keeps the last good
        settings) is listed above the form with every problem, not only the first (D13)."""
        try:
            load_settings(self._user_path, self._project_path)
        except SettingsError as exc:
            self.app.call_from_thread(self._show_file_problems, exc.all_problems)
        else:
            self.app.call_from_thread(self._show_file_problems, ())

    def _show_file_problems(self, problems: tuple[str, ...]) -> None:
        banner = self.query_one("#settings-file-problems", Static)
        banner.display = bool(problems)
        if problems:
            head = "The settings on disk are invalid; the last good ones stay in force until they are fixed:"
            banner.update(Text("\n".join([head, *(f"  • {problem}" for problem in problems)])))

    @staticmethod
    def _target_label(to_project: bool) -> str:
        # The switch flips the target; the label names the current one, so off does not read as "no".
        return "Save to: project file" if to_project else "Save to: user file"

    @staticmethod
    def _target_text(path: Path) -> Text:
        return Text(f"→ {path}", no_wrap=True, overflow="ellipsis")

    # -- target file ------------------------------------------------------------------------------------------

    def action_toggle_target(self) -> None:
        target = self.query_one("#settings-target", Switch)
        target.value = not target.value

    @on(Switch.Changed, "#settings-target")
    def _target_changed(self, event: Switch.Changed) -> None:
        event.stop()
        self.query_one("#settings-target-label", Label).update(self._target_label(event.value))
        self.query_one("#settings-target-path", Static).update(self._target_text(self.target_path))
        self.query_one(SettingsForm).set_target("project" if event.value else "user")

    # -- edits ------------------------------------------------------------------------------------------------

    @on(SettingsForm.Edited)
    def _edited(self, event: SettingsForm.Edited) -> None:
        event.stop()
        self._show_status()
        if event.error is None and event.key in (KEEP_RECENT_KEY, RESERVE_KEY):
            form = self.query_one(SettingsForm)
            candidate = (form.candidate(KEEP_RECENT_KEY), form.candidate(RESERVE_KEY))
            # Only real changes: editors report their initial values too.
            if candidate != self._last_what_if:
                self._last_what_if = candidate
                if self._preview_filled and self._preview is not None:
                    self.query_one("#settings-preview", CompactionTimeline).set_what_if(*candidate)
                if self._on_what_if is not None:
                    self._on_what_if(*candidate)
                self.post_message(self.WhatIf(*candidate))

    def _show_status(self, saved: str | None = None) -> None:
        form = self.query_one(SettingsForm)
        pending, invalid = len(form.pending), len(form.invalid)
        if saved:
            self._disk_note = None  # a save says where it went; the older news from disk is gone
        note = saved or self._disk_note
        parts = [note] if note else []
        if pending:
            parts.append(f"{pending} unsaved edit{'s' if pending != 1 else ''} (Ctrl+S saves)")
        if invalid:
            parts.append(f"{invalid} invalid (not saved)")
        status = self.query_one("#settings-status", Static)
        status.update(Text(" · ".join(parts) or "No unsaved edits"))
        status.set_class(bool(invalid), "-invalid")

    # -- saving -----------------------------------------------------------------------------------------------

    def action_save(self) -> None:
        form = self.query_one(SettingsForm)
        changes = form.pending_changes()
        if not changes:
            self.notify("Nothing to save", severity="information")
            return
        self._save(self.target_path, changes, form.pending)

    @work(thread=True, exclusive=True, group="settings-save", exit_on_error=False)
    def _save(self, path: Path, changes: dict[str, Any], edits: dict[str, Any]) -> None:
        # tomlkit is only needed here; importing it lazily keeps opening the screen quick.
        from tui.config.writer import save_changes

        try:
            save_changes(path, changes, ignore_hashes=self._ignore_hashes)
            result = load_settings(self._user_path, self._project_path)
        except SettingsError as exc:
            self.app.call_from_thread(self.notify, str(exc), title="Not saved", severity="error")
            return
        self.app.call_from_thread(self._saved_to, path, changes, edits, result)

    def _saved_to(
        self, path: Path, changes: dict[str, Any], edits: dict[str, Any], result: LoadResult
    ) -> None:
        self._result = result
        self._saved = result.settings
        self.query_one(SettingsForm).reload(result, edits)
        self._show_file_problems(())  # the files just loaded cleanly
        self._show_status(f"Saved to {path}")
        self.post_message(self.Saved(result.settings, path, changes))

    # -- closing ----------------------------------------------------------------------------------------------

    def action_close(self) -> None:
        form = self.query_one(SettingsForm)
        if not form.dirty:
            self.dismiss(self._saved)
            return
        count = len(form.pending) + len(form.invalid)

        def closed(discard: bool | None) -> None:
            if discard:
                self.dismiss(self._saved)

        self.app.push_screen(ConfirmDiscard(count), closed)
