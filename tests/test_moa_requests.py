"""What the Mixture-of-Agents calls send and when, checked on the loopback server's recorded requests:
each reference's timeout starts when its request goes out, after litellm's warm-up; each reference gets
the advisory view (tool calls and results as text, no tool schemas) trimmed to its own context window;
and an aggregator with a smaller window than the main model that overflows is recovered like the main
model (compaction, then a retry with the drafts fitted to its window)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from tests.agent_helpers import Recorder, make_session, moa_settings
from tests.fake_openai import FakeOpenAI, Reply, ToolCall, fake_openai_fixture  # noqa: F401
from tui.agent.events import CompactionEnd, Notice
from tui.agent.litellm_loader import warm_up_litellm
from tui.agent.moa_events import MoaReferenceEnd
from tui.agent.moa_view import REFERENCE_MAX_TOKENS, fit_view, head_and_tail, render_view
from tui.agent.provider import Provider
from tui.agent.retry import RetryPolicy
from tui.config.model import Settings

REF_A, REF_B = "openai/ref-a", "openai/ref-b"


def provider_for(settings: Settings, **kwargs: Any) -> Provider:
    """The provider AgentSession would build for ``settings``, with ``kwargs`` on top."""
    return Provider(
        retry=RetryPolicy.from_settings(settings.retry.model_dump(by_alias=True)),
        models={n: o.model_dump(by_alias=True, exclude_none=True) for n, o in settings.models.items()},
        env={},
        **kwargs,
    )


class SlowWarmUp:
    """A warm-up that takes ``seconds`` the first time, then the real one; like the real one, a caller that
    is cancelled while waiting (a reference timed out) does not stop it for the others."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.task: asyncio.Task[None] | None = None
        self.finished_at: float | None = None

    async def _run(self) -> None:
        await asyncio.sleep(self.seconds)
        await warm_up_litellm()
        self.finished_at = time.perf_counter()

    async def __call__(self) -> None:
        if self.task is None:
            self.task = asyncio.ensure_future(self._run())
        await asyncio.shield(self.task)


# --- the per-reference timeout -------------------------------------------------------------------
async def test_the_reference_timeout_starts_after_the_warm_up(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    timeout = 0.5
    fake_openai.script("ref-a", Reply.text_reply("a prompt draft"))
    fake_openai.script("fake", Reply.text_reply("the answer"))
    settings = moa_settings(fake_openai, [REF_A], timeoutS=timeout)
    warm_up = SlowWarmUp(3 * timeout)
    session = make_session(tmp_path, settings, provider=provider_for(settings, warm_up=warm_up))
    events = Recorder()
    session.subscribe(events)

    await session.prompt("Which parser?")

    (end,) = events.of(MoaReferenceEnd)
    assert end.answer.error is None and end.answer.text == "a prompt draft"
    (hit,) = fake_openai.hits_for("ref-a")
    assert warm_up.finished_at is not None and hit.received_at > warm_up.finished_at
    assert [h.model for h in fake_openai.hits] == ["ref-a", "fake"]


# --- the advisory view ---------------------------------------------------------------------------
def sent_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


async def test_each_reference_gets_the_advisory_view_trimmed_to_its_own_window(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    (tmp_path / "work").mkdir()
    notes = "".join(f"line {n:05d} of the notes\n" for n in range(1000))  # 24,000 characters
    (tmp_path / "work" / "notes.txt").write_text(notes)
    fake_openai.script(
        "fake",
        Reply.tools(ToolCall("read", {"path": "notes.txt"}, id="call_notes")),
        Reply.text_reply("The notes count lines."),
        Reply.text_reply("The aggregated answer."),
    )
    fake_openai.script("ref-a", Reply.text_reply("draft A"))
    fake_openai.script("ref-b", Reply.text_reply("draft B"))
    settings = moa_settings(fake_openai, [REF_A, REF_B], enabled=False)
    # ref-b: a 1,500-token window and 500-token replies, so only the latest message fits its view.
    settings.models[REF_B] = settings.models[REF_B].model_copy(
        update={"context_window": 1_500, "max_output_tokens": 500}
    )
    session = make_session(tmp_path, settings)
    await session.prompt("Read notes.txt")
    session.set_moa(True)

    await session.prompt("What do the notes say?")

    (result,) = [
        e["message"]
        for e in session.store.get_branch()
        if (e.get("message") or {}).get("role") == "toolResult"
    ]
    output = result["content"][0]["text"]
    assert len(output) > 4_000
    preview = head_and_tail(output, 4_000)
    (a,) = fake_openai.hits_for("ref-a")
    (b,) = fake_openai.hits_for("ref-b")
    assert a.body["messages"][1:] == [
        {"role": "user", "content": "Read notes.txt"},
        {
            "role": "assistant",
            "content": '[called tool read with {"path":"notes.txt"}]\n\n'
            f"[read returned:\n{preview}\n]\n\n"
            "The notes count lines.",
        },
        {"role": "user", "content": "What do the notes say?"},
    ]
    assert b.body["messages"][1:] == [
        {
            "role": "user",
            "content": "[2 earlier messages of this conversation are left out, so that it fits your "
            "context window.]\n\nWhat do the notes say?",
        }
    ]
    for hit in (a, b):
        assert "tools" not in hit.body and "tool_calls" not in sent_text(hit.body)
        assert {m["role"] for m in hit.body["messages"]} <= {"system", "user", "assistant"}
        assert "cannot run tools" in hit.body["messages"][0]["content"]
    assert a.body["max_tokens"] == REFERENCE_MAX_TOKENS and b.body["max_tokens"] == 500
    # The aggregator still acts on the real conversation, with its tools and the drafts.
    aggregator = fake_openai.hits_for("fake")[-1].body
    assert aggregator["tools"] and any(m.get("tool_calls") for m in aggregator["messages"])
    assert "draft A" in sent_text(aggregator) and "draft B" in sent_text(aggregator)


def test_the_view_ends_on_a_user_turn_and_keeps_the_latest_one_within_budget() -> None:
    messages = [
        {"role": "assistant", "content": [{"type": "text", "text": "orphan reply"}], "stopReason": "stop"},
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "data": "AAAA"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "half"}], "stopReason": "error"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "toolCall", "name": "ls", "arguments": {}},
            ],
            "stopReason": "toolUse",
        },
        {
            "role": "toolResult",
            "toolName": "ls",
            "isError": True,
            "content": [{"type": "text", "text": "denied"}],
        },
    ]
    turns = render_view(messages)
    assert [role for role, _ in turns] == ["user", "assistant", "user"]
    assert turns[0][1] == "look\n[an image is here, which the advisers are not shown]"
    assert turns[1][1] == "[called tool ls with {}]\n\n[ls returned an error:\ndenied\n]"
    assert "judge the state of the work" in turns[2][1]
    (write,) = render_view(
        [
            {"role": "user", "content": "write it"},
            {
                "role": "assistant",
                "content": [{"type": "toolCall", "name": "write", "arguments": {"content": "y" * 50_000}}],
            },
        ],
        tool_result_chars=1_000,
    )[1:2]
    assert len(write[1]) < 1_100 and "characters left out" in write[1]
    long = [("user", "x" * 10_000)]
    (only,) = fit_view(long, 500)
    text = only["content"][0]["text"]
    assert (
        len(text) <= 2_000 and "characters left out" in text and text.startswith("x") and text.endswith("x")
    )


