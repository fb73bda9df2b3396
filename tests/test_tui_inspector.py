"""The compaction inspector and the preview in the TUI (offline: the deterministic summary), on real files."""

from __future__ import annotations

from textual.widgets import DataTable

from tests.app_e2e_helpers import offline_app_on, ready, screen_text, submit, wait_until
from tests.pages import MainPage
from tests.test_tui_uncompact import SIZE, compacted_session
from tui.compaction.inspect import inspect_compaction
from tui.screens.inspector import CompactionInspector, _tokens
from tui.session.store import SessionStore


def inspector(app) -> CompactionInspector | None:
    return app.screen if isinstance(app.screen, CompactionInspector) else None


def drawn(app) -> CompactionInspector | None:
    """The inspector once it shows a whole compaction (a preview opens while its summary is written)."""
    view = inspector(app)
    return view if view is not None and not view.generating else None


async def test_inspect_shows_the_three_parts_and_u_undoes(tmp_path, monkeypatch):
    path, names = compacted_session(tmp_path, later=False)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        store = screen.agent.store
        expected = inspect_compaction(store.get_branch(), names["compaction"])
        await submit(pilot, "/inspect")
        view = await wait_until(pilot, lambda: inspector(app), "the inspector")
        summarised = view.query_one("#inspector-summarised", DataTable)
        kept = view.query_one("#inspector-kept", DataTable)
        await wait_until(pilot, lambda: summarised.row_count == len(expected.summarised), "the rows")
        assert kept.row_count == len(expected.kept) > 0
        text = screen_text(app)
        assert f"Compaction {names['compaction']}" in text and "OLD TURNS WERE SUMMARISED" in text
        assert "600 (unknown)" in text  # a compaction written without kompakt's details
        # The kept column's title names its first entry (in its tooltip when the column is narrow).
        kept_title = list(view.query(".inspector-title"))[-1]
        assert f"Kept from ▼ {names['kept']}: {len(expected.kept)} messages · ≈" in str(kept_title.tooltip)
        # Each column's title is one row at 120 columns (they wrapped), its figures in view.
        for title in view.query(".inspector-title"):
            assert title.size.height == 1, title.render()
        shown = {cell.strip() for line in text.splitlines() for cell in line.split("│")}
        assert any(line.startswith(f"Kept: {len(expected.kept)} messages · ≈") for line in shown), text
        assert any(
            line.startswith(f"Summarised: {len(expected.summarised)} messages · ≈") for line in shown
        ), text
        await pilot.press("u")
        await wait_until(pilot, lambda: store.leaf_id == names["parent"], "the undo")
        assert inspector(app) is None


async def test_shift_i_on_a_tree_row_opens_the_inspector(tmp_path, monkeypatch):
    path, names = compacted_session(tmp_path, later=True)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f2")
        tree = screen.tree_pane.view
        await wait_until(pilot, lambda: tree.has_focus and tree.selector is not None, "the tree pane")
        while tree.selected_id != names["compaction"]:
            await pilot.press("up")
        await pilot.press("I")
        view = await wait_until(pilot, lambda: inspector(app), "the inspector")
        assert view.inspection.compaction_id == names["compaction"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: inspector(app) is None, "closed")
        assert screen.agent.store.leaf_id == names["later"]  # Esc changes nothing


async def test_preview_writes_nothing_until_enter_and_then_exactly_that_summary(tmp_path, monkeypatch):
    from tests.app_e2e_helpers import new_session

    store, _ids = new_session(tmp_path, [(f"question {i}", f"answer {i}") for i in range(6)], chars=12000)
    path = store.path
    store.close()
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        before = path.read_bytes()
        await submit(pilot, "/compact --preview keep the answers")
        view = await wait_until(pilot, lambda: drawn(app), f"the preview {app.notes}")
        assert view.preview and "Preview: not written" in screen_text(app)
        assert path.read_bytes() == before
        await pilot.press("escape")
        await wait_until(pilot, lambda: inspector(app) is None, "discarded")
        assert path.read_bytes() == before

        # From the what-if: p previews with its values, Enter writes that very draft.
        await pilot.press("f4")
        await wait_until(pilot, lambda: screen.timeline.has_focus, "the focused timeline")
        await pilot.press("minus", "minus")
        keep = screen.timeline.what_if_settings[0]
        await pilot.press("ctrl+g")
        view = await wait_until(pilot, lambda: drawn(app), "the preview from the what-if")
        shown = view.inspection.summary
        assert view.inspection.facts.keep_recent_tokens == keep
        assert path.read_bytes() == before
        await pilot.press("enter")
        store = screen.agent.store
        await wait_until(pilot, lambda: store.get_branch()[-1]["type"] == "compaction", "the compaction")
        entry = store.get_branch()[-1]
        assert entry["summary"] == shown and entry["details"]["kompakt"]["keepRecentTokens"] == keep
    with SessionStore.open(path, read_only=True) as reopened:
        assert [e["id"] for e in reopened.entries if e["type"] == "compaction"] == [entry["id"]]


