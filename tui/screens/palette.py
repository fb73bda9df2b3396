"""The command palette (Ctrl+P): kompakt's own commands, grouped, and nothing of the text editor's.

It lists, in the order of :data:`tui.actions.GROUPS`: every row of the action table the main screen
allows now (its key, or its slash command, beside the help), then the focused pane's own commands (the
bindings with an id: the tree's "Go here", the timeline's what-if keys), then a few of Textual's (theme,
screenshot). The prompt editor's cursor commands have no id and are left out, and so are the movement
keys of the panes. A slash command that needs an argument (``/name <text>``, ``/moa on|off``) is typed
into the prompt for the user to finish. The search matches a command's title, its group and its slash
command (``/uncompact`` finds "Undo compaction").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from tui.actions import ACTIONS, GROUPS, Action

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen

    from tui.screens.main import MainScreen

# A pane's commands are grouped by their binding id's first word.
PANE_GROUPS = {"tree": "Tree", "timeline": "Compaction", "chat": "Conversation"}
# Moving a cursor is not a command: the panes' movement and editing keys stay out of the palette.
MOVEMENT_IDS = frozenset(
    {
        "tree.up", "tree.down", "tree.page_up", "tree.page_down", "tree.first", "tree.last", "tree.search.backspace", "tree.escape",
        "chat.previous", "chat.next", "prompt.submit", "prompt.newline", "prompt.complete", "prompt.select_all",
        "inspector.next", "dialog.editor.newline", "dialog.buttons.left", "dialog.buttons.right",
        "model_picker.up", "model_picker.down", "model_picker.page_up", "model_picker.page_down",
        "session_picker.up", "session_picker.down", "session_picker.page_up", "session_picker.page_down",
    }
)  # fmt: skip
# Textual's own commands worth keeping (its "Keys" panel would list the editor's keys; Quit is kompakt's).
TEXTUAL_KEPT = frozenset({"Theme", "Screenshot", "Maximize", "Minimize"})


class PaletteCommand(NamedTuple):
    group: str
    title: str
    help: str
    callback: Callable[[], Any]
    slash: str = ""  # the slash command's name: the search finds "uncomp" or "/uncompact" by it too


def _key(app: App[Any], action: Action) -> str:
    """The key a table row is bound to now (a ``[keymap]`` override shows as remapped)."""
    for node in (app.screen_stack[0], app) if app.screen_stack else (app,):
        for _key_name, binding in node._bindings:
            if binding.id == action.binding_id and action.binding_id:
                return app.get_key_display(binding)
    return ""


def _table_commands(main: MainScreen) -> Iterator[PaletteCommand]:
    app = main.app
    for action in ACTIONS:
        if not main.check_action("command", (action.name,)):
            continue  # D5: a read-only session offers no write
        if action.slash and action.needs_argument:
            if main.prompt.disabled:
                continue
            hint, callback = f"type {action.usage}", _typer(main, action)
        else:
            hint = " · ".join(filter(None, (_key(app, action), action.slash and action.usage)))
            callback = _runner(main, action)
        yield PaletteCommand(action.group, action.title, f"{hint}: {action.help}", callback, action.slash)


def _runner(main: MainScreen, action: Action) -> Callable[[], Any]:
    return lambda: main.app.run_action(("", "command", (action.name, "")), main)


def _typer(main: MainScreen, action: Action) -> Callable[[], None]:
    def type_it() -> None:
        main.prompt.text = f"/{action.slash} "
        main.prompt.move_cursor(main.prompt.document.end)
        main.prompt.focus()

    return type_it


def _pane_commands(app: App[Any], screen: Screen[Any]) -> Iterator[PaletteCommand]:
    seen: set[str] = set()
    for active in screen.active_bindings.values():
        binding, node = active.binding, active.node
        if not (binding.id and binding.description) or binding.id in MOVEMENT_IDS or binding.id in seen:
            continue
        if binding.id.startswith(("main.", "app.")):
            continue  # the table's rows, listed above
        seen.add(binding.id)
        prefix = binding.id.partition(".")[0]
        group = PANE_GROUPS.get(prefix, prefix.replace("_", " ").capitalize())
        help_text = binding.tooltip or f"Key: {app.get_key_display(binding)}"
        yield PaletteCommand(
            group,
            binding.description,
            help_text,
            lambda node=node, action=binding.action: app.run_action(action, node),
        )


def palette_commands(app: App[Any], screen: Screen[Any]) -> list[PaletteCommand]:
    """What the palette offers over ``screen``, in group order (a stable sort keeps each group's order)."""
    from textual.app import App as TextualApp

    from tui.screens.main import MainScreen

    commands: list[PaletteCommand] = []
    if isinstance(screen, MainScreen):
        commands.extend(_table_commands(screen))
    commands.extend(_pane_commands(app, screen))
    for title, help_text, callback, _discover in TextualApp.get_system_commands(app, screen):
        if title in TEXTUAL_KEPT:
            commands.append(PaletteCommand("App", title, help_text, callback))
    order = {group: index for index, group in enumerate(GROUPS)}
    return sorted(commands, key=lambda command: order.get(command.group, len(order)))


def _display(command: PaletteCommand, title: Content | None = None) -> Content:
    return Content.assemble((f"{command.group:<14}", "dim"), title or Content(command.title))


class KompaktCommands(Provider):
    """The palette's one provider: :func:`palette_commands`, shown with their group, literally."""

    async def discover(self) -> Hits:
        for command in palette_commands(self.app, self.screen):
            yield DiscoveryHit(
                _display(command), command.callback, text=command.title, help=Content(command.help)
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in palette_commands(self.app, self.screen):
            words = f"{command.title} {command.group}" + (f" /{command.slash}" if command.slash else "")
            if (score := matcher.match(words)) > 0:
                title = matcher.highlight(command.title)
                yield Hit(
                    score,
                    _display(command, title),
                    command.callback,
                    text=command.title,
                    help=Content(command.help),
                )
