"""Issue 13 (F): D25 (tiny terminals keep the prompt), D26 (the session name in the title), D27 (a second
instance, read-only because of the lock, follows the writer).

Pilot tests of the real app on real session files in an isolated home; D27's writer is another process
that holds the session's lock. Each test waits for the condition it asserts.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import factories as f
from tests.app_e2e_helpers import (
    isolated_home,
    make_app,
    message,
    new_session,
    ready,
    screen_text,
    wait_until,
)
from tests.pages import rendered_text
from tui.app import terminal_title
from tui.launch import Launch

ROOT = Path(__file__).resolve().parent.parent


def inside(widget, height: int) -> bool:
    """The widget is shown whole, above the footer (the last row)."""
    region = widget.region
    return widget.display and region.height > 0 and region.y >= 0 and region.bottom <= height - 1


def prompt_shown(screen, height: int) -> bool:
    box = screen.prompt.parent
    return inside(box, height) and box.region.height >= 3 and screen.prompt.region.height >= 3


@pytest.mark.parametrize("launch_mode", ["demo", "new"])
async def test_the_prompt_stays_visible_at_tiny_sizes(tmp_path, monkeypatch, launch_mode: str) -> None:
    """D25: as the terminal shrinks the strip and the welcome go first, then the status bar; the prompt stays."""
    home = isolated_home(tmp_path, monkeypatch)
    app = make_app(home, Launch(launch_mode, cwd=tmp_path))
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        screen = await ready(pilot, app)
        timeline, status = screen.timeline, screen.status
        await wait_until(pilot, lambda: prompt_shown(screen, 30) and inside(timeline, 30), "the full screen")
        assert inside(status, 30)
        for width, height in [(80, 20), (80, 14), (60, 12), (40, 9), (40, 8), (30, 6), (30, 4), (20, 5)]:
            await pilot.resize_terminal(width, height)
            await wait_until(
                pilot, lambda h=height: prompt_shown(screen, h), f"the prompt at {width}×{height}"
            )
            assert not screen.query_one("#welcome").display  # below 24 rows
            if height < 14:
                await wait_until(pilot, lambda: not timeline.display, f"the strip hidden at {height} rows")
            if height < 9:
                await wait_until(pilot, lambda: not status.display, f"the status hidden at {height} rows")
            else:
                assert inside(status, height)
        await pilot.resize_terminal(100, 30)
        await wait_until(pilot, lambda: inside(timeline, 30) and inside(status, 30), "everything back")
        assert prompt_shown(screen, 30)


async def test_f4_shows_the_expanded_timeline_on_a_short_terminal(tmp_path, monkeypatch) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    app = make_app(home, Launch("demo", cwd=tmp_path))
    async with app.run_test(size=(70, 12), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await wait_until(pilot, lambda: not screen.timeline.display, "the strip hidden")
        await pilot.press("f4")
        await wait_until(
            pilot, lambda: screen.timeline.display and screen.timeline.has_focus, "the focused panel"
        )
        assert prompt_shown(screen, 12)
        for width, height in [(40, 8), (30, 6), (100, 16)]:  # the panel takes half the column at most
            await pilot.resize_terminal(width, height)
            await wait_until(pilot, lambda h=height: prompt_shown(screen, h), f"the prompt at {height} rows")
            assert screen.timeline.display
        await pilot.resize_terminal(70, 12)
        await pilot.press("f4")
        await wait_until(pilot, lambda: not screen.timeline.display, "the strip hidden again")
        assert app.focused is screen.prompt


async def test_the_session_name_shows_in_the_title_and_follows_name(tmp_path, monkeypatch) -> None:
    """D26: the terminal title (and the screen's subtitle) name the session; /name changes them at once."""
    home = isolated_home(tmp_path, monkeypatch)
    store, _ids = new_session(tmp_path, [("first question", "first answer")])
    path = store.path
    store.close()
    app = make_app(home, Launch("open", path, tmp_path))
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await wait_until(pilot, lambda: app.terminal_title == f"kompakt · {path.name}", "the file name")
        screen.prompt.text = "/name Loader rework"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.terminal_title == "kompakt · Loader rework", "the new name")
        assert screen.sub_title == "Loader rework"
        # On screen too, at the start of the status bar (a terminal may not show its title).
        await wait_until(
            pilot, lambda: status_line(app).startswith("Loader rework · "), "the name in the status"
        )
        screen.prompt.text = "/name  second\tname  "
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.terminal_title == "kompakt · second name", "the renamed title")
        await wait_until(
            pilot, lambda: status_line(app).startswith("second name · "), "the new name on screen"
        )
        screen.prompt.text = "/name " + "\x1b[31m" + "n" * 80
        await pilot.press("enter")
        await wait_until(pilot, lambda: status_line(app).startswith("n" * 31 + "… · "), "a long name, cut")
        assert "\x1b" not in status_line(app)