async def test_enter_on_a_compaction_row_inspects_and_g_goes_there(tmp_path, monkeypatch):
    from tui.screens.dialogs import SummarizeBranchDialog

    path, names = compacted_session(tmp_path, later=False)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        store = screen.agent.store
        await submit(pilot, "/uncompact")
        await wait_until(pilot, lambda: store.leaf_id == names["parent"], "the undo")
        await pilot.press("f2")
        tree = screen.tree_pane.view
        await wait_until(pilot, lambda: tree.has_focus and tree.selector is not None, "the tree pane")
        while tree.selected_id != names["compaction"]:
            await pilot.press("down")
        await pilot.press("enter")
        view = await wait_until(pilot, lambda: inspector(app), "the inspector")
        assert view.inspection.compaction_id == names["compaction"] and store.leaf_id == names["parent"]
        await pilot.press("g")  # redo: an ordinary navigation to the compaction
        await wait_until(pilot, lambda: isinstance(app.screen, SummarizeBranchDialog), "the branch question")
        await pilot.press("enter")  # no summary
        await wait_until(pilot, lambda: store.leaf_id == names["compaction"], "the redo")
        assert store.build_context().messages[0]["role"] == "compactionSummary"


def test_the_header_names_who_wrote_the_summary():
    from tui.screens.inspector import _writer

    assert _writer("openai/gpt-4o", "model") == "model openai/gpt-4o"
    assert _writer(None, "fallback") == "deterministic summary (no model)"
    assert _writer(None, None) == "model unknown"


async def test_head_tails_protected_head_has_its_own_part_not_the_kept_column(tmp_path, monkeypatch):
    from tests.compaction_helpers import RecordingSummarizer, compaction_settings
    from tests.test_head_copy import _head, _turns
    from tui.compaction.engine import compact_session

    # The session's cwd is the launch directory, so no "work there instead?" question comes first.
    store = SessionStore.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    for entry in [*_head(), *_turns(12)]:
        store.append_message(entry["message"])
    head_ids = [e["id"] for e in store.get_branch()[:3]]
    result = await compact_session(
        store,
        reason="manual",
        settings=compaction_settings(strategy="head-tail", reserve=0),
        summarize=RecordingSummarizer(),
        context_window=20_000,
        max_output_tokens=4_000,
    )
    path = store.path
    store.close()
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        expected = inspect_compaction(screen.agent.store.get_branch(), result.entry["id"])
        await MainPage(pilot).send("/inspect")
        view = await wait_until(pilot, lambda: inspector(app), "the inspector")
        protected = view.query_one("#inspector-protected", DataTable)
        kept = view.query_one("#inspector-kept", DataTable)
        await wait_until(pilot, lambda: protected.row_count == len(head_ids), "the protected rows")
        assert kept.row_count == len(expected.kept) > 0
        titles = [str(w.render()) for w in view.query(".inspector-title, .inspector-note")]
        assert titles[:3] == [
            f"Protected head: 3 · ≈{_tokens(expected.protected_tokens)}",  # 3 messages: too wide
            "in the summary, not kept",
            f"Summarised: {len(expected.summarised)} messages · ≈{_tokens(expected.summarised_tokens)}",
        ]
        assert titles[-1].startswith(
            f"Kept: {len(expected.kept)} messages · ≈{_tokens(expected.kept_tokens)}"
        )
        await wait_until(pilot, lambda: "Protected head: 3 · ≈" in screen_text(app), "the titles drawn")
        protected_title = view.query_one("#inspector-protected-title")
        assert str(protected_title.tooltip).startswith("Protected head: 3 messages · ≈")
        # The head's first message is a row of the protected table, not of the kept one.
        kept_rows = [str(kept.get_row_at(i)[1]) for i in range(kept.row_count)]
        protected_rows = [str(protected.get_row_at(i)[1]) for i in range(protected.row_count)]
        assert any("Tune the settings" in row for row in protected_rows)
        assert not any("Tune the settings" in row for row in kept_rows)


