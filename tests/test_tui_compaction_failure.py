"""pi 0.73.1 (delta A.7): an automatic compaction that fails is appended to the chat as a red line, not
only shown as a notification that fades; a manual one stays a notification (the caller gets the error).
Driven through the real app on the loopback server: the summary model rejects the key and
``compaction.onSummaryFailure = "abort"`` turns that into a failed compaction."""

from __future__ import annotations

from textual.color import Color

from tests.app_e2e_helpers import (
    isolated_home,
    main_screen,
    make_app,
    ready,
    settings_toml,
    wait_idle,
    wait_until,
)
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tui.launch import Launch
from widgets.chat_messages import ErrorLine

SIZE = (120, 40)


def failing_summary_app(tmp_path, monkeypatch, server: FakeOpenAI):
    home = isolated_home(tmp_path, monkeypatch)
    text = settings_toml(server, keep_recent_tokens=100)
    home.settings_file.write_text(
        text.replace("[compaction]\n", '[compaction]\nonSummaryFailure = "abort"\n')
    )
    # Both summary calls (the notes and the short summary run in parallel) are refused.
    server.route("Write handoff notes", Reply.unauthorized())
    server.route("at most three sentences", Reply.unauthorized())
    return make_app(home, Launch("new", cwd=tmp_path))


async def send(pilot, text: str) -> None:
    screen = main_screen(pilot.app)
    screen.prompt.focus()
    screen.prompt.text = text
    await pilot.press("enter")


async def test_an_automatic_compaction_failure_is_a_red_line_in_the_chat(
    tmp_path, monkeypatch, fake_openai
) -> None:
    # The second reply reports 20,000 prompt tokens: over the threshold (32,000 - 16,384).
    fake_openai.queue(
        Reply.text_reply("first answer " * 40), Reply.text_reply("second answer", usage=(20_000, 5))
    )
    app = failing_summary_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await send(pilot, "first question " * 40)
        await wait_idle(pilot, app, lambda: len(fake_openai.hits) == 1, "the first reply")
        await send(pilot, "second question")

        lines = await wait_until(pilot, lambda: list(screen.chat.query(ErrorLine)), "the red line")
        await wait_idle(pilot, app, lambda: True, "the turn")

        (line,) = lines
        assert line.copy_text().startswith("Auto-compaction failed: ")
        assert "compaction" not in {e["type"] for e in screen.agent.store.entries}
        # It is the chat's last message, below the reply that crossed the threshold, and it is red.
        assert screen.chat.message_widgets[-1] is line
        text = line.query_one(".message--error")
        assert text.styles.color == Color.parse(app.theme_variables["error"])
        assert line.styles.border_left[1] == Color.parse(app.theme_variables["error"])
        # Never stored: the session file has no trace of the line.
        assert "Auto-compaction failed" not in screen.agent.store.path.read_text()


async def test_a_failed_manual_compaction_stays_a_notification(tmp_path, monkeypatch, fake_openai) -> None:
    fake_openai.queue(Reply.text_reply("first answer " * 40), Reply.text_reply("second answer " * 40))
    app = failing_summary_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await send(pilot, "first question " * 40)
        await wait_idle(pilot, app, lambda: len(fake_openai.hits) == 1, "the first reply")
        await send(pilot, "second question " * 40)
        await wait_idle(pilot, app, lambda: len(fake_openai.hits) == 2, "the second reply")
        await send(pilot, "/compact")

        failed = await wait_until(
            pilot, lambda: [n for n in app.notes if n[1].startswith("Compaction failed")], "the failure"
        )
        await wait_idle(pilot, app, lambda: True, "the compaction")
        assert failed[0][2] == "error"
        assert not list(screen.chat.query(ErrorLine))
