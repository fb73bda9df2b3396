"""Snapshot host for the compaction timeline: a fixed compacted session, no clocks, no spinner.

Run as a file by pytest-textual-snapshot; ``expanded`` opens the full panel (with the context by
category and the chart), ``pointed`` selects a segment and the past compaction. The what-if is nudged to a keep of 9k so the ghost boundary differs from
the current settings.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.timeline_helpers import KEEP, RESERVE, WINDOW, compacted_path
from widgets.timeline import CompactionTimeline


class TimelineApp(App[None]):
    CSS = """
    Screen { layout: vertical; }
    #chat { height: 1fr; }
    #prompt { height: 3; border: round $primary; }
    """

    def __init__(
        self,
        expanded: bool = False,
        what_if: tuple[int, int] | None = (9_000, RESERVE),
        pointed: bool = False,
    ) -> None:
        super().__init__()
        self.expanded = expanded
        self.what_if = what_if
        self.pointed = pointed

    def compose(self) -> ComposeResult:
        yield Static("chat", id="chat")
        yield CompactionTimeline(id="timeline")
        yield Static("prompt", id="prompt")

    def on_mount(self) -> None:
        from tui.compaction.breakdown import context_breakdown

        path = compacted_path(usage=True)
        timeline = self.query_one(CompactionTimeline)
        timeline.breakdown_source = lambda: context_breakdown(
            path, context_window=WINDOW, reserve_tokens=RESERVE
        )
        timeline.update_timeline(path, WINDOW, RESERVE, KEEP)
        if self.what_if is not None:
            timeline.set_what_if(*self.what_if)
        timeline.expanded = self.expanded
        if self.pointed:  # a kept tool result on the bar, and the past compaction in the panel
            segments = timeline.timeline.segments
            timeline.select_segment(
                next(i for i, s in enumerate(segments) if s.region == "kept" and s.kind == "tool")
            )
            timeline.action_walk_past(1)
        timeline.focus()


app = TimelineApp()

if __name__ == "__main__":
    app.run()