async def test_a_long_streams_flushes_draw_only_the_new_text() -> None:
    """QA 9 G: each flush redrew the whole streamed text (0.2-0.85 s per flush at 15k characters under
    load). A 9k-character stream in 300 deltas, flushed after each: no flush draws more than SEAL_CHARS
    beyond its new text, and all of them together under a tenth of what a whole redraw per flush draws
    (~1.4M characters); what is on screen is still the whole text."""
    from textual.app import App

    from widgets.streamed_text import SEAL_CHARS, StreamedText

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(CompactionInspector(None, preview=True))

    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, CompactionInspector), "the inspector")
        view = app.screen
        assert isinstance(view, CompactionInspector)
        line = "- the loader keeps a torn line's bytes in a .corrupt file, 50\n"
        deltas = [line[:20], line[20:]] * 150
        for delta in deltas:
            view.stream("summary", delta)
            before = view.stream_rendered_chars
            view._flush_stream()
            # A flush draws at most the unsealed tail: bounded by SEAL_CHARS plus the new text.
            assert view.stream_rendered_chars - before <= SEAL_CHARS + len(delta)
        streamed = "".join(deltas)
        whole_redraws = sum(len("".join(deltas[: n + 1])) for n in range(len(deltas)))
        assert len(streamed) > 9_000 and view.stream_rendered_chars * 10 < whole_redraws
        part = view.query(StreamedText).first()
        assert len(part.pieces) > 3 and "\n".join(part.pieces) == streamed == part.text
        # A retry starts the part over: the sealed pieces go, the new text is all there is.
        view.stream("summary", None)
        view.stream("summary", "SECOND ATTEMPT")
        view._flush_stream()
        await wait_until(pilot, lambda: part.pieces == ["SECOND ATTEMPT"], "only the retried text")
        assert "FIRST" not in view.streamed_text and view.streamed_text.endswith("SECOND ATTEMPT")


def test_a_fitted_title_keeps_the_fullest_wording_that_fits() -> None:
    from widgets.fitted_title import FittedTitle

    title = FittedTitle(["Summarised: 8 messages · ≈59.3k", "Summarised 8 · ≈59.3k"])
    assert title.wording(40) == "Summarised: 8 messages · ≈59.3k"
    assert title.wording(31) == "Summarised: 8 messages · ≈59.3k"
    assert title.wording(30) == "Summarised 8 · ≈59.3k"
    assert title.wording(10) == "Summarised 8 · ≈59.3k"  # drawn cut with … (CSS text-overflow)
    assert str(title.tooltip) == "Summarised: 8 messages · ≈59.3k"


async def test_inspector_rows_are_drawn_at_their_width_before_the_table_measures_them(tmp_path, monkeypatch):
    """A DataTable measures new rows when it is idle; a frame drawn before that kept the header's widths
    (7 cells) for good, as the session picker did under load in CI. The widths are given, so the rows are
    whole even if that measuring never comes."""

    async def never_idle(self, event) -> None:
        return None

    monkeypatch.setattr(DataTable, "_on_idle", never_idle)
    path, _names = compacted_session(tmp_path, later=False)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await ready(pilot, app)
        await submit(pilot, "/inspect")
        view = await wait_until(pilot, lambda: drawn(app), "the inspector")
        summarised = view.query_one("#inspector-summarised", DataTable)
        await wait_until(pilot, lambda: summarised.row_count > 0, "the rows")
        await wait_until(pilot, lambda: "first question" in screen_text(app), "a whole first message")
