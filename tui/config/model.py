"""The Settings model: every kompakt setting, its type, bounds, default and description.

Keys are camelCase in TOML and in environment variables (``compaction.keepRecentTokens``,
``KOMPAKT_COMPACTION__KEEPRECENTTOKENS``), as in pi's settings; in Python they are snake_case attributes
(``settings.compaction.keep_recent_tokens``), and either spelling validates. Every model forbids unknown keys so a
typo is an error instead of a silently ignored line. The descriptions are user-facing: the settings screen shows
them. Constructing ``Settings()`` gives the pure defaults; layering files and the environment is the loader's job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from tui.config.choices import check_keymap, check_theme, check_tool_names, strict_bool
from tui.config.keys import dict_value_type, flatten, join_key, model_class, unwrap_optional

Approval = Literal["ask", "auto", "deny"]
# A boolean setting takes true or false only (pydantic alone would read "yes" or 1 as true).
Flag = Annotated[bool, BeforeValidator(strict_bool)]
# Beyond any model's context window: a budget this large is a typo, not a setting.
MAX_TOKENS = 100_000_000
MAX_DELAY_MS = 3_600_000

DEFAULT_TOOL_APPROVAL: dict[str, Approval] = {
    "bash": "ask",
    "write": "ask",
    "edit": "ask",
    "read": "auto",
    "ls": "auto",
    "grep": "auto",
    "find": "auto",
}

_SECTION_CONFIG = ConfigDict(
    extra="forbid", alias_generator=to_camel, validate_by_name=True, validate_by_alias=True
)


def _check_url(value: str | None) -> str | None:
    if value is not None and not value.startswith(("http://", "https://")):
        raise ValueError("must be an http:// or https:// URL")
    return value


class CompactionSettings(BaseModel):
    """When and how the conversation is summarised to free context."""

    model_config = _SECTION_CONFIG

    enabled: Flag = Field(
        True, description="Compact automatically when the context gets close to the window."
    )
    reserve_tokens: int = Field(
        16384,
        ge=0,
        le=MAX_TOKENS,
        description="Tokens kept free for the reply: compaction starts above (context window − reserveTokens).",
    )
    keep_recent_tokens: int = Field(
        20000,
        ge=0,
        le=MAX_TOKENS,
        description="Roughly how many tokens of the most recent conversation stay verbatim after a compaction.",
    )
    auto_continue: Flag = Field(
        True, description="After an automatic compaction, let the agent carry on with the interrupted task."
    )
    remote_endpoint: str | None = Field(
        None,
        description="URL that writes summaries instead of the model (POST {systemPrompt, prompt} → {summary}). "
        "Unset: the summary model writes them.",
    )
    on_summary_failure: Literal["fallback", "abort"] = Field(
        "fallback",
        description="When the summarizer fails: 'fallback' uses a deterministic summary, 'abort' cancels the "
        "compaction.",
    )
    calibrate: Flag = Field(
        True,
        description="Scale keepRecentTokens by the measured ratio between the provider's token counts and "
        "kompakt's estimates.",
    )
    strategy: Literal["keep-recent", "head-tail"] = Field(
        "keep-recent",
        description="'keep-recent' summarises everything before the recent tail; 'head-tail' also keeps the "
        "opening of the session verbatim.",
    )
    head_tail_threshold: float = Field(
        0.50,
        gt=0,
        le=1,
        description="head-tail: compact once the context reaches this fraction of the usable window (window − "
        "reserveTokens); windows under 512K tokens use at least 0.75.",
    )
    head_tail_target_ratio: float = Field(
        0.20,
        ge=0.10,
        le=0.80,
        description="head-tail: the recent tail kept verbatim is about this fraction of the threshold in tokens "
        "(it may grow to 1.5 times that).",
    )
    head_tail_protect_first: int = Field(
        3,
        ge=0,
        le=100,
        description="head-tail: how many opening messages the first compaction reproduces in full; later "
        "compactions summarise them too.",
    )
    head_tail_protect_last: int = Field(
        20,
        ge=1,
        le=1000,
        description="head-tail: the fewest recent messages the tail keeps (at least 3; values above 8 count as 8).",
    )

    _check_remote = field_validator("remote_endpoint")(_check_url)


class BranchSummarySettings(BaseModel):
    """Summaries of the branch you leave when navigating the session tree."""

    model_config = _SECTION_CONFIG

    enabled: Flag = Field(
        True, description="Offer to summarise the abandoned branch when you jump in the tree."
    )
    reserve_tokens: int = Field(
        16384,
        ge=0,
        le=MAX_TOKENS,
        description="Tokens kept free when choosing how much of the old branch the summary may read.",
    )
    skip_prompt: Flag = Field(
        False, description="Jump without asking 'Summarize branch?' (and without writing a summary)."
    )


class RetryProviderSettings(BaseModel):
    """Limits of one provider request (pi 0.73.1's retry.provider; retry.maxDelayMs moved here)."""

    model_config = _SECTION_CONFIG

    max_retry_delay_ms: int = Field(
        60000,
        ge=0,
        le=MAX_DELAY_MS,
        description="Longest server-requested delay (retry-after) accepted, in milliseconds; a server that asks "
        "for longer fails at once. It also caps the backoff. 0: no cap.",
    )
    timeout_ms: int | None = Field(
        None,
        ge=1,
        le=MAX_DELAY_MS,
        description="Timeout of one request in milliseconds, until the reply starts. Unset: the SDK's (600000).",
    )
    max_retries: int | None = Field(
        None,
        ge=0,
        le=100,
        description="Retries inside the SDK, before kompakt's own. Unset: none (kompakt's retries decide).",
    )
    stream_idle_timeout_ms: int = Field(
        120000,
        ge=0,
        le=MAX_DELAY_MS,
        description="A stream that sends nothing for this many milliseconds fails and is retried like a lost "
        "connection. 0: wait for ever.",
    )


class RetrySettings(BaseModel):
    """Automatic retries of failed model calls (rate limits, server errors, timeouts)."""

    model_config = _SECTION_CONFIG

    enabled: Flag = Field(True, description="Retry model calls that fail with a transient error.")
    max_retries: int = Field(3, ge=0, le=100, description="How many times a failed call is retried.")
    base_delay_ms: int = Field(
        2000,
        ge=0,
        le=MAX_DELAY_MS,
        description="Delay before the first retry in milliseconds; it doubles on each attempt.",
    )
    provider: RetryProviderSettings = Field(
        default_factory=RetryProviderSettings, description=RetryProviderSettings.__doc__
    )


class ModelOverride(BaseModel):
    """Per-model overrides: limits litellm does not know, and local or custom endpoints."""

    model_config = _SECTION_CONFIG

    context_window: int | None = Field(
        None,
        ge=1,
        le=MAX_TOKENS,
        description="Context window in tokens. Unset: taken from litellm's model map.",
    )
    max_output_tokens: int | None = Field(
        None,
        ge=1,
        le=MAX_TOKENS,
        description="Largest reply in tokens. Unset: taken from litellm's model map.",
    )
    api_base: str | None = Field(
        None,
        description="Base URL of the API, e.g. http://localhost:11434 for Ollama. Unset: provider default.",
    )
    api_key_env: str | None = Field(
        None,
        description="Name of the environment variable holding the API key. Unset: the provider's usual one.",
    )
    headers: dict[str, str] | None = Field(
        None,
        description="Extra HTTP headers sent with every request to this model, summaries included. Unset: none.",
    )

    _check_api_base = field_validator("api_base")(_check_url)


class ToolsSettings(BaseModel):
    """Which tool calls run on their own and which need your approval."""

    model_config = _SECTION_CONFIG

    approval: dict[str, Approval] = Field(
        default_factory=lambda: dict(DEFAULT_TOOL_APPROVAL),
        description="Per tool: 'ask' before running, run 'auto'matically, or 'deny'. Tools not listed here ask.",
    )

    @field_validator("approval")
    @classmethod
    def _keep_defaults(cls, value: dict[str, Approval]) -> dict[str, Approval]:
        # A file that sets one tool must not drop the defaults of the others.
        return {
            **DEFAULT_TOOL_APPROVAL,
            **check_tool_names(value, [*DEFAULT_TOOL_APPROVAL, "*"]),
        }  # "*": every other tool


class AgentSettings(BaseModel):
    """The agent loop."""

    model_config = _SECTION_CONFIG

    max_iterations: int = Field(
        90,
        ge=1,
        le=100_000,
        description="Most model calls in one turn before the agent stops and hands back to you.",
    )


class UiSettings(BaseModel):
    """Look and layout of the TUI."""

    model_config = _SECTION_CONFIG

    theme: str = Field("textual-dark", min_length=1, description="Textual theme name, e.g. textual-light.")
    tree_filter_mode: Literal["default", "no-tools", "user-only", "labeled-only", "all"] = Field(
        "default", description="Filter the session tree starts with."
    )
    show_timeline: Flag = Field(True, description="Show the compaction timeline strip above the prompt.")

    _check_theme = field_validator("theme")(check_theme)


class SessionSettings(BaseModel):
    """How session files are written."""

    model_config = _SECTION_CONFIG

    fsync: Literal["always", "batch"] = Field(
        "always",
        description="'always' fsyncs after every appended entry (nothing written is lost in a crash); "
        "'batch' fsyncs within half a second of an append, at most that often, and on close (faster on slow disks).",
    )


class HooksSettings(BaseModel):
    """Python plugins that take part in compaction and branch summaries."""

    model_config = _SECTION_CONFIG

    modules: list[str] = Field(
        default_factory=list, description="Importable module names of hook plugins, loaded at start."
    )


class MoaSettings(BaseModel):
    """Mixture of Agents: several reference models answer, an aggregator writes the reply."""

    model_config = _SECTION_CONFIG

    enabled: Flag = Field(False, description="Answer with a mixture of agents instead of a single model.")
    reference_models: list[str] = Field(
        default_factory=list, description="litellm model names that each draft an answer."
    )
    aggregator: str | None = Field(
        None, description="Model that combines the drafts into the reply. Unset: the main model."
    )
    max_concurrency: int = Field(
        4, ge=1, le=64, description="How many reference models run at the same time."
    )
    timeout_s: float = Field(
        120.0,
        gt=0,
        le=86_400,
        description=(
            "Seconds each reference model has for its whole answer, counted from its request (waiting for a"
            " free slot under maxConcurrency does not count); a slower one is left out and reported."
        ),
    )


class Settings(BaseSettings):
    """All of kompakt's settings. ``Settings()`` is the defaults; use the loader for files and environment."""

    model_config = SettingsConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        env_prefix="KOMPAKT_",
        env_nested_delimiter="__",
    )

    model: str | None = Field(
        None,
        min_length=1,
        description="Model for the agent as a litellm name, e.g. anthropic/claude-sonnet-4-5. Unset: the first "
        "provider with a key in the environment, or the built-in offline model.",
    )
    summary_model: str | None = Field(
        None,
        min_length=1,
        description="Model that writes compaction and branch summaries. Unset: same as model.",
    )
    compaction: CompactionSettings = Field(
        default_factory=CompactionSettings, description=CompactionSettings.__doc__
    )
    branch_summary: BranchSummarySettings = Field(
        default_factory=BranchSummarySettings, description=BranchSummarySettings.__doc__
    )
    retry: RetrySettings = Field(default_factory=RetrySettings, description=RetrySettings.__doc__)
    models: dict[str, ModelOverride] = Field(
        default_factory=dict, description='Overrides per model name, e.g. [models."ollama/llama3.1"].'
    )
    tools: ToolsSettings = Field(default_factory=ToolsSettings, description=ToolsSettings.__doc__)
    agent: AgentSettings = Field(default_factory=AgentSettings, description=AgentSettings.__doc__)
    ui: UiSettings = Field(default_factory=UiSettings, description=UiSettings.__doc__)
    keymap: dict[str, str] = Field(
        default_factory=dict, description='Key overrides: binding id → key, e.g. "app.quit" = "ctrl+q".'
    )
    hooks: HooksSettings = Field(default_factory=HooksSettings, description=HooksSettings.__doc__)
    session: SessionSettings = Field(default_factory=SessionSettings, description=SessionSettings.__doc__)
    moa: MoaSettings = Field(default_factory=MoaSettings, description=MoaSettings.__doc__)

    _check_keymap = field_validator("keymap")(check_keymap)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The loader layers files and KOMPAKT_ variables itself, so that every error and every value can be
        # traced to the file or variable it came from; the model only validates what it is given.
        return (init_settings,)


