"""Follow a session file that another process appends to (``kompakt watch``).

watchfiles watches the file's *directory* (an editor or a log rotation replaces the inode, which a watch
on the file itself would lose) and every batch that names the file triggers
:meth:`SessionStore.refresh`, which reads only the new complete lines, or reloads after a truncation or
rotation. A periodic re-check covers events lost while the watch was being set up.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path

from watchfiles import awatch

from tui.session.store import RefreshResult, SessionStore

OnUpdate = Callable[[RefreshResult], Awaitable[None] | None]


async def follow_session(
    store: SessionStore,
    on_update: OnUpdate,
    stop_event: asyncio.Event,
    *,
    debounce_ms: int = 50,
    idle_check_ms: int = 1000,
    ready: asyncio.Event | None = None,
) -> None:
    """Call ``on_update`` with each non-empty refresh of ``store`` until ``stop_event`` is set."""
    path = store.path.resolve()

    async def check() -> None:
        result = store.refresh()
        if result.new_entries or result.reloaded or result.problem:
            outcome = on_update(result)
            if inspect.isawaitable(outcome):
                await outcome

    def named(_change: object, changed: str) -> bool:
        return Path(changed).name == path.name

    watcher = awatch(
        path.parent,
        watch_filter=named,
        recursive=False,
        debounce=debounce_ms,
        step=20,
        stop_event=stop_event,
        rust_timeout=idle_check_ms,
        yield_on_timeout=True,
    )
    first = True
    async for _changes in watcher:
        if first and ready is not None:
            ready.set()
        first = False
        await check()  # a timeout batch is empty: the idle re-check
