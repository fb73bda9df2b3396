"""The chat's history view (the default) and context view (F9), on real session files, offline.

Core: :func:`tui.compaction.history.history_layout` folds exactly what each compaction summarised (the
inspector's ranges), states the divider's facts, and survives hostile ``details``. TUI (Pilot, the real
app): dividers, folds and the ▼ boundary; folded messages are not mounted until their fold opens, then a
chunk at a time, dimmed; Enter on a divider opens the inspector; F9 shows exactly the context's
messages and back; a /compact while watching redraws into the history view.
"""

from __future__ import annotations

from pathlib import Path

from tests import factories as f
from tests.app_e2e_helpers import (
    isolated_home,
    make_app,
    new_session,
    offline_app_on,
    ready,
    screen_text,
    settings_toml,
    wait_idle,
    wait_until,
)
from tests.pages import screen_settled, wait_until_drawn
from tui.compaction.history import divider_text, history_layout
from tui.compaction.inspect import inspect_compaction
from tui.launch import Launch
from tui.screens.inspector import CompactionInspector
from tui.session.display import displayed_entries
from tui.session.store import SessionStore
from widgets.chat_history import (
    BoundaryLine,
    CompactionDivider,
    CompactionMark,
    FoldRow,
    MoreRow,
    history_items,
)
from widgets.chat_messages import MessageHeader

SIZE = (120, 40)


def message(payload: dict) -> dict:
    return payload["message"]


def two_compactions(tmp_path: Path, turns: int = 4) -> tuple[Path, dict[str, str]]:
    """``turns`` turns, a compaction keeping the last turn, ``turns`` more, a second one keeping its last
    turn (with kompakt's details), and one turn after it; the file closed, ids by name."""
    store, ids = new_session(
        tmp_path, [(f"old question {i}", f"old answer {i}") for i in range(turns)], chars=200
    )
    first = store.append_compaction("FIRST SUMMARY", ids[-2], 5000)
    more = []
    for i in range(turns):
        more.append(store.append_message(message(f.user(f"middle question {i}")))["id"])
        more.append(store.append_message(message(f.assistant(f"middle answer {i}")))["id"])
    details = {"kompakt": {"reason": "threshold", "durationMs": 8400, "tokensAfter": 1800}}
    second = store.append_compaction("SECOND SUMMARY", more[-2], 90_300, details)
    after = store.append_message(message(f.user("after both compactions")))["id"]
    names = {
        "first": first["id"],
        "second": second["id"],
        "first_kept": ids[-2],
        "second_kept": more[-2],
        "oldest": ids[0],
        "after": after,
    }
    path = store.path
    store.close()
    return path, names


def mounted_ids(screen) -> list[str | None]:
    return [w.entry_id for w in screen.chat.message_widgets]


# --- the core ------------------------------------------------------------------------------------


def test_the_folds_are_what_each_compaction_summarised_and_the_divider_says_what_happened(tmp_path):
    path, names = two_compactions(tmp_path)
    store = SessionStore.open(path)
    branch = store.get_branch()
    layout = history_layout(branch)
    assert [fold.compaction_id for fold in layout.folds] == [names["first"], names["second"]]
    for fold in layout.folds:
        inspected = inspect_compaction(branch, fold.compaction_id)
        folded = [e["id"] for e in branch[fold.start : fold.end] if e.get("type") == "message"]
        assert folded == [m.entry_id for m in inspected.summarised]
        assert fold.messages == len(inspected.summarised)
    first, second = layout.folds
    assert first.end <= second.start  # disjoint, in order: the second starts at the first's kept entry
    assert branch[second.start]["id"] == names["first_kept"]
    assert layout.latest is second and branch[second.kept_from]["id"] == names["second_kept"]
    assert divider_text(second) == "compacted 8 messages · 90.3k → 1.8k tokens · threshold · 8.4 s"
    # pi's entries carry no details: the facts it lacks are left out, tokens after are estimated.
    assert divider_text(first).startswith("compacted 6 messages · 5.0k → ")
    assert "threshold" not in divider_text(first) and " s" not in divider_text(first)[-3:]
    store.close()


