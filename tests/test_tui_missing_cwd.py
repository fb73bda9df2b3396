"""A session whose stored working directory is gone: the TUI says so and asks (pi 0.73.1), offline."""

from __future__ import annotations

from pathlib import Path

from textual import events

from tests import factories as f
from tests.app_e2e_helpers import isolated_home, make_app, settings_toml, submit, wait_until
from tests.pages import dialog_shown, rendered_text
from tui.launch import Launch, MissingSessionCwdError, missing_session_cwd, session_cwd
from tui.screens.dialogs import ConfirmDialog
from tui.screens.main import MainScreen
from tui.session.store import SessionStore

SIZE = (120, 40)


def orphaned_session(tmp_path: Path) -> tuple[Path, Path]:
    """A saved session whose header names a directory that was removed afterwards."""
    gone = tmp_path / "project-that-was"
    gone.mkdir()
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path, cwd=str(gone)) as store:
        store.append_message(f.user("hello")["message"])
        store.append_message(f.assistant("hi")["message"])
    gone.rmdir()
    return path, gone


def test_session_cwd_never_falls_back_silently(tmp_path: Path) -> None:
    path, gone = orphaned_session(tmp_path)
    with SessionStore.open(path, read_only=True) as store:
        assert missing_session_cwd(store) == str(gone)
        try:
            session_cwd(store)
        except MissingSessionCwdError as exc:
            assert str(gone) in str(exc) and str(path) in str(exc)
        else:
            raise AssertionError("a missing cwd must raise")
        assert session_cwd(store, tmp_path) == tmp_path  # only when the caller chose a fallback


def app_on(tmp_path: Path, monkeypatch, path: Path):
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(None))
    here = tmp_path / "here"
    here.mkdir()
    return make_app(home, Launch("open", path, here)), here


async def test_the_tui_asks_and_continues_in_the_current_directory(tmp_path, monkeypatch):
    path, gone = orphaned_session(tmp_path)
    app, here = app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        dialog = await dialog_shown(pilot, app)
        screen = app.main
        assert str(gone) in dialog._question and str(here) in dialog._question
        assert screen.prompt.disabled  # nothing runs anywhere until the user has answered
        await pilot.press("enter")  # "Continue here" has the focus
        await wait_until(pilot, lambda: not screen.prompt.disabled, "the prompt enabled")
        await wait_until(pilot, lambda: screen.agent is not None, "the start-up")
        assert screen.agent.workspace == here.resolve()
        assert any(str(here) in note[1] for note in app.notes)


async def test_cancel_at_start_quits_without_touching_the_file(tmp_path, monkeypatch):
    path, _ = orphaned_session(tmp_path)
    before = path.read_bytes()
    app, _ = app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await dialog_shown(pilot, app)
        await pilot.press("tab", "enter")  # to "Cancel", and press it
        await wait_until(pilot, lambda: app.return_code is not None, "the exit")
    assert path.read_bytes() == before


async def test_the_question_comes_with_the_first_frame_and_typing_never_answers_it(tmp_path, monkeypatch):
    """QA: the question came ~3 s after a 10k session's chat, over the prompt the user was typing into;
    the `n` of "can" answered Cancel and quit. Now it is asked before the agent starts, and letters and
    the keys typed before it was drawn do not answer it."""
    path, _ = orphaned_session(tmp_path)
    app, _ = app_on(tmp_path, monkeypatch, path)
    asked_first: list[bool] = []
    finish_start = MainScreen.finish_start

    async def observed(screen: MainScreen) -> None:
        asked_first.append(isinstance(screen.app.screen_stack[-1], ConfirmDialog))
        await finish_start(screen)

    monkeypatch.setattr(MainScreen, "finish_start", observed)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await wait_until(pilot, lambda: asked_first, "the start-up")
        assert asked_first == [True]  # on the stack before the settings, the agent and the timeline
        dialog = await dialog_shown(pilot, app)
        await pilot.press(*"can and yes no")
        assert app.screen is dialog and app.return_code is None
        assert app.main.prompt.text == "" and app.main.prompt.disabled


async def test_keys_from_before_a_dialog_was_drawn_do_not_answer_it(tmp_path, monkeypatch):
    """QA: a dialog pushed while a Markdown mount held the terminal (a batch) was laid out, but its frame
    was dropped and the chat stayed on screen while the dialog took the keys. It is shown when the batch
    ends, and a `y` sent before it was shown is dropped."""
    path, _ = orphaned_session(tmp_path)
    app, here = app_on(tmp_path, monkeypatch, path)
    path.write_text(path.read_text().replace(str(tmp_path / "project-that-was"), str(here)))  # no question
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await wait_until(pilot, lambda: app.main.agent is not None, "the start-up")
        answers: list[bool | None] = []
        dialog = ConfirmDialog("Sure?", yes="Yes", no="No")
        with app.batch_update():
            app.push_screen(dialog, answers.append)
            await wait_until(pilot, lambda: "Sure?" in rendered_text(app), "the dialog laid out")
            assert dialog.drawn_at is None  # its frame did not reach the terminal
            await pilot.press("y")
        assert answers == [] and app.screen is dialog
        await dialog_shown(pilot, app)  # a frame after the batch
        # A key typed before it came, queued for the chat underneath: it bubbles up to the app, whose
        # bindings are the dialog's by then (in tmux: "can" typed at start-up answered Cancel).
        stale = events.Key("y", "y")
        stale.time = dialog.drawn_at - 0.5
        stale._set_forwarded()  # as the app's forwarding to the screen then in front marks it
        app.main.post_message(stale)
        await wait_until(pilot, lambda: app.key_time == stale.time, "the stale key handled")
        assert answers == [] and app.screen is dialog
        await pilot.press("y")
        await wait_until(pilot, lambda: answers, "the answer")
        assert answers == [True]


async def test_another_stored_directory_is_asked_with_the_first_frame_and_the_answer_holds(
    tmp_path, monkeypatch
):
    """The session names another existing directory: asked before the agent exists; "Work there" moves
    the tools even when it is answered before the agent is made."""
    there = tmp_path / "there"
    there.mkdir()
    path = tmp_path / "s.jsonl"
    with SessionStore.create(path, cwd=str(there)) as store:
        store.append_message(f.user("hello")["message"])
    app, here = app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        dialog = await dialog_shown(pilot, app)
        assert str(there) in dialog._question and app.main.prompt.disabled
        await pilot.press("y")
        await wait_until(pilot, lambda: app.main.agent is not None, "the start-up")
        assert app.main.agent.workspace == there.resolve()
        assert not app.main.prompt.disabled
        first = app.main.agent
        await submit(pilot, "/new")  # a new session here: the old session's answer does not carry over
        await wait_until(pilot, lambda: app.main.agent is not first, "the new session")
        assert app.main.agent.workspace == here.resolve()
