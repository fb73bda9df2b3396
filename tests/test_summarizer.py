"""Summary generation (pi §6, §4.5) with Hermes' guards, and the deterministic fallback (deviation 5)."""

from __future__ import annotations

import asyncio

import pytest

import prompts
from tests import factories as f
from tests.compaction_helpers import T100, RecordingSummarizer, is_short_summary_prompt, msg, scripted
from tui.compaction.errors import SummaryError
from tui.compaction.fallback import MAX_CHARS, build_fallback_summary
from tui.compaction.plan import CompactionPlan, prepare_compaction
from tui.compaction.summarizer import (
    RETURNS_SHORT_SUMMARY,
    SummaryBudgets,
    SummaryText,
    build_summary_prompt,
    end_marker,
    generate_summary,
    generate_turn_prefix_summary,
    strip_end_marker,
    summarize_plan,
)
from tui.compaction.summary_input import summarizer_transcript

BUDGETS = SummaryBudgets.from_reserve(16384, 100_000)


def plan_of(entries, keep: int) -> CompactionPlan:
    plan = prepare_compaction(f.chain(entries), keep_recent_tokens=keep, calibrate=False)
    assert isinstance(plan, CompactionPlan), plan
    return plan


def test_budgets_follow_pi_and_are_capped_by_the_output_limit():
    assert SummaryBudgets.from_reserve(16384, 100_000) == SummaryBudgets(13107, 8192, 512)
    assert SummaryBudgets.from_reserve(16384, 4000) == SummaryBudgets(4000, 4000, 512)  # pi #4390
    assert SummaryBudgets.from_reserve(1000, 100_000) == SummaryBudgets(800, 500, 200)


def test_prompt_blocks_come_in_pi_order():
    prompt = build_summary_prompt(
        "[User]: hi",
        "BASE",
        previous_summary="OLD NOTES\n\n" + end_marker(),
        additional_context=["first", "second"],
        custom_instructions="  the database  ",
    )
    assert prompt == (
        "<conversation>\n[User]: hi\n</conversation>\n\n"
        "<previous-summary>\nOLD NOTES\n</previous-summary>\n\n"
        "<additional-context>\n- first\n- second\n</additional-context>\n\n"
        "BASE\n\nAdditional focus: the database"
    )


async def test_first_summary_uses_the_initial_prompt_and_the_system_prompt():
    fake = RecordingSummarizer()
    text = await generate_summary([msg(f.user("hello"))], fake, 1234)
    assert text == "NOTES"
    (call,) = fake.calls
    assert call.system == prompts.load("summary_system")
    assert call.max_tokens == 1234
    assert call.prompt.endswith(prompts.load("summary_initial"))
    assert "<previous-summary>" not in call.prompt


async def test_iterative_update_sends_the_previous_summary_without_its_end_marker():
    fake = RecordingSummarizer()
    previous = "EARLIER NOTES\n\n" + end_marker()
    await generate_summary([msg(f.user("more"))], fake, 100, previous_summary=previous)
    prompt = fake.calls[0].prompt
    assert "<previous-summary>\nEARLIER NOTES\n</previous-summary>" in prompt
    assert end_marker() not in prompt
    assert prompt.endswith(prompts.load("summary_update"))


async def test_prompt_override_replaces_the_base_prompt_but_keeps_the_focus():
    fake = RecordingSummarizer()
    await generate_summary(
        [msg(f.user("x"))], fake, 100, custom_instructions="tests", prompt_override="MY PROMPT"
    )
    assert fake.calls[0].prompt.endswith("MY PROMPT\n\nAdditional focus: tests")


async def test_turn_prefix_gets_no_previous_summary_and_no_focus():
    fake = RecordingSummarizer()
    await generate_turn_prefix_summary([msg(f.user("x"))], fake, 50)
    prompt = fake.calls[0].prompt
    assert prompt.endswith(prompts.load("summary_turn_prefix"))
    assert "Additional focus" not in prompt and "<previous-summary>" not in prompt


