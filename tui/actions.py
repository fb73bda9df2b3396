"""The one table of kompakt's commands: each names its key, binding id, slash command, palette group and help.

The main screen's key bindings, the app's, the prompt's slash commands and their completion, the command
palette and F1 help are all built from :data:`ACTIONS`, so a command is described once. Running them is
the screens' job (:mod:`tui.screens.commands`); this module is plain data, with no Textual, so that the
widgets and the core can read it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Group = Literal["Conversation", "Compaction", "Tree", "Session", "App"]
# The palette lists its groups in this order.
GROUPS: tuple[Group, ...] = ("Conversation", "Compaction", "Tree", "Session", "App")


@dataclass(frozen=True)
class Action:
    """One command. ``name`` is its Textual action on the screen (or the app, ``on_app``)."""

    name: str
    title: str  # the footer's and the palette's words
    help: str  # one line: F1, the palette, the slash completion
    group: Group
    key: str = ""  # the default key (remappable through ``binding_id``), "" when it has none
    binding_id: str = ""
    slash: str = ""  # the slash command's name, "" when there is none
    args: str = ""  # the slash command's argument hint: "[optional]", "<required>", "on|off"
    writes: bool = False  # refused (and not offered) in a read-only session
    footer: bool = True  # shown in the footer (when it has a key)
    priority: bool = False  # the key works whatever has the focus
    on_app: bool = False  # the app's own action (help, quit), not the main screen's

    @property
    def usage(self) -> str:
        return f"/{self.slash} {self.args}".rstrip()

    @property
    def needs_argument(self) -> bool:
        """Whether the slash command cannot run without an argument (so the palette types it instead)."""
        return bool(self.args) and not self.args.startswith("[")


ACTIONS: tuple[Action, ...] = (
    Action(
        "compact",
        "Compact",
        "Compact the context now, optionally with a focus; --preview shows the summary before writing it",
        "Compaction",
        key="f8",
        binding_id="main.compact",
        slash="compact",
        args="[--preview] [instructions]",
        writes=True,
        priority=True,
    ),
    Action(
        "open_tree",
        "Full tree",
        "Open the full-screen session tree",
        "Tree",
        key="f3",
        binding_id="main.open_tree",
        slash="tree",
        footer=False,
        priority=True,
    ),
    Action(
        "model",
        "Model",
        "Pick the model (or set it by name)",
        "Conversation",
        key="f6",
        binding_id="main.model",
        slash="model",
        args="[name]",
        footer=False,
        priority=True,
    ),
    Action(
        "settings",
        "Settings",
        "Open the settings screen",
        "App",
        key="f5",
        binding_id="main.settings",
        slash="settings",
        priority=True,
    ),
    Action(
        "label",
        "Label the current entry",
        "Label the current entry (empty text clears it)",
        "Tree",
        slash="label",
        args="[text]",
        writes=True,
    ),
    Action(
        "export",
        "Export",
        "Export the session (HTML outline, Markdown transcript, or the branch as a pi session file)",
        "Session",
        slash="export",
        args="[html|md|jsonl [file]]",
    ),
    Action(
        "fork",
        "Fork",
        "New session from before one of your messages; its text goes into the prompt",
        "Session",
        slash="fork",
    ),
    Action(
        "clone",
        "Clone",
        "New session with this branch up to the current entry (or the one named)",
        "Session",
        slash="clone",
        args="[id]",
    ),
    Action(
        "new_session",
        "New session",
        "Start a new session",
        "Session",
        key="ctrl+n",
        binding_id="main.new",
        slash="new",
        footer=False,
    ),
    Action(
        "resume",
        "Sessions",
        "Open one of your kompakt or pi sessions",
        "Session",
        key="f7",
        binding_id="main.resume",
        slash="resume",
        footer=False,
        priority=True,
    ),
    Action(
        "moa",
        "Mixture of Agents",
        "Turn Mixture of Agents on or off",
        "Conversation",
        slash="moa",
        args="on|off",
    ),
    Action(
        "continue",
        "Continue",
        "Let the agent carry on (after a spent iteration budget, an error or Esc)",
        "Conversation",
        slash="continue",
        writes=True,
    ),
    Action(
        "uncompact",
        "Undo compaction",
        "Undo the latest compaction (or the one named): the leaf goes back to before it",
        "Compaction",
        slash="uncompact",
        args="[id]",
        writes=True,
    ),
    Action(
        "inspect",
        "Inspect compaction",
        "Inspect the latest compaction (or the one named): summarised, summary, kept",
        "Compaction",
        slash="inspect",
        args="[id]",
    ),
    Action(
        "session_settings",
        "Session settings",
        "Show this session's own compaction settings (or clear them)",
        "Compaction",
        slash="session-settings",
        args="[clear]",
        writes=True,
    ),
    Action(
        "rename", "Name session", "Name this session", "Session", slash="name", args="<text>", writes=True
    ),
    Action(
        "help",
        "Help",
        "Show keys and commands",
        "App",
        key="f1",
        binding_id="app.help",
        slash="help",
        on_app=True,
    ),
    # Keys without a slash command.
    Action(
        "toggle_tree",
        "Tree pane",
        "Show or hide the session tree beside the chat",
        "Tree",
        key="f2",
        binding_id="main.toggle_tree",
        priority=True,
    ),
    Action(
        "toggle_timeline",
        "Timeline",
        "Expand and focus the compaction timeline (again: collapse it)",
        "Compaction",
        key="f4",
        binding_id="main.toggle_timeline",
        priority=True,
    ),
    Action(
        "toggle_chat_view",
        "View",
        "Chat: history view (every message, compactions folded) or context view (what the model sees)",
        "Conversation",
        key="f9",
        binding_id="main.toggle_chat_view",
        priority=True,
    ),
    Action(
        "cancel",
        "Cancel",
        "Cancel the running reply, tool or compaction",
        "Conversation",
        key="escape",
        binding_id="main.cancel",
        footer=False,
    ),
    Action(
        "quit", "Quit", "Quit kompakt", "App", key="ctrl+q", binding_id="app.quit", priority=True, on_app=True
    ),
)
BY_NAME = {action.name: action for action in ACTIONS}
BY_SLASH = {action.slash: action for action in ACTIONS if action.slash}
SLASH_COMMANDS: tuple[Action, ...] = tuple(action for action in ACTIONS if action.slash)