def test_a_folds_messages_are_built_only_when_asked_for_and_are_the_summarised_run(tmp_path):
    """Most of a long session is folded: the history view builds a fold's items when it is opened (or
    searched), not with the view, and then they are the summarised run, dimmed, in path order."""
    path, names = two_compactions(tmp_path)
    store = SessionStore.open(path)
    branch = store.get_branch()
    items = history_items(branch)
    states = [i.row.state for i in items if i.row is not None and i.row.kind == "fold"]
    assert len(states) == 2 and all(s is not None and s._items is None for s in states)
    shown = [i.entry_id for i in items if i.row is None]
    assert names["oldest"] not in shown and shown[-1] == names["after"]
    first = states[0]
    assert first is not None
    folded = [i for i in first.items if i.row is None]
    fold = history_layout(branch).folds[0]
    expected = [e["id"] for e in branch[fold.start : fold.end] if e["type"] == "message"]
    assert [i.entry_id for i in folded] == expected and expected[0] == names["oldest"]
    assert all(i.summarised for i in folded)
    assert states[1] is not None and states[1]._items is None  # the other one is still not built
    store.close()


def test_hostile_details_and_a_missing_kept_entry_give_a_plain_divider(tmp_path):
    """What load lets through (types are checked there) must not break the history view: negative and
    huge figures, a head-tail middle naming no entry here, a firstKeptEntryId that is nowhere or after it."""
    store, _ids = new_session(tmp_path, [("q1", "a1"), ("q2", "a2")])
    bad = {
        "kompakt": {
            "reason": "",
            "durationMs": -5,
            "tokensAfter": 1e300,
            "strategy": "head-tail",
            "middleEntryIds": ["nowhere", "elsewhere"],
        }
    }
    first = store.append_compaction("S", "no-such-id", -3, bad)
    store.append_compaction("T", first["id"], 1200, {"kompakt": {"reason": "[bold]x\x1b[31m"}})
    store.append_compaction("U", first["id"], 1200, {"kompakt": {"reason": "line\nbreak " * 5000}})
    store.close()
    store = SessionStore.open(store.path)  # as loaded from the file
    assert not store.problems
    branch = store.get_branch()
    one, two, three = history_layout(branch).folds
    assert "\n" not in divider_text(three) and len(divider_text(three)) < 120  # one short line
    assert one.start == one.end == one.index and one.messages == 0  # its middle is not on this path
    assert one.reason is None and one.duration_ms is None and one.tokens_before == 0
    assert one.tokens_after > 0  # estimated: 1e300 is no count
    # Its firstKeptEntryId is the compaction before it, outside its range: nothing summarised, no overlap.
    assert two.start == two.end >= one.end and two.messages == 0
    assert divider_text(two).startswith("compacted 0 messages · 1.2k → ")
    items = history_items(branch)
    assert [i.row.kind for i in items if i.row is not None].count("divider") == 3
    divider = CompactionDivider(
        next(i.row for i in items if i.row is not None and i.entry_id == two.compaction_id)
    )
    assert "\x1b" not in divider.title().plain and "[bold]x" in divider.title().plain  # literal, sanitised
    store.close()


# --- the TUI -------------------------------------------------------------------------------------


async def test_the_history_view_folds_each_compaction_behind_its_divider_and_marks_the_kept_region(
    tmp_path, monkeypatch
):
    path, names = two_compactions(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        chat = screen.chat
        await wait_until(pilot, lambda: chat.first_loaded == 0 and chat.message_widgets, "the whole chat")
        widgets = chat.message_widgets
        dividers = [w for w in widgets if isinstance(w, CompactionDivider)]
        assert [d.entry_id for d in dividers] == [names["first"], names["second"]]
        text = screen_text(app)
        assert "compacted 8 messages · 90.3k → 1.8k tokens · threshold · 8.4 s" in text
        assert f"▼ kept from here (firstKeptEntryId {names['second_kept']})" in text
        boundary = next(i for i, w in enumerate(widgets) if isinstance(w, BoundaryLine))
        assert widgets[boundary + 1].entry_id == names["second_kept"]
        # Nothing summarised is mounted: the oldest message and the first kept one are folded.
        ids = mounted_ids(screen)
        assert names["oldest"] not in ids and names["first_kept"] not in ids
        assert ids[-1] == names["after"]

        # Enter (or a click) on the fold shows the summarised messages, dimmed; again folds them.
        fold = next(w for w in chat.message_widgets if isinstance(w, FoldRow))
        fold.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: names["oldest"] in mounted_ids(screen), "the first fold open")
        oldest = next(w for w in chat.message_widgets if w.entry_id == names["oldest"])
        assert oldest.has_class("-summarised")
        assert "summarised messages, dimmed below" in str(fold.text())
        await pilot.press("enter")
        await wait_until(pilot, lambda: names["oldest"] not in mounted_ids(screen), "folded again")
        # A click works the same.
        await wait_until_drawn(pilot, fold)
        await pilot.click(fold)
        await wait_until(pilot, lambda: names["oldest"] in mounted_ids(screen), "opened by a click")
        # A redraw of the whole path (a navigation, a compaction, a reply elsewhere) keeps it open.
        await screen.draw_chat()
        while chat.first_loaded > 0:
            await chat.load_earlier()
        assert names["oldest"] in mounted_ids(screen)
        reopened = next(w for w in chat.message_widgets if isinstance(w, FoldRow))
        assert reopened is not fold and reopened.state.expanded and "dimmed below" in reopened.text()