# --- an aggregator with a smaller window overflows ------------------------------------------------
AGGREGATOR = "openai/aggregator"
AGGREGATOR_WINDOW = 12_000


def estimated_tokens(body: dict[str, Any]) -> int:
    """chars/4 of everything a request carried (messages and tool definitions)."""
    return len(json.dumps(body["messages"]) + json.dumps(body.get("tools", []))) // 4


async def summarize(system_prompt: str, prompt: str, max_tokens: int) -> str:
    return "SUMMARY of the first question"


def overflow_settings(server: FakeOpenAI) -> Settings:
    settings = moa_settings(server, [REF_A], routed=(AGGREGATOR,), aggregator=AGGREGATOR, enabled=False)
    settings.models[AGGREGATOR] = settings.models[AGGREGATOR].model_copy(
        update={"context_window": AGGREGATOR_WINDOW}
    )
    compaction = settings.compaction.model_copy(update={"keep_recent_tokens": 200, "auto_continue": False})
    return settings.model_copy(update={"compaction": compaction})


async def test_an_overflowing_aggregator_is_compacted_for_its_window_and_retried_with_the_drafts(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    draft = "DRAFT-HEAD " + "d" * 24_000 + " DRAFT-TAIL"  # ~6,000 tokens, half the aggregator's window
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "big.txt").write_text("a" * 16_000)  # ~4,000 tokens of tool output
    fake_openai.script(
        "fake", Reply.tools(ToolCall("read", {"path": "big.txt"})), Reply.text_reply("Read it.")
    )
    fake_openai.script("ref-a", Reply.text_reply(draft, chunk_size=4096))
    fake_openai.script(
        "aggregator",
        Reply.context_overflow(limit=AGGREGATOR_WINDOW, requested=15_000),
        Reply.text_reply("the recovered answer"),
    )
    session = make_session(tmp_path, overflow_settings(fake_openai), summarize=summarize)
    await session.prompt("first question: read big.txt")
    session.set_moa(True)
    events = Recorder()
    session.subscribe(events)

    outcome = await session.prompt("second question")

    first, retried = fake_openai.hits_for("aggregator")
    # The first request already fitted the drafts to the small window: cut in the middle.
    assert "DRAFT-HEAD" in sent_text(first.body) and "DRAFT-TAIL" in sent_text(first.body)
    assert "characters left out" in sent_text(first.body)
    assert "a" * 16_000 in sent_text(first.body)
    assert estimated_tokens(first.body) < AGGREGATOR_WINDOW
    # It overflowed anyway: the session compacted for the aggregator's window and retried once.
    compactions = [e for e in session.store.get_branch() if e["type"] == "compaction"]
    assert len(compactions) == 1
    assert "SUMMARY of the first question" in sent_text(retried.body)
    assert "a" * 16_000 not in sent_text(retried.body)
    assert draft in sent_text(retried.body)  # with room again, the whole draft
    assert estimated_tokens(retried.body) < AGGREGATOR_WINDOW
    assert outcome is not None and outcome.reason == "stop"
    assert outcome.message is not None and outcome.message["model"] == "aggregator"
    replies = [
        e["message"]
        for e in session.store.get_branch()
        if (e.get("message") or {}).get("role") == "assistant"
    ]
    assert replies[-1]["content"][0]["text"] == "the recovered answer"
    assert all(m["stopReason"] != "error" for m in replies)  # the overflow error left the path
    assert not [n for n in events.of(Notice) if n.level == "error"]
    ends = events.of(CompactionEnd)
    assert [(e.reason, e.outcome, e.will_retry) for e in ends] == [("overflow", "result", True)]
    assert len(fake_openai.hits_for("ref-a")) == 1  # the drafts were not asked for again


