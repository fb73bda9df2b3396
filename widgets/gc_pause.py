"""Hold off Python's cyclic garbage collector while a reply streams, and keep it off a loaded session.

A streaming reply mounts and replaces widgets many times a second; the collector's full passes over a
grown widget tree took 250–380 ms and landed in the stream as visible stalls. While a stream is open the
collector is paused (reference counting still frees almost everything at once); when the last open
stream closes it is resumed, and the garbage it owes is collected then, between replies. The app
holds it the same way from its start until its first frame (tui/app.py). :func:`freeze_loaded` takes what
is alive once a session is loaded out of the collector's reach for good.
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


def freeze_loaded() -> None:
    """Move everything alive now into the collector's permanent generation (``gc.freeze``). A loaded
    session's entries and tree index live as long as it is open, and the collector's full passes over
    them took 0.6 to 2.2 s at 100k entries, on whichever thread allocated at the time: a pass started by a
    timeline worker held the event loop as long. Reference counting still frees them when the session
    is closed (they hold no cycles)."""
    gc.freeze()
