"""The timeline with the head-tail strategy: head/middle/tail regions of a head-tail compaction, the
what-if for both strategies (model and widget), and switching the strategy redrawing at once."""

from __future__ import annotations

import re

import pytest
from textual.app import App, ComposeResult
from textual.message import Message

from tests import factories as f
from tests.pages import until
from tests.timeline_helpers import KEEP, RESERVE, WINDOW, compacted_path
from tui.compaction.head_tail import HeadTailConfig, HeadTailPlan, plan_head_tail
from tui.compaction.plan import CompactionPlan, prepare_compaction
from tui.compaction.timeline import (
    REGION_AFTER,
    REGION_HEAD,
    REGION_KEPT,
    REGION_SUMMARISED,
    REGION_SUMMARY,
    STRATEGY_HEAD_TAIL,
    STRATEGY_KEEP_RECENT,
    build_timeline,
)
from tui.compaction.tokens import estimate_tokens
from widgets.timeline import CompactionTimeline
from widgets.timeline_layout import BarLayout


def head_tail_path() -> list[dict]:
    """``compacted_path`` whose compaction is a head-tail one protecting turn 1 (entries 0–2)."""
    path = compacted_path()
    ids = [e["id"] for e in path]
    path[12]["details"]["kompakt"].update(
        {
            "strategy": "head-tail",
            "headEntryIds": ids[0:3],
            "pinnedEntryIds": [],
            "middleEntryIds": ids[3:8],
            "tailStartId": ids[8],
            "protectedRanges": {"head": [ids[0], ids[2]], "tail": [ids[8], ids[11]]},
            "headChars": 0,
        }
    )
    return path


async def test_the_what_ifs_head_says_it_is_an_estimate():
    """D11: '+ head 6.5k' in the what-if was the one figure there without its ≈."""
    from tests.timeline_helpers import turn

    path = f.chain(
        [e for n in range(1, 7) for e in turn(n, user_tokens=500, tool_tokens=6_000, reply_tokens=500)]
    )
    app = Host(path, strategy=STRATEGY_HEAD_TAIL)
    async with app.run_test(size=(160, 24)) as pilot:
        await until(pilot, lambda: "head-tail" in rows(app.query_one(CompactionTimeline))[2])
        widget = app.query_one(CompactionTimeline)
        status = rows(widget)[2]
        head = widget.timeline.what_if.head_tokens
        assert head and f"+ head ≈{head / 1000:.1f}k" in status, status
        assert all(part.startswith("≈") for part in status.split("◆")[1].split()[1:] if part[0].isdigit()), (
            status
        )


def test_head_tail_compaction_draws_head_middle_and_tail():
    path = head_tail_path()
    timeline = build_timeline(path, context_window=WINDOW, reserve_tokens=RESERVE, keep_recent_tokens=KEEP)
    regions = {s.index: s.region for s in timeline.segments}
    assert [regions[i] for i in range(3)] == [REGION_HEAD] * 3
    assert [regions[i] for i in range(3, 8)] == [REGION_SUMMARISED] * 5
    assert [regions[i] for i in range(8, 12)] == [REGION_KEPT] * 4
    assert regions[12] == REGION_SUMMARY and regions[13] == REGION_AFTER
    head = sum(s.tokens for s in timeline.segments if s.region == REGION_HEAD)
    assert timeline.region_tokens[REGION_HEAD] == head == sum(estimate_tokens(e["message"]) for e in path[:3])
    assert head > 6_500  # the user prompt, the call and its 6k output
    # A keep-recent compaction has no head region at all.
    plain = build_timeline(
        compacted_path(), context_window=WINDOW, reserve_tokens=RESERVE, keep_recent_tokens=KEEP
    )
    assert REGION_HEAD not in plain.region_tokens
    assert REGION_HEAD not in {s.region for s in plain.segments}


def test_what_if_runs_the_configured_strategy_and_switches():
    path = compacted_path()
    config = HeadTailConfig(protect_last_n=3)
    timeline = build_timeline(
        path,
        context_window=WINDOW,
        reserve_tokens=RESERVE,
        keep_recent_tokens=KEEP,
        strategy=STRATEGY_HEAD_TAIL,
        head_tail=config,
    )
    expected = plan_head_tail(path, context_window=WINDOW, reserve_tokens=RESERVE, config=config)
    assert isinstance(expected, HeadTailPlan)
    what_if = timeline.what_if
    assert what_if.strategy == STRATEGY_HEAD_TAIL and isinstance(what_if.plan, HeadTailPlan)
    assert what_if.first_kept_entry_id == expected.first_kept_entry_id
    assert timeline.threshold == what_if.threshold == expected.threshold.threshold_tokens
    assert what_if.keep_span.keep_tokens == expected.threshold.tail_budget
    assert what_if.position == timeline.positions[expected.first_kept_index]
    assert what_if.kept_tokens == timeline.positions[-1] - timeline.positions[expected.first_kept_index]

    switched = timeline.with_what_if(path, KEEP, RESERVE, STRATEGY_KEEP_RECENT)
    pi_plan = prepare_compaction(path, keep_recent_tokens=KEEP, reserve_tokens=RESERVE)
    assert isinstance(switched.what_if.plan, CompactionPlan)
    assert switched.what_if.first_kept_entry_id == pi_plan.first_kept_entry_id
    # The timeline itself (threshold, regions) stays that of the configured strategy.
    assert switched.threshold == timeline.threshold and switched.segments == timeline.segments


