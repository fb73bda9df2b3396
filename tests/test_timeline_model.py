"""The headless compaction timeline: regions, boundary, budgets, usage-scaled widths and the what-if.

The hand-built path (tests/timeline_helpers.py) has exact estimates: an old turn is 500 + 7 + 6000
+ 500 = 7007 tokens, a recent turn 250 + 7 + 3000 + 250 = 3507, the summary 2000.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from bench.gen_session import generate
from tests import factories as f
from tests.timeline_helpers import KEEP, RESERVE, WINDOW, compacted_path
from tui.cli import main
from tui.compaction.plan import PlanSkip, prepare_compaction
from tui.compaction.timeline import (
    REGION_AFTER,
    REGION_KEPT,
    REGION_SUMMARISED,
    REGION_SUMMARY,
    SOURCE_ESTIMATE,
    SOURCE_USAGE,
    build_timeline,
)
from tui.session.store import SessionStore

OLD_TURN = 7007
RECENT_TURN = 3507
SUMMARY = 2000


def timeline_of(path, **overrides):
    settings = {"context_window": WINDOW, "reserve_tokens": RESERVE, "keep_recent_tokens": KEEP, **overrides}
    return build_timeline(path, **settings)


def test_regions_and_boundary_after_a_compaction() -> None:
    path = compacted_path()
    timeline = timeline_of(path)
    regions = {s.index: s.region for s in timeline.segments}
    assert all(regions[i] == REGION_SUMMARISED for i in range(8))
    assert all(regions[i] == REGION_KEPT for i in range(8, 12))
    assert regions[12] == REGION_SUMMARY
    assert all(regions[i] == REGION_AFTER for i in range(13, len(path)))
    assert timeline.boundary_id == path[8]["id"] == f.entry_id(8)
    assert timeline.boundary_index == 8
    assert timeline.compaction_id == path[12]["id"]
    kinds = [s.kind for s in timeline.segments[8:13]]
    assert kinds == ["user", "assistant", "tool", "assistant", "compaction"]


def test_widths_positions_and_context_size_from_estimates() -> None:
    timeline = timeline_of(compacted_path())
    assert timeline.ratio is None
    assert {s.source for s in timeline.segments} == {SOURCE_ESTIMATE}
    assert all(s.tokens == s.estimate for s in timeline.segments)
    assert timeline.region_tokens == {
        REGION_SUMMARISED: 2 * OLD_TURN,
        REGION_KEPT: OLD_TURN,
        REGION_SUMMARY: SUMMARY,
        REGION_AFTER: 4 * RECENT_TURN,
    }
    # Context coordinates: the kept entry starts at 0, the summarised history lies before it.
    assert timeline.positions[8] == 0
    assert timeline.summarised_start == -2 * OLD_TURN
    assert timeline.context_end == OLD_TURN + SUMMARY + 4 * RECENT_TURN == timeline.context_tokens
    assert all(a.end == b.start for a, b in zip(timeline.segments, timeline.segments[1:], strict=False))


def test_threshold_percent_and_keep_span() -> None:
    timeline = timeline_of(compacted_path())
    assert timeline.threshold == WINDOW - RESERVE
    assert timeline.percent == pytest.approx(timeline.context_tokens / WINDOW * 100)
    span = timeline.keep_span
    assert not span.clipped
    assert span.keep_tokens == KEEP
    assert span.end == timeline.context_end
    assert span.end - span.start == KEEP  # every entry is a message, so the span is exactly the budget
    # Larger than the planner's range: the span stops where the range starts, at the entry the
    # compaction kept (pi 0.73.1; with 0.58.3's boundary it stopped after the compaction, entry 13).
    wide = timeline_of(compacted_path(), keep_recent_tokens=50_000).keep_span
    assert wide.clipped
    assert wide.start == timeline.positions[8] == 0


def test_usage_scales_widths_to_the_real_context_size() -> None:
    path = compacted_path(usage=True)
    timeline = timeline_of(path)
    estimated = OLD_TURN + SUMMARY + 4 * RECENT_TURN
    usage_total = 9_800 + 4 * 3_600 + 250
    assert timeline.ratio == pytest.approx(usage_total / estimated)
    assert timeline.context_tokens == usage_total
    assert timeline.overhead_tokens == 0
    assert timeline.context_end == usage_total
    for segment in timeline.segments:
        assert segment.source == SOURCE_USAGE
        assert abs(segment.tokens - segment.estimate * timeline.ratio) <= 1
    # Entries after the last reported usage are plain estimates on top of it.
    path.append(f.user(f.text_of(400)))
    f.chain(path)
    grown = timeline_of(path)
    assert grown.segments[-1].source == SOURCE_ESTIMATE
    assert grown.segments[-1].tokens == 100
    assert grown.context_end == grown.context_tokens == usage_total + 100
    # Without calibration the widths stay estimates.
    assert {s.source for s in timeline_of(path, calibrate=False).segments} == {SOURCE_ESTIMATE}


def test_usage_the_entries_cannot_explain_becomes_overhead() -> None:
    path = f.chain(
        [f.user(f.text_of(400)), f.assistant(f.text_of(400), usage=f.usage(input=4_900, output=100))]
    )
    timeline = timeline_of(path)
    assert timeline.ratio == 8.0  # clamped: a 3k system prompt is not a property of the entries
    assert [s.tokens for s in timeline.segments] == [800, 800]
    assert timeline.overhead_tokens == 5_000 - 1_600
    assert timeline.segments[0].start == timeline.overhead_tokens
    assert timeline.context_end == timeline.context_tokens == 5_000


def test_without_a_compaction_everything_is_after() -> None:
    path = f.chain([f.user(f.text_of(40)), f.assistant(f.text_of(80)), f.label(f.entry_id(0), "x")])
    timeline = timeline_of(path)
    assert [s.region for s in timeline.segments] == [REGION_AFTER, REGION_AFTER]
    assert len(timeline.segments) == 2  # the label carries no context
    assert timeline.boundary_id is None and timeline.boundary_index is None
    assert timeline.compactions == ()
    assert isinstance(timeline.what_if.plan, PlanSkip)
    assert timeline.what_if.position is None


def test_past_compactions_with_reasons_and_tokens_after() -> None:
    first = compacted_path(reason="manual")
    second_part = [f.compaction(f.text_of(1_200), first_kept=21, tokens_before=30_000)]
    path = f.chain(first + second_part + [f.user(f.text_of(100))])
    timeline = timeline_of(path)
    older, latest = timeline.compactions
    assert (older.index, older.reason, older.tokens_after, older.tokens_after_recorded) == (
        12,
        "manual",
        9_100,
        True,
    )
    assert older.duration_ms == 3_200
    assert older.tokens_before == 21_000
    assert older.first_kept_entry_id == f.entry_id(8)
    # No kompakt record: the reason is unknown and "after" is the summary plus the kept estimate.
    assert latest.reason == "unknown"
    assert latest.duration_ms is None
    assert not latest.tokens_after_recorded
    assert latest.tokens_after == 300 + 2 * RECENT_TURN
    # The older summary left the context: it is a zero-width marker in the summarised region.
    older_segment = next(s for s in timeline.segments if s.index == 12)
    assert (older_segment.region, older_segment.tokens) == (REGION_SUMMARISED, 0)
    assert timeline.boundary_index == 21


def test_unknown_reason_values_are_not_trusted() -> None:
    path = compacted_path(reason="\x1b[31mrm -rf")
    assert timeline_of(path).compactions[0].reason == "unknown"


@pytest.mark.parametrize("keep", [500, 2_000, 3_600, 6_000, 9_000, 15_000])
def test_what_if_is_prepare_compaction(keep: int) -> None:
    path = compacted_path(usage=True)
    timeline = timeline_of(path, what_if=(keep, 4_000))
    plan = prepare_compaction(path, keep_recent_tokens=keep, reserve_tokens=4_000)
    assert timeline.what_if.plan.to_json() == plan.to_json()
    assert timeline.what_if.threshold == WINDOW - 4_000
    if not isinstance(plan, PlanSkip):
        assert timeline.what_if.first_kept_entry_id == plan.first_kept_entry_id
        assert timeline.what_if.position == timeline.positions[plan.first_kept_index]
        # A cut before the compaction keeps its entry, whose summary the new one replaces: not counted.
        summary = next(s.tokens for s in timeline.segments if s.index == 12)
        old_summary = summary if plan.first_kept_index < 12 else 0
        assert timeline.what_if.kept_tokens + old_summary == timeline.context_end - timeline.what_if.position
    # Re-planning an existing timeline gives the same answer as building it with the what-if.
    replanned = timeline_of(path).with_what_if(path, keep, 4_000)
    assert replanned.what_if.plan.to_json() == plan.to_json()
    assert replanned.what_if.keep_span == timeline.what_if.keep_span


def test_what_if_boundary_moves_when_keep_changes() -> None:
    path = compacted_path()
    positions = []
    for keep in (1_000, 4_000, 8_000, 12_000):
        what_if = timeline_of(path, what_if=(keep, RESERVE)).what_if
        assert what_if.position is not None
        positions.append(what_if.position)
        # The range starts at the kept turn 3 (pi 0.73.1): it is summarised again or kept again.
        total = what_if.summarise_tokens + what_if.turn_prefix_tokens + what_if.kept_tokens
        assert total == OLD_TURN + 4 * RECENT_TURN
    assert positions == sorted(positions, reverse=True)
    assert len(set(positions)) == len(positions)


def test_current_settings_are_the_default_what_if() -> None:
    timeline = timeline_of(compacted_path())
    assert (timeline.what_if.keep_recent_tokens, timeline.what_if.reserve_tokens) == (KEEP, RESERVE)
    assert timeline.what_if.plan.to_json() == prepare_compaction(compacted_path(), KEEP, RESERVE).to_json()


def test_already_compacted_is_a_skip() -> None:
    path = f.chain(compacted_path()[:13])
    what_if = timeline_of(path).what_if
    assert what_if.skipped
    assert what_if.skip_message == PlanSkip("already_compacted").message


def test_pruned_outputs_count_at_their_pruned_size() -> None:
    path = compacted_path()
    tool = path[15]
    path.append(f.custom("kompakt.prune", {"entries": {tool["id"]: 3_000}}))
    f.chain(path)
    segment = next(s for s in timeline_of(path).segments if s.index == 15)
    assert segment.tokens == segment.estimate < 3_000


def test_what_if_matches_kompakt_plan_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = generate(tmp_path / "s.jsonl", entries=700, seed=5, big_output_lines=40)
    path = SessionStore.open(session, read_only=True).get_branch()
    first_kept = []
    for keep in (2_000, 6_000, 12_000):
        assert main(["plan", str(session), "--keep-recent-tokens", str(keep), "--json"]) == 0
        cli = json.loads(capsys.readouterr().out)
        what_if = timeline_of(path, what_if=(keep, RESERVE)).what_if
        assert what_if.first_kept_entry_id == cli["firstKeptEntryId"]
        assert what_if.first_kept_index == cli["firstKeptIndex"]
        assert what_if.is_split_turn == cli["isSplitTurn"]
        first_kept.append(cli["firstKeptIndex"])
    assert first_kept == sorted(first_kept, reverse=True) and len(set(first_kept)) == 3


def test_bench_session_boundary_is_the_latest_compaction(tmp_path: Path) -> None:
    session = generate(tmp_path / "s.jsonl", entries=1_500, seed=2, big_output_lines=30)
    lines = [orjson.loads(line) for line in session.read_bytes().splitlines()[1:]]
    path = SessionStore.open(session, read_only=True).get_branch()
    latest = max((i for i, e in enumerate(path) if e["type"] == "compaction"), default=None)
    assert latest is not None and len(lines) > len(path)
    timeline = timeline_of(path, context_window=200_000, reserve_tokens=16_384, keep_recent_tokens=20_000)
    assert timeline.compaction_index == latest
    assert timeline.boundary_id == path[latest]["firstKeptEntryId"]
    assert path[timeline.boundary_index]["id"] == timeline.boundary_id
    assert len(timeline.compactions) == sum(e["type"] == "compaction" for e in path)


def test_usage_from_before_the_compaction_does_not_count_after_it() -> None:
    # The kept region's assistant reported the old, large context; right after the compaction the
    # timeline must show the estimate of what is left (summary + kept + after), as pi's stale rule says.
    path = f.chain(
        [
            f.user(f.text_of(4000)),
            f.assistant(f.text_of(400)),
            f.user(f.text_of(400)),
            f.assistant(f.text_of(400), usage=f.usage(input=150_000, output=100)),
            f.compaction(f.text_of(800), first_kept=2),
        ]
    )
    timeline = timeline_of(path)
    assert timeline.context_tokens < 10_000
    assert timeline.usage_tokens == 0


def test_default_strategy_matches_the_settings_default() -> None:
    from tui.compaction.timeline import DEFAULT_STRATEGY
    from tui.config.model import CompactionSettings

    assert CompactionSettings().strategy == DEFAULT_STRATEGY