def test_transcript_replaces_images_and_truncates_long_tool_output():
    image_user = {
        "role": "user",
        "content": [
            {"type": "text", "text": "see"},
            {"type": "image", "data": "QUJD", "mimeType": "image/png"},
        ],
    }
    text = summarizer_transcript([image_user, msg(f.tool_result("c", "bash", "y" * 5000, images=1))])
    assert prompts.load("summary_image_placeholder") in text
    assert "QUJD" not in text and "AAAA" not in text
    assert "y" * 2000 + "\n\n[... 3" in text  # 2000 kept; the placeholder also counts in the rest
    assert "y" * 2001 not in text


async def test_failures_and_empty_answers_raise_summary_errors():
    with pytest.raises(SummaryError, match=r"^Summarization failed: boom"):
        await generate_summary([msg(f.user("x"))], RecordingSummarizer(fail=RuntimeError("boom")), 10)
    with pytest.raises(SummaryError, match="no text"):
        await generate_summary([msg(f.user("x"))], RecordingSummarizer(reply=lambda p: "  \n"), 10)


async def test_reasoning_blocks_are_removed_from_the_answer():
    fake = RecordingSummarizer(reply=lambda p: "<think>pondering</think>\n## Objective\nFix it")
    assert await generate_summary([msg(f.user("x"))], fake, 10) == "## Objective\nFix it"


def _split_entries():
    return [
        f.user("first task " + T100),
        f.assistant("done " + T100),
        f.user("second task " + T100),
        f.assistant("step", [f.tool_call("read", {"path": "/src/a.py"}, "c1")]),
        f.tool_result("c1", "read", T100),
        f.assistant("more " + T100),
        f.assistant("and more " + T100),
    ]


async def test_split_turn_runs_two_summaries_and_merges_them():
    plan = plan_of(_split_entries(), keep=150)
    assert plan.is_split_turn and plan.messages_to_summarize and plan.turn_prefix_messages
    fake = RecordingSummarizer(reply=scripted())
    result = await summarize_plan(plan, fake, BUDGETS)
    assert result.summary.startswith(
        "HISTORY NOTES\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX NOTES\n\n<read-files>\n/src/a.py\n"
    )
    assert result.summary.endswith("\n\n" + end_marker())
    assert '<tool-calls>\n- read(path="/src/a.py")\n</tool-calls>' in result.summary
    assert result.read_files == ["/src/a.py"] and result.modified_files == []
    assert result.short_summary == "SHORT"
    budgets = sorted(c.max_tokens for c in fake.calls)
    assert budgets == [512, 8192, 13107]


async def test_split_turn_without_history_carries_the_previous_summary_forward():  # deviation 3
    entries = [
        f.user("old " + T100),
        f.assistant("old " + T100),
        f.compaction("PREVIOUS NOTES\n\n" + end_marker(), 2),
        f.user("big task " + T100),
        f.assistant("a " + T100),
        f.assistant("b " + T100),
        f.assistant("c " + T100),
    ]
    plan = plan_of(entries, keep=150)
    assert plan.history_empty and plan.previous_summary
    fake = RecordingSummarizer(reply=scripted())
    result = await summarize_plan(plan, fake, BUDGETS)
    assert result.summary.startswith(
        "PREVIOUS NOTES\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX NOTES"
    )
    assert result.summary.count(end_marker()) == 1
    assert prompts.load("summary_no_history") not in result.summary
    assert not fake.prompts_containing("Write handoff notes")  # no history call


async def test_split_turn_without_any_history_says_so():
    entries = [f.user("big task " + T100), f.assistant("a " + T100), f.assistant("b " + T100)]
    plan = plan_of(entries, keep=150)
    assert plan.history_empty and plan.previous_summary is None
    result = await summarize_plan(plan, RecordingSummarizer(reply=scripted()), BUDGETS)
    assert result.summary.startswith(prompts.load("summary_no_history") + "\n\n---\n\n**Turn Context")


