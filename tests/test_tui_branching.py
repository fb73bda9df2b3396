"""Session commands in the TUI: ``/fork``, ``/clone``, ``/export jsonl`` and ``/name`` (offline, real files)."""

from __future__ import annotations

from tests.app_e2e_helpers import (
    branched_session,
    offline_app_on,
    ready,
    submit,
    wait_until,
)
from tests.pages import until
from tui.screens.branch_actions import UserMessagePicker
from tui.session.store import SessionStore

SIZE = (120, 40)


async def test_slash_fork_opens_a_new_session_before_the_message_with_its_text_in_the_prompt(
    tmp_path, monkeypatch
):
    source, ids = branched_session(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, source)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await submit(pilot, "/fork")
        picker = await wait_until(
            pilot, lambda: isinstance(app.screen, UserMessagePicker) and app.screen, "the message list"
        )
        await until(pilot, lambda: picker.query_one("OptionList").highlighted == 2)
        assert picker.query_one("OptionList").highlighted == 2  # the latest user message: "new idea"
        await pilot.press("up", "enter")  # "old idea"
        await wait_until(pilot, lambda: screen.agent.store.path != source, "the forked session")
        store = screen.agent.store
        assert store.header["parentSession"] == str(source.resolve())
        assert [e["id"] for e in store.entries if e["type"] == "message"] == [ids["u1"], ids["a1"]]
        await wait_until(pilot, lambda: screen.prompt.text == "old idea", "the text in the prompt")
        assert any(note[0] == "Forked" for note in app.notes)
    with SessionStore.open(source, read_only=True) as original:  # the source is untouched
        assert original.leaf_id == ids["a3"]


async def test_slash_clone_duplicates_the_branch_and_export_jsonl_writes_it(tmp_path, monkeypatch):
    source, ids = branched_session(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, source)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await submit(pilot, "/export jsonl branch.jsonl")
        await wait_until(pilot, lambda: (tmp_path / "branch.jsonl").exists(), "the export")
        with SessionStore.open(tmp_path / "branch.jsonl", read_only=True) as exported:
            assert [e["id"] for e in exported.entries] == [ids["u1"], ids["a1"], ids["u3"], ids["a3"]]
        await submit(pilot, "/clone")
        await wait_until(pilot, lambda: screen.agent.store.path != source, "the cloned session")
        store = screen.agent.store
        assert store.path.parent == source.parent
        assert store.header["parentSession"] == str(source.resolve())
        assert store.leaf_id == ids["a3"]
        assert [e["id"] for e in store.get_branch()] == [ids["u1"], ids["a1"], ids["u3"], ids["a3"]]
        assert any(note[0] == "Cloned" for note in app.notes)


async def test_slash_name_sets_a_trimmed_title_and_alone_shows_it(tmp_path, monkeypatch):
    source, _ = branched_session(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, source)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await submit(pilot, "/name")
        await wait_until(pilot, lambda: any("Usage: /name" in n[1] for n in app.notes), "the usage")
        await submit(pilot, "/name   Parser work  ")
        await wait_until(pilot, lambda: screen.sub_title == "Parser work", "the title")
        assert screen.agent.store.entries[-1]["name"] == "Parser work"
        await submit(pilot, "/name")
        await wait_until(
            pilot, lambda: any(n[1] == "Session name: Parser work" for n in app.notes), "the name"
        )


async def test_slash_export_html_and_md_write_the_named_file(tmp_path, monkeypatch):
    """QA item 10: ``/export html FILE`` and ``/export md FILE`` write FILE (relative to the cwd), as help says."""
    source, _ = branched_session(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, source)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await ready(pilot, app)
        await submit(pilot, "/export html page.html")
        await wait_until(pilot, lambda: (tmp_path / "page.html").exists(), "the html export")
        assert "<html" in (tmp_path / "page.html").read_text().lower()
        target = tmp_path / "out" / "notes.md"
        await submit(pilot, f"/export md {target}")
        await wait_until(pilot, lambda: target.exists(), "the markdown export")
        assert not any("Usage" in note[1] for note in app.notes)


async def test_export_jsonl_writes_on_a_thread_not_on_the_event_loop(tmp_path, monkeypatch):
    """Review (session 18): /export jsonl wrote the branch (tens of MB for a long one) on the event loop."""
    import threading

    import tui.session.branching as branching

    threads: list[str] = []
    real = branching.export_branch_jsonl

    def recording(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(branching, "export_branch_jsonl", recording)
    source, ids = branched_session(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, source)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await ready(pilot, app)
        await submit(pilot, "/export jsonl branch.jsonl")
        await wait_until(pilot, lambda: any(n[0] == "Exported" for n in app.notes), "the export")
        assert threads and threading.main_thread().name not in threads
        with SessionStore.open(tmp_path / "branch.jsonl", read_only=True) as exported:
            assert [e["id"] for e in exported.entries] == [ids["u1"], ids["a1"], ids["u3"], ids["a3"]]
