"""A session whose stored working directory is gone: the TUI says so and asks (pi 0.73.1), offline."""

from __future__ import annotations

from pathlib import Path

from tests import factories as f
from tests.app_e2e_helpers import isolated_home, make_app, ready, settings_toml, wait_until
from tui.launch import Launch, MissingSessionCwdError, missing_session_cwd, session_cwd
from tui.screens.dialogs import ConfirmDialog
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
        screen = await ready(pilot, app)
        dialog = await wait_until(
            pilot, lambda: isinstance(app.screen, ConfirmDialog) and app.screen, "the question"
        )
        assert str(gone) in dialog._question and str(here) in dialog._question
        assert screen.prompt.disabled  # nothing runs anywhere until the user has answered
        await pilot.press("y")
        await wait_until(pilot, lambda: not screen.prompt.disabled, "the prompt enabled")
        assert screen.agent.workspace == here.resolve()
        assert any(str(here) in note[1] for note in app.notes)


async def test_cancel_at_start_quits_without_touching_the_file(tmp_path, monkeypatch):
    path, _ = orphaned_session(tmp_path)
    before = path.read_bytes()
    app, _ = app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await ready(pilot, app)
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the question")
        await pilot.press("n")
        await wait_until(pilot, lambda: app.return_code is not None, "the exit")
    assert path.read_bytes() == before