async def test_short_summary_failure_keeps_the_main_summary():
    plan = plan_of([*_split_entries()[:3], f.assistant("x " + T100)], keep=150)

    def reply(prompt: str) -> str:
        if is_short_summary_prompt(prompt):
            raise RuntimeError("short model down")
        return "MAIN"

    result = await summarize_plan(plan, RecordingSummarizer(reply=reply), BUDGETS)
    assert result.summary.startswith("MAIN")
    assert result.short_summary is None
    assert "short model down" in result.short_summary_error


async def test_a_short_summary_that_comes_with_the_answer_is_not_asked_for_again():
    plan = plan_of([*_split_entries()[:3], f.assistant("x " + T100)], keep=150)
    # A summarizer that says it sends the short summary along (as remote_summarize_fn does).
    fake = RecordingSummarizer(reply=lambda p: SummaryText("MAIN", "ALREADY SHORT"))
    setattr(fake, RETURNS_SHORT_SUMMARY, True)
    result = await summarize_plan(plan, fake, BUDGETS)
    assert result.short_summary == "ALREADY SHORT"
    assert not any(is_short_summary_prompt(c.prompt) for c in fake.calls)
    # When such an answer comes without one, it is asked for after all.
    fake = RecordingSummarizer(reply=lambda p: "SHORT" if is_short_summary_prompt(p) else SummaryText("MAIN"))
    setattr(fake, RETURNS_SHORT_SUMMARY, True)
    assert (await summarize_plan(plan, fake, BUDGETS)).short_summary == "SHORT"


async def test_short_summary_reads_the_whole_story_not_the_new_notes():
    # It runs beside the main summary, so it cannot read the notes being written: it reads the
    # earlier notes, the messages being compacted and the kept ones.
    entries = [
        f.user("old " + T100),
        f.compaction("EARLIER NOTES", 0),
        f.user("first task " + T100),
        f.assistant("done " + T100),
        f.user("second task " + T100),
        f.assistant("kept reply " + T100),
    ]
    plan = plan_of(entries, keep=150)
    fake = RecordingSummarizer(reply=scripted(history="THE NOTES"))
    await summarize_plan(plan, fake, BUDGETS, additional_context=["hook line"])
    (short_prompt,) = [c.prompt for c in fake.calls if is_short_summary_prompt(c.prompt)]
    assert "first task" in short_prompt and "kept reply" in short_prompt
    assert "<previous-summary>\nEARLIER NOTES\n</previous-summary>" in short_prompt
    assert "THE NOTES" not in short_prompt
    assert "- hook line" in short_prompt


async def test_short_summary_starts_while_the_main_summary_is_still_running():
    plan = plan_of([*_split_entries()[:3], f.assistant("x " + T100)], keep=150)
    gate = asyncio.Event()
    fake = RecordingSummarizer(reply=scripted(), gate=gate)
    job = asyncio.ensure_future(summarize_plan(plan, fake, BUDGETS))
    # Both calls are made before either answers (the gate holds every answer back).
    while len(fake.calls) < 2:
        await asyncio.sleep(0)
        assert not job.done()
    assert sorted(is_short_summary_prompt(c.prompt) for c in fake.calls) == [False, True]
    gate.set()
    result = await job
    assert result.short_summary == "SHORT" and result.summary.startswith("HISTORY NOTES")


async def test_a_failed_main_summary_cancels_the_short_one():
    plan = plan_of([*_split_entries()[:3], f.assistant("x " + T100)], keep=150)
    started, cancelled = asyncio.Event(), []

    async def summarize(system: str, prompt: str, max_tokens: int) -> str:
        if is_short_summary_prompt(prompt):
            started.set()
            try:
                await asyncio.Event().wait()  # only a cancellation ends it
            except asyncio.CancelledError:
                cancelled.append(True)
                raise
        await started.wait()
        raise RuntimeError("main model down")

    with pytest.raises(SummaryError, match="main model down"):
        await summarize_plan(plan, summarize, BUDGETS)
    assert cancelled == [True]  # nothing is left running unobserved


