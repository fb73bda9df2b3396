"""A long session's timeline and status figures are built off the event loop (issue 13 F, item 1).

Opening a 100k-entry session blocked the event loop for seconds while ``build_timeline`` ran on it (and
the status bar's context size and cost walked the session there too). Now a path longer than
``BUILD_WORKER_ENTRIES`` is built on a worker thread, the timeline says "Building the timeline…" meanwhile,
and of the requests made during a build only the latest is built and shown. The tests hold the build
(``build_timeline`` waits for an event, as a 100k-entry build takes seconds) on a generated session of a
few thousand entries, and check that keys are handled meanwhile; before, the held build held the whole
app, so the key came only after the build had ended.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tui.agent.session as agent_session
import tui.compaction.timeline as timeline_model
import widgets.timeline as timeline_widget
from bench.gen_session import generate
from tests.app_e2e_helpers import isolated_home, make_app, ready, settings_toml
from tests.pages import HANG_GUARD_S, rendered_text, until, wait_until
from tui.launch import Launch
from widgets.timeline import BUILDING_TEXT

SIZE = (120, 40)
_FILES: dict[str, Path] = {}


class Held:
    """Wraps a function so that its calls wait until :meth:`release` (each call is counted)."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.calls = 0
        self.entered = threading.Event()
        self.released = threading.Event()
        self.done = threading.Event()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        self.entered.set()
        self.released.wait(HANG_GUARD_S)
        try:
            return self.function(*args, **kwargs)
        finally:
            self.done.set()

    def release(self) -> None:
        self.released.set()


@pytest.fixture
def big_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated session of 3,000 entries (small outputs, so it loads fast): a long path for the timeline."""
    if "big" not in _FILES:
        folder = tmp_path_factory.mktemp("big-session")
        _FILES["big"] = generate(folder / "big.jsonl", entries=3_000, big_output_lines=2, cwd=str(folder))
    return _FILES["big"]


def _app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, session: Path):
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(None))
    return make_app(home, Launch("open", session, session.parent))


async def test_the_app_handles_keys_while_a_long_sessions_timeline_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, big_session: Path
) -> None:
    build = Held(timeline_model.build_timeline)
    count = Held(agent_session.context_size)
    monkeypatch.setattr(timeline_model, "build_timeline", build)
    monkeypatch.setattr(agent_session, "context_size", count)
    app = _app(tmp_path, monkeypatch, big_session)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        try:
            await wait_until(pilot, build.entered.is_set, "the timeline's build")
            await wait_until(pilot, count.entered.is_set, "the status bar's count")
            screen = app.main
            await pilot.press("h", "i")  # typed into the prompt while both are pending
            await until(pilot, lambda: screen.prompt.text == "hi")
            assert screen.prompt.text == "hi"
            await until(pilot, lambda: BUILDING_TEXT in rendered_text(app))
            assert BUILDING_TEXT in rendered_text(app) and screen.timeline.building
            assert not build.done.is_set() and not count.done.is_set()  # the keys did not wait for them
        finally:
            build.release()
            count.release()
        screen = await ready(pilot, app)
        await until(pilot, lambda: "threshold " in rendered_text(app) and BUILDING_TEXT not in rendered_text(app))
        text = rendered_text(app)
        assert "threshold " in text and BUILDING_TEXT not in text and not screen.timeline.building  # the bar's rows
        await until(pilot, lambda: screen.status.context_tokens is not None)
        assert screen.status.context_tokens == screen.agent.context_usage().tokens


async def test_requests_during_a_build_are_built_once_and_the_latest_is_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, big_session: Path
) -> None:
    app = _app(tmp_path, monkeypatch, big_session)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        build = Held(timeline_model.build_timeline)
        monkeypatch.setattr(timeline_model, "build_timeline", build)
        store = screen.agent.store
        try:
            screen.refresh_timeline()
            await wait_until(pilot, build.entered.is_set, "the held build")
            before = screen.timeline.timeline
            for text in ("one", "two", "three"):  # appends while it builds: each asks for a timeline
                store.append_message(
                    {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}
                )
                screen.refresh_timeline()
            assert screen.timeline.timeline is before  # the last one stays drawn meanwhile
        finally:
            build.release()
        await until(pilot, lambda: not screen.timeline.building)
        assert not screen.timeline.building
        assert build.calls == 2  # the held build and the latest request, not one per request
        timeline = screen.timeline.timeline
        assert timeline is not None and timeline.path_length == len(store.get_branch())


async def test_a_short_session_draws_its_timeline_in_the_frame_that_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = generate(tmp_path / "short.jsonl", entries=200, big_output_lines=2, cwd=str(tmp_path))
    app = _app(tmp_path, monkeypatch, session)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        before = screen.timeline.timeline
        screen.agent.store.append_message(
            {"role": "user", "content": [{"type": "text", "text": "x"}], "timestamp": 0}
        )
        screen.refresh_timeline()
        timeline = screen.timeline.timeline
        assert timeline is not before and not screen.timeline.building  # no building state, no flicker
        assert timeline is not None and timeline.path_length == len(screen.agent.store.get_branch())


async def test_opening_a_long_paths_panel_mid_reply_keeps_the_streamed_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, big_session: Path
) -> None:
    """The panel's figures come from a build of the same path: the reply still streaming stays on the bar."""
    monkeypatch.setattr(timeline_widget, "BUILD_WORKER_ENTRIES", 1_000)  # the session's path is longer
    app = _app(tmp_path, monkeypatch, big_session)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        timeline = screen.timeline
        await until(pilot, lambda: timeline.timeline is not None and not timeline.building)
        timeline.set_streaming_tokens(5_000)
        await until(pilot, lambda: "+5k streaming" in rendered_text(app))
        assert "+5k streaming" in rendered_text(app)
        build = Held(timeline_model.build_timeline)
        monkeypatch.setattr(timeline_model, "build_timeline", build)
        try:
            timeline.expanded = True  # a long path's panel asks a build for its chart and breakdown
            await wait_until(pilot, build.entered.is_set, "the figures build")
        finally:
            build.release()
        await until(pilot, lambda: not timeline.building and build.done.is_set())
        await until(pilot, lambda: timeline._samples is not None)
        assert timeline._samples is not None  # the figures came
        await until(pilot, lambda: "+5k streaming" in rendered_text(app))
        assert "+5k streaming" in rendered_text(app)  # before the fix the tail was dropped with them
