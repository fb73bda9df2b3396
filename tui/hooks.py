"""A small Python plugin API for compaction and tree-navigation hooks (reference pi-compaction §9).

A plugin is a module with ``register(api)``; it calls ``api.on(event, handler)`` for the events it wants.
Plugins come from module names (``hooks.modules`` in the settings) or from the ``kompakt.hooks`` entry
point group. Events and results are plain dicts with pi's camelCase keys, so a hook reads like its pi
counterpart. :meth:`HookRunner.emit` runs the handlers one after the other (sync or async); for the
``before`` events the last non-empty result wins and a ``cancel`` ends the run at once. A handler or a
plugin that raises is recorded in :attr:`HookRunner.errors` (and passed to ``on_error``) and the default
behaviour carries on, as if that handler had returned nothing.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from importlib.metadata import entry_points
from typing import Any

SESSION_BEFORE_COMPACT = "session_before_compact"
SESSION_COMPACTING = "session.compacting"
SESSION_COMPACT = "session_compact"
SESSION_BEFORE_TREE = "session_before_tree"
SESSION_TREE = "session_tree"
# pi 0.73.1: one pair for every compaction, manual ones too, with the reason (delta A.7).
COMPACTION_START = "compaction_start"
COMPACTION_END = "compaction_end"
# Names pi 0.58.3 (and kompakt before it) used; registering one says what replaced it.
RENAMED_EVENTS = {"auto_compaction_start": COMPACTION_START, "auto_compaction_end": COMPACTION_END}

EVENTS = frozenset(
    {
        SESSION_BEFORE_COMPACT,
        SESSION_COMPACTING,
        SESSION_COMPACT,
        SESSION_BEFORE_TREE,
        SESSION_TREE,
        COMPACTION_START,
        COMPACTION_END,
    }
)
# Events whose handlers may return a result that changes what happens next.
RESULT_EVENTS = frozenset({SESSION_BEFORE_COMPACT, SESSION_COMPACTING, SESSION_BEFORE_TREE})
ENTRY_POINT_GROUP = "kompakt.hooks"

HookResult = Mapping[str, Any] | None
Handler = Callable[[dict[str, Any]], HookResult | Awaitable[HookResult]]


@dataclass(frozen=True)
class HookError:
    """A plugin that failed to load (``event`` is None) or a handler that raised."""

    plugin: str
    event: str | None
    error: BaseException

    def __str__(self) -> str:
        where = f"{self.plugin} on {self.event}" if self.event else f"loading {self.plugin}"
        return f"hook {where} failed: {type(self.error).__name__}: {self.error}"


class HookApi:
    """What ``register(api)`` receives: :meth:`on` subscribes a handler for one plugin."""

    def __init__(self, runner: HookRunner, plugin: str) -> None:
        self._runner = runner
        self.plugin = plugin

    def on(self, event: str, handler: Handler) -> None:
        self._runner.on(event, handler, plugin=self.plugin)


def _register_of(module: str) -> Any:
    """The ``register`` function of a plugin module (imported when the runner is built)."""
    return importlib.import_module(module).register


class HookRunner:
    """Loaded plugins and their handlers, in plugin order and then registration order."""

    def __init__(
        self,
        modules: Iterable[str] = (),
        *,
        entry_point_group: str | None = None,
        on_error: Callable[[HookError], None] | None = None,
    ) -> None:
        self.errors: list[HookError] = []
        self.on_error = on_error
        self._handlers: dict[str, list[tuple[str, Handler]]] = {}
        for name in modules:
            self._load(name, partial(_register_of, name))
        if entry_point_group:
            for point in entry_points(group=entry_point_group):
                self._load(point.name, point.load)

    @classmethod
    def from_settings(
        cls, modules: Iterable[str], on_error: Callable[[HookError], None] | None = None
    ) -> HookRunner:
        """The modules named in ``hooks.modules``, then the plugins installed as entry points."""
        return cls(modules, entry_point_group=ENTRY_POINT_GROUP, on_error=on_error)

    def _load(self, plugin: str, find_register: Callable[[], Any]) -> None:
        try:
            register = find_register()
            if not callable(register):
                # An entry point may name the module itself rather than its register function.
                register = register.register
            register(HookApi(self, plugin))
        except Exception as exc:  # a broken plugin must not stop kompakt from starting
            self._report(HookError(plugin, None, exc))

    def on(self, event: str, handler: Handler, *, plugin: str = "(inline)") -> None:
        if event in RENAMED_EVENTS:
            raise ValueError(
                f"hook event {event!r} is now {RENAMED_EVENTS[event]!r} (pi 0.73.1): it fires for manual "
                "compactions too and carries the reason"
            )
        if event not in EVENTS:
            raise ValueError(f"unknown hook event {event!r}; known: {', '.join(sorted(EVENTS))}")
        self._handlers.setdefault(event, []).append((plugin, handler))

    def has_handlers(self, event: str) -> bool:
        return bool(self._handlers.get(event))

    def _report(self, error: HookError) -> None:
        self.errors.append(error)
        if self.on_error is not None:
            self.on_error(error)

    async def emit(self, event: str, payload: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        """Run every handler of ``event``; for result events, the winning result (else None)."""
        data = {"type": event, **(payload or {})}
        result: dict[str, Any] | None = None
        for plugin, handler in list(self._handlers.get(event, ())):
            try:
                value = handler(data)
                if inspect.isawaitable(value):
                    value = await value
            except Exception as exc:  # CancelledError is not an Exception: an abort still propagates
                self._report(HookError(plugin, event, exc))
                continue
            if event not in RESULT_EVENTS or not value:
                continue
            result = dict(value)
            if result.get("cancel"):
                return result
        return result
