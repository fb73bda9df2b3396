"""The model picker: choose the agent's model from litellm's model map and the configured models.

The list holds the built-in offline model first, then the ``models.<name>`` entries of the settings (marked
"local" when they point at their own server), then every chat model litellm's bundled map knows, each with its
context window and provider. A ✓ marks the models whose provider key is set in the environment. The map is read
in a thread worker (no litellm import); typing in the search box filters as you type; the current model is
highlighted. The screen dismisses with the chosen model name, or None.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui.agent.errors import KEY_ENV_VARS, key_env_var
from tui.agent.model_map import chat_models, context_window
from tui.agent.offline import OFFLINE_MODEL
from tui.compaction.token_text import format_tokens as short_tokens
from tui.config import Settings
from tui.session.sanitize import sanitize
from widgets.footer import KompaktFooter
from widgets.ordered_keys import OrderedInput

ChoiceKind = Literal["offline", "local", "configured", "map"]


@dataclass(frozen=True)
class ModelChoice:
    """One row of the picker."""

    model: str
    kind: ChoiceKind
    provider: str
    context_window: int | None
    key_set: bool  # a key for the provider is in the environment
    note: str = ""

    @property
    def option_id(self) -> str:
        # The same name can be both configured and in the map; the id keeps the rows apart.
        return f"{self.kind}:{self.model}"

    @property
    def search_text(self) -> str:
        return f"{self.model} {self.provider} {self.kind} {self.note}".lower()


def format_tokens(count: int | None) -> str:
    """A context window in the short form people use: 8k, 200k, 1M."""
    if not count:
        return "—"
    return short_tokens(count, whole_k_from=0)


def _has_key(model: str, environ: Mapping[str, str], env_var: str | None = None) -> bool:
    env_var = env_var or key_env_var(model)
    return bool(env_var and environ.get(env_var))


def model_choices(
    settings: Settings | None, environ: Mapping[str, str], current: str | None = None
) -> list[ModelChoice]:
    """Every row: the offline model, the configured models, then litellm's chat models by name.

    A ``current`` model that is in none of them (a name litellm routes but its map lacks) gets a row of its own.
    """
    choices = [
        ModelChoice(OFFLINE_MODEL, "offline", "kompakt", None, False, "built in, no key: explains setup")
    ]
    for name, override in (settings.models if settings else {}).items():
        provider = name.split("/", 1)[0] if "/" in name else ""
        local = override.api_base is not None
        choices.append(
            ModelChoice(
                name,
                "local" if local else "configured",
                provider,
                override.context_window or context_window(name),
                _has_key(name, environ, override.api_key_env),
                override.api_base or "",
            )
        )
    for name, info in chat_models():
        provider = str(info.get("litellm_provider") or "")
        window = info.get("max_input_tokens")
        # The map names each model's provider, so its key comes from the table. key_env_var would ask a loaded
        # litellm about every one of thousands of models: seconds of work, and some providers try the network.
        key_set = bool(KEY_ENV_VARS.get(provider) and environ.get(KEY_ENV_VARS[provider]))
        choices.append(ModelChoice(name, "map", provider, int(window) if window else None, key_set))
    if current and not any(is_model(c, current) for c in choices):
        provider = current.split("/", 1)[0] if "/" in current else ""
        row = ModelChoice(
            current, "configured", provider, context_window(current), _has_key(current, environ)
        )
        choices.insert(1, row)
    return choices


def is_model(choice: ModelChoice, name: str) -> bool:
    """Whether a row stands for the model ``name`` (``claude-x`` in the map is ``anthropic/claude-x`` too)."""
    return name in (choice.model, f"{choice.provider}/{choice.model}")


class ModelPicker(ModalScreen[str | None]):
    """Pick a model; Enter chooses, Esc cancels."""

    HELP = """\
## Model picker

