"""The hook runner: plugin loading, order, result contracts and error isolation (pi §9)."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

import tui.hooks as hooks_module
from tui.hooks import HookError, HookRunner


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("kp_plugin_")]:
        del sys.modules[name]


def write_plugin(directory: Path, name: str, body: str) -> str:
    (directory / f"{name}.py").write_text(textwrap.dedent(body))
    return name


async def test_two_plugins_run_in_plugin_then_registration_order(plugin_dir: Path):
    order: list[str] = []
    for name in ("kp_plugin_one", "kp_plugin_two"):
        write_plugin(
            plugin_dir,
            name,
            f"""
            import asyncio
            ORDER = None

            def register(api):
                async def before(event):
                    await asyncio.sleep(0)
                    ORDER.append("{name}-before")

                api.on("session_before_compact", before)
                api.on("session_before_compact", lambda event: ORDER.append("{name}-after"))
            """,
        )
    runner = HookRunner(["kp_plugin_one", "kp_plugin_two"])
    for name in ("kp_plugin_one", "kp_plugin_two"):
        sys.modules[name].ORDER = order
    assert await runner.emit("session_before_compact", {}) is None
    assert order == [
        "kp_plugin_one-before",
        "kp_plugin_one-after",
        "kp_plugin_two-before",
        "kp_plugin_two-after",
    ]
    assert runner.errors == []


async def test_last_non_empty_result_wins_and_cancel_returns_at_once():
    runner = HookRunner()
    ran: list[str] = []
    runner.on("session_before_tree", lambda e: ran.append("a") or {"label": "first"})
    runner.on("session_before_tree", lambda e: ran.append("b") or {"label": "second"})
    runner.on("session_before_tree", lambda e: ran.append("c") or None)
    assert await runner.emit("session_before_tree", {}) == {"label": "second"}

    runner.on("session_before_tree", lambda e: {"cancel": True})
    runner.on("session_before_tree", lambda e: ran.append("never") or {"label": "late"})
    assert await runner.emit("session_before_tree", {}) == {"cancel": True}
    assert "never" not in ran


async def test_events_carry_their_type_and_payload_and_notifications_return_nothing():
    runner = HookRunner()
    seen = []
    runner.on("session_compact", lambda e: seen.append(e) or {"ignored": True})
    assert await runner.emit("session_compact", {"fromExtension": False}) is None
    assert seen == [{"type": "session_compact", "fromExtension": False}]


async def test_a_throwing_handler_is_reported_and_the_rest_still_run():
    reported: list[HookError] = []
    runner = HookRunner(on_error=reported.append)

    def broken(event):
        raise ValueError("bad hook")

    runner.on("session.compacting", broken)
    runner.on("session.compacting", lambda e: {"context": ["kept"]})
    assert await runner.emit("session.compacting", {}) == {"context": ["kept"]}
    assert reported == runner.errors and len(reported) == 1
    assert reported[0].event == "session.compacting" and "bad hook" in str(reported[0])


async def test_cancellation_is_not_swallowed_by_the_runner():
    runner = HookRunner()

    async def slow(event):
        await asyncio.Event().wait()

    runner.on("session_before_compact", slow)
    task = asyncio.create_task(runner.emit("session_before_compact", {}))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert runner.errors == []


def test_broken_plugins_are_reported_and_do_not_stop_loading(plugin_dir: Path):
    write_plugin(plugin_dir, "kp_plugin_raises", "def register(api):\n    raise RuntimeError('nope')\n")
    write_plugin(plugin_dir, "kp_plugin_ok", "def register(api):\n    api.on('session_tree', print)\n")
    runner = HookRunner(["kp_plugin_missing", "kp_plugin_raises", "kp_plugin_ok"])
    assert [e.plugin for e in runner.errors] == ["kp_plugin_missing", "kp_plugin_raises"]
    assert all(e.event is None for e in runner.errors)
    assert "loading kp_plugin_raises" in str(runner.errors[1])
    assert runner.has_handlers("session_tree")


def test_unknown_events_are_refused():
    with pytest.raises(ValueError, match="unknown hook event"):
        HookRunner().on("session_before_everything", print)


def test_entry_point_plugins_are_loaded(monkeypatch: pytest.MonkeyPatch):
    registered = []

    class FakePoint:
        name = "fake-plugin"

        def load(self):
            return lambda api: registered.append(api.plugin) or api.on("session_tree", print)

    def fake_entry_points(*, group):
        assert group == "kompakt.hooks"
        return [FakePoint()]

    monkeypatch.setattr(hooks_module, "entry_points", fake_entry_points)
    runner = HookRunner.from_settings([])
    assert registered == ["fake-plugin"] and runner.has_handlers("session_tree")
