"""Live reload: watch the settings files and report what changed.

The watcher watches the *directories* of the user and project settings files (editors save by writing a temp file
and renaming it over the original, which a watch on the file itself would lose), keeps only events for the two
file names, and after every batch re-reads the files and compares content hashes: an unchanged hash is no change,
and a hash kompakt wrote itself (see ``writer.save_changes(ignore_hashes=…)``) is adopted silently. A real change is
reloaded with the full precedence; valid settings go to ``on_change`` with a per-key diff, invalid ones go to
``on_error`` and the last good settings stay. A directory that does not exist yet is waited for through its nearest
existing parent, and an idle tick re-checks the files in case an event was missed. It has no Textual dependency:
the TUI runs :func:`watch_settings` in a worker and sets ``stop_event`` when it unmounts.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from watchfiles import awatch

from tui.config.errors import SettingsError
from tui.config.loader import LoadResult, file_hash, load_settings
from tui.config.model import Settings, flatten_settings

logger = logging.getLogger(__name__)

SettingChange = tuple[str, Any, Any]
OnChange = Callable[[Settings, list[SettingChange]], Awaitable[None] | None]
OnError = Callable[[SettingsError], Awaitable[None] | None]


def diff_settings(old: Settings, new: Settings) -> list[SettingChange]:
    """``(dotted key, old value, new value)`` for every setting whose value differs; a missing key counts as None."""
    before, after = flatten_settings(old), flatten_settings(new)
    keys = [*before, *(k for k in after if k not in before)]
    return [(key, before.get(key), after.get(key)) for key in keys if before.get(key) != after.get(key)]


async def watch_settings(
    paths: Sequence[Path | None],
    on_change: OnChange,
    stop_event: asyncio.Event | None,
    ignore_hashes: set[str],
    *,
    on_error: OnError | None = None,
    env: Mapping[str, str] | None = None,
    initial: LoadResult | None = None,
    ready: asyncio.Event | None = None,
    debounce_ms: int = 150,
    idle_check_ms: int = 1000,
) -> None:
    """Watch ``paths`` = (user file, project file) until ``stop_event`` is set or the task is cancelled.

    ``initial`` is the LoadResult the app started with (loaded here when None). ``ready`` is set once the
    file-system watch is in place. Callbacks may be plain functions or coroutines.
    """
    user_file, project_file = (Path(os.path.abspath(p)) if p is not None else None for p in paths)
    state = _WatchState(user_file, project_file, on_change, on_error, ignore_hashes, env)
    await state.start(initial)
    stop = stop_event or asyncio.Event()
    while not stop.is_set():
        await _watch_until_replan(state, stop, ready, debounce_ms, idle_check_ms)


async def _watch_until_replan(
    state: _WatchState, stop: asyncio.Event, ready: asyncio.Event | None, debounce_ms: int, idle_check_ms: int
) -> None:
    """One awatch session over the current plan; returns on stop, or when a watched directory appears."""
    plan = _watch_plan(state.files)
    targets, wanted = plan
    changes = awatch(
        *targets,
        watch_filter=lambda _change, path: path in wanted,
        debounce=debounce_ms,
        step=50,
        stop_event=stop,
        rust_timeout=idle_check_ms,
        yield_on_timeout=True,
        recursive=False,
    )
    async with contextlib.aclosing(changes):
        step = asyncio.ensure_future(anext(changes))
        await asyncio.sleep(0)  # awatch installs its file-system watches synchronously in its first step
        if ready is not None:
            ready.set()
        grace_s = max(0.3, 2 * debounce_ms / 1000)
        # A change made before the watch was in place (since the initial load, or in a directory that has just
        # appeared) has no event: look once now.
        await state.check(grace_s)
        while True:
            try:
                await step
            except StopAsyncIteration:
                return
            # Re-read after every batch (and every idle tick): the change types alone are unreliable.
            await state.check(grace_s)
            if _watch_plan(state.files) != plan:
                return  # a missing directory appeared (or a watched one vanished): watch the new set
            step = asyncio.ensure_future(anext(changes))


def _watch_plan(files: Sequence[Path]) -> tuple[list[str], frozenset[str]]:
    """Directories to watch and the paths inside them that matter.

    For a file whose directory is missing, its nearest existing ancestor is watched for the next directory on
    the way, so the plan changes (and the watch restarts) when that directory is created.
    """
    directories: set[str] = set()
    wanted: set[str] = set()
    for file in files:
        wanted.add(str(file))
        child, parent = file, file.parent
        while not parent.is_dir() and parent != parent.parent:
            child, parent = parent, parent.parent
        directories.add(str(parent))
        wanted.add(str(child))
    return sorted(directories), frozenset(wanted)


class _WatchState:
    """The last good settings, the last seen content hashes, and how to report a change."""

    def __init__(
        self,
        user_file: Path | None,
        project_file: Path | None,
        on_change: OnChange,
        on_error: OnError | None,
        ignore_hashes: set[str],
        env: Mapping[str, str] | None,
    ) -> None:
        self.user_file, self.project_file = user_file, project_file
        self.files = [p for p in (user_file, project_file) if p is not None]
        self.on_change, self.on_error = on_change, on_error
        self.ignore_hashes = ignore_hashes
        self.env = env
        self.settings = Settings()
        self.hashes: dict[Path, str | None] = {}

    async def start(self, initial: LoadResult | None) -> None:
        if initial is not None:
            self.settings = initial.settings
            known = {Path(os.path.abspath(p)): h for p, h in initial.hashes.items()}
            self.hashes = {p: known.get(p) for p in self.files}
            return
        try:
            result = await asyncio.to_thread(load_settings, self.user_file, self.project_file, self.env)
        except SettingsError as exc:
            self.hashes = await asyncio.to_thread(self._read_hashes)
            await self._report_error(exc)
            return
        self.settings, self.hashes = result.settings, self._result_hashes(result)

    def _read_hashes(self) -> dict[Path, str | None]:
        return {p: file_hash(p) for p in self.files}

    def _result_hashes(self, result: LoadResult) -> dict[Path, str | None]:
        return {p: result.hashes.get(p) for p in self.files}

    async def check(self, grace_s: float) -> None:
        """Reload if a file's content changed since it was last seen, and report the outcome."""
        # File reads run in a thread: the event loop (and Ctrl+Q) never waits on the file system.
        current = await asyncio.to_thread(self._read_hashes)
        if current == self.hashes:
            return
        if any(current[p] is None and self.hashes.get(p) is not None for p in self.files):
            # Some editors delete the file before writing the new one; give the new one time to appear.
            await asyncio.sleep(grace_s)
            current = await asyncio.to_thread(self._read_hashes)
            if current == self.hashes:
                return
        try:
            result = await asyncio.to_thread(load_settings, self.user_file, self.project_file, self.env)
        except SettingsError as exc:
            self.hashes = current
            await self._report_error(exc)
            return
        loaded = self._result_hashes(result)
        changed = [loaded[p] for p in self.files if loaded[p] != self.hashes.get(p)]
        own_write = bool(changed) and all(h in self.ignore_hashes for h in changed)
        self.ignore_hashes.difference_update(h for h in changed if h is not None)
        changes = diff_settings(self.settings, result.settings)
        self.settings, self.hashes = result.settings, loaded
        if changes and not own_write:
            await _call(self.on_change, result.settings, changes)

    async def _report_error(self, error: SettingsError) -> None:
        if self.on_error is None:
            logger.warning("settings not reloaded: %s", error)
        else:
            await _call(self.on_error, error)


async def _call(callback: Callable[..., Awaitable[None] | None], *args: Any) -> None:
    """Run a sync or async callback; its failure is logged so the watch keeps running."""
    try:
        result = callback(*args)
        if inspect.isawaitable(result):
            await result
    except Exception:
        logger.exception("settings watcher callback failed")