Type to filter (every word must match the name, provider or note). **↑/↓**, **PgUp/PgDn** move, **Enter**
chooses, **Esc** cancels. **✓** means the provider's API key is set in the environment; *local* models are the
`models.<name>` entries of your settings with their own `apiBase`.
"""

    DEFAULT_CSS = """
    ModelPicker { align: center middle; }
    ModelPicker > #model-picker {
        width: 90%; max-width: 110; height: 90%; border: round $primary; background: $surface; padding: 0 1;
    }
    ModelPicker #model-picker-title { height: 1; text-style: bold; }
    ModelPicker #model-search { margin: 0 0 1 0; }
    ModelPicker #model-list { height: 1fr; border: none; text-wrap: nowrap; text-overflow: ellipsis; }
    ModelPicker #model-picker-legend { height: 1; color: $foreground-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="model_picker.cancel"),
        # A modal screen hides the app's keys from its key chain: F1 is its own here (as in F5).
        Binding("f1", "app.help", "Help", id="model_picker.help"),
        Binding("down", "move('cursor_down')", "Next", show=False, id="model_picker.down"),
        Binding("up", "move('cursor_up')", "Previous", show=False, id="model_picker.up"),
        Binding("pagedown", "move('page_down')", "Page down", show=False, id="model_picker.page_down"),
        Binding("pageup", "move('page_up')", "Page up", show=False, id="model_picker.page_up"),
    ]

    def __init__(
        self,
        current: str | None = None,
        settings: Settings | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self._current = current
        self._settings = settings
        self._environ = os.environ if environ is None else environ
        self._choices: list[ModelChoice] = []
        self._by_id: dict[str, ModelChoice] = {}
        self._prompts: dict[str, Text] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="model-picker"):
            yield Static(Text("Choose a model"), id="model-picker-title")
            yield OrderedInput(placeholder="Search models…", id="model-search")
            yield OptionList(Option(Text("loading…"), disabled=True), id="model-list")
            yield Static(
                Text("✓ key set in the environment · local: a configured server · Enter chooses"),
                id="model-picker-legend",
            )
        yield KompaktFooter()  # its own keys, not the main screen's showing through (QA item 19)

    def on_mount(self) -> None:
        self.query_one("#model-search", Input).focus()
        self._load()

    @work(thread=True, exclusive=True, group="model-picker-load")
    def _load(self) -> None:
        choices = model_choices(self._settings, self._environ, self._current)
        self.app.call_from_thread(self._loaded, choices)

    def _loaded(self, choices: list[ModelChoice]) -> None:
        self._choices = choices
        self._by_id = {c.option_id: c for c in choices}
        self._prompts = {c.option_id: self._prompt(c) for c in choices}
        self._show(self.query_one("#model-search", Input).value)

    def _prompt(self, choice: ModelChoice) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("✓ " if choice.key_set else "  ", style="bold green")
        text.append(f"{format_tokens(choice.context_window):>6}  ", style="dim")
        column = choice.kind if choice.kind in ("local", "offline") else choice.provider
        text.append(f"{sanitize(column)[:16]:<16} ", style="italic" if choice.kind != "map" else "dim")
        current = self._current is not None and is_model(choice, self._current)
        text.append(sanitize(choice.model), style="bold" if current else "")
        if choice.note:
            text.append(f"  {sanitize(choice.note)}", style="dim")
        if current:
            text.append("  ● current", style="bold")
        return text

    @property
    def visible_models(self) -> list[str]:
        """The models the list shows now, in order (after the filter)."""
        option_list = self.query_one("#model-list", OptionList)
        options = (option_list.get_option_at_index(i) for i in range(option_list.option_count))
        return [self._by_id[option.id].model for option in options if option.id]

    def _show(self, query: str) -> None:
        words = query.lower().split()
        shown = [c for c in self._choices if all(w in c.search_text for w in words)]
        option_list = self.query_one("#model-list", OptionList)
        option_list.clear_options()
        if not shown:
            option_list.add_option(Option(Text(f"No model matches {query!r}"), disabled=True))
            return
        option_list.add_options(Option(self._prompts[c.option_id], id=c.option_id) for c in shown)
        current = next((i for i, c in enumerate(shown) if self._current and is_model(c, self._current)), 0)
        option_list.highlighted = current
        option_list.scroll_to_highlight(top=True)

    @on(Input.Changed, "#model-search")
    def _filter(self, event: Input.Changed) -> None:
        event.stop()
        if self._choices:
            self._show(event.value)

    @on(Input.Submitted, "#model-search")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        option_list = self.query_one("#model-list", OptionList)
        if option_list.highlighted is not None:
            self._choose(option_list.get_option_at_index(option_list.highlighted))

    @on(OptionList.OptionSelected, "#model-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._choose(event.option)

    def _choose(self, option: Option) -> None:
        if option.id and not option.disabled:
            self.dismiss(self._by_id[option.id].model)

    def action_move(self, action: str) -> None:
        getattr(self.query_one("#model-list", OptionList), f"action_{action}")()

    def action_cancel(self) -> None:
        self.dismiss(None)
