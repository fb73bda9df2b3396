"""Hold off Python's cyclic garbage collector while a reply streams.

A streaming reply mounts and replaces widgets many times a second; the collector's full passes over a
grown widget tree took 250–380 ms and landed in the stream as visible stalls. While a stream is open the
collector is paused (reference counting still frees almost everything at once); when the last open
stream closes it is resumed, and the garbage it owes is collected then, between replies. The app
holds it the same way from its start until its first frame (tui/app.py).
"""

from __future__ import annotations

import gc

_open = 0
_was_enabled = False


def pause() -> None:
    global _open, _was_enabled
    if _open == 0:
        _was_enabled = gc.isenabled()
        gc.disable()
    _open += 1


def resume() -> None:
    global _open
    if _open == 0:
        return
    _open -= 1
    if _open == 0 and _was_enabled:
        gc.enable()


def streams_open() -> int:
    return _open