def test_strip_end_marker_cuts_everything_after_it():
    assert strip_end_marker("A\n\n" + end_marker() + "\ntrailing") == "A"
    assert strip_end_marker("no marker") == "no marker"


def test_fallback_holds_goal_tools_files_errors_and_the_last_request():
    messages = [
        msg(f.user("Goal: make   the parser fast")),
        msg(f.assistant("", [f.tool_call("read", {"path": "src/p.py"}, "c1")])),
        msg(f.tool_result("c1", "read", "ok")),
        msg(f.assistant("", [f.tool_call("bash", {"command": "pytest -q"}, "c2")])),
        msg(f.tool_result("c2", "bash", "1 failed: AssertionError", is_error=True)),
        msg(f.user("now also update the docs")),
    ]
    text = build_fallback_summary(
        messages,
        read_files=["src/p.py"],
        modified_files=["docs/x.md"],
        previous_summary="OLDER NOTES\n\n" + end_marker(),
        reason="Summarization failed: 500",
    )
    assert "Goal: make the parser fast" in text
    assert "- read: src/p.py" in text and "- bash: pytest -q\n" in text
    assert "- src/p.py" in text and "- docs/x.md" in text
    assert "- bash: 1 failed: AssertionError" in text
    assert "> now also update the docs" in text
    assert "OLDER NOTES" in text and end_marker() not in text
    assert "Summarization failed: 500" in text and "6 message(s)" in text


def test_fallback_errors_are_failures_not_the_word_error_in_a_file():
    """QA: the demo's offline /compact listed four file reads of parser code ("raise ValueError") as errors."""
    code = "def parse_line(raw: bytes) -> dict:\n    if not raw:\n        raise ValueError('empty line')"
    messages = [
        msg(f.user("fix the parser")),
        msg(f.tool_result("c1", "read", code)),
        msg(f.tool_result("c2", "grep", "src/p.py:3: except JSONDecodeError as error:")),
        msg(f.tool_result("c3", "bash", "collected 3 items\nTraceback (most recent call last):\n  boom")),
        msg(f.tool_result("c4", "bash", "all 3 tests passed; no error")),
        msg(f.tool_result("c5", "edit", "old text not found", is_error=True)),
    ]
    errors = build_fallback_summary(messages).split("### Errors Seen\n", 1)[1].split("\n\n", 1)[0]
    assert errors.splitlines() == [
        "- bash: collected 3 items Traceback (most recent call last): boom",
        "- edit: old text not found",
    ]


def test_fallback_says_a_focus_was_not_applied():
    text = build_fallback_summary([msg(f.user("hi"))], focus="  the   tests ")
    assert 'The focus asked for ("the tests") was not applied' in text and "summary model" in text
    assert "focus" not in build_fallback_summary([msg(f.user("hi"))]).lower()


def test_fallback_without_user_messages_and_its_size_cap():
    huge = [msg(f.tool_result(f"c{i}", "bash", "failed " + "z" * 400)) for i in range(5)]
    text = build_fallback_summary(huge, previous_summary="P" * 20_000)
    assert prompts.load("summary_fallback_none") in text
    assert len(text) <= MAX_CHARS


async def test_an_offline_compaction_with_a_focus_stores_the_note_that_it_was_not_applied(tmp_path) -> None:
    from tests.compaction_helpers import coding_session, compaction_settings, new_store
    from tui.compaction.engine import compact_session

    store = new_store(tmp_path, coding_session())
    result = await compact_session(
        store,
        reason="manual",
        settings=compaction_settings(),
        summarize=None,
        context_window=100_000,
        max_output_tokens=8000,
        custom_instructions="focus on the tests",
    )
    assert 'The focus asked for ("focus on the tests") was not applied' in result.entry["summary"]