def test_head_tail_what_if_on_a_fresh_session_copies_the_head():
    path = f.chain([entry for n in range(6) for entry in _turn(n)])
    timeline = build_timeline(
        path,
        context_window=WINDOW,
        reserve_tokens=RESERVE,
        keep_recent_tokens=KEEP,
        strategy=STRATEGY_HEAD_TAIL,
    )
    what_if = timeline.what_if
    assert isinstance(what_if.plan, HeadTailPlan)
    assert what_if.plan.head_entry_ids == [e["id"] for e in path[:3]]
    assert what_if.head_tokens == timeline.positions[3] - timeline.positions[0] > 0
    assert what_if.summarise_tokens == timeline.positions[what_if.first_kept_index] - timeline.positions[3]


def _turn(n: int) -> list[dict]:
    call = f"c{n}"
    return [
        f.user(f.text_of(2_000)),
        f.assistant(tool_calls=[f.tool_call("read", {"path": f"f{n}.py"}, call)]),
        f.tool_result(call, "read", f.text_of(12_000)),
        f.assistant(f.text_of(2_000)),
    ]


class Host(App[None]):
    def __init__(self, path: list[dict], strategy: str | None = None) -> None:
        super().__init__()
        self.path = path
        self.strategy = strategy
        self.received: list[Message] = []

    def compose(self) -> ComposeResult:
        yield CompactionTimeline()

    def on_mount(self) -> None:
        widget = self.query_one(CompactionTimeline)
        widget.update_timeline(self.path, WINDOW, RESERVE, KEEP, strategy=self.strategy)
        widget.focus()

    def on_compaction_timeline_strategy_changed(self, message: CompactionTimeline.StrategyChanged) -> None:
        self.received.append(message)

    def on_compaction_timeline_compact_now_requested(
        self, message: CompactionTimeline.CompactNowRequested
    ) -> None:
        self.received.append(message)


def rows(widget: CompactionTimeline) -> list[str]:
    return [widget.render_line(y).text for y in range(widget.size.height)]


async def test_switching_the_strategy_redraws_the_ghost_at_once():
    app = Host(compacted_path())
    async with app.run_test(size=(80, 24)) as pilot:
        await until(
            pilot,
            lambda: (
                app.query_one(CompactionTimeline).what_if_strategy == STRATEGY_KEEP_RECENT
                and "head-tail" not in rows(app.query_one(CompactionTimeline))[2]
            ),
        )
        widget = app.query_one(CompactionTimeline)
        assert widget.what_if_strategy == STRATEGY_KEEP_RECENT
        assert "head-tail" not in rows(widget)[2]
        await pilot.press("ctrl+t")
        assert widget.what_if_strategy == STRATEGY_HEAD_TAIL
        assert [m.strategy for m in app.received] == [STRATEGY_HEAD_TAIL]
        markers, _bar, status = rows(widget)
        assert "◆ head-tail: summarise ≈" in status
        assert " tail " in markers  # the bracket now shows the tail budget
        await pilot.press("enter")
        assert app.received[-1].strategy == STRATEGY_HEAD_TAIL
        await pilot.press("ctrl+r")
        assert widget.what_if_strategy == STRATEGY_KEEP_RECENT
        assert "head-tail" not in rows(widget)[2]


async def test_head_region_is_drawn_on_the_bar_and_in_the_legend():
    app = Host(head_tail_path(), strategy=STRATEGY_HEAD_TAIL)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: rows(app.query_one(CompactionTimeline))[1][0] == "▒")
        widget = app.query_one(CompactionTimeline)
        _markers, bar, status = rows(widget)
        layout = BarLayout(widget.timeline, 78)
        head_cells = [
            c for c, cell in enumerate(layout.cells) if cell.left == REGION_HEAD and cell.right is None
        ]
        assert head_cells and head_cells[0] == 0
        assert bar[head_cells[0]] == "▒"
        # Head first, then the hatched middle, then the kept tail.
        first_middle = next(c for c, cell in enumerate(layout.cells) if cell.left == REGION_SUMMARISED)
        first_kept = next(c for c, cell in enumerate(layout.cells) if cell.left.startswith(REGION_KEPT))
        assert head_cells[-1] < first_middle < first_kept
        assert "head-tail" in status
        await pilot.press("space")
        await until(
            pilot,
            lambda: (
                rows(widget)[3].startswith("▒ head ≈6.5k")
                and "What-if (head-tail)" in "\n".join(rows(widget))
            ),
        )
        legend = rows(widget)[3]
        assert legend.startswith("▒ head ≈6.5k")
        assert "What-if (head-tail)" in "\n".join(rows(widget))


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_the_legend_keeps_what_the_estimate_mark_means_at_80_and_100_columns(size):
    """D11: at 80 columns the legend's '≈ estimate' was the first thing cut (and with a head, a prune or
    the system overhead it went); each region's size is an estimate and says ≈. The legend wraps instead."""
    path = head_tail_path()
    path.append(f.custom("kompakt.prune", {"entries": {path[18]["id"]: 900}}))
    app = Host(path, strategy=STRATEGY_HEAD_TAIL)
    async with app.run_test(size=size) as pilot:
        widget = app.query_one(CompactionTimeline)
        await until(pilot, lambda: widget.timeline is not None and rows(widget)[1][0] == "▒")
        await pilot.press("space")
        await until(pilot, lambda: any("What-if" in row for row in rows(widget)))
        text = "\n".join(rows(widget))
        assert re.search(r"≈ estimate( \(chars/4\))?, unmarked: (provider )?usage", text), text
        for item in (
            "▒ head ≈",
            "░ summarised ≈",
            "█ summary ≈",
            "█ kept ≈",
            "█ after ≈",
            "█ tool",
            "1 pruned, ≈",
        ):
            assert item in text, (item, text)
        assert "…" not in text, text
