"""Watch mode under a fast writer: a batch of new entries is one redraw, not one mount per entry.

Mounting 3,000 appended entries one by one left ``kompakt watch`` minutes behind the writer
(bench/watch_follow.py measures the lag); a batch now reloads the chat, which mounts about one screen.
"""

from __future__ import annotations

from tests import factories as f
from tests.app_e2e_helpers import isolated_home, make_app, message, new_session, ready, wait_until
from tui.launch import Launch


async def test_a_burst_of_appends_is_shown_with_one_screen_of_widgets(tmp_path, monkeypatch) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    writer, _ids = new_session(tmp_path, [("first question", "first answer")])
    app = make_app(home, Launch("watch", writer.path, tmp_path))
    try:
        async with app.run_test(size=(100, 30), notifications=False) as pilot:
            screen = await ready(pilot, app)
            mounts = 0
            original = screen.chat._append

            async def counted(item):  # every single-message mount goes through _append
                nonlocal mounts
                mounts += 1
                return await original(item)

            screen.chat._append = counted
            last = None
            for i in range(300):
                last = writer.append_message(message(f.user(f"burst {i}")))
            await wait_until(
                pilot,
                lambda: screen.chat.items and screen.chat.items[-1].entry_id == last["id"],
                "the last appended entry in the chat",
            )
            assert len(screen.chat.items) == 302
            assert mounts < 40 and len(screen.chat.message_widgets) < 60  # not 300 mounts
            assert "burst 299" in str(screen.chat.items[-1].message["content"])
    finally:
        writer.close()
