"""A widget's failed workers, passed on to its screen, which reports every failure in one place.

Textual posts ``Worker.StateChanged`` to the node that started the worker, and the message does not
bubble: the failure of a worker a widget runs (the session tree's row builds, the timeline's builds and
what-if plans) never reached ``MainScreen._worker_changed`` and was lost. A widget calls
:func:`pass_failure_on` from its own handler; the screen reports the group if it names it
(``MainScreen.WORKER_FAILURES``).
"""

from __future__ import annotations

from textual.widget import Widget
from textual.worker import Worker, WorkerState


def pass_failure_on(widget: Widget, event: Worker.StateChanged) -> None:
    """Post a failed worker's state change to ``widget``'s screen (other states stay with the widget)."""
    if event.state is WorkerState.ERROR and widget.is_attached:
        widget.screen.post_message(Worker.StateChanged(event.worker, event.state))