def status_line(app) -> str:
    """The status bar's row as the screen shows it, leading space trimmed."""
    status = app.screen.status
    return rendered_text(app).splitlines()[status.region.y].strip()


def test_a_hostile_session_name_cannot_reach_the_terminal_as_a_sequence() -> None:
    title = terminal_title("a\x1b]2;pwned\x07b\x9b31mc\u202ed\ne\r" + "x" * 500)
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F or c == "\u202e" for c in title)
    assert title.startswith("kompakt · ab") and "<U+202E>" in title
    assert len(title) <= 120 and title.endswith("…")


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from tui.session.store import SessionStore

    store = SessionStore.open(Path(sys.argv[1]))  # takes the lock: the app opens read-only
    print("locked", flush=True)
    for line in sys.stdin:
        entry = store.append_message(
            {"role": "user", "content": [{"type": "text", "text": line.strip()}], "timestamp": 1}
        )
        print(entry["id"], flush=True)
    store.close()
    """
)


async def test_a_second_instance_read_only_because_of_the_lock_follows_the_writer(
    tmp_path, monkeypatch
) -> None:
    """D27: the writer is another process holding the lock; what it appends appears, as in `watch`."""
    home = isolated_home(tmp_path, monkeypatch)
    store, _ids = new_session(tmp_path, [("first question", "first answer")])
    path = store.path
    store.close()
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert writer.stdin is not None and writer.stdout is not None
    try:
        assert writer.stdout.readline().strip() == "locked"
        app = make_app(home, Launch("open", path, tmp_path))
        async with app.run_test(size=(100, 30), notifications=False) as pilot:
            screen = await ready(pilot, app)
            assert app.session is not None and app.session.read_only and app.session.follow
            assert any("appear as they are written" in note for _title, note, _sev in app.notes)
            for text in ("written by the other kompakt", "and a second line"):
                writer.stdin.write(text + "\n")
                writer.stdin.flush()
                entry_id = writer.stdout.readline().strip()
                await wait_until(
                    pilot,
                    lambda e=entry_id: screen.chat.items and screen.chat.items[-1].entry_id == e,
                    f"the writer's entry {entry_id} in the chat",
                )
                await wait_until(pilot, lambda t=text: t in screen_text(app), "the text on screen")
            assert app.session.store.leaf_id == entry_id
    finally:
        writer.stdin.close()
        writer.wait(timeout=60)


async def test_a_session_locked_by_this_process_elsewhere_is_followed_after_a_switch(
    tmp_path, monkeypatch
) -> None:
    """D27 through F7/resume: switching to a session another writer holds follows it too."""
    home = isolated_home(tmp_path, monkeypatch)
    writer, _ids = new_session(tmp_path, [("first question", "first answer")])
    other, _ = new_session(tmp_path, [("another session", "its answer")])
    other.close()
    app = make_app(home, Launch("open", other.path, tmp_path))
    try:
        async with app.run_test(size=(100, 30), notifications=False) as pilot:
            screen = await ready(pilot, app)
            assert not app.session.follow
            assert await screen.switch_session(Launch("open", writer.path, tmp_path))
            assert app.session.read_only and app.session.follow
            last = writer.append_message(message(f.user("appended while followed")))
            await wait_until(
                pilot,
                lambda: screen.chat.items and screen.chat.items[-1].entry_id == last["id"],
                "the appended entry",
            )
    finally:
        writer.close()
