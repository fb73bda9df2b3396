"""The preview streams its summary into the inspector (issue 9, part 3): on the loopback OpenAI server.

``/compact --preview`` opens the inspector at once; the history summary's text appears as the model
writes it, before the reply has ended; Enter does nothing until the draft is whole; Esc cancels the
calls and writes nothing. When the reply ends, the inspector draws the draft, and Enter writes exactly
the summary shown, with no second model call.
"""

from __future__ import annotations

import json

from tests.app_e2e_helpers import ready, saved_session_app, screen_text, submit, wait_until
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tests.test_tui_uncompact import SIZE
from tui.screens.inspector import CompactionInspector
from tui.session.store import SessionStore

TURNS = [(f"question {n}", f"answer {n}") for n in range(6)]
HISTORY = "Write handoff notes"
SHORT = "at most three sentences"


def inspector(app) -> CompactionInspector | None:
    return app.screen if isinstance(app.screen, CompactionInspector) else None


def history_calls(server: FakeOpenAI) -> int:
    return sum(HISTORY in json.dumps(r["messages"]) for r in server.requests)


async def test_the_summary_streams_in_and_esc_cancels_the_calls(tmp_path, monkeypatch, fake_openai) -> None:
    # The notes stream their first words, then the server holds the rest until the client leaves.
    fake_openai.route(HISTORY, Reply.hang(text="## Goal\nPARTIAL NOTES still being written"))
    fake_openai.route(SHORT, Reply.text_reply("A short story."))
    app, _home, _ids = saved_session_app(
        tmp_path, monkeypatch, fake_openai, TURNS, chars=2000, keep_recent_tokens=1500
    )
    path = app.launch.path
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await ready(pilot, app)
        before = path.read_bytes()
        await submit(pilot, "/compact --preview")
        view = await wait_until(pilot, lambda: inspector(app), "the inspector, at once")
        assert view.generating and view.preview
        await wait_until(pilot, lambda: "PARTIAL NOTES" in screen_text(app), "the streamed words on screen")
        assert "PARTIAL NOTES still being written" in view.streamed_text
        assert "Summary" in view.streamed_text and "A short story." in view.streamed_text
        await pilot.press("enter")  # nothing to write yet
        assert inspector(app) is view and view.generating and path.read_bytes() == before
        await pilot.press("escape")
        await wait_until(pilot, lambda: inspector(app) is None, "the inspector closed")
        await wait_until(pilot, lambda: fake_openai.disconnects >= 1, "the held call cancelled")
        await wait_until(pilot, lambda: any("cancelled" in n[1] for n in app.notes), "the notice")
        assert path.read_bytes() == before


async def test_a_finished_stream_is_drawn_and_enter_writes_it_with_no_second_call(
    tmp_path, monkeypatch, fake_openai
) -> None:
    notes = "## Goal\n" + " ".join(f"word{n}" for n in range(120))
    fake_openai.route(HISTORY, Reply.text_reply(notes, chunk_size=16))
    fake_openai.route(SHORT, Reply.text_reply("A short story."))
    app, _home, _ids = saved_session_app(
        tmp_path, monkeypatch, fake_openai, TURNS, chars=2000, keep_recent_tokens=1500
    )
    path = app.launch.path
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        before = path.read_bytes()
        await submit(pilot, "/compact --preview")
        view = await wait_until(pilot, lambda: inspector(app), "the inspector")
        await wait_until(pilot, lambda: not view.generating, "the finished draft")
        assert notes in view.streamed_text  # every streamed piece arrived, in order
        shown = view.inspection.summary
        await wait_until(pilot, lambda: "Preview: not written" in screen_text(app), "the finished preview drawn")
        assert "word119" in shown and "Preview: not written" in screen_text(app)
        assert history_calls(fake_openai) == 1 and path.read_bytes() == before
        await pilot.press("enter")
        store = screen.agent.store
        await wait_until(pilot, lambda: store.get_branch()[-1]["type"] == "compaction", "the compaction")
        assert store.get_branch()[-1]["summary"] == shown
        assert history_calls(fake_openai) == 1  # Enter made no second call
    with SessionStore.open(path, read_only=True) as reopened:
        assert [e["summary"] for e in reopened.entries if e["type"] == "compaction"] == [shown]


async def test_a_retried_call_starts_its_streamed_text_again(tmp_path, monkeypatch, fake_openai) -> None:
    # The first attempt streams a few words and then the server drops the stream: the retry writes the
    # notes from the start, and the preview shows the retry's text only.
    fake_openai.route(
        HISTORY,
        Reply.disconnect("## Goal\nFIRST ATTEMPT words words", after_chunks=3),
        Reply.text_reply("## Goal\nSECOND ATTEMPT complete"),
    )
    fake_openai.route(SHORT, Reply.text_reply("A short story."))
    app, _home, _ids = saved_session_app(
        tmp_path, monkeypatch, fake_openai, TURNS, chars=2000, keep_recent_tokens=1500
    )
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await ready(pilot, app)
        await submit(pilot, "/compact --preview")
        view = await wait_until(pilot, lambda: inspector(app), "the inspector")
        await wait_until(pilot, lambda: not view.generating, "the finished draft")
        assert "SECOND ATTEMPT complete" in view.streamed_text
        assert "FIRST ATTEMPT" not in view.streamed_text
        assert "SECOND ATTEMPT" in view.inspection.summary
