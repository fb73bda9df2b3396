"""The shared shape of every agent tool: its output, the context it runs in and the approval decision.

A tool is a small object with a name, a model-facing description (a prompt template), a JSON-schema
for its arguments in OpenAI function-calling form and an async ``run``. The :class:`ToolContext` carries
what a call may touch: the workspace root, the approval policies, the callback that asks the user, the
cancel signal and the directory for full outputs. Approval is decided here, once for all tools, so that
a path outside the workspace is treated the same way by every tool.
"""

from __future__ import annotations

import asyncio
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import prompts
from tui.agent.tools.workspace import is_inside, resolve_path

Policy = Literal["ask", "auto", "deny"]
POLICIES: tuple[Policy, ...] = ("ask", "auto", "deny")

# The TUI implements this: show the request and return True when the user allows it.
ApprovalCallback = Callable[[str, dict[str, Any], str], Awaitable[bool]]

Block = dict[str, Any]


class ToolError(Exception):
    """An expected failure of a tool call; its message goes to the model as the error result."""


@dataclass
class ToolOutput:
    """What a tool returns: pi content blocks (text and images), details for the UI and an error flag."""

    content: list[Block]
    details: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False

    @classmethod
    def text(cls, text: str, details: dict[str, Any] | None = None, *, is_error: bool = False) -> ToolOutput:
        return cls([{"type": "text", "text": text}], details or {}, is_error)


def _default_artifacts_dir() -> Path:
    return Path(tempfile.gettempdir()) / "kompakt-artifacts"


@dataclass
class ToolContext:
    """Everything a tool call may use besides its arguments.

    ``approval`` maps tool names to a policy; the key ``"*"`` sets a default for every tool, and a tool
    without an entry keeps its own default. ``ask`` is None when no one can answer, in which case a call
    that needs approval is refused.
    """

    workspace: Path
    approval: Mapping[str, Policy] = field(default_factory=dict)
    ask: ApprovalCallback | None = None
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    artifacts_dir: Path = field(default_factory=_default_artifacts_dir)

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace).expanduser().resolve()

    def resolve(self, raw: str) -> Path:
        """An argument path made absolute against the workspace (``~`` expanded, symlinks resolved)."""
        return resolve_path(self.workspace, raw)

    def policy_for(self, tool: Tool) -> Policy:
        return self.approval.get(tool.name) or self.approval.get("*") or tool.default_policy


@dataclass(frozen=True)
class ApprovalDecision:
    """How a call is to be let through: ``auto`` runs, ``ask`` asks the user, ``deny`` refuses."""

    policy: Policy
    reason: str
    outside_paths: tuple[Path, ...] = ()


class Tool(ABC):
    """One agent tool. Subclasses set the class attributes and implement :meth:`run`."""

    name: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]
    default_policy: ClassVar[Policy] = "auto"
    # Arguments that name paths, with the value assumed when the argument is missing (None: no default).
    path_params: ClassVar[Mapping[str, str | None]] = {}

    @property
    def description(self) -> str:
        return prompts.load(f"tool_{self.name}")

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling schema that litellm passes to every provider."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def with_resolved_paths(self, args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """``args`` with every path argument (its default included) resolved once, to be approved and used.

        The approval question shows, and the tool then opens, this resolved path: a symlink changed between
        the question and the run cannot redirect the call (the tools open it without following links).
        """
        resolved = dict(args)
        for param, default in self.path_params.items():
            raw = args.get(param, default)
            if isinstance(raw, str) and raw:
                resolved[param] = str(ctx.resolve(raw))
        return resolved

    def paths(self, args: Mapping[str, Any], ctx: ToolContext) -> list[Path]:
        """The resolved paths this call touches."""
        found = []
        for param, default in self.path_params.items():
            raw = args.get(param, default)
            if isinstance(raw, str) and raw:
                found.append(ctx.resolve(raw))
        return found

    def needs_approval(self, args: Mapping[str, Any], ctx: ToolContext) -> ApprovalDecision:
        """The effective policy for this call; a path outside the workspace turns ``auto`` into ``ask``."""
        policy = ctx.policy_for(self)
        outside = tuple(p for p in self.paths(args, ctx) if not is_inside(ctx.workspace, p))
        reasons = []
        if policy == "ask":
            reasons.append(f"{self.name} is set to ask before it runs")
        if outside:
            listed = ", ".join(str(p) for p in outside)
            reasons.append(f"{listed} is outside the workspace {ctx.workspace}")
            if policy == "auto":
                policy = "ask"
        if policy == "deny":
            reasons.insert(0, f"{self.name} is denied by the approval policy")
        return ApprovalDecision(policy, "; ".join(reasons), outside)

    @abstractmethod
    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Carry out the call. Expected failures raise :class:`ToolError`."""
