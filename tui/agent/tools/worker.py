"""Running a tool's blocking file work off the event loop, in a thread that cannot keep the process alive.

``asyncio.to_thread`` uses the loop's default executor, whose threads ``asyncio.run`` and the interpreter
join at exit: a tool stuck in a read (a FIFO, a hung network mount) kept kompakt from quitting even after
the call was cancelled. :func:`in_thread` runs the function in a daemon thread instead; cancelling the
await abandons the thread, which dies with the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def in_thread(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` in a daemon thread; its result or exception comes back to the awaiting task."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():  # the caller was cancelled meanwhile
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def work() -> None:
        try:
            result = context.run(function, *args)
        except BaseException as exc:  # handed to the awaiting task, whatever it is
            error: BaseException | None = exc
            result = None
        else:
            error = None
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=work, name=f"tool:{getattr(function, '__name__', 'work')}", daemon=True).start()
    return await future
