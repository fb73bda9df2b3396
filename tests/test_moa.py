"""Mixture of Agents through litellm and the loopback server: the fan-out runs in parallel (server-side
timestamps) within maxConcurrency, the drafts reach the aggregator in the configured order, failures and
timeouts are left out and reported, a total failure lets the aggregator answer alone, an abort stops every
reference, the stored ``kompakt.moa`` entry survives a reload and never enters a later context, and the
chat group renders from that entry (Pilot host app)."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Collapsible, Switch

from tests.agent_helpers import MODEL, Recorder, assert_no_orphans, make_session, make_settings, moa_settings
from tests.fake_openai import FakeOpenAI, Hit, Reply, ToolCall, fake_openai_fixture  # noqa: F401
from tests.pages import rendered_strips, until, wait_until_drawn
from tests.settings_ui_helpers import USER_TOML, SettingsHost, clear_kompakt_env
from tui.agent.events import Notice, TurnEnd
from tui.agent.moa import aggregator_guidance, with_guidance
from tui.agent.moa_events import MoaEnd, MoaReferenceEnd, MoaStart
from tui.agent.moa_record import MOA_CUSTOM_TYPE, MoaRecord, ReferenceAnswer, moa_record
from tui.agent.session import AgentSession
from tui.config.model import Settings
from tui.session.context import build_session_context
from tui.session.store import SessionStore
from widgets.chat_messages import AssistantMessage, UserMessage
from widgets.chat_pane import ChatPane
from widgets.moa_group import MoaGroup, ReferenceView
from widgets.settings_form import editor_id

# Two models litellm prices (so cost is real) and one it does not know; all served by the loopback server.
REF_A, REF_B, REF_C = "openai/gpt-4o-mini", "openai/gpt-4o", "openai/ref-c"
SERVED = {REF_A: "gpt-4o-mini", REF_B: "gpt-4o", REF_C: "ref-c", MODEL: "fake"}
SLOW = 0.05  # seconds between streamed chunks of a reference answer


def slow_text(text: str, *, chunks: int = 12) -> Reply:
    """A reply streamed in ``chunks`` pieces, SLOW apart, so that parallel requests visibly overlap."""
    return Reply.text_reply(text, chunk_size=max(1, -(-len(text) // chunks)), delay=SLOW)


def answer_end(hit: Hit) -> float:
    """When the server sent the answer's last data chunk (its usage); [DONE] only follows it."""
    return hit.chunk_times[-1]


def request_text(body: dict[str, Any]) -> str:
    """Every text the request carried, system prompt included."""
    parts = []
    for message in body["messages"]:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        else:
            parts += [block.get("text", "") for block in content or () if isinstance(block, dict)]
    return "\n".join(parts)


def stored_records(store: SessionStore) -> list[tuple[dict[str, Any], MoaRecord]]:
    return [(entry, record) for entry in store.entries if (record := moa_record(entry)) is not None]


async def wait_until(condition: Any) -> None:
    """Yield to the event loop until ``condition()`` holds (the test's own timeout bounds a failure)."""
    while not condition():
        await asyncio.sleep(0.01)


async def run_turn(session: AgentSession, text: str = "How should I structure the parser?") -> Recorder:
    events = Recorder()
    session.subscribe(events)
    await session.prompt(text)
    return events


