"""How tests wait and how they drive the main screen: polling helpers and a small page object.

A test never bets on a fixed pause: :func:`until` and :func:`wait_until` poll a condition between frames,
and their long limit (``HANG_GUARD_S``) only keeps a broken test from hanging the suite, never times
anything. :func:`until` returns when the limit runs out so that the assert after it reports what is
wrong; :func:`wait_until` raises, for waits with no assert after them.

:class:`MainPage` is the main screen as a user meets it: open the app, type a prompt and send it, open the
tree on an entry, wait for the agent to go idle or for a worker to reach a state, and read the chat, the
status bar, the timeline and the whole screen as text. Tests use it instead of the screen's internals, so a
refactoring of the screen changes this file, not every test.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from tui.app import KompaktApp
    from tui.screens.main import MainScreen

HANG_GUARD_S = 60.0
POLL_S = 0.02


async def until(pilot: Any, predicate: Callable[[], Any], guard: float = HANG_GUARD_S) -> Any:
    """Poll ``predicate`` between frames until it is truthy or ``guard`` seconds pass; its last value.

    Put it before the assert that checks the same condition: on a hang the assert says what is wrong.
    An exception from ``predicate`` counts as "not yet".
    """
    deadline = time.monotonic() + guard
    while True:
        try:
            value = predicate()
        except Exception:  # not there yet (a widget not mounted, a row not drawn): the assert will tell
            value = None
        if value or time.monotonic() > deadline:
            return value
        await pilot.pause(POLL_S)


async def wait_until(pilot: Any, predicate: Callable[[], Any], what: str, guard: float = HANG_GUARD_S) -> Any:
    """Poll ``predicate`` between frames until it is truthy; fails only if it never becomes so."""
    deadline = time.monotonic() + guard
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await pilot.pause(POLL_S)
    return value


async def timeline_shown(pilot: Any, app: Any) -> Any:
    """Until the app's compaction timeline has its timeline and a size on screen; the widget."""
    from widgets.timeline import CompactionTimeline

    def shown() -> Any:
        widget = app.query_one(CompactionTimeline)
        return widget if widget.timeline is not None and widget.size.height > 0 else None

    return await wait_until(pilot, shown, "the timeline")


async def screen_shown(pilot: Any, app: Any, screen: Any) -> Any:
    """Until ``screen`` (a screen, or a screen class) is the active screen, mounted, with the focus inside
    it when it has anything to focus; the active screen."""

    def shown() -> Any:
        active = app.screen
        found = isinstance(active, screen) if isinstance(screen, type) else active is screen
        settled = active.is_mounted and (active.focused is not None or not active.focus_chain)
        # A dialog that ignores keys read before its first frame (ConfirmDialog) must have been drawn.
        settled = settled and getattr(active, "drawn_at", 0) is not None
        return active if found and settled else None

    return await wait_until(pilot, shown, f"the screen {screen!r}")


async def wait_until_drawn(pilot: Any, widget: Any) -> None:
    """Until ``widget`` has a place on the screen (so a click on it lands on it)."""
    await wait_until(pilot, lambda: widget.region.width and widget.region.height, f"{widget!r} on screen")


async def screen_settled(pilot: Any, frames: int = 3, guard: float = HANG_GUARD_S) -> str:
    """Until the screen shows the same text ``frames`` polls in a row (mounts, layout and restyles done); that text.

    For a test that asserts on what a load drew, with no single condition that says it is done."""
    deadline = time.monotonic() + guard
    last, same = None, 0
    while same < frames and time.monotonic() < deadline:
        await pilot.pause(POLL_S)
        text = rendered_text(pilot.app)
        same = same + 1 if text == last else 0
        last = text
    return last or ""


def rendered_strips(app: Any) -> list[Any]:
    """The rows the app's screen draws (Rich strips, styles and all); the one place tests read the compositor."""
    return list(app.screen._compositor.render_strips())


def rendered_text(app: Any) -> str:
    """Every character the app's screen shows, line by line."""
    return "\n".join(strip.text for strip in rendered_strips(app))


