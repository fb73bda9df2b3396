"""Work that would block the event loop, run on one worker thread at a time, of which only the latest counts.

:class:`LatestOnly` runs a job (a function of no arguments) on a Textual thread worker of its node and
hands the result to ``show`` on the event loop. A request made while a job runs waits for it; requests
made meanwhile replace each other, so a burst of appends costs one more job, not one per append, and a
result that a newer request has overtaken is dropped: only the latest one is shown. A failed job raises in
its worker (the node reports it: :mod:`widgets.worker_failures`), ``failed`` is called if it was the
latest, and the next request runs as usual.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from textual.dom import DOMNode

T = TypeVar("T")


class LatestOnly(Generic[T]):
    """One job at a time on a thread worker of ``node`` in ``group``; ``show`` gets the latest result."""

    def __init__(
        self, node: DOMNode, group: str, show: Callable[[T], None], failed: Callable[[], None] | None = None
    ) -> None:
        self._node, self._group, self._show, self._failed = node, group, show, failed
        self._waiting: Callable[[], T] | None = None
        self._running = False
        self._drop = False  # the running job's result is not wanted (cancelled)

    @property
    def busy(self) -> bool:
        """A job runs or waits: the result shown is not that of the latest request."""
        return (self._running and not self._drop) or self._waiting is not None

    def request(self, job: Callable[[], T]) -> None:
        """Run ``job`` once the running one (if any) ends; it replaces a job still waiting."""
        self._waiting = job
        if not self._running:
            self._start()

    def cancel(self) -> None:
        """Drop the waiting job and the running one's result (what they would show was shown otherwise)."""
        self._waiting = None
        self._drop = self._running

    def _start(self) -> None:
        job, self._waiting = self._waiting, None
        if job is None:
            return
        self._running = True
        self._node.run_worker(lambda: self._run(job), thread=True, group=self._group, exit_on_error=False)

    def _run(self, job: Callable[[], T]) -> None:
        app = self._node.app
        try:
            result = job()
        except BaseException:
            app.call_from_thread(self._done, None, False)
            raise
        app.call_from_thread(self._done, result, True)

    def _done(self, result: T | None, ok: bool) -> None:
        self._running = False
        dropped, self._drop = self._drop, False
        if self._waiting is not None:  # overtaken: the latest request runs now, this result is dropped
            self._start()
        elif ok and not dropped:
            self._show(result)  # type: ignore[arg-type]
        elif not dropped and self._failed is not None:
            self._failed()  # the latest job failed (its worker reports why): the node stops saying it is busy