async def test_with_nothing_to_compact_the_retry_halves_the_drafts_and_a_second_overflow_is_reported(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    draft = "DRAFT-HEAD " + "d" * 20_000 + " DRAFT-TAIL"
    fake_openai.script(
        "ref-a", Reply.text_reply(draft, chunk_size=4096), Reply.text_reply(draft, chunk_size=4096)
    )
    fake_openai.script(
        "aggregator",
        Reply.context_overflow(limit=AGGREGATOR_WINDOW),
        Reply.text_reply("answered with shorter drafts"),
        Reply.context_overflow(limit=AGGREGATOR_WINDOW),
        Reply.context_overflow(limit=AGGREGATOR_WINDOW),
    )
    settings = overflow_settings(fake_openai)
    settings = settings.model_copy(update={"moa": settings.moa.model_copy(update={"enabled": True})})
    session = make_session(tmp_path, settings, summarize=summarize)
    events = Recorder()
    session.subscribe(events)

    outcome = await session.prompt("first question")  # nothing before it to compact

    first, retried = fake_openai.hits_for("aggregator")
    assert draft in sent_text(first.body)
    assert "DRAFT-HEAD" in sent_text(retried.body) and "characters left out" in sent_text(retried.body)
    assert len(sent_text(retried.body)) < len(sent_text(first.body)) - 8_000
    assert outcome is not None and outcome.reason == "stop"
    assert not [n for n in events.of(Notice) if n.level == "error"]

    outcome = await session.prompt("second question")  # overflows on the retry too: reported, no loop

    assert len(fake_openai.hits_for("aggregator")) == 4
    assert outcome is not None and outcome.reason == "error"
    (error,) = [n for n in events.of(Notice) if n.level == "error"]
    assert AGGREGATOR in error.text and "after one compact-and-retry attempt" in error.text


def test_the_view_takes_damaged_content_without_raising() -> None:
    messages = [
        {"role": "user", "content": None},
        {"role": "user", "content": ["loose", 5, {"type": "text", "text": None}, {"type": "image"}]},
        {"role": "assistant", "content": [{"type": "toolCall", "name": None, "arguments": [1, 2]}, "x"]},
        {"role": "toolResult", "content": None, "toolName": 5},
        {"role": "assistant", "content": "a bare string"},
    ]
    assert render_view(messages) == [
        ("user", "[an image is here, which the advisers are not shown]"),
        ("assistant", "[called tool tool with [1,2]]\n\n[5 returned:\n\n]\n\na bare string"),
        ("user", render_view([{"role": "user", "content": "q"}, messages[-1]])[-1][1]),
    ]


async def test_a_reference_whose_window_has_no_room_is_left_out_without_a_call(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script("ref-a", Reply.text_reply("draft A"))
    fake_openai.script("fake", Reply.text_reply("answer"))
    settings = moa_settings(fake_openai, [REF_A, REF_B])
    settings.models[REF_B] = settings.models[REF_B].model_copy(
        update={"context_window": 1_000, "max_output_tokens": 900}
    )
    session = make_session(tmp_path, settings)
    events = Recorder()
    session.subscribe(events)

    await session.prompt("Which parser?")

    assert [hit.model for hit in fake_openai.hits] == ["ref-a", "fake"]
    (failed,) = [e.answer for e in events.of(MoaReferenceEnd) if not e.ok]
    assert failed.model == REF_B and "(1,000 tokens) leaves no room" in (failed.error or "")
    assert "draft A" in sent_text(fake_openai.hits_for("fake")[0].body)