def flatten_settings(settings: Settings) -> dict[str, Any]:
    """Every leaf setting as ``{dotted key: value}``, e.g. ``{"compaction.keepRecentTokens": 20000, …}``."""
    return flatten(settings.model_dump(by_alias=True), Settings)


@dataclass(frozen=True)
class FieldDoc:
    """What the settings screen shows for one key."""

    key: str
    type_label: str
    default: Any
    description: str
    choices: tuple[str, ...] | None
    is_mapping: bool


def _type_label(annotation: Any) -> str:
    inner = unwrap_optional(annotation)
    optional = inner is not annotation
    if get_origin(inner) is Literal:
        label = " | ".join(repr(a) for a in get_args(inner))
    elif dict_value_type(inner) is not None:
        value = dict_value_type(inner)
        label = f"table of {_type_label(value) if model_class(value) is None else 'tables'}"
    elif get_origin(inner) is list:
        label = f"list of {_type_label(get_args(inner)[0])}"
    else:
        label = {bool: "boolean", int: "integer", float: "number", str: "string"}.get(inner, str(inner))
    return f"{label} (optional)" if optional else label


def field_docs(model: type[BaseModel] = Settings, prefix: tuple[str, ...] = ()) -> list[FieldDoc]:
    """Every setting as a FieldDoc, in declaration order; tables of free-form entries are one item each."""
    docs: list[FieldDoc] = []
    for name, info in model.model_fields.items():
        key = (*prefix, info.alias or name)
        sub_model = model_class(info.annotation)
        if sub_model is not None:
            docs.extend(field_docs(sub_model, key))
            continue
        # For a table of choices (tools.approval) the choices are those of each entry.
        inner = unwrap_optional(dict_value_type(info.annotation) or info.annotation)
        choices = tuple(get_args(inner)) if get_origin(inner) is Literal else None
        docs.append(
            FieldDoc(
                key=join_key(key),
                type_label=_type_label(info.annotation),
                default=info.get_default(call_default_factory=True),
                description=info.description or "",
                choices=choices,
                is_mapping=dict_value_type(info.annotation) is not None,
            )
        )
    return docs
