"""A session switch frees the old chat's widgets (widgets/gc_pause.py freezes only a big session).

``gc.freeze`` keeps everything alive at the freeze out of the collector's reach, and widgets hold
cycles: freezing at every attach kept every old chat's widgets for good (review, session 18).
"""

from __future__ import annotations

import gc
import weakref

from tests.app_e2e_helpers import loopback_app, ready, wait_idle, wait_until
from tests.fake_openai import Reply, fake_openai_fixture  # noqa: F401
from tests.pages import MainPage
from widgets import gc_pause

SIZE = (120, 40)


async def test_the_old_chats_widgets_are_freed_after_a_session_switch(
    tmp_path, monkeypatch, fake_openai
) -> None:
    fake_openai.queue(Reply.text_reply("first answer"), Reply.text_reply("second answer"))
    from tui.agent.litellm_loader import load_litellm

    load_litellm()  # its one freeze, at import, is done before this test's widgets exist
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    frozen_before = gc.get_freeze_count()
    try:
        async with app.run_test(size=SIZE, notifications=False) as pilot:
            screen = await ready(pilot, app)
            page = MainPage(pilot)
            await page.send("first question")
            await wait_idle(pilot, app, lambda: len(screen.chat.message_widgets) >= 2, "the first reply")
            old = [weakref.ref(w) for w in screen.chat.message_widgets]
            current = screen.agent.store
            await page.send("/new")
            await wait_until(pilot, lambda: screen.agent.store is not current, "the new session")
            await page.send("second question")  # the new chat laid out: Textual drops its old arrangement
            await wait_idle(pilot, app, lambda: len(screen.chat.message_widgets) >= 2, "the second reply")
            await wait_until(
                pilot, lambda: (gc.collect(), all(r() is None for r in old))[1], "the widgets freed"
            )
            assert gc.get_freeze_count() <= frozen_before  # a small session froze nothing more
    finally:
        gc.unfreeze()


def test_only_a_big_session_is_frozen(monkeypatch) -> None:
    frozen: list[bool] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    assert not gc_pause.freeze_loaded(gc_pause.FREEZE_FROM_ENTRIES - 1) and frozen == []
    assert gc_pause.freeze_loaded(gc_pause.FREEZE_FROM_ENTRIES) and frozen == [True]
