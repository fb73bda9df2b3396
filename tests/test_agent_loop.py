"""The agent loop through litellm and the loopback server: tools with approval, the stored chain, abort
mid-stream and mid-tool, and the iteration budget."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

from tests.agent_helpers import Recorder, assert_no_orphans, make_session, make_settings, messages_on_path
from tests.fake_openai import FakeOpenAI, Reply, ToolCall, fake_openai_fixture  # noqa: F401
from tui.agent.budget import IterationBudget
from tui.agent.events import (
    BudgetUpdate,
    MessageEnd,
    Notice,
    TextDelta,
    ToolCallEnd,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnEnd,
    TurnStart,
)
from tui.agent.loop import AgentLoop
from tui.agent.tools import ToolContext, default_tools
from tui.session.context import message_text


def _text(message: dict) -> str:
    return message_text(message)


async def test_a_turn_with_read_and_bash_stores_a_correct_chain(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    (session.workspace / "notes.txt").write_text("alpha\nbeta\n")
    fake_openai.queue(
        Reply.tools(
            ToolCall("read", {"path": "notes.txt"}, id="call_read"),
            ToolCall("bash", {"command": "echo from-bash"}, id="call_bash"),
        ),
        Reply.text_reply("All done.", usage=(200, 5)),
    )
    events = Recorder()
    session.subscribe(events)

    outcome = await session.prompt("look at notes.txt")

    assert outcome is not None and outcome.reason == "stop"
    path = session.store.get_branch()
    roles = [e["message"]["role"] for e in path]
    assert roles == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    for parent, child in itertools.pairwise(path):
        assert child["parentId"] == parent["id"]
    _user, ask, read_result, bash_result, final = (e["message"] for e in path)
    assert ask["stopReason"] == "toolUse"
    assert [b["id"] for b in ask["content"] if b["type"] == "toolCall"] == ["call_read", "call_bash"]
    assert read_result["toolCallId"] == "call_read" and "alpha" in _text(read_result)
    assert bash_result["toolCallId"] == "call_bash" and "from-bash" in _text(bash_result)
    assert not read_result["isError"] and not bash_result["isError"]
    assert _text(final) == "All done." and final["stopReason"] == "stop"
    assert_no_orphans(session.store.entries)

    # The second request carried the tool results back, after the system prompt with the workspace.
    second = fake_openai.requests[1]["messages"]
    assert second[0]["role"] == "system" and str(session.workspace) in second[0]["content"]
    tool_messages = [m for m in second if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_read", "call_bash"]
    assert {t["function"]["name"] for t in fake_openai.requests[0]["tools"]} >= {"read", "bash", "edit"}

    kinds = [type(e).__name__ for e in events.events if not isinstance(e, TextDelta)]
    assert kinds[0] == "TurnStart" and kinds[-1] == "TurnEnd"
    assert [e.name for e in events.of(ToolExecutionStart)] == ["read", "bash"]
    assert [e.is_error for e in events.of(ToolExecutionEnd)] == [False, False]
    assert len(events.of(ToolCallEnd)) == 2  # the provider's tool-call events are forwarded
    assert [e.used for e in events.of(BudgetUpdate)] == [1, 2]
    assert events.of(TurnStart)[0].prompt == "look at notes.txt"
    assert events.of(TurnEnd)[0].reason == "stop"


async def test_bash_asks_through_the_callback(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    asked: list[tuple[str, dict, str]] = []
    answers = iter([True, False])

    async def ask(name: str, args: dict, reason: str) -> bool:
        asked.append((name, args, reason))
        return next(answers)

    settings = make_settings(fake_openai, tools={"approval": {"bash": "ask"}})
    session = make_session(tmp_path, settings, ask=ask)
    fake_openai.queue(
        Reply.tools(ToolCall("bash", {"command": "echo yes-ran"}, id="c1")),
        Reply.tools(ToolCall("bash", {"command": "echo never"}, id="c2")),
        Reply.text_reply("ok"),
    )

    await session.prompt("run things")

    assert [a[0] for a in asked] == ["bash", "bash"]
    assert asked[0][1] == {"command": "echo yes-ran"} and "ask" in asked[0][2]
    results = [m for m in messages_on_path(session.store) if m["role"] == "toolResult"]
    assert "yes-ran" in _text(results[0]) and not results[0]["isError"]
    assert results[1]["isError"] and results[1]["details"]["denied"] is True
    assert "denied" in _text(results[1])
    assert_no_orphans(session.store.entries)


async def test_abort_mid_stream_keeps_the_partial_text_and_leaves_no_orphans(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    fake_openai.queue(Reply.hang(text="partial answer", chunk_size=7), Reply.text_reply("fresh start"))
    events = Recorder()
    session.subscribe(events)

    running = asyncio.create_task(session.prompt("tell me"))
    await events.wait_for(lambda e: isinstance(e, TextDelta) and "answer" in e.text)
    session.abort()
    assert await running is None
    await asyncio.wait_for(fake_openai.client_left.wait(), 30)  # the HTTP stream was closed

    last = messages_on_path(session.store)[-1]
    assert last["role"] == "assistant" and last["stopReason"] == "aborted"
    assert _text(last) == "partial answer"
    assert events.of(TurnEnd)[-1].reason == "aborted"
    assert not session.is_streaming and not session.is_busy
    assert_no_orphans(session.store.entries)

    # The user can go on; the aborted reply is not sent back to the model.
    outcome = await session.continue_()
    assert outcome is not None and _text(outcome.message) == "fresh start"
    sent = fake_openai.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]


async def test_abort_while_a_tool_call_streams_stores_no_half_call(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    slow = Reply.tools(ToolCall("read", {"path": "a-rather-long-file-name.txt"}, id="c1"), pieces=12)
    slow.delay = 0.05
    fake_openai.queue(slow)
    events = Recorder()
    session.subscribe(events)

    running = asyncio.create_task(session.prompt("read it"))
    await events.wait_for(lambda e: type(e).__name__ == "ToolCallDelta")
    session.abort()
    assert await running is None

    last = messages_on_path(session.store)[-1]
    assert last["stopReason"] == "aborted"
    assert [b for b in last["content"] if b["type"] == "toolCall"] == []
    assert_no_orphans(session.store.entries)


async def test_abort_during_tool_execution_gives_every_call_a_result(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    (session.workspace / "a.txt").write_text("a")
    fake_openai.queue(
        Reply.tools(
            ToolCall("read", {"path": "a.txt"}, id="c_read"),
            ToolCall("bash", {"command": "sleep 30"}, id="c_sleep"),
            ToolCall("ls", {}, id="c_ls"),
        )
    )
    events = Recorder()
    session.subscribe(events)

    running = asyncio.create_task(session.prompt("go"))
    await events.wait_for(lambda e: isinstance(e, ToolExecutionStart) and e.name == "bash")
    session.abort()
    assert await running is None

    results = [m for m in messages_on_path(session.store) if m["role"] == "toolResult"]
    assert [r["toolCallId"] for r in results] == ["c_read", "c_sleep", "c_ls"]
    assert not results[0]["isError"]
    assert all(r["isError"] and r["details"] == {"aborted": True} for r in results[1:])
    assert "Aborted" in _text(results[1])
    assert [e.tool_call_id for e in events.of(ToolExecutionEnd)] == ["c_read", "c_sleep", "c_ls"]
    assert_no_orphans(session.store.entries)
    assert fake_openai.hit_count == 1


async def test_the_iteration_budget_stops_the_turn_and_continue_goes_on(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    session = make_session(tmp_path, make_settings(fake_openai, agent={"maxIterations": 2}))
    fake_openai.queue(
        *(Reply.tools(ToolCall("ls", {}, id=f"c{i}")) for i in range(3)), Reply.text_reply("end")
    )
    events = Recorder()
    session.subscribe(events)

    outcome = await session.prompt("loop forever")

    assert outcome is not None and outcome.reason == "budget"
    assert fake_openai.hit_count == 2
    assert messages_on_path(session.store)[-1]["role"] == "toolResult"
    (notice,) = [n for n in events.of(Notice) if n.level == "warning"]
    assert "agent.maxIterations" in notice.text and "2" in notice.text
    assert events.of(TurnEnd)[-1].reason == "budget"
    assert_no_orphans(session.store.entries)

    outcome = await session.continue_()  # a fresh budget
    assert outcome is not None and outcome.reason == "stop"
    assert fake_openai.hit_count == 4


async def test_the_loop_runs_on_its_own_with_a_budget(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    session = make_session(tmp_path, make_settings(fake_openai))
    session.store.append_message(
        {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}
    )
    fake_openai.queue(Reply.text_reply("hello there"))
    seen: list = []
    loop = AgentLoop(
        store=session.store,
        provider=session.provider,
        model="openai/fake",
        tools=default_tools(),
        tool_context=ToolContext(session.workspace),
        system_prompt="be brief",
        emit=seen.append,
    )
    budget = IterationBudget(1)

    outcome = await loop.run(budget)

    assert outcome.reason == "stop" and _text(outcome.message) == "hello there"
    assert budget.used == 1 and budget.remaining == 0
    assert [type(e).__name__ for e in seen if isinstance(e, MessageEnd | BudgetUpdate)] == [
        "BudgetUpdate",
        "MessageEnd",
    ]
    assert fake_openai.requests[0]["messages"][0] == {"role": "system", "content": "be brief"}


def test_iteration_budget_consume_and_refund() -> None:
    budget = IterationBudget(2)
    assert budget.consume() and budget.consume()
    assert not budget.consume() and budget.used == 2
    budget.refund()
    assert budget.remaining == 1 and budget.consume()
    budget.refund(), budget.refund(), budget.refund()
    assert budget.used == 0