# --- fan-out -----------------------------------------------------------------------------------------
async def test_every_reference_gets_the_turn_in_parallel(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    references = [REF_A, REF_B, REF_C]
    for name in references:
        fake_openai.script(SERVED[name], slow_text(f"draft from {name}: use a recursive descent parser"))
    fake_openai.script("fake", Reply.text_reply("Use recursive descent."))
    session = make_session(tmp_path, moa_settings(fake_openai, references))

    events = await run_turn(session)

    ref_hits = [fake_openai.hits_for(SERVED[name]) for name in references]
    assert [len(hits) for hits in ref_hits] == [1, 1, 1]
    hits = [found[0] for found in ref_hits]
    # Every request arrived before any answer ended: they were in flight together.
    assert max(hit.received_at for hit in hits) < min(answer_end(hit) for hit in hits)
    (aggregator,) = fake_openai.hits_for("fake")
    assert aggregator.received_at > max(answer_end(hit) for hit in hits)
    # References: the same context, an adviser's system prompt, no tools. The aggregator acts with tools.
    for hit in hits:
        assert "tools" not in hit.body
        assert hit.body["messages"][0]["role"] == "system"
        assert "cannot run tools" in hit.body["messages"][0]["content"]
        assert hit.body["messages"][1:] == hits[0].body["messages"][1:]
    assert hits[0].body["messages"][1:] == [{"role": "user", "content": "How should I structure the parser?"}]
    assert aggregator.body["tools"]
    assert aggregator.body["messages"][0]["content"] != hits[0].body["messages"][0]["content"]
    assert [type(e) for e in events.events if isinstance(e, MoaStart | MoaEnd)] == [MoaStart, MoaEnd]
    assert events.of(MoaStart)[0].models == tuple(references)
    assert events.of(MoaStart)[0].aggregator == MODEL
    assert sorted(e.index for e in events.of(MoaReferenceEnd)) == [0, 1, 2]
    assert all(e.ok for e in events.of(MoaReferenceEnd))
    assert events.of(TurnEnd)[-1].reason == "stop"


async def test_max_concurrency_bounds_the_fan_out(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    references = [REF_A, REF_B, REF_C]
    for name in references:
        fake_openai.script(SERVED[name], slow_text(f"draft from {name}", chunks=4))
    session = make_session(tmp_path, moa_settings(fake_openai, references, maxConcurrency=1))

    await run_turn(session)

    hits = sorted(
        (fake_openai.hits_for(SERVED[name])[0] for name in references), key=lambda hit: hit.received_at
    )
    for earlier, later in itertools.pairwise(hits):
        assert later.received_at > answer_end(earlier)
    assert len(fake_openai.hits) == 4


async def test_the_drafts_reach_the_aggregator_in_the_configured_order(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    # The first reference is the slowest, so the answers arrive in the reverse order.
    fake_openai.script(SERVED[REF_A], slow_text("ALPHA draft", chunks=16))
    fake_openai.script(SERVED[REF_B], slow_text("BRAVO draft", chunks=6))
    fake_openai.script(SERVED[REF_C], Reply.text_reply("CHARLIE draft"))
    fake_openai.script("fake", Reply.text_reply("final answer"))
    session = make_session(tmp_path, moa_settings(fake_openai, [REF_A, REF_B, REF_C]))

    events = await run_turn(session)

    assert [e.index for e in events.of(MoaReferenceEnd)] == [2, 1, 0]
    prompt = request_text(fake_openai.hits_for("fake")[0].body)
    positions = [prompt.index(text) for text in ("ALPHA draft", "BRAVO draft", "CHARLIE draft")]
    assert positions == sorted(positions)
    assert "Draft 1 (from openai/gpt-4o-mini)" in prompt and "Draft 3 (from openai/ref-c)" in prompt
    ((_, record),) = stored_records(session.store)
    assert [answer.model for answer in record.references] == [REF_A, REF_B, REF_C]
    assert [answer.text for answer in record.references] == ["ALPHA draft", "BRAVO draft", "CHARLIE draft"]


async def test_each_reference_reports_tokens_cost_and_time(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(SERVED[REF_A], Reply.text_reply("priced draft", usage=(1000, 200)))
    fake_openai.script(SERVED[REF_C], Reply.text_reply("unpriced draft", usage=(50, 7)))
    session = make_session(tmp_path, moa_settings(fake_openai, [REF_A, REF_C]))

    events = await run_turn(session)

    priced, unpriced = (e.answer for e in sorted(events.of(MoaReferenceEnd), key=lambda e: e.index))
    assert (priced.input_tokens, priced.output_tokens) == (1000, 200)
    assert priced.cost > 0 and priced.seconds > 0
    assert (unpriced.input_tokens, unpriced.output_tokens, unpriced.cost) == (50, 7, 0.0)
    before = sum(
        e["message"]["usage"]["cost"]["total"]
        for e in session.store.entries
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    )
    assert session.cost_total == before + priced.cost


# --- failures -------------------------------------------------------------------------------------
async def test_a_failed_and_a_timed_out_reference_are_left_out_and_reported(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(SERVED[REF_A], Reply.text_reply("the useful draft"))
    fake_openai.script(SERVED[REF_B], Reply.server_error(500))
    fake_openai.script(SERVED[REF_C], Reply.hang(text="never fin"))
    fake_openai.script("fake", Reply.text_reply("answer"))
    session = make_session(tmp_path, moa_settings(fake_openai, [REF_A, REF_B, REF_C], timeoutS=1))

    events = await run_turn(session)

    ((_, record),) = stored_records(session.store)
    assert [answer.ok for answer in record.references] == [True, False, False]
    assert "server had an error" in (record.references[1].error or "")
    assert "1 s" in (record.references[2].error or "")
    assert not record.all_failed
    failed = {e.answer.model: e.answer.error for e in events.of(MoaReferenceEnd) if not e.ok}
    assert set(failed) == {REF_B, REF_C}
    (notice,) = [n for n in events.of(Notice) if "Mixture of Agents" in n.text]
    assert notice.level == "warning" and REF_B in notice.text and REF_C in notice.text
    prompt = request_text(fake_openai.hits_for("fake")[0].body)
    assert "the useful draft" in prompt and "never fin" not in prompt
    assert "No draft arrived from: openai/gpt-4o, openai/ref-c" in prompt
    assert "server had an error" not in prompt  # error texts stay out of the prompt
    await wait_until(lambda: fake_openai.hits_for("ref-c")[0].disconnected)


async def test_when_every_reference_fails_the_aggregator_answers_alone(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(SERVED[REF_A], Reply.server_error(503))
    fake_openai.script(SERVED[REF_B], Reply.unauthorized())
    fake_openai.script("fake", Reply.text_reply("my own answer"))
    session = make_session(tmp_path, moa_settings(fake_openai, [REF_A, REF_B]))

    events = await run_turn(session)

    ((entry, record),) = stored_records(session.store)
    assert record.all_failed and entry["data"]["allFailed"] is True
    (notice,) = [n for n in events.of(Notice) if "Mixture of Agents" in n.text]
    assert notice.level == "warning" and "answers alone" in notice.text
    aggregator = fake_openai.hits_for("fake")[0].body
    assert "Draft" not in request_text(aggregator)
    assert aggregator["messages"][1:] == [{"role": "user", "content": "How should I structure the parser?"}]
    reply = session.store.get_branch()[-1]
    assert reply["message"]["content"][0]["text"] == "my own answer"
    assert reply["parentId"] == entry["id"]


async def test_abort_stops_every_reference_at_once(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    references = [REF_A, REF_B, REF_C]
    for name in references:
        fake_openai.script(SERVED[name], Reply.hang(text="thinking about it"))
    session = make_session(tmp_path, moa_settings(fake_openai, references))
    events = Recorder()
    session.subscribe(events)

    running = asyncio.create_task(session.prompt("a long question"))
    await wait_until(lambda: len(fake_openai.hits) == 3)
    session.abort()

    assert await running is None
    await wait_until(lambda: fake_openai.disconnects == 3)
    assert len(fake_openai.hits) == 3  # the aggregator was never called
    assert events.of(TurnEnd)[-1].reason == "aborted"
    ((entry, record),) = stored_records(session.store)
    assert record.aborted and all(not answer.ok for answer in record.references)
    assert entry["id"] == session.store.leaf_id
    assert not session.is_busy and not session.is_streaming


# --- storage and context ---------------------------------------------------------------------------
async def test_the_stored_entry_survives_a_reload(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(SERVED[REF_A], Reply.text_reply("first draft", usage=(300, 40)))
    fake_openai.script(SERVED[REF_B], Reply.server_error(500))
    fake_openai.script("fake", Reply.text_reply("aggregated"))
    session = make_session(tmp_path, moa_settings(fake_openai, [REF_A, REF_B]))
    await run_turn(session)
    ((entry, record),) = stored_records(session.store)
    path = session.store.path
    session.store.close()

    with SessionStore.open(path) as reopened:
        branch = reopened.get_branch()
        kinds = [(e["type"], e.get("customType") or (e.get("message") or {}).get("role")) for e in branch]
        assert kinds[-3:] == [("message", "user"), ("custom", MOA_CUSTOM_TYPE), ("message", "assistant")]
        assert moa_record(branch[-2]) == MoaRecord.from_data(entry["data"])
    assert record.references[0] == ReferenceAnswer(
        REF_A,
        "first draft",
        300,
        40,
        record.references[0].cost,
        record.references[0].seconds,
        None,
    )
    assert record.references[0].cost > 0


async def test_the_drafts_never_enter_a_later_context(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(SERVED[REF_A], Reply.text_reply("SECRET-DRAFT-ALPHA"))
    fake_openai.script(SERVED[REF_B], Reply.text_reply("SECRET-DRAFT-BRAVO"))
    fake_openai.queue(Reply.text_reply("aggregated answer"), Reply.text_reply("second answer"))
    session = make_session(tmp_path, moa_settings(fake_openai, [REF_A, REF_B]))
    await run_turn(session, "first question")
    session.set_moa(False)

    await session.prompt("second question")

    later = fake_openai.hits_for("fake")[-1].body
    assert "SECRET-DRAFT" not in request_text(later)
    assert [m["role"] for m in later["messages"]] == ["system", "user", "assistant", "user"]
    context = build_session_context(session.store.entries, session.store.leaf_id)
    assert all("SECRET-DRAFT" not in str(message) for message in context.messages)
    assert len(stored_records(session.store)) == 1 and len(fake_openai.hits) == 4


async def test_the_aggregator_acts_with_tools_and_sees_the_drafts_in_each_call_of_its_run(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("remember the parser\n")
    fake_openai.script(SERVED[REF_A], Reply.text_reply("DRAFT: read notes.txt first"))
    fake_openai.script(
        "aggregator",
        Reply.tools(ToolCall("read", {"path": "notes.txt"})),
        Reply.text_reply("The notes say: remember the parser."),
    )
    settings = moa_settings(
        fake_openai, [REF_A], routed=("openai/aggregator",), aggregator="openai/aggregator"
    )
    session = make_session(tmp_path, settings)

    await run_turn(session)

    calls = fake_openai.hits_for("aggregator")
    assert len(calls) == 2 and not fake_openai.hits_for("fake")
    assert all("DRAFT: read notes.txt first" in request_text(hit.body) for hit in calls)
    assert calls[1].body["messages"][-1]["role"] == "tool"
    assert "remember the parser" in calls[1].body["messages"][-1]["content"]
    replies = [e["message"] for e in session.store.get_branch() if e["type"] == "message"]
    assert [m["role"] for m in replies] == ["user", "assistant", "toolResult", "assistant"]
    assert replies[-1]["model"] == "aggregator"
    assert all("DRAFT" not in str(m) for m in replies)
    assert_no_orphans(session.store.entries)
    ((_, record),) = stored_records(session.store)
    assert record.aggregator == "openai/aggregator"


async def test_set_moa_switches_it_for_the_session(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    settings = moa_settings(fake_openai, [REF_A], enabled=False)
    session = make_session(tmp_path, settings)
    events = Recorder()
    session.subscribe(events)
    assert not session.moa_enabled

    await session.prompt("without")
    session.set_moa(True)
    await session.prompt("with")

    assert session.moa_enabled
    assert [hit.model for hit in fake_openai.hits] == ["fake", "gpt-4o-mini", "fake"]
    assert len(stored_records(session.store)) == 1


async def test_set_moa_without_references_warns_and_answers_alone(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    events = Recorder()
    session.subscribe(events)

    session.set_moa(True)
    await session.prompt("hello")

    assert any("referenceModels" in n.text for n in events.of(Notice))
    assert [hit.model for hit in fake_openai.hits] == ["fake"] and not stored_records(session.store)


async def test_the_settings_screen_toggles_moa_and_a_changed_setting_wins_over_set_moa(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    clear_kompakt_env(monkeypatch, config)
    user = config / "settings.toml"
    user.write_text(USER_TOML)
    session = make_session(tmp_path, Settings())
    session.set_moa(False)
    app = SettingsHost(user, tmp_path / "project" / ".kompakt" / "settings.toml")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(
            pilot, lambda: app.screen.query_one(f"#{editor_id('moa.enabled')}", Switch).value is False
        )
        switch = app.screen.query_one(f"#{editor_id('moa.enabled')}", Switch)
        assert switch.value is False
        switch.value = True
        await pilot.pause()
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: app.saved and "[moa]" in user.read_text())
    assert "[moa]" in user.read_text() and app.saved[0].settings.moa.enabled is True
    # The lead's live reload hands the saved settings to the session: the new setting wins over /moa off.
    session.update_settings(app.saved[0].settings)
    assert session.moa_enabled
    session.set_moa(False)
    assert not session.moa_enabled


# --- guidance and records, without a server ----------------------------------------------------------
def test_guidance_joins_the_last_user_message_without_changing_the_input() -> None:
    user = {"role": "user", "content": "please fix it"}
    messages = [user, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    out = with_guidance(messages, "GUIDE")
    assert out[0]["content"] == [{"type": "text", "text": "please fix it"}, {"type": "text", "text": "GUIDE"}]
    assert user == {"role": "user", "content": "please fix it"} and out[1] is messages[1]
    assert with_guidance([], "GUIDE") == [{"role": "user", "content": [{"type": "text", "text": "GUIDE"}]}]


def test_no_guidance_without_an_answer_and_records_read_leniently() -> None:
    failed = MoaRecord("m", (ReferenceAnswer("a", error="boom"),))
    assert aggregator_guidance(failed) is None and failed.all_failed
    assert MoaRecord.from_data(failed.to_data()) == failed
    odd = MoaRecord.from_data({"references": [{"model": "x", "inputTokens": "many"}, "junk"], "aborted": 1})
    assert odd == MoaRecord("?", (ReferenceAnswer("x"),), aborted=True)


# --- the chat group --------------------------------------------------------------------------------
def screen_text(app: App) -> str:
    return "\n".join("".join(seg.text for seg in strip) for strip in rendered_strips(app))


class MoaChatHost(App):
    def compose(self) -> ComposeResult:
        yield ChatPane(id="chat")


def stored_moa_path(store: SessionStore) -> list[dict[str, Any]]:
    """A session path with a MoA turn: user, the kompakt.moa entry, the aggregated reply."""
    store.append_message(
        {"role": "user", "content": [{"type": "text", "text": "which parser?"}], "timestamp": 1}
    )
    record = MoaRecord(
        MODEL,
        (
            ReferenceAnswer(REF_A, "Use **recursive descent**.", 1200, 340, 0.00042, 2.5),
            ReferenceAnswer(REF_B, "", 0, 0, 0.0, 5.0, error="No answer within 5 s."),
        ),
    )
    store.append_custom(MOA_CUSTOM_TYPE, record.to_data())
    store.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Recursive descent it is."}],
            "model": "fake",
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    return store.get_branch()


@asynccontextmanager
async def stored_moa_chat(tmp_path: Path) -> AsyncIterator[tuple[Any, ChatPane, list[dict[str, Any]]]]:
    """A chat showing :func:`stored_moa_path`'s session: the pilot, the pane and the path."""
    store = SessionStore.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    path = stored_moa_path(store)
    app = MoaChatHost()
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.query_one(ChatPane)
        await pane.load_messages(path)
        yield pilot, pane, path


async def test_the_chat_group_renders_from_the_stored_entry(tmp_path: Path) -> None:
    async with stored_moa_chat(tmp_path) as (pilot, pane, path):
        app = pilot.app
        await until(
            pilot,
            lambda: (
                [type(widget) for widget in pane.message_widgets] == [UserMessage, MoaGroup, AssistantMessage]
            ),
        )
        kinds = [type(widget) for widget in pane.message_widgets]
        assert kinds == [UserMessage, MoaGroup, AssistantMessage]
        group = pane.query_one(MoaGroup)
        assert group.entry_id == path[1]["id"]
        title = str(group.summary())
        assert "1/2 reference answers" in title and "1.5k tokens" in title and "$0.0004" in title
        ok_view, failed_view = group.query(ReferenceView)
        assert str(ok_view.title).startswith(
            "✓ openai/gpt-4o-mini · 1.2k in / 340 out tokens · $0.0004 · 2.5s"
        )
        assert str(failed_view.title) == "✗ openai/gpt-4o · failed after 5.0s: No answer within 5 s."
        assert failed_view.has_class("-failed") and group.has_class("-degraded")
        group_collapsible = group.query_one(".moa--group", Collapsible)
        assert group_collapsible.collapsed
        group_title, ok_title = (view.query_one("CollapsibleTitle") for view in (group_collapsible, ok_view))
        await wait_until_drawn(pilot, group_title)
        await pilot.click(group_title)
        await wait_until_drawn(pilot, ok_title)  # the group opened: its references are laid out
        await pilot.click(ok_title)
        await until(
            pilot,
            lambda: (
                (not group_collapsible.collapsed and (not ok_view.collapsed))
                and "Use recursive descent." in screen_text(app)
            ),
        )
        assert not group_collapsible.collapsed and not ok_view.collapsed
        assert "Use recursive descent." in screen_text(app)


async def test_the_chat_group_fills_in_live(tmp_path: Path) -> None:
    app = MoaChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(ChatPane)
        group = await pane.begin_moa((REF_A, REF_B), MODEL)
        assert "0/2 references done" in str(group.summary())
        assert all(view.has_class("-waiting") for view in group.query(ReferenceView))
        answer = ReferenceAnswer(REF_B, "[bold]literal[/bold] \x1b[31mred", 10, 5, 0.0, 1.0)
        await group.set_answer(1, answer)
        assert "1/2 references done" in str(group.summary())
        record = MoaRecord(
            MODEL, (ReferenceAnswer(REF_A, error="Aborted by the user."), answer), aborted=True
        )
        await group.finish(record, "abcd1234")
        await until(
            pilot,
            lambda: (
                (group.entry_id == "abcd1234" and pane.items[-1].entry_id == "abcd1234")
                and pane.items[-1].message["data"] == record.to_data()
                and str(group.summary()).endswith("· aborted")
            ),
        )
        assert group.entry_id == "abcd1234" and pane.items[-1].entry_id == "abcd1234"
        assert pane.items[-1].message["data"] == record.to_data()
        assert str(group.summary()).endswith("· aborted")
        group_title = group.query_one(".moa--group", Collapsible).query_one("CollapsibleTitle")
        await wait_until_drawn(pilot, group_title)
        await pilot.click(group_title)
        reference_title = group.references[1].query_one("CollapsibleTitle")
        await wait_until_drawn(pilot, reference_title)  # the group opened: a click lands on the reference
        await pilot.click(reference_title)
        await until(
            pilot, lambda: "[bold]literal[/bold]" in screen_text(app) and "\x1b" not in screen_text(app)
        )
        shown = screen_text(app)
        assert "[bold]literal[/bold]" in shown and "\x1b" not in shown


async def test_a_reference_error_text_is_redacted_before_it_is_stored_or_shown(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    key = "sk-proj-" + "Q9w8E7r6T5y4U3i2O1p0" * 2
    body = {"error": {"message": f"Incorrect API key provided: {key}.", "type": "invalid_request_error"}}
    fake_openai.script(SERVED[REF_A], Reply.text_reply("the useful draft"))
    fake_openai.script(SERVED[REF_B], Reply.error(401, body))
    fake_openai.script("fake", Reply.text_reply("answer"))
    session = make_session(tmp_path, moa_settings(fake_openai, [REF_A, REF_B]))

    events = await run_turn(session)

    ((entry, record),) = stored_records(session.store)
    assert record.references[1].error and "[redacted]" in record.references[1].error
    assert key not in json.dumps(entry)
    assert all(key not in (e.answer.error or "") for e in events.of(MoaReferenceEnd))
    assert all(key not in n.text for n in events.of(Notice))


async def test_a_retry_after_an_overflow_keeps_the_drafts_of_the_turn(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(SERVED[REF_A], Reply.text_reply("first draft"), Reply.text_reply("the useful draft"))
    fake_openai.script(
        "fake",
        Reply.text_reply("answer one " + "a" * 8_000, chunk_size=4096, usage=(1000, 50)),
        Reply.context_overflow(),
        Reply.text_reply("answer after the retry", usage=(500, 5)),
    )
    settings = moa_settings(fake_openai, [REF_A])
    settings = settings.model_copy(
        update={
            "compaction": settings.compaction.model_copy(
                update={"keep_recent_tokens": 20, "auto_continue": False}
            )
        }
    )

    async def summarize(system_prompt: str, prompt: str, max_tokens: int) -> str:
        return "SUMMARY"

    session = make_session(tmp_path, settings, summarize=summarize)
    await run_turn(session, "first question " + "q" * 4_000)
    await run_turn(session, "second question")

    overflowed, retried = fake_openai.hits_for("fake")[1:3]
    assert "the useful draft" in request_text(overflowed.body)
    assert "the useful draft" in request_text(retried.body)


def test_the_figures_use_the_aggregators_window_while_it_writes_the_replies(tmp_path: Path) -> None:
    """The status bar and the timeline showed the main model's window under MoA, while the reply (and
    the threshold check) has to fit the aggregator's."""
    settings = make_settings(
        None,
        context_window=200_000,
        models={MODEL: {"contextWindow": 200_000}, "openai/small": {"contextWindow": 16_000}},
        moa={"enabled": True, "referenceModels": [REF_A], "aggregator": "openai/small"},
    )
    session = make_session(tmp_path, settings)
    assert session.window_model == "openai/small" and session.acting_context_window == 16_000
    usage = session.context_usage()
    assert usage is not None and usage.context_window == 16_000 and usage.window_model == "openai/small"
    assert session.context_breakdown().context_window == 16_000
    session.set_moa(False)  # the main model answers again: its window, no name
    usage = session.context_usage()
    assert usage is not None and usage.context_window == 200_000 and usage.window_model is None


def test_the_status_bar_names_the_model_whose_window_it_shows() -> None:
    from widgets.status_bar import StatusBar

    bar = StatusBar()
    bar.show_context(4000, 16_000, False)
    bar.window_model = "openai/small"
    assert "4.0k/16.0k (25%) of openai/small" in bar.render().plain


async def test_moa_on_and_off_switch_the_window_the_screen_shows(tmp_path: Path, monkeypatch) -> None:
    """/moa off left the aggregator's window (and its name) in the status bar and the timeline."""
    from tests.app_e2e_helpers import isolated_home, make_app, ready, submit, wait_until
    from tui.launch import Launch

    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(
        'model = "kompakt-offline/echo"\n\n[models."kompakt-offline/agg"]\ncontextWindow = 16000\n\n'
        '[moa]\nenabled = true\nreferenceModels = ["kompakt-offline/echo"]\naggregator = "kompakt-offline/agg"\n'
    )
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=(120, 40), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await wait_until(pilot, lambda: screen.status.context_window == 16_000, "the aggregator's window")
        assert screen.status.window_model == "kompakt-offline/agg"
        assert screen.timeline.timeline.context_window == 16_000
        await submit(pilot, "/moa off")
        await wait_until(pilot, lambda: screen.status.context_window != 16_000, "the main model's window")
        assert screen.status.window_model == ""
        await wait_until(pilot, lambda: screen.timeline.timeline.context_window != 16_000, "the timeline's")


async def test_an_opened_group_makes_its_turn_taller_in_the_chat(tmp_path: Path) -> None:
    """The chat's stream layout kept an expanded compaction summary at its collapsed height (32c1539). A MoA
    group and its references are plain collapsibles: opened, the turn must grow to show the answer above
    the reply. (Checked when written: it did, so this guards the fix's reach, not a fault of its own.)"""
    async with stored_moa_chat(tmp_path) as (pilot, pane, _):
        await until(pilot, lambda: len(pane.query(ReferenceView)) == 2)
        group = pane.query_one(MoaGroup)
        group_collapsible = group.query_one(".moa--group", Collapsible)
        await wait_until_drawn(pilot, group_collapsible.query_one("CollapsibleTitle"))
        group_collapsible.collapsed = False
        ok_view = group.query(ReferenceView).first()
        await wait_until_drawn(pilot, ok_view.query_one("CollapsibleTitle"))
        ok_view.collapsed = False
        contents = ok_view.query_one(Collapsible.Contents)
        await until(pilot, lambda: contents.size.height > 0)
        # The group's title, both headings and the answer's body fit in the turn.
        await until(pilot, lambda: group.size.height >= contents.size.height + 3)
        assert group.size.height >= contents.size.height + 3, (group.size, contents.size)
        reply = pane.message_widgets[2]
        assert reply.region.y >= contents.region.bottom
