"""The closed sets a setting must come from: binding ids, key names, themes, tool names, booleans.

The core does not import Textual, so the binding ids and theme names are listed here; a test
(tests/test_hostile_settings.py::test_the_binding_ids_and_themes_match_the_app) checks the lists against
the app's bindings and Textual's themes: a new binding id must be added here too. Each ``check_*`` function returns the value or raises ``ValueError`` with the reason, for use as a
pydantic validator.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any

BINDING_IDS = frozenset(
    {
        "app.help", "app.quit",
        "chat.copy", "chat.edit", "chat.fold", "chat.inspect", "chat.next", "chat.previous",
        "dialog.buttons.left", "dialog.buttons.right", "dialog.confirm.no", "dialog.confirm.yes", "dialog.editor.newline", "dialog.label.cancel",
        "dialog.summarize.back",
        "fork_picker.cancel", "fork_picker.help",
        "help.close",
        "inspector.close", "inspector.commit", "inspector.go", "inspector.next", "inspector.undo",
        "dialog.approval.allow", "dialog.approval.deny",
        "main.cancel", "main.compact", "main.model", "main.new", "main.open_tree", "main.resume",
        "main.settings", "main.toggle_chat_view", "main.toggle_timeline", "main.toggle_tree",
        "model_picker.cancel", "model_picker.down", "model_picker.help", "model_picker.page_down", "model_picker.page_up",
        "model_picker.up",
        "prompt.complete", "prompt.newline", "prompt.select_all", "prompt.submit",
        "session_picker.cancel", "session_picker.down", "session_picker.help", "session_picker.page_down", "session_picker.page_up",
        "session_picker.up",
        "settings.close", "settings.discard.no", "settings.discard.yes", "settings.help", "settings.save",
        "settings.target",
        "timeline.apply_to_session", "timeline.cancel", "timeline.compact_now", "timeline.inspect", "timeline.jump_boundary", "timeline.keep_down",
        "timeline.keep_down_big", "timeline.keep_up", "timeline.keep_up_big", "timeline.reserve_down",
        "timeline.preview", "timeline.reserve_down_big", "timeline.reserve_up", "timeline.reserve_up_big",
        "timeline.reset_what_if",
        "timeline.switch_strategy", "timeline.toggle",
        "timeline.previous_segment", "timeline.next_segment", "timeline.older_compaction",
        "timeline.newer_compaction",
        "tree.close", "tree.down", "tree.escape", "tree.filter.all", "tree.filter.default", "tree.filter.labeled_only",
        "tree.filter.next", "tree.filter.no_tools", "tree.filter.previous", "tree.filter.user_only", "tree.first",
        "tree.fold_or_up", "tree.help", "tree.inspect", "tree.label", "tree.label_times", "tree.last", "tree.navigate", "tree.page_down", "tree.page_up",
        "tree.search.backspace", "tree.uncompact", "tree.unfold_or_down", "tree.up",
    }
)  # fmt: skip

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


def _live_together(first: str, second: str, priority: frozenset[str] = frozenset()) -> bool:
    """Whether two bindings are in force at once on the same level, so that one key cannot serve both:
    the same screen or pane, or the app's (on every screen), or a ``priority`` main-screen binding and a
    pane's (the priority one always wins). Otherwise a pane's key over a main-screen one is Textual's
    layering, which the defaults use too (Esc cancels in the timeline and on the screen)."""
    scopes = {_binding_scope(first), _binding_scope(second)}
    if _BUTTON_ROW in scopes:
        return all(scope.startswith("dialog.") or scope in ("settings.discard", "app") for scope in scopes)
    if {first, second} & priority and "main" in scopes and scopes - {"main"} <= _MAIN_PANES:
        return True
    return len(scopes) == 1 or "app" in scopes


def _key_identity(key: str) -> str:
    *modifiers, name = key.strip().split("+")
    return "+".join([*(m.lower() for m in modifiers), name if len(name) == 1 else name.lower()])


def keymap_clashes(keymap: dict[str, str]) -> list[str]:
    """One line per key that a ``[keymap]`` override takes from a binding in force at the same time: another
    override's, or the default key of an app or main-screen binding (tui/actions.py) it does not move."""
    from tui.actions import ACTIONS

    defaults = {action.binding_id: action.key for action in ACTIONS if action.binding_id and action.key}
    priority = frozenset(action.binding_id for action in ACTIONS if action.binding_id and action.priority)
    taken: dict[str, list[str]] = {}
    for binding_id, keys in {**defaults, **keymap}.items():
        for key in dict.fromkeys(_key_identity(key) for key in keys.split(",")):
            taken.setdefault(key, []).append(binding_id)
    clashes = []
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
