"""The head-tail strategy (Hermes §1.2, §2.3, §2.4, §3, §4.1, §8): threshold, estimate, head, tail, bridge,
tool groups, the stored pi compaction, the merge with the previous summary and the progress rule."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import factories as f
from tests.compaction_helpers import (
    RecordingSummarizer,
    compaction_settings,
    is_short_summary_prompt,
    msg,
    new_store,
    scripted,
)
from tests.path_strategies import paths
from tui.compaction import head_tail as ht
from tui.compaction.boundary import tokens_before
from tui.compaction.engine import CompactionResult, compact_session, compaction_due
from tui.compaction.head_tail_summary import summarize_head_tail
from tui.compaction.plan import PlanSkip
from tui.compaction.summarizer import SummaryBudgets, end_marker
from tui.session.context import build_session_context, message_text
from tui.session.entries import validate_entry
from tui.session.store import SessionStore

# --- threshold (§1.2 worked table, §8 behaviours 1–10) ---------------------------------------------------


@pytest.mark.parametrize(
    ("window", "percent", "threshold", "tail", "max_summary"),
    [
        (64_000, 0.75, 54_400, 10_880, 3_200),
        (100_000, 0.75, 75_000, 15_000, 5_000),
        (128_000, 0.75, 96_000, 19_200, 6_400),
        (200_000, 0.75, 150_000, 30_000, 10_000),
        (1_000_000, 0.50, 500_000, 100_000, 10_000),
    ],
)
def test_worked_threshold_table(window, percent, threshold, tail, max_summary):
    row = ht.compute_threshold(window, 0.50)
    assert row.percent == percent
    assert row.threshold_tokens == threshold
    assert row.tail_budget == tail
    assert row.max_summary_tokens == max_summary


@pytest.mark.parametrize("window", [128_000, 200_000, 262_144, 511_999])
def test_small_windows_use_three_quarters(window):
    assert ht.compute_threshold(window, 0.50).threshold_tokens == int(window * 0.75)


def test_a_higher_percent_wins_over_the_floor_and_the_trigger_is_inclusive():
    row = ht.compute_threshold(100_000, 0.85)
    assert row.threshold_tokens == 85_000
    assert ht.compute_threshold(1_000_000, 0.9).threshold_tokens == 900_000


def test_output_reservation_and_cap():
    assert ht.compute_threshold(200_000, 0.5, max_tokens=65_536).threshold_tokens == 100_848
    assert ht.compute_threshold(200_000, 0.5, cap=40_000).threshold_tokens == 40_000
    assert ht.compute_threshold(200_000, 0.5, cap=900_000).threshold_tokens == 150_000
    # A reservation as large as the window is ignored rather than giving a negative window.
    assert ht.compute_threshold(64_000, 0.5, max_tokens=64_000).threshold_tokens == 54_400


def test_degenerate_window_keeps_the_threshold_below_the_window():
    row = ht.compute_threshold(32_000, 0.5)
    assert row.threshold_tokens == int(32_000 * 0.85) < row.effective_window
    assert ht.compute_threshold(1, 0.5).threshold_tokens == 1


@pytest.mark.parametrize(("ratio", "clamped"), [(0.05, 0.10), (0.95, 0.80), (0.3, 0.3)])
def test_target_ratio_is_clamped(ratio, clamped):
    row = ht.compute_threshold(200_000, 0.5, target_ratio=ratio)
    assert row.tail_budget == int(150_000 * clamped)


def test_summary_target_stays_between_floor_and_ceiling():
    assert ht.summary_target_tokens(100, 10_000) == 2_000
    assert ht.summary_target_tokens(30_000, 10_000) == 6_000
    assert ht.summary_target_tokens(10_000_000, 10_000) == 10_000


# --- the estimate (§3) -------------------------------------------------------------------------------------


def test_estimate_counts_the_whole_tool_call_envelope():
    one = msg(f.assistant(tool_calls=[f.tool_call("read", {"path": "a.py"}, "c1")]))
    four = msg(f.assistant(tool_calls=[f.tool_call("read", {"path": f"{i}.py"}, f"c{i}") for i in range(4)]))
    bare = msg(f.assistant())
    assert ht.estimate_message_tokens(bare) == ht.MESSAGE_OVERHEAD_TOKENS
    per_call = ht.estimate_message_tokens(one) - ht.MESSAGE_OVERHEAD_TOKENS
    # More than the name and arguments alone: id, type and the JSON-string arguments are on the wire.
    assert per_call > (len("read") + len('{"path":"a.py"}')) // 4
    assert ht.estimate_message_tokens(four) - ht.MESSAGE_OVERHEAD_TOKENS >= 4 * per_call - 4


def test_estimate_counts_replay_fields_and_images():
    text = msg(f.assistant("x" * 400))
    thinking = msg(f.assistant("x" * 400, thinking="t" * 800))
    thinking["content"][0]["thinkingSignature"] = "s" * 400
    assert ht.estimate_message_tokens(thinking) - ht.estimate_message_tokens(text) == 300
    replay = {**text, "reasoning_content": "r" * 4000}
    assert ht.estimate_message_tokens(replay) - ht.estimate_message_tokens(text) == 1000
    image = msg(f.tool_result("c", "read", "", images=2))
    assert ht.estimate_message_tokens(image) == 2 * ht.IMAGE_TOKENS + ht.MESSAGE_OVERHEAD_TOKENS


def test_trigger_and_plan_use_the_same_estimate():
    path = f.chain(_session(turns=10, size=400))
    messages, tokens = ht.context_size(path)
    assert messages == len(path)
    plan = _plan(path)
    assert plan.estimated_tokens == tokens == sum(plan.entry_tokens.values())
    # The stored tokensBefore is pi 0.73.1's figure, as for keep-recent (delta A.3).
    assert plan.tokens_before == tokens_before(path)
    config = ht.HeadTailConfig()
    # With no reservation, a window whose threshold equals the estimate triggers; one token less does not.
    window = int(tokens / 0.85) + 1
    limit = config.threshold(window, 0).threshold_tokens
    assert ht.should_compact(path, window, 0, config) == (tokens >= limit)
    assert ht.should_compact(path, 10_000, 0, config)
    assert not ht.should_compact(path, 1_000_000, 0, config)


# --- progress (§4.1, §8 behaviour 13) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "tokens", "progress"),
    [
        ((10, 5), (1_000, 1_000), True),
        ((10, 10), (1_000, 970), False),
        ((10, 10), (1_000, 940), True),
        ((10, 10), (1_000, 1_000), False),
        ((10, 10), (0, 0), False),
    ],
)
def test_progress_rule(counts, tokens, progress):
    assert ht.made_progress(counts[0], counts[1], tokens[0], tokens[1]) is progress


# --- head, tail, bridge ------------------------------------------------------------------------------------


def _turn(n: int, size: int, tool_size: int | None = None) -> list[dict]:
    call = f"c{n}"
    return [
        f.user(f"request {n} " + "u" * size),
        f.assistant("looking", [f.tool_call("read", {"path": f"f{n}.py"}, call)]),
        f.tool_result(call, "read", "r" * (tool_size if tool_size is not None else size * 8)),
        f.assistant(f"done {n} " + "a" * size),
    ]


def _session(turns: int, size: int) -> list[dict]:
    return [entry for n in range(turns) for entry in _turn(n, size)]


def _plan(path, window=20_000, reserve=0, **config) -> ht.HeadTailPlan:
    plan = ht.plan_head_tail(
        path, context_window=window, reserve_tokens=reserve, config=ht.HeadTailConfig(**config)
    )
    assert isinstance(plan, ht.HeadTailPlan)
    return plan


def _ids(path, lo, hi):
    return [e["id"] for e in path[lo:hi]]


def test_head_is_the_first_messages_with_their_tool_results():
    path = f.chain(_session(turns=12, size=400))
    plan = _plan(path)
    assert plan.head_entry_ids == _ids(path, 0, 3)
    plan = _plan(path, protect_first_n=2)
    # The assistant's results stay with it: the head grows over them instead of splitting the group.
    assert plan.head_entry_ids == _ids(path, 0, 3)
    assert _plan(path, protect_first_n=0).head_entry_ids == []


def test_tail_respects_the_soft_ceiling_and_the_latest_request():
    path = f.chain(_session(turns=12, size=400))
    plan = _plan(path)
    budget = plan.threshold.tail_budget
    assert plan.kept_tokens <= budget * ht.SOFT_CEILING
    latest_request = max(i for i, e in enumerate(path) if e["message"]["role"] == "user")
    assert plan.first_kept_index <= latest_request
    # Head, middle and tail cover the path exactly once, in order.
    assert plan.head_entry_ids + plan.summarize_entry_ids + plan.kept_entry_ids == [e["id"] for e in path]
    assert plan.first_kept_entry_id == plan.kept_entry_ids[0]


def test_minimum_tail_count_beats_the_budget():
    path = f.chain(_session(turns=6, size=4_000))  # every message is over the whole budget
    plan = _plan(path, protect_last_n=20)
    assert len(plan.kept_entry_ids) >= 3
    assert ht.MAX_TAIL_MESSAGE_FLOOR == 8
    assert len(_plan(path, protect_last_n=1).kept_entry_ids) >= 3


def test_whole_transcript_under_the_soft_ceiling_still_summarises_something():
    path = f.chain(_session(turns=3, size=40))
    plan = _plan(path, window=1_000_000)
    assert plan.summarize_entry_ids and plan.kept_entry_ids


def test_latest_request_far_back_is_kept_in_the_tail():
    path = _turn(0, 400) + _turn(1, 400)
    path.append(f.user("please refactor everything"))
    for n in range(20):
        path += _turn(100 + n, 400)[1:3]  # a long tool run after the request
    path = f.chain(path)
    plan = _plan(path)
    request = next(
        i for i, e in enumerate(path) if message_text(e["message"]) == "please refactor everything"
    )
    assert plan.first_kept_index <= request
    assert plan.pinned_entry_ids == []


def test_bridge_rule_opens_the_tail_with_the_assistant_turn_before_the_request():
    path = _session(turns=8, size=400)
    path[-1] = f.assistant("a long answer " + "a" * 8_000)
    path += [f.user("what next?"), f.assistant("one"), f.assistant("two"), f.assistant("three")]
    path = f.chain(path)
    request = len(path) - 4
    plan = _plan(path, window=4_000, protect_last_n=3)
    # The walk stops at the request (the long answer before it is over the budget); the bridge moves the
    # cut back so that the tail opens with that answer, not with the request.
    assert plan.bridged
    assert plan.first_kept_index == request - 1
    assert path[plan.first_kept_index]["message"]["role"] == "assistant"
    assert plan.first_kept_index > len(plan.head_entry_ids)
    # A request right after a tool group bridges to the group's assistant, results included.
    path = _session(turns=7, size=400) + _turn(7, 400, tool_size=8_000)[:-1]
    path += [f.user("what next?"), f.assistant("one"), f.assistant("two"), f.assistant("three")]
    path = f.chain(path)
    plan = _plan(path, window=4_000, protect_last_n=3)
    assert plan.bridged and plan.first_kept_index == len(path) - 6
    assert _sections(plan)[path[len(path) - 5]["id"]] == "tail"


def test_causal_coupling_pins_the_request_when_it_cannot_open_the_tail():
    entries = [f.user("fix every test")]
    for n in range(12):
        entries += [*_turn(n, 400)[1:3], f.assistant(f"step {n} " + "a" * 400)]
    # A keep-recent compaction kept the request: the head has decayed and the request is the first message.
    entries.append(f.compaction("earlier notes", first_kept=0, tokens_before=9_000))
    entries += _turn(60, 400)[1:]
    path = f.chain(entries)
    plan = _plan(path, window=4_000)
    assert plan.head_entry_ids == []
    assert plan.previous_summary == "earlier notes"
    assert plan.pinned_entry_ids == [path[0]["id"]]
    assert plan.protected_messages == [path[0]["message"]]
    assert plan.summarize_entry_ids[0] == path[0]["id"]
    # In the protected copy or in the summary, not both.
    assert all(m is not path[0]["message"] for m in plan.messages_to_summarize)
    assert len(plan.messages_to_summarize) == len(plan.summarize_entry_ids) - 1


def test_too_small_and_already_compacted_are_skips():
    small = f.chain(_session(turns=1, size=400))
    assert isinstance(ht.plan_head_tail(small, context_window=20_000, reserve_tokens=0), PlanSkip)
    done = f.chain([*_session(turns=8, size=400), f.compaction("s", first_kept=20)])
    skip = ht.plan_head_tail(done, context_window=20_000, reserve_tokens=0)
    assert isinstance(skip, PlanSkip) and skip.reason == "already_compacted"


# --- tool-pair integrity (§8 behaviours 20–21), property test ---------------------------------------------


def _sections(plan: ht.HeadTailPlan) -> dict[str, str]:
    where = dict.fromkeys(plan.head_entry_ids, "head")
    where.update(dict.fromkeys(plan.summarize_entry_ids, "middle"))
    where.update(dict.fromkeys(plan.kept_entry_ids, "tail"))
    return where


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paths(min_chunks=12, max_chunks=40), st.integers(2_000, 60_000), st.integers(0, 5))
def test_no_tool_result_is_separated_from_its_call(path, window, first_n):
    plan = ht.plan_head_tail(
        path, context_window=window, reserve_tokens=0, config=ht.HeadTailConfig(protect_first_n=first_n)
    )
    if isinstance(plan, PlanSkip):
        return
    where = _sections(plan)
    by_id = {e["id"]: e for e in path}
    calls: dict[str, str] = {}  # call id → entry id of the latest assistant that made it
    for entry in path:
        if entry["id"] not in where:
            continue
        message = entry.get("message") or {}
        if message.get("role") == "assistant":
            for block in message.get("content") or ():
                if block.get("type") == "toolCall":
                    calls[block["id"]] = entry["id"]
        elif message.get("role") == "toolResult" and message["toolCallId"] in calls:
            assert where[entry["id"]] == where[calls[message["toolCallId"]]]
    tail_start = (
        by_id[plan.first_kept_entry_id]["message"]["role"]
        if "message" in by_id[plan.first_kept_entry_id]
        else None
    )
    assert tail_start != "toolResult"
    # The latest request is always kept: in the head, in the tail, or pinned word for word.
    requests = [e["id"] for e in path if e["id"] in where and ht._is_request(e.get("message") or {})]
    if requests:
        assert where[requests[-1]] in ("head", "tail") or plan.pinned_entry_ids == [requests[-1]]


# --- the stored entry and the merge (§2.4, §2.6) -----------------------------------------------------------


def _store(tmp_path, entries) -> SessionStore:
    return new_store(tmp_path, [e["message"] for e in entries])


async def _compact(store, summarizer, **settings_fields):
    settings = compaction_settings(strategy="head-tail", reserve=0, **settings_fields)
    return await compact_session(
        store,
        reason="manual",
        settings=settings,
        summarize=summarizer,
        context_window=20_000,
        max_output_tokens=4_000,
    )


async def test_stored_entry_is_a_normal_pi_compaction_with_the_head_folded_in(tmp_path):
    store = _store(tmp_path, _session(turns=12, size=400))
    summarizer = RecordingSummarizer(
        reply=lambda prompt: "SHORT" if "at most three" in prompt else "MIDDLE NOTES"
    )
    result = await _compact(store, summarizer)
    assert isinstance(result, CompactionResult) and not result.no_progress
    entry = result.entry
    validate_entry(entry)
    meta = entry["details"]["kompakt"]
    path = store.get_branch()
    ids = [e["id"] for e in path]
    assert meta["strategy"] == "head-tail"
    assert meta["headEntryIds"] == ids[:3]
    assert meta["tailStartId"] == entry["firstKeptEntryId"]
    assert meta["protectedRanges"]["head"] == [ids[0], ids[2]]
    tail_from = ids.index(entry["firstKeptEntryId"])
    assert meta["middleEntryIds"] == ids[3:tail_from]
    assert meta["protectedRanges"]["tail"] == [ids[tail_from], ids[-2]]

    # pi's reader: the summary, then the kept tail, and nothing of the middle.
    context = build_session_context(list(store.entries))
    assert context.messages[0]["role"] == "compactionSummary"
    assert context.entry_ids[1:] == ids[tail_from:-1]
    summary = context.messages[0]["summary"]
    head_text = message_text(path[0]["message"])
    assert summary.index(head_text) < summary.index("MIDDLE NOTES")
    assert summary.endswith(end_marker())
    assert summary[: meta["headChars"]].count("<protected-messages>") == 1
    assert "request 5" not in summary  # the middle is summarised, not copied

    # The first call uses the structured sections (our wording) with a size target.
    (first, *_) = summarizer.calls
    assert "## Historical Task Snapshot" in first.prompt and "## Critical Context" in first.prompt
    assert "<previous-summary>" not in first.prompt
    reopened = SessionStore.open(store.path, read_only=True)
    assert reopened.build_context().messages[0]["summary"] == summary


async def test_recompaction_merges_the_previous_notes_and_drops_the_head(tmp_path):
    store = _store(tmp_path, _session(turns=12, size=400))
    summarizer = RecordingSummarizer(
        reply=lambda prompt: "SHORT" if "at most three" in prompt else "FIRST NOTES"
    )
    first = await _compact(store, summarizer)
    for entry in _session(turns=10, size=400):
        store.append_message({**entry["message"], "content": entry["message"]["content"]})
    summarizer.calls.clear()
    summarizer.reply = lambda prompt: "SHORT" if "at most three" in prompt else "SECOND NOTES"
    second = await _compact(store, summarizer)
    assert isinstance(second, CompactionResult)
    prompt = summarizer.calls[0].prompt
    # The update variant, with the previous notes (without the copied head) in <previous-summary> …
    assert "Merge the two into one checkpoint" in prompt
    previous = prompt.split("<previous-summary>")[1].split("</previous-summary>")[0]
    assert "FIRST NOTES" in previous and "<protected-messages>" not in previous
    assert end_marker() not in previous
    # … and the formerly protected head is now part of the middle being summarised.
    conversation = prompt.split("<conversation>")[1].split("</conversation>")[0]
    assert "request 0 " in conversation
    meta = second.entry["details"]["kompakt"]
    assert meta["headEntryIds"] == [] and meta["protectedRanges"]["head"] is None
    assert first.entry["details"]["kompakt"]["headEntryIds"][0] in meta["middleEntryIds"]
    summary = store.build_context().messages[0]["summary"]
    assert summary.startswith("SECOND NOTES") and "request 0 " not in summary


async def test_fallback_summary_also_carries_the_head(tmp_path):
    store = _store(tmp_path, _session(turns=12, size=400))
    result = await _compact(store, RecordingSummarizer(fail=RuntimeError("down")))
    assert isinstance(result, CompactionResult) and result.summary_source == "fallback"
    summary = result.entry["summary"]
    assert summary.startswith(result.entry["summary"][: result.entry["details"]["kompakt"]["headChars"]])
    assert "request 0 " in summary[: result.entry["details"]["kompakt"]["headChars"]]


async def test_progress_counts_messages_as_hermes_does(tmp_path):
    # The middle is three tiny messages and the summary is bigger than them: the tokens do not drop by 5 %
    # (pi's rule would call it no progress), but three messages became one, which Hermes counts.
    entries = [f.user("a"), f.assistant("b"), f.user("c"), f.assistant("d")]
    entries += [
        f.user("x" * 40_000),
        f.assistant("y" * 40_000),
        f.user("z" * 40_000),
        f.assistant("w" * 40_000),
    ]
    store = _store(tmp_path, entries)
    result = await _compact(
        store, RecordingSummarizer(reply=lambda p: "N" * 4_000), head_tail_protect_first=0
    )
    assert isinstance(result, CompactionResult)
    assert result.entry["details"]["kompakt"]["middleEntryIds"] == [e["id"] for e in store.get_branch()[:3]]
    assert result.tokens_after > 0.95 * result.tokens_before
    assert not result.no_progress


def test_compaction_due_follows_the_strategy():
    path = f.chain(_session(turns=10, size=400))
    _, tokens = ht.context_size(path)
    head_tail = compaction_settings(strategy="head-tail", reserve=0)
    keep_recent = compaction_settings(reserve=0)
    # Head-tail ignores the usage figure and uses its own estimate against its own threshold.
    assert compaction_due(path, head_tail, 10_000, context_tokens=0)
    assert not compaction_due(path, head_tail, 1_000_000, context_tokens=10**9)
    assert compaction_due(path, keep_recent, 100_000, context_tokens=100_001)
    assert not compaction_due(path, keep_recent, 100_000, context_tokens=tokens)
    disabled = compaction_settings(strategy="head-tail", reserve=0, enabled=False)
    assert not compaction_due(path, disabled, 10_000, context_tokens=0)


def test_a_reserve_that_fills_the_window_never_triggers_either_strategy():
    # threshold = window − reserve ≤ 0 would fire on every turn, and no summary can make room.
    path = f.chain(_session(turns=10, size=400))
    for strategy in ("keep-recent", "head-tail"):
        settings = compaction_settings(strategy=strategy, reserve=100_000)
        assert not compaction_due(path, settings, 100_000, context_tokens=10**9)
        assert compaction_due(path, compaction_settings(strategy=strategy, reserve=99_000), 100_000, 10**9)


async def test_head_tail_short_summary_runs_beside_the_notes():  # issue 11 item 5
    plan = _plan(f.chain(_session(turns=12, size=400)))
    gate = asyncio.Event()
    fake = RecordingSummarizer(reply=scripted(history="NOTES"), gate=gate)
    job = asyncio.ensure_future(summarize_head_tail(plan, fake, SummaryBudgets.from_reserve(16384, 100_000)))
    while len(fake.calls) < 2:  # both calls are open before either answers
        await asyncio.sleep(0)
        assert not job.done()
    assert sorted(is_short_summary_prompt(c.prompt) for c in fake.calls) == [False, True]
    gate.set()
    result = await job
    assert result.short_summary == "SHORT" and result.summary.startswith("NOTES")
    # It reads the middle and the tail (the messages), not the notes being written.
    (short_prompt,) = [c.prompt for c in fake.calls if is_short_summary_prompt(c.prompt)]
    assert "request 5" in short_prompt and "done 11" in short_prompt and "NOTES" not in short_prompt


def test_the_last_assistant_message_with_text_stays_in_the_tail():  # Hermes §2.3 step 6, #29824
    path = _turn(0, 400)[:3]  # the one request is in the protected head
    path += [
        f.assistant("", [f.tool_call("bash", {"command": "setup"}, "s")]),
        f.tool_result("s", "bash", "o" * 800),
    ]
    path.append(f.assistant("here is my plan: first the parser, then the docs " + "p" * 400))
    for n in range(20):  # a long silent tool run after it
        call = f"s{n}"
        path += [
            f.assistant("", [f.tool_call("bash", {"command": f"step {n}"}, call)]),
            f.tool_result(call, "bash", "o" * 3_200),
        ]
    path = f.chain(path)
    plan = _plan(path)
    spoken = next(i for i, e in enumerate(path) if "here is my plan" in message_text(e["message"]))
    assert plan.first_kept_index == spoken
    assert plan.head_entry_ids == _ids(path, 0, 3) and plan.summarize_entry_ids == _ids(path, 3, 5)


async def test_fallback_takes_the_goal_from_the_protected_head(tmp_path):
    store = _store(tmp_path, _session(turns=12, size=400))
    result = await _compact(store, RecordingSummarizer(fail=RuntimeError("down")))
    assert isinstance(result, CompactionResult) and result.summary_source == "fallback"
    notes = result.entry["summary"][result.entry["details"]["kompakt"]["headChars"] :]
    objective = notes.split("## Objective\n", 1)[1].split("\n", 1)[0]
    assert objective.startswith("request 0 ")  # the head's request, not the first one in the middle
