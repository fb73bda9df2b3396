"""The settings form: every setting as a row with an editor, validated as you type.

Rows are grouped by section and built from the Settings model's documentation (:mod:`widgets.setting_values`).
Each row shows the key, its type and default, and where its value comes from (default, user file, project file or
an environment variable); a panel at the bottom describes the focused row. Editors follow the type: a Switch for
booleans, a Select for choices, a restricted Input for numbers and text, JSON text for lists and tables. Every
edit is checked with :func:`tui.config.validate_change`: an invalid one shows its reason under the field and is
kept out of the pending changes; valid ones are collected for the screen to save. The form posts
:class:`SettingsForm.Edited` after each edit and never writes files itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import DescendantFocus
from textual.message import Message
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


def editor_id(key: str) -> str:
    """A widget id for a dotted key (ids allow letters, digits, '-' and '_')."""
    return "setting-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in key)


class SettingRow(Vertical):
    """One setting: its label, editor and source on a line; an error and an override note below."""

    def __init__(self, spec: FieldSpec, value: Any, source: ValueSource, note: str | None) -> None:
        super().__init__(id="row-" + editor_id(spec.key))
        self.spec = spec
        self._value = value
        self._source = source
        self._note = note

    def compose(self) -> ComposeResult:
        spec = self.spec
        label = Text()
        label.append(spec.label, style="bold")
        label.append(f"\n{spec.doc.type_label} · default {short_value(spec.doc.default)}", style="dim")
        with Horizontal(classes="setting-row--line"):
            yield Static(label, classes="setting-row--label")
            with Horizontal(classes="setting-row--editor"):
                yield self._editor()
            yield Static(self._source_text(), classes="setting-row--source")
        yield Static("", classes="setting-row--error")
        yield Static(Text(self._note or ""), classes="setting-row--note")

    def on_mount(self) -> None:
        self.set_source(self._source)
        self.set_note(self._note)

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
        self.query_one(".setting-row--error", Static).update(Text(f"✗ {reason}" if reason else ""))

    def set_source(self, source: ValueSource) -> None:
        self._source = source
        self.set_class(source.kind == "env", "-env")
        self.query_one(".setting-row--source", Static).update(self._source_text())

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
        self.query_one(".setting-row--note", Static).update(Text(f"⚠ {note}" if note else ""))


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
    SettingsForm SettingRow { height: auto; padding: 0 1; }
    SettingsForm SettingRow:focus-within { background: $boost; }
    SettingsForm SettingRow:focus-within .setting-row--label { color: $text-accent; }
    SettingsForm .setting-row--line { height: auto; }
    SettingsForm .setting-row--label { width: 34%; height: 2; text-wrap: nowrap; text-overflow: ellipsis; }
    SettingsForm .setting-row--editor { width: 1fr; height: auto; }
    SettingsForm .setting-row--source {
        width: 20%; height: 1; padding: 0 0 0 1; color: $foreground-muted; text-wrap: nowrap; text-overflow: ellipsis;
    }
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

    def _with_session(self, sources: dict[str, ValueSource]) -> dict[str, ValueSource]:
        for key, value in self._session_values.items():
            sources[key] = ValueSource("session", session_value=value)
        return sources

    def compose(self) -> ComposeResult:
        settings = self._result.settings
        with VerticalScroll(id="settings-form-rows"):
            section = None
            for spec in self._specs:
                if spec.section != section:
                    section = spec.section
                    heading = Text(section)
                    description = section_description(section)
                    if description:
                        heading.append(f" — {description}", style="not bold")
                    yield Static(heading, classes="settings-form--section")
                source = row_source(spec, self._sources)
                yield SettingRow(
                    spec, value_at(settings, spec.segments), source, override_note(source, self._target)
                )
        yield Static(
            Text("Tab moves between settings; the focused one is described here.", style="dim"),
            id="settings-form-help",
        )

    # -- state the screen reads ------------------------------------------------------------------------------

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