async def test_a_long_fold_mounts_a_chunk_at_a_time(tmp_path, monkeypatch):
    store, ids = new_session(tmp_path, [(f"q{i}", f"a{i}") for i in range(150)])
    store.append_compaction("LONG SUMMARY", ids[-2], 50_000)
    path = store.path
    store.close()
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        chat = screen.chat
        await wait_until(pilot, lambda: chat.first_loaded == 0 and chat.message_widgets, "the chat")
        assert len(chat.message_widgets) < 10  # 298 summarised messages, none mounted
        fold = next(w for w in chat.message_widgets if isinstance(w, FoldRow))
        await wait_until_drawn(pilot, fold)
        await pilot.click(fold)
        more = await wait_until(
            pilot, lambda: next((w for w in chat.message_widgets if isinstance(w, MoreRow)), None), "a chunk"
        )
        first_chunk = len(chat.message_widgets)
        assert first_chunk <= 10 + chat.BACKFILL_ITEMS
        assert f"{298 - chat.BACKFILL_ITEMS:,} more summarised messages" in more.text()
        more.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(chat.message_widgets) > first_chunk, "the next chunk")
        # The chunks come in path order, right below the fold.
        shown = [w.entry_id for w in chat.message_widgets if w.has_class("-summarised")]
        assert shown == ids[: len(shown)]
        fold.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(chat.message_widgets) < 10, "folded, the more row gone too")
        assert not any(isinstance(w, MoreRow) for w in chat.message_widgets)