class MainPage:
    """The main screen of a running :class:`~tui.app.KompaktApp`, driven as the user drives it."""

    def __init__(self, pilot: Any) -> None:
        self.pilot = pilot
        self.app: KompaktApp = pilot.app

    @property
    def screen(self) -> MainScreen:
        from tui.screens.main import MainScreen

        return next(screen for screen in self.app.screen_stack if isinstance(screen, MainScreen))

    async def ready(self) -> MainScreen:
        """The main screen once start-up has finished (the agent and the timeline exist)."""
        from tui.screens.main import MainScreen

        stack = self.app.screen_stack
        await wait_until(
            self.pilot, lambda: stack and isinstance(self.app.screen_stack[-1], MainScreen), "the screen"
        )
        screen = self.screen
        await wait_until(
            self.pilot,
            lambda: screen.agent is not None and screen.timeline.timeline is not None,
            "the start-up",
        )
        return screen

    # --- acting ---------------------------------------------------------------------------------------
    async def type(self, text: str) -> None:
        """Put ``text`` in the prompt (focused), without sending it."""
        prompt = self.screen.prompt
        prompt.focus()
        prompt.text = text
        await wait_until(self.pilot, lambda: prompt.has_focus and prompt.text == text, "the prompt text")

    async def send(self, text: str) -> None:
        """Type ``text`` into the prompt and press Enter, as the user would."""
        await self.type(text)
        await self.pilot.press("enter")

    async def open_tree_on(self, target: str) -> None:
        """F2 opens the tree pane on the leaf (or focuses it if open); the cursor keys walk to ``target``."""
        screen = self.screen
        view = screen.tree_pane.view
        if not screen.tree_pane.display:
            await self.pilot.press("f2")
        else:
            view.focus()  # after a navigation the prompt has the focus
        await wait_until(self.pilot, lambda: view.has_focus and view.selector is not None, "the tree pane")
        assert view.selector is not None
        rows = [row.entry_id for row in view.selector.rows]
        step = "down" if rows.index(target) > rows.index(view.selected_id) else "up"
        while view.selected_id != target:
            await self.pilot.press(step)

    # --- waiting --------------------------------------------------------------------------------------
    def busy(self) -> bool:
        """The agent streams or compacts, or an agent worker has not finished."""
        agent = self.screen.agent
        running = any(w.group == "agent" and not w.is_finished for w in self.app.workers)
        return agent is None or agent.is_streaming or agent.is_compacting or running

    async def wait_idle(self, done: Callable[[], Any], what: str) -> None:
        """Until ``done`` holds and the agent is idle with its worker finished (every pane up to date)."""
        await wait_until(self.pilot, lambda: bool(done()) and not self.busy(), what)
        await self.pilot.pause()  # drain the message queues: the handlers of the last events have run

    async def wait_for_worker(self, group: str, state: WorkerState) -> Worker[Any]:
        """The first worker of ``group`` once it is in ``state``."""

        def found() -> Worker[Any] | None:
            return next((w for w in self.app.workers if w.group == group and w.state == state), None)

        worker: Worker[Any] = await wait_until(self.pilot, found, f"a {group} worker {state.name}")
        return worker

    async def wait_for_text(self, text: str) -> str:
        """Until ``text`` is on the screen; the screen's text."""
        return str(await wait_until(self.pilot, lambda: text in self.text() and self.text(), repr(text)))

    # --- reading --------------------------------------------------------------------------------------
    def text(self) -> str:
        """Every character the screen shows."""
        return rendered_text(self.app)

    def chat_texts(self) -> list[str]:
        """The chat's messages as their widgets show them, oldest first."""
        return [widget.copy_text() for widget in self.screen.chat.message_widgets]

    def status_text(self) -> str:
        """The status bar's line."""
        status = self.screen.status
        return "".join(status.render_line(y).text for y in range(status.size.height))

    def timeline_text(self) -> str:
        """The timeline's rows as the screen shows them."""
        region = self.screen.timeline.region
        strips = rendered_strips(self.app)
        return "\n".join(strips[y].crop(region.x, region.right).text for y in range(region.y, region.bottom))

    def assistant_texts(self) -> list[str]:
        """The text of every assistant message on the stored branch."""
        store = self.screen.agent.store if self.screen.agent else None
        if store is None:
            return []
        return [
            "".join(block.get("text", "") for block in e["message"]["content"] if block["type"] == "text")
            for e in store.get_branch()
            if e["type"] == "message" and e["message"]["role"] == "assistant"
        ]


async def dialog_shown(pilot: Any, app: Any) -> Any:
    """Until a ConfirmDialog is the active screen and has been drawn (it ignores keys from before that)."""
    from tui.screens.dialogs import ConfirmDialog

    def shown() -> Any:
        active = app.screen
        return active if isinstance(active, ConfirmDialog) and active.drawn_at is not None else None

    return await wait_until(pilot, shown, "the dialog drawn")
