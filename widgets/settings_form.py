"""The settings form: every setting as a row with an editor, validated as you type.

Rows are grouped by section and built from the Settings model's documentation (:mod:`widgets.setting_values`).
Only the rows that fit on the terminal are composed with the form; the others are mounted a few at a time
once the first frame has been drawn (:attr:`SettingsForm.complete` says when all are there), so F5 shows at
once even though every row is a handful of widgets that Textual styles and lays out.
Each row shows the key, its type and default, and where its value comes from (default, user file, project file or
an environment variable); a panel at the bottom describes the focused row. Editors follow the type: a Switch for
booleans, a Select for choices, a restricted Input for numbers and text, JSON text for lists and tables. Every
edit is checked with :func:`tui.config.validate_change`: an invalid one shows its reason under the field and is
kept out of the pending changes; valid ones are collected for the screen to save. The form posts
:class:`SettingsForm.Edited` after each edit and never writes files itself.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import DescendantFocus
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Select, Static, Switch, TextArea

from tui.config import LoadResult, SettingsError, validate_change, value_sources
from tui.config.loader import ValueSource
from widgets.ordered_keys import OrderedInput, OrderedTextArea
from widgets.setting_values import (
    FieldSpec,
    TargetKind,
    changes_for,
    field_specs,
    format_value,
    override_note,
    parse_text,
    row_source,
    section_description,
    short_value,
    source_label,
    value_at,
)

_INPUT_TYPES = {"integer": "integer", "number": "number"}
# The lines a row and a section heading take (the heading's top margin included), and the screen's lines around
# the rows (title, preview, target, help box, status, borders, footer): what the first frame's rows must fill.
_ROW_LINES, _HEADING_LINES, _CHROME_LINES = 2, 2, 12
# Rows mounted per step after the first frame: small enough that keys typed meanwhile wait ~0.1 s at most.
_ROWS_PER_STEP = 8


def editor_id(key: str) -> str:
    """A widget id for a dotted key (ids allow letters, digits, '-' and '_')."""
    return "setting-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in key)


class SettingRow(Widget):
    """One setting: its label, editor and source on a line; an error and an override note below.

    A grid of its five widgets, with no container per line or per editor: every widget of a row is styled and
    laid out when F5 opens, so the fewer the faster."""

    def __init__(self, spec: FieldSpec, value: Any, source: ValueSource, note: str | None) -> None:
        # Classes and texts are right from the start: changed on mount, they restyled every row once more.
        classes = " ".join(
            name for name, on in (("-env", source.kind == "env"), ("-overridden", note is not None)) if on
        )
        super().__init__(id="row-" + editor_id(spec.key), classes=classes)
        self.spec = spec
        self._value = value
        self._source = source
        self._note = note
        self._source_static = Static(self._source_text(), classes="setting-row--source")
        self._error_static = Static("", classes="setting-row--error")
        self._note_static = Static(self._note_text(), classes="setting-row--note")

    def compose(self) -> ComposeResult:
        spec = self.spec
        label = Text()
        label.append(spec.label, style="bold")
        label.append(f"\n{spec.doc.type_label} · default {short_value(spec.doc.default)}", style="dim")
        yield Static(label, classes="setting-row--label")
        editor = self._editor()
        editor.add_class("setting-row--editor")
        yield editor
        yield self._source_static
        yield self._error_static
        yield self._note_static

    def _editor(self) -> Widget:
        spec, value, widget_id = self.spec, self._value, editor_id(self.spec.key)
        if spec.kind == "switch":
            return Switch(bool(value), id=widget_id)
        if spec.kind == "select":
            choices = spec.doc.choices or ()
            return Select(
                [(c, c) for c in choices], value=value, allow_blank=spec.optional, compact=True, id=widget_id
            )
        if spec.kind == "table":
            editor = OrderedTextArea(
                format_value(spec, value), id=widget_id, soft_wrap=False, tab_behavior="indent"
            )
            editor.compact = True
            return editor
        placeholder = "unset (default)" if spec.optional else ""
        return OrderedInput(
            format_value(spec, value),
            placeholder=placeholder,
            type=_INPUT_TYPES.get(spec.kind, "text"),
            compact=True,
            id=widget_id,
        )

    def _source_text(self) -> Text:
        style = "bold" if self._source.kind == "env" else ""
        return Text(source_label(self._source), style=style)

    def _note_text(self) -> Text:
        return Text(f"⚠ {self._note}" if self._note else "")

    def on_resize(self) -> None:
        # An error or note line just appeared under the field being edited: keep all of the row in view.
        if self.has_focus_within:
            self.scroll_visible(animate=False)

    @property
    def source(self) -> ValueSource:
        return self._source

    def set_error(self, reason: str | None) -> None:
        """Show (or clear) why the value typed is not accepted."""
        self.set_class(reason is not None, "-invalid")
        self._error_static.update(Text(f"✗ {reason}" if reason else ""))

    def set_source(self, source: ValueSource) -> None:
        self._source = source
        self.set_class(source.kind == "env", "-env")
        self._source_static.update(self._source_text())

    def set_value(self, value: Any) -> None:
        """Show ``value`` (the file's new one) in the editor; its Changed re-checks it against the file."""
        self._value = value
        editor = self.query_one(f"#{editor_id(self.spec.key)}")
        if isinstance(editor, Switch):
            editor.value = bool(value)
        elif isinstance(editor, Select):
            editor.value = Select.NULL if value is None else value
        elif isinstance(editor, TextArea):
            editor.text = format_value(self.spec, value)
        elif isinstance(editor, Input):
            editor.value = format_value(self.spec, value)

    def set_note(self, note: str | None) -> None:
        self._note = note
        self.set_class(note is not None, "-overridden")
        self._note_static.update(self._note_text())


class SettingsForm(Widget):
    """Rows for every setting, validated as typed; the valid edits wait in :meth:`pending_changes`."""

    HELP = """\
## Settings

Each row is one key of `settings.toml`: its type and default on the left, where the current value comes from on
the right (default, user file, project file, or an environment variable, which wins over both files).

- **Tab / Shift+Tab** move between fields; the panel at the bottom describes the focused one
- Switches toggle with **Space/Enter**; choices open with **Enter**
- Lists and tables are edited as JSON (a TOML inline value works too)
- An invalid value shows why under the field and is not saved; empty text resets an optional key
"""

    DEFAULT_CSS = """
    SettingsForm { height: 1fr; layout: vertical; }
    SettingsForm > VerticalScroll { height: 1fr; scrollbar-size-vertical: 1; }
    SettingsForm .settings-form--section {
        margin: 1 0 0 0; padding: 0 1; color: $text-accent; text-style: bold; background: $boost;
    }
    SettingsForm SettingRow {
        layout: grid; grid-size: 3; grid-columns: 34% 1fr 20%; grid-rows: auto; height: auto; padding: 0 1;
    }
    SettingsForm SettingRow:focus-within { background: $boost; }
    SettingsForm SettingRow:focus-within .setting-row--label { color: $text-accent; }
    SettingsForm .setting-row--label { height: 2; padding: 0 1 0 0; text-wrap: nowrap; text-overflow: ellipsis; }
    SettingsForm .setting-row--source {
        height: 1; padding: 0 0 0 1; color: $foreground-muted; text-wrap: nowrap; text-overflow: ellipsis;
    }
    SettingsForm .setting-row--error, SettingsForm .setting-row--note { column-span: 3; }
    SettingsForm SettingRow.-env .setting-row--source { color: $text-warning; }
    SettingsForm .setting-row--error, SettingsForm .setting-row--note { display: none; height: auto; }
    SettingsForm SettingRow.-invalid .setting-row--error { display: block; color: $text-error; }
    SettingsForm SettingRow.-overridden .setting-row--note { display: block; color: $text-warning; }
    SettingsForm SettingRow Input, SettingsForm SettingRow Select { width: 1fr; }
    SettingsForm SettingRow.-invalid Input { color: $text-error; }
    SettingsForm SettingRow Switch { border: none; padding: 0; height: 1; width: auto; }
    SettingsForm SettingRow Switch:focus { background: $accent 30%; }
    SettingsForm SettingRow TextArea { width: 1fr; height: auto; max-height: 10; }
    SettingsForm #settings-form-help { height: 5; padding: 0 1; border-top: solid $primary 50%; }
    """

    class Edited(Message):
        """The user changed a field; ``error`` is the reason when the value is not accepted."""

        def __init__(self, form: SettingsForm, key: str, value: Any, error: str | None) -> None:
            super().__init__()
            self.form = form
            self.key = key
            self.value = value
            self.error = error

        @property
        def control(self) -> SettingsForm:
            return self.form

    class Complete(Message):
        """Every row is mounted now (the rows that did not fit the first frame came after it)."""

        def __init__(self, form: SettingsForm) -> None:
            super().__init__()
            self.form = form

        @property
        def control(self) -> SettingsForm:
            return self.form

    _KINDS_WITH_TEXT: ClassVar[frozenset[str]] = frozenset({"integer", "number", "text", "list", "table"})

    def __init__(
        self,
        load_result: LoadResult,
        target: TargetKind = "user",
        *,
        session_values: Mapping[str, Any] | None = None,
        id: str | None = None,
    ) -> None:
        """``session_values`` (dotted keys) are what the open session sets for itself: source "session"."""
        super().__init__(id=id)
        self._result = load_result
        self._target: TargetKind = target
        self._specs = field_specs()
        self._by_editor = {editor_id(spec.key): spec for spec in self._specs}
        self._session_values = dict(session_values or {})
        self._sources = self._with_session(value_sources(load_result))
        self._pending: dict[str, Any] = {}
        self._invalid: dict[str, str] = {}
        self._described: SettingRow | None = None  # the row the help panel describes
        self._mounted = 0  # rows composed so far, in the order of ``_specs``
        self._complete = False  # every row mounted

    def _with_session(self, sources: dict[str, ValueSource]) -> dict[str, ValueSource]:
        for key, value in self._session_values.items():
            sources[key] = ValueSource("session", session_value=value)
        return sources

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="settings-form-rows"):
            yield from self._next_rows(self._rows_that_fit())
        yield Static(
            Text("Tab moves between settings; the focused one is described here.", style="dim"),
            id="settings-form-help",
        )

    def _rows_that_fit(self) -> int:
        """How many rows (with their headings) fill the terminal's height: the first frame needs no more."""
        lines, count, section = 0, 0, None
        for spec in self._specs:
            if lines >= self.app.size.height - _CHROME_LINES:
                break
            if spec.section != section:
                section = spec.section
                lines += _HEADING_LINES
            lines += _ROW_LINES
            count += 1
        return max(count, 1)

    def _next_rows(self, count: int) -> Iterator[Widget]:
        """The widgets of the next ``count`` rows not mounted yet, each section's heading before its first row.

        Built from the form's state as it is now (a file followed or a save meanwhile is shown as it is)."""
        settings = self._result.settings
        end = min(self._mounted + count, len(self._specs))
        for index in range(self._mounted, end):
            spec = self._specs[index]
            if index == 0 or self._specs[index - 1].section != spec.section:
                heading = Text(spec.section)
                description = section_description(spec.section)
                if description:
                    heading.append(f" — {description}", style="not bold")
                yield Static(heading, classes="settings-form--section")
            source = row_source(spec, self._sources)
            yield SettingRow(
                spec, value_at(settings, spec.segments), source, override_note(source, self._target)
            )
        self._mounted = end

    def on_mount(self) -> None:
        self._complete = self._mounted == len(self._specs)
        if self._complete:  # a terminal tall enough for every row
            self.post_message(self.Complete(self))
        else:
            self.screen.screen_layout_refresh_signal.subscribe(self, self._first_frame)

    def _first_frame(self, screen: Screen[Any]) -> None:
        screen.screen_layout_refresh_signal.unsubscribe(self)
        self.call_later(self._mount_more)

    async def _mount_more(self) -> None:
        if not self.is_attached:  # the screen closed before every row was there
            return
        await self.query_one("#settings-form-rows", VerticalScroll).mount_all(
            list(self._next_rows(_ROWS_PER_STEP))
        )
        self._complete = self._mounted == len(self._specs)
        if self._complete:
            self.post_message(self.Complete(self))
        else:
            # Between steps the frame is drawn and keys typed meanwhile are handled.
            self.call_after_refresh(self._mount_more)

    # -- state the screen reads ------------------------------------------------------------------------------

    @property
    def complete(self) -> bool:
        """Whether every row is mounted (the first frame has only those that fit)."""
        return self._complete

    @property
    def invalid(self) -> dict[str, str]:
        """``{key: reason}`` for fields whose text is not a valid value."""
        return dict(self._invalid)

    @property
    def pending(self) -> dict[str, Any]:
        """``{row key: validated value}`` of the valid edits not saved yet."""
        return dict(self._pending)

    @property
    def dirty(self) -> bool:
        """Whether anything typed is not saved (valid or not)."""
        return bool(self._pending or self._invalid)

    def pending_changes(self) -> dict[str, Any]:
        """The valid edits as ``{dotted key: value}`` for :func:`tui.config.writer.save_changes`."""
        changes: dict[str, Any] = {}
        for spec in self._specs:
            if spec.key in self._pending:
                old = value_at(self._result.settings, spec.segments)
                changes.update(changes_for(spec, old, self._pending[spec.key]))
        return changes

    def candidate(self, key: str) -> Any:
        """The value a key would have with the pending edits: the edit if there is one, else the current value."""
        if key in self._pending:
            return self._pending[key]
        spec = next(s for s in self._specs if s.key == key)
        return value_at(self._result.settings, spec.segments)

    def set_target(self, target: TargetKind) -> None:
        """Change the file edits are meant for; rows whose value that file cannot override say so."""
        self._target = target
        for row in self.query(SettingRow):
            row.set_note(override_note(row.source, target))

    def reload(self, load_result: LoadResult, saved: Mapping[str, Any]) -> None:
        """Take freshly loaded settings after a save: new sources, and the ``saved`` edits are no longer pending.

        An edit typed again while the save ran stays pending.
        """
        self._result = load_result
        self._sources = self._with_session(value_sources(load_result))
        for key, value in saved.items():
            if self._pending.get(key) == value:
                del self._pending[key]
        for row in self.query(SettingRow):
            source = row_source(row.spec, self._sources)
            row.set_source(source)
            row.set_note(override_note(source, self._target))
        if self._described is not None and self._described.is_attached:
            self._describe(self._described)  # its "from …" follows the save (D13)

    def follow_file(self, load_result: LoadResult) -> list[str]:
        """The files on disk changed (and are valid): rows the user has not touched take the new values
        and sources; a row being edited keeps the user's text and says what the file has now. The keys
        of the rows kept, for the screen's status."""
        self._result = load_result
        self._sources = self._with_session(value_sources(load_result))
        kept = []
        for row in self.query(SettingRow):
            source = row_source(row.spec, self._sources)
            row.set_source(source)
            value = value_at(load_result.settings, row.spec.segments)
            key = row.spec.key
            if key in self._pending or key in self._invalid:
                kept.append(key)
                note = f"differs from the file, which now has {short_value(value)}"
                row.set_note(note)
                if self._pending.get(key) == value:  # the file now says what was typed
                    del self._pending[key]
                    row.set_note(override_note(source, self._target))
                    kept.pop()
            else:
                row.set_value(value)
                row.set_note(override_note(source, self._target))
        if self._described is not None and self._described.is_attached:
            self._describe(self._described)
        return kept

    # -- editing ---------------------------------------------------------------------------------------------

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Switch.Changed)
    @on(Select.Changed)
    def _edited(self, event: Input.Changed | TextArea.Changed | Switch.Changed | Select.Changed) -> None:
        event.stop()
        spec = self._by_editor.get(event.control.id or "")
        if spec is None:
            return
        if isinstance(event, TextArea.Changed):
            raw: Any = event.text_area.text
        else:
            raw = event.value
        self._check(spec, raw)

    def _check(self, spec: FieldSpec, raw: Any) -> None:
        row = self.query_one(f"#row-{editor_id(spec.key)}", SettingRow)
        try:
            if spec.kind in self._KINDS_WITH_TEXT:
                value = parse_text(spec, raw)
            else:
                value = None if raw is Select.NULL else raw
            # The validated settings normalise the value (aliases, defaults merged into tables).
            value = value_at(validate_change(self._result.settings, spec.key, value), spec.segments)
        except (ValueError, SettingsError) as exc:
            reason = exc.reason if isinstance(exc, SettingsError) else str(exc)
            self._invalid[spec.key] = reason
            self._pending.pop(spec.key, None)
            row.set_error(reason)
            self.post_message(self.Edited(self, spec.key, None, reason))
            return
        self._invalid.pop(spec.key, None)
        row.set_error(None)
        if value == value_at(self._result.settings, spec.segments):
            self._pending.pop(spec.key, None)
        else:
            self._pending[spec.key] = value
        self.post_message(self.Edited(self, spec.key, value, None))

    # -- the help panel --------------------------------------------------------------------------------------

    def on_descendant_focus(self, event: DescendantFocus) -> None:
        node = event.widget
        while node is not None and node is not self:
            if isinstance(node, SettingRow):
                node.scroll_visible(animate=False)
                self._describe(node)
                return
            node = node.parent

    def _describe(self, row: SettingRow) -> None:
        self._described = row
        spec = row.spec
        text = Text()
        text.append(spec.key, style="bold")
        text.append(f"  {spec.doc.type_label} · default {short_value(spec.doc.default)} · from ", style="dim")
        text.append(str(row.source))
        text.append(f"\n{spec.doc.description}")
        if spec.kind in ("table", "list"):
            text.append("\nEdit as JSON; a TOML inline value works too.", style="dim")
        self.query_one("#settings-form-help", Static).update(text)
