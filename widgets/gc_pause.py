"""Hold off Python's cyclic garbage collector while a reply streams, and keep it off a loaded session.

A streaming reply mounts and replaces widgets many times a second; the collector's full passes over a
grown widget tree took 250–380 ms and landed in the stream as visible stalls. While a stream is open the
collector is paused (reference counting still frees almost everything at once); when the last open
stream closes it is resumed, and the garbage it owes is collected then, between replies. The app
holds it the same way from its start until its first frame (tui/app.py). :func:`freeze_loaded` takes what
is alive once a big session is loaded out of the collector's reach for good.
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


# Below this many entries a full pass over a session is short (tens of ms), and freezing is not worth
# what it costs: everything alive at the freeze stays out of the collector's reach, the chat's widgets too,
# and widgets hold cycles, so the ones a redraw or a session switch removes later are never freed.
FREEZE_FROM_ENTRIES = 20_000


def freeze_loaded(entries: int) -> bool:
    """For a session of ``entries`` or more, move everything alive now into the collector's permanent
    generation (``gc.freeze``). A loaded session's entries and tree index live as long as it is open, and
    the collector's full passes over them took 0.6 to 2.2 s at 100k entries, on whichever thread
    allocated at the time: a pass started by a timeline worker held the event loop as long. Reference
    counting still frees the session's data when it is closed (it holds no cycles); the chat widgets
    alive at the freeze are never freed (about a hundred per freeze: the price of a big session).
    Returns whether it froze."""
    if entries < FREEZE_FROM_ENTRIES:
        return False
    gc.freeze()
    return True