async def test_enter_on_a_divider_opens_the_inspector_on_that_compaction(tmp_path, monkeypatch):
    path, names = two_compactions(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        chat = screen.chat
        await wait_until(pilot, lambda: chat.first_loaded == 0 and chat.message_widgets, "the chat")
        divider = next(w for w in chat.message_widgets if w.entry_id == names["first"])
        divider.focus()
        await pilot.press("enter")
        view = await wait_until(
            pilot,
            lambda: app.screen if isinstance(app.screen, CompactionInspector) else None,
            "the inspector",
        )
        assert view.inspection.compaction_id == names["first"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "back")
        # The divider's "inspect" word does the same with a click.
        latest = next(w for w in chat.message_widgets if w.entry_id == names["second"])
        chat.scroll_to_widget(latest, top=True, animate=False, immediate=True)
        header = latest.query_one(MessageHeader)
        await wait_until_drawn(pilot, header)
        await pilot.click(header, offset=header.word_offset("inspect"))
        view = await wait_until(
            pilot, lambda: app.screen if isinstance(app.screen, CompactionInspector) else None, "by a click"
        )
        assert view.inspection.compaction_id == names["second"]


async def test_f9_shows_exactly_the_context_and_back(tmp_path, monkeypatch):
    path, names = two_compactions(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        chat = screen.chat
        await wait_until(pilot, lambda: chat.first_loaded == 0 and chat.message_widgets, "the chat")
        assert chat.view == "history"
        # F1 help lists the key (remappable by its id) and says what the two views are; so does the footer.
        from tui.screens.help import help_markdown

        helped = help_markdown(screen)
        assert "| `f9` | View | `main.toggle_chat_view` |" in helped and "the context view" in helped
        await wait_until(pilot, lambda: "f9 View" in screen_text(app), "the key in the footer")
        await pilot.press("f9")
        store = app.session.store
        context = [e["id"] for e in displayed_entries(store)]
        await wait_until(pilot, lambda: mounted_ids(screen) == context, "the context view")
        assert not any(
            isinstance(w, (CompactionDivider, FoldRow, BoundaryLine)) for w in chat.message_widgets
        )
        assert "Compacted from" in screen_text(app)  # the summary message, as the model gets it
        await pilot.press("f9")
        await wait_until(
            pilot,
            lambda: any(isinstance(w, CompactionDivider) for w in chat.message_widgets),
            "the history view again",
        )
        assert chat.view == "history" and mounted_ids(screen)[-1] == names["after"]


async def test_a_compaction_while_watching_redraws_into_the_history_view(tmp_path, monkeypatch):
    store, ids = new_session(tmp_path, [(f"question {i}", f"answer {i}") for i in range(6)], chars=4000)
    path = store.path
    store.close()
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(None, keep_recent_tokens=1500))
    app = make_app(home, Launch("open", path, tmp_path))
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        chat = screen.chat
        await wait_until(pilot, lambda: chat.message_widgets, "the chat")
        assert not any(isinstance(w, CompactionDivider) for w in chat.message_widgets)
        screen.prompt.focus()
        screen.prompt.text = "/compact"
        await pilot.press("enter")
        live = app.session.store
        await wait_idle(
            pilot, app, lambda: any(e["type"] == "compaction" for e in live.get_branch()), "compacted"
        )
        compaction = next(e for e in live.get_branch() if e["type"] == "compaction")
        await wait_until(pilot, lambda: any(i.entry_id == compaction["id"] for i in chat.items), "the redraw")
        while chat.first_loaded > 0:  # long messages: the window holds a few; scrolling up loads the rest
            await chat.load_earlier()
        divider = next(w for w in chat.message_widgets if isinstance(w, CompactionDivider))
        assert divider.entry_id == compaction["id"]
        ids_now = mounted_ids(screen)
        assert ids[0] not in ids_now  # the summarised turns are folded
        boundary = next(i for i, w in enumerate(chat.message_widgets) if isinstance(w, BoundaryLine))
        assert chat.message_widgets[boundary + 1].entry_id == compaction["firstKeptEntryId"]
        kept = ids[ids.index(compaction["firstKeptEntryId"]) :]
        assert ids_now[boundary + 1 : -1] == kept  # the kept turns follow, in order
        assert isinstance(chat.message_widgets[-1], CompactionMark)  # where the compaction was written


def compacted_path(turns: int) -> list[dict]:
    """A path of ``turns`` turns and a compaction keeping the last turn (entries with ids, not stored)."""
    entries = []
    for n in range(turns):
        entries += [f.user(f"question {n}"), f.assistant(f"answer {n}")]
    chained = f.chain(entries)
    compaction = {
        "type": "compaction",
        "summary": "S",
        "firstKeptEntryId": chained[-2]["id"],
        "tokensBefore": 900,
    }
    return f.chain([*chained, compaction])


async def test_a_reply_streaming_through_a_history_redraw_and_a_fold_opening_keeps_its_tool_results():
    """A compaction's redraw (history view) while a reply streams keeps the reply below the path; opening a
    fold above it moves it down the item list, and its tool call's result still reaches its widget."""
    from tests.test_tui_chat import ChatHost, settle
    from widgets.chat_messages import AssistantMessage, ToolCallView

    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.pane
        path = compacted_path(3)
        await pane.load_history(path[:-1])
        stream = pane.begin_assistant()
        await stream.append_text("working")
        await stream.tool_call_started("t1", "read")
        await pane.load_history(path)  # the compaction's redraw, mid-stream
        fold = next(w for w in pane.message_widgets if isinstance(w, FoldRow))
        await pane.toggle_fold(fold.state)  # the summarised turns mount above the reply
        await settle(pilot)
        assert pane.message_widgets[-1] is stream.widget and stream.widget.is_attached
        await pane.add_tool_result(f.tool_result("t1", "read", "the contents")["message"])
        view = stream.widget.query_one(ToolCallView)
        assert view.result is not None and not view.has_class("-running")
        assert not any(w.__class__.__name__ == "ToolResultMessage" for w in pane.message_widgets)
        await stream.finish(f.assistant("working", tool_calls=[f.tool_call("read", {}, "t1")])["message"])
        await settle(pilot)
        assert isinstance(pane.message_widgets[-1], AssistantMessage)
        assert "working" in stream.widget.copy_text()


async def test_a_redraw_while_a_fold_opens_leaves_no_stray_widget():
    """Opening a fold and a redraw of the path run in different handlers and interleave at their awaits:
    whichever finishes last, the pane's children are exactly the messages it lists."""
    import asyncio

    from tests.test_tui_chat import ChatHost, settle

    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.pane
        path = compacted_path(20)
        for redraw_first in (False, True):
            await pane.load_history(path)
            fold = next(w for w in pane.message_widgets if isinstance(w, FoldRow))
            state = fold.state
            steps = [pane.toggle_fold(state), pane.load_history(path)]
            await asyncio.gather(*(reversed(steps) if redraw_first else steps))
            await settle(pilot)
            shown = [child for child in pane.children if child is not pane._bar]
            assert shown == pane.message_widgets
            assert len(pane.items) - pane.first_loaded == len(pane.message_widgets)


def two_folds_far_up() -> list[dict]:
    """13 turns folded by a first compaction, 37 by a second, then 75 turns kept (far below the folds)."""
    entries: list[dict] = []

    def turns(first: int, last: int) -> None:
        for n in range(first, last):
            entries.extend([f.user(f"question {n}"), f.assistant(f"answer {n}")])

    turns(0, 15)
    entries.append(f.compaction("FIRST SUMMARY", 26, 900))  # keeps from question 13
    turns(15, 100)
    entries.append(f.compaction("SECOND SUMMARY", 101, 900))  # keeps from question 50
    turns(100, 125)
    return f.chain(entries)


async def test_a_fold_opened_among_the_newer_messages_a_far_jump_hides_stays_open_through_a_redraw():
    """A far jump's window holds the older items and the newer ones wait aside: a redraw of the history
    view reopens every fold the user opened, those among the hidden newer messages too."""
    from tests.test_tui_chat import ChatHost

    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.pane
        path = two_folds_far_up()
        by_text = {str(e["message"]["content"]): e["id"] for e in path if e["type"] == "message"}
        await pane.load_history(path)
        assert await pane.scroll_to_entry(by_text["question 16"])  # opens the second fold, far up
        assert await pane.scroll_to_entry(by_text["question 0"])  # and the first one
        await pane.load_history(path)  # a redraw: both stay open, the latest messages shown
        assert await pane.scroll_to_entry(by_text["question 0"])  # a far jump to the first fold
        await screen_settled(pilot)
        shown = {w.entry_id for w in pane.message_widgets}
        assert pane.jumped and by_text["question 0"] in shown and by_text["question 16"] not in shown
        await pane.load_history(path)  # a redraw (a reply, a navigation) with the second fold hidden
        folds = [item for item in pane.items if item.row is not None and item.row.kind == "fold"]
        assert [fold.row.state.expanded for fold in folds if fold.row and fold.row.state] == [True, True]
        assert pane.shows_entry(by_text["question 16"])


def test_a_head_tail_compaction_folds_its_middle_and_leaves_a_pinned_message_undimmed(tmp_path):
    """Head-tail keeps the head and tail (and pinned messages) and summarises the middle it recorded:
    the fold runs over the middle, its count is the inspector's, and a pinned message inside is kept."""
    store, ids = new_session(tmp_path, [(f"q{i}", f"a{i}") for i in range(6)])
    head, middle, pinned = ids[:2], [*ids[2:5], *ids[6:9]], ids[5]
    details = {
        "kompakt": {
            "strategy": "head-tail",
            "headEntryIds": head,
            "pinnedEntryIds": [pinned],
            "middleEntryIds": middle,
        }
    }
    store.append_compaction("HEAD-TAIL SUMMARY", ids[9], 4000, details)
    store.close()
    store = SessionStore.open(store.path)
    branch = store.get_branch()
    (fold,) = history_layout(branch).folds
    assert [e["id"] for e in branch[fold.start : fold.end]] == ids[2:9]
    assert fold.messages == len(inspect_compaction(branch, fold.compaction_id).summarised) == 6
    items = history_items(branch)
    state = next(i.row.state for i in items if i.row is not None and i.row.kind == "fold")
    assert {i.entry_id: i.summarised for i in state.items} == {
        **dict.fromkeys(middle, True),
        pinned: False,
    }
    shown = [i.entry_id for i in items if i.row is None]
    assert shown[:2] == head and shown[2:] == ids[9:]  # the head and the tail stay, undimmed
    store.close()


async def test_f9_pressed_eleven_times_in_a_row_ends_in_the_context_view_drawn_once(tmp_path, monkeypatch):
    path, _names = two_compactions(tmp_path)
    app = offline_app_on(tmp_path, monkeypatch, path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        chat = screen.chat
        await wait_until(pilot, lambda: chat.message_widgets, "the chat")
        await pilot.press(*["f9"] * 11)
        context = [e["id"] for e in displayed_entries(app.session.store)]
        await wait_until(pilot, lambda: chat.view == "context" and mounted_ids(screen) == context, "context")
        shown = [child for child in chat.children if child is not chat._bar]
        assert shown == chat.message_widgets  # no widget of an earlier view left behind


async def test_f9_on_a_new_empty_session_keeps_the_welcome(tmp_path, monkeypatch):
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(None))
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f9")
        await wait_until(pilot, lambda: screen.chat.view == "context", "the context view")
        await pilot.press("f9")
        await wait_until(pilot, lambda: screen.chat.view == "history", "the history view")
        assert screen.chat.message_widgets == [] and "a conversation that is a tree" in screen_text(app)


def test_hostile_figures_read_the_same_in_the_divider_the_timeline_the_inspector_and_the_context_card(
    tmp_path,
):
    """A writer's negative or absurd figures (tokensBefore -3, durationMs -5, tokensAfter 10**15) are no
    counts anywhere: the timeline's past compactions showed '-3 → …' and '-0.0s', the inspector -3 and
    a 10**15 'after', the context view's card 'Compacted from -3 tokens', while the divider said 0."""
    from tui.compaction.timeline import build_timeline
    from widgets.chat_messages import CompactionSummaryMessage

    store, _ids = new_session(tmp_path, [("q1", "a1"), ("q2", "a2")])
    entry = store.append_compaction(
        "S", "no-such-id", -3, {"kompakt": {"durationMs": -5, "tokensAfter": 10**15, "keepRecentTokens": -1}}
    )
    store.close()
    store = SessionStore.open(store.path)
    assert not store.problems
    branch = store.get_branch()
    fold = history_layout(branch).folds[0]
    past = build_timeline(branch, context_window=128_000, reserve_tokens=16_384, keep_recent_tokens=20_000)
    shown = past.compactions[0]
    facts = inspect_compaction(branch, entry["id"]).facts
    assert fold.tokens_before == shown.tokens_before == facts.tokens_before == 0
    assert fold.duration_ms is shown.duration_ms is facts.duration_ms is None
    assert shown.tokens_after == facts.tokens_after == fold.tokens_after < 10**15  # estimated instead
    assert not shown.tokens_after_recorded and facts.keep_recent_tokens is None
    card = CompactionSummaryMessage(
        {"role": "compactionSummary", "summary": "S", "tokensBefore": -3}, entry["id"]
    )
    assert card.title().plain == "Compacted from 0 tokens"
    store.close()


def test_the_boundary_of_a_path_prefix_is_found_without_copying_or_scanning_it(tmp_path: Path) -> None:
    """history_layout asks for each compaction the boundary of the path before it; it used to copy that
    prefix and scan it for the first kept entry (quadratic in a long session: ~20 ms of the 10k bench
    session's first frame). Reading the prefix in place, with an index of the path, gives the same."""
    from bench.gen_session import generate
    from tui.compaction.boundary import compaction_boundary
    from tui.session.entries import RESET_BOUNDARY_TYPE

    with SessionStore.open(generate(tmp_path / "s.jsonl", entries=1500, seed=5), read_only=True) as store:
        path = list(store.get_branch())
    assert sum(e.get("type") == "compaction" for e in path) >= 3
    path.insert(len(path) // 2, {"type": RESET_BOUNDARY_TYPE, "id": "reset1", "parentId": None})
    # A compaction that names an entry after itself as first kept: not found in the prefix.
    late = next(i for i, e in enumerate(path) if e.get("type") == "compaction")
    path[late] = {**path[late], "firstKeptEntryId": path[-1]["id"]}
    first: dict[str, int] = {}
    for i, entry in enumerate(path):
        first.setdefault(entry["id"], i)
    for end in range(len(path) + 1):
        expected = compaction_boundary(path[:end])
        assert compaction_boundary(path, end) == expected, end
        assert compaction_boundary(path, end, first) == expected, end
