"""The closed sets a setting must come from: binding ids, key names, themes, tool names, booleans.

The core does not import Textual, so the binding ids with their default keys and the theme names are
listed here; a test (tests/test_hostile_settings.py::test_the_binding_ids_and_themes_match_the_app) checks
the lists against the app's bindings and Textual's themes: a new binding or a new default key must be
written here too. Each ``check_*`` function returns the value or raises ``ValueError`` with the reason, for use as a
pydantic validator.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any

# Every binding id and its default keys (the BINDINGS of tui/ and widgets/).
DEFAULT_KEYS: dict[str, str] = {
    "app.help": "f1", "app.quit": "ctrl+q",
    "chat.copy": "ctrl+c", "chat.edit": "ctrl+e", "chat.fold": "enter", "chat.inspect": "enter",
    "chat.next": "down", "chat.previous": "up",
    "dialog.approval.allow": "y", "dialog.approval.deny": "n,escape", "dialog.buttons.left": "left",
    "dialog.buttons.right": "right", "dialog.confirm.no": "n,escape", "dialog.confirm.yes": "y",
    "dialog.editor.newline": "ctrl+j,shift+enter", "dialog.label.cancel": "escape",
    "dialog.summarize.back": "escape",
    "fork_picker.cancel": "escape", "fork_picker.help": "f1",
    "help.close": "escape,f1,q",
    "inspector.close": "escape", "inspector.commit": "enter", "inspector.go": "g", "inspector.next": "tab",
    "inspector.undo": "u",
    "main.cancel": "escape", "main.compact": "f8", "main.model": "f6", "main.new": "ctrl+n",
    "main.open_tree": "f3", "main.resume": "f7", "main.settings": "f5", "main.toggle_chat_view": "f9",
    "main.toggle_timeline": "f4", "main.toggle_tree": "f2",
    "model_picker.cancel": "escape", "model_picker.down": "down", "model_picker.help": "f1",
    "model_picker.page_down": "pagedown", "model_picker.page_up": "pageup", "model_picker.up": "up",
    "prompt.complete": "tab", "prompt.newline": "shift+enter,ctrl+j", "prompt.select_all": "alt+a",
    "prompt.submit": "enter",
    "session_picker.cancel": "escape", "session_picker.down": "down", "session_picker.help": "f1",
    "session_picker.page_down": "pagedown", "session_picker.page_up": "pageup", "session_picker.up": "up",
    "settings.close": "escape", "settings.discard.no": "n,escape", "settings.discard.yes": "y",
    "settings.help": "f1", "settings.save": "ctrl+s", "settings.target": "ctrl+t",
    "timeline.apply_to_session": "ctrl+s", "timeline.cancel": "escape", "timeline.compact_now": "enter",
    "timeline.inspect": "ctrl+o", "timeline.jump_boundary": "ctrl+f", "timeline.keep_down": "minus",
    "timeline.keep_down_big": "less_than_sign", "timeline.keep_up": "plus",
    "timeline.keep_up_big": "greater_than_sign", "timeline.newer_compaction": "up",
    "timeline.next_segment": "right", "timeline.older_compaction": "down", "timeline.preview": "ctrl+g",
    "timeline.previous_segment": "left", "timeline.reserve_down": "left_square_bracket",
    "timeline.reserve_down_big": "left_curly_bracket", "timeline.reserve_up": "right_square_bracket",
    "timeline.reserve_up_big": "right_curly_bracket", "timeline.reset_what_if": "ctrl+r",
    "timeline.switch_strategy": "ctrl+t", "timeline.toggle": "space",
    "tree.close": "f3", "tree.down": "down", "tree.escape": "escape", "tree.filter.all": "ctrl+a",
    "tree.filter.default": "ctrl+d", "tree.filter.labeled_only": "ctrl+l", "tree.filter.next": "ctrl+o",
    "tree.filter.no_tools": "ctrl+t", "tree.filter.previous": "ctrl+shift+o", "tree.filter.user_only": "ctrl+u",
    "tree.first": "home", "tree.fold_or_up": "ctrl+left,alt+left", "tree.help": "f1", "tree.inspect": "I,shift+i",
    "tree.label": "L,shift+l", "tree.label_times": "T,shift+t", "tree.last": "end", "tree.navigate": "enter",
    "tree.page_down": "right,pagedown,ctrl+f", "tree.page_up": "left,pageup,ctrl+b",
    "tree.search.backspace": "backspace", "tree.uncompact": "U,shift+u",
    "tree.unfold_or_down": "ctrl+right,alt+right", "tree.up": "up",
}  # fmt: skip
BINDING_IDS = frozenset(DEFAULT_KEYS)

# Textual's built-in themes (kompakt registers none of its own).
THEMES = frozenset(
    {
        "ansi-dark", "ansi-light", "atom-one-dark", "atom-one-light", "catppuccin-frappe", "catppuccin-latte",
        "catppuccin-macchiato", "catppuccin-mocha", "dracula", "flexoki", "gruvbox", "monokai", "nord",
        "rose-pine", "rose-pine-dawn", "rose-pine-moon", "solarized-dark", "solarized-light", "textual-dark",
        "textual-light", "tokyo-night",
    }
)  # fmt: skip

MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})
_NAMED_KEYS = frozenset(
    {
        "enter", "escape", "tab", "space", "backspace", "delete", "insert", "home", "end", "pageup", "pagedown",
        "up", "down", "left", "right",
        *(f"f{n}" for n in range(1, 25)),
    }
)  # fmt: skip


def _closest(value: str, known: Iterable[str]) -> str:
    import difflib

    match = difflib.get_close_matches(value, sorted(known), n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""


def _key_name_ok(name: str) -> bool:
    if len(name) == 1 and name.isprintable() and not name.isspace():
        return True
    if name in _NAMED_KEYS:
        return True
    try:  # Textual also names a key by its character's Unicode name: question_mark, full_stop, ...
        unicodedata.lookup(name.replace("_", " ").upper())
    except KeyError:
        return False
    return True


def check_keys(keys: str) -> str:
    """A Textual key list (``"ctrl+k"``, ``"f9,ctrl+shift+p"``); raises ValueError naming the bad key."""
    if not keys.strip():
        raise ValueError("no key given")
    for key in keys.split(","):
        parts = key.strip().split("+")
        *modifiers, name = parts
        bad = [m for m in modifiers if m.lower() not in MODIFIERS]
        if bad or not name or not _key_name_ok(name if len(name) == 1 else name.lower()):
            raise ValueError(f"cannot parse the key {key.strip()!r} (e.g. 'ctrl+k', 'f9', 'shift+enter')")
    return keys


def check_keymap(keymap: dict[str, str]) -> dict[str, str]:
    for binding_id, keys in keymap.items():
        if binding_id not in BINDING_IDS:
            raise ValueError(f"unknown binding id {binding_id!r}{_closest(binding_id, BINDING_IDS)}")
        try:
            check_keys(keys)
        except ValueError as exc:
            raise ValueError(f"{binding_id}: {exc}") from None
    clashes = keymap_clashes(keymap)
    if clashes:
        raise ValueError("; ".join(clashes))
    return keymap


def _binding_scope(binding_id: str) -> str:
    """Where a binding works: its screen or widget (each dialog is a screen of its own)."""
    parts = binding_id.split(".")
    return ".".join(parts[:2]) if parts[0] == "dialog" or parts[:2] == ["settings", "discard"] else parts[0]


# The button row's arrows (widgets/button_row.py) work in the dialogs that have one.
_BUTTON_ROW = "dialog.buttons"


# The main screen's panes: a priority key of the main screen (an F-key) wins over theirs (tui/actions.py).
_MAIN_PANES = frozenset({"chat", "prompt", "timeline", "tree"})


# Bindings of one pane that are never in force together: each lives on a widget the other is not on (a
# fold row is not a message; only a user message can be edited, and a compaction divider inspected).
_APART = frozenset(
    frozenset(pair)
    for pair in (
        ("chat.fold", "chat.copy"), ("chat.fold", "chat.edit"), ("chat.fold", "chat.inspect"),
        ("chat.edit", "chat.inspect"),
    )
)  # fmt: skip


def _live_together(first: str, second: str, priority: frozenset[str] = frozenset()) -> bool:
    """Whether two bindings are in force at once on the same level, so that one key cannot serve both:
    the same screen or pane, or the app's (on every screen), or a ``priority`` main-screen binding and a
    pane's (the priority one always wins). Otherwise a pane's key over a main-screen one is Textual's
    layering, which the defaults use too (Esc cancels in the timeline and on the screen)."""
    if frozenset((first, second)) in _APART:
        return False
    scopes = {_binding_scope(first), _binding_scope(second)}
    if _BUTTON_ROW in scopes:
        return all(scope.startswith("dialog.") or scope in ("settings.discard", "app") for scope in scopes)
    if {first, second} & priority and "main" in scopes and scopes - {"main"} <= _MAIN_PANES:
        return True
    return len(scopes) == 1 or "app" in scopes


def _key_identity(key: str) -> str:
    *modifiers, name = key.strip().split("+")
    return "+".join([*(m.lower() for m in modifiers), name if len(name) == 1 else name.lower()])


def _key_identities(keys: str) -> list[str]:
    """Each key of a key list once, in the form two spellings of one key share."""
    return list(dict.fromkeys(_key_identity(key) for key in keys.split(",")))


def _typed(key: str) -> bool:
    """Whether a key is one that typing sends: a character, with Shift at most (``q``, ``Q``, ``shift+q``,
    ``plus``, ``space``), not an F-key or a key with Ctrl or Alt."""
    *modifiers, name = key.split("+")
    if set(modifiers) - {"shift"}:
        return False
    if len(name) == 1:
        return True
    if name in _NAMED_KEYS:
        return name == "space"
    return True  # a character named by its Unicode name (question_mark, full_stop)


def keymap_clashes(keymap: dict[str, str]) -> list[str]:
    """One line per key that a ``[keymap]`` override takes from a binding in force at the same time: another
    override's, or the default key of a binding it does not move (:data:`DEFAULT_KEYS`). A priority binding
    (the app's and the main screen's F-keys) may not take a key that typing sends: it would fire from the
    prompt."""
    from tui.actions import ACTIONS

    priority = frozenset(action.binding_id for action in ACTIONS if action.binding_id and action.priority)
    taken: dict[str, list[str]] = {}
    for binding_id, keys in {**DEFAULT_KEYS, **keymap}.items():
        for key in _key_identities(keys):
            taken.setdefault(key, []).append(binding_id)
    clashes = [
        f"{binding_id} takes the key {key!r} from typing (it works even in the prompt): give it a modifier "
        "or an F-key"
        for binding_id in keymap
        if binding_id in priority
        for key in _key_identities(keymap[binding_id])
        if _typed(key)
    ]
    for key, ids in taken.items():
        for index, first in enumerate(ids):
            for second in ids[index + 1 :]:
                unmoved = [b for b in (first, second) if b not in keymap]  # at most one: a default key
                if len(unmoved) < 2 and _live_together(first, second, priority):
                    note = f" ({unmoved[0]} by default)" if unmoved else ""
                    moved, other = (second, first) if unmoved == [first] else (first, second)
                    clashes.append(f"{moved} and {other} both take the key {key!r}{note}")
    return clashes


def check_theme(theme: str) -> str:
    if theme not in THEMES:
        raise ValueError(
            f"unknown theme {theme!r}{_closest(theme, THEMES)}; themes: {', '.join(sorted(THEMES))}"
        )
    return theme


def check_tool_names(approval: dict[str, Any], known: Iterable[str]) -> dict[str, Any]:
    names = frozenset(known)
    for tool in approval:
        if tool not in names:
            raise ValueError(
                f"unknown tool {tool!r}{_closest(tool, names)}; tools: {', '.join(sorted(names))}"
            )
    return approval


def strict_bool(value: Any) -> Any:
    """true or false: a TOML boolean, or the words ``true``/``false`` (environment variables are text).

    pydantic alone would take "yes", "on", 1 and "0" as booleans.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError("expected true or false")
