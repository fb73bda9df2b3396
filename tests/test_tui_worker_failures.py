"""A widget's worker that fails is reported to the user, as the screen's own workers are.

Textual posts ``Worker.StateChanged`` to the node that started the worker and does not bubble it, so the
failures of the session tree's row builds and the timeline's what-if plans never reached
``MainScreen._worker_changed`` (review item (c)); their groups were not in ``WORKER_FAILURES`` either.
Each test makes one such worker raise and waits for the notice.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.app_e2e_helpers import isolated_home, make_app, new_session, ready, settings_toml
from tests.pages import HANG_GUARD_S, rendered_text, until, wait_until
from tui.launch import Launch
from tui.session.tree_view import TreeSelector
from widgets import timeline as timeline_module
from widgets.session_tree import SessionTreeView

SIZE = (120, 40)


def _failing(*_args: object, **_kwargs: object) -> None:
    raise RuntimeError("boom in the worker")


def _app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(None))
    store, _ids = new_session(tmp_path, [("first question", "first answer"), ("second", "reply")])
    store.close()
    return make_app(home, Launch("open", store.path, tmp_path))


async def _notice(pilot, app, title: str) -> tuple[str, str, str]:
    notes = await wait_until(pilot, lambda: [n for n in app.notes if n[0] == title], f"the notice {title!r}")
    return notes[0]


async def test_a_failed_tree_build_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SessionTreeView, "background_from", 1)  # rows built on a worker thread
    monkeypatch.setattr(TreeSelector, "build", _failing)
    app = _app(tmp_path, monkeypatch)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await ready(pilot, app)
        await pilot.press("f2")
        _title, text, severity = await _notice(pilot, app, "Building the session tree failed")
        assert severity == "error" and "RuntimeError: boom in the worker" in text


async def test_a_failed_what_if_plan_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timeline_module, "WORKER_ENTRIES", 0)  # the what-if is planned on a worker thread
    app = _app(tmp_path, monkeypatch)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        timeline = screen.timeline.timeline
        assert timeline is not None
        monkeypatch.setattr(type(timeline), "with_what_if", _failing)
        screen.timeline.focus()
        await pilot.press("plus")
        _title, text, severity = await _notice(pilot, app, "Planning the what-if failed")
        assert severity == "error" and "RuntimeError: boom in the worker" in text


async def test_a_failed_timeline_point_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.screens import timeline_actions

    async def failing(*_args: object) -> None:
        _failing()

    monkeypatch.setattr(timeline_actions, "show_pointed_entry", failing)
    app = _app(tmp_path, monkeypatch)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        screen.timeline.focus()
        await pilot.press("right")  # the first segment: the tree and the chat are asked to show it
        _title, text, severity = await _notice(pilot, app, "Showing the entry failed")
        assert severity == "error" and "RuntimeError: boom in the worker" in text


async def test_a_failed_timeline_build_is_reported_and_the_building_line_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tui.compaction.timeline as timeline_model

    released = threading.Event()

    def failing_later(*_args: object, **_kwargs: object) -> None:
        released.wait(HANG_GUARD_S)  # fails once the building line is on screen
        _failing()

    monkeypatch.setattr(timeline_module, "BUILD_WORKER_ENTRIES", 0)  # built on a worker thread
    monkeypatch.setattr(timeline_model, "build_timeline", failing_later)
    app = _app(tmp_path, monkeypatch)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        try:
            await wait_until(pilot, lambda: timeline_module.BUILDING_TEXT in rendered_text(app), "the line")
        finally:
            released.set()
        _title, text, severity = await _notice(pilot, app, "Building the timeline failed")
        assert severity == "error" and "RuntimeError: boom in the worker" in text
        # Not "Loading the session…" for good (review, session 18): the failure is said where the bar goes.
        await until(pilot, lambda: timeline_module.FAILED_TEXT in rendered_text(app))
        assert timeline_module.FAILED_TEXT in rendered_text(app)
        assert not app.main.timeline.building and timeline_module.BUILDING_TEXT not in rendered_text(app)
