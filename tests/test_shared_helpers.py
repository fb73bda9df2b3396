"""One home each for the token formatter and for "the text of a message" (issue 12 item 7).

Nine places formatted token counts with their own code and seven joined a message's text blocks. They now
call :func:`tui.compaction.token_text.format_tokens` and :func:`tui.session.content.content_text`. The
table below was taken from the old formatters before they were folded (so each place shows what it
showed before), and a scan of the source keeps new copies out.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tui.compaction.history import tokens_short as divider_tokens
from tui.compaction.token_text import format_tokens
from tui.export.chart import _short as chart_tokens
from tui.export.common import _round_k as export_title_tokens
from tui.screens.inspector import _tokens as inspector_tokens
from tui.screens.model_picker import format_tokens as picker_tokens
from tui.session.content import content_text
from widgets.chat_messages import result_text, tokens_k, user_text
from widgets.moa_group import _tokens as moa_tokens
from widgets.status_bar import short_tokens as status_tokens
from widgets.timeline import format_tokens as timeline_tokens

ROOT = Path(__file__).resolve().parents[1]
COUNTS = [0, 7, 999, 1000, 1049, 1050, 1499, 1500, 2500, 9_949, 9_950, 9_999, 10_000, 12_345, 45_210]
COUNTS += [999_949, 999_999, 1_000_000, 1_049_999, 1_500_000, 12_345_678]

# What each place showed for COUNTS before the formatters were folded into one.
BEFORE = {
    timeline_tokens: "0 7 999 1k 1k 1.1k 1.5k 1.5k 2.5k 9.9k 9.9k 10k 10k 12.3k 45.2k 999.9k 1000k 1M 1M 1.5M 12.3M",
    status_tokens: "0 7 999 1.0k 1.0k 1.1k 1.5k 1.5k 2.5k 9.9k 9.9k 10.0k 10.0k 12.3k 45.2k 999.9k 1000.0k 1.0M 1.0M "
    "1.5M 12.3M",
    divider_tokens: "0 7 999 1.0k 1.0k 1.1k 1.5k 1.5k 2.5k 9.9k 9.9k 10.0k 10.0k 12.3k 45.2k 999.9k 1000.0k 1.0M 1.0M "
    "1.5M 12.3M",
    chart_tokens: "0 7 999 1.0k 1.0k 1.1k 1.5k 1.5k 2.5k 9.9k 9.9k 10.0k 10.0k 12.3k 45.2k 999.9k 1000.0k 1000.0k "
    "1050.0k 1500.0k 12345.7k",
    inspector_tokens: "0 7 999 1.0k 1.0k 1.1k 1.5k 1.5k 2.5k 9.9k 9.9k 10.0k 10.0k 12.3k 45.2k 999.9k 1000.0k 1000.0k "
    "1050.0k 1500.0k 12345.7k",
    tokens_k: "0 7 999 1k 1k 1k 1k 2k 2k 10k 10k 10k 10k 12k 45k 1000k 1000k 1000k 1050k 1500k 12346k",
    picker_tokens: "— 7 999 1k 1k 1k 1k 2k 2k 10k 10k 10k 10k 12k 45k 1000k 1000k 1M 1M 1.5M 12.3M",
    moa_tokens: "0 7 999 1.0k 1.0k 1.1k 1.5k 1.5k 2.5k 9.9k 9.9k 10.0k 10k 12k 45k 1000k 1000k 1000k 1050k 1500k 12346k",
    export_title_tokens: "0 7 999 1k 1k 1k 1k 2k 3k 10k 10k 10k 10k 12k 45k 1000k 1000k 1000k 1050k 1500k 12346k",
}


@pytest.mark.parametrize("formatter", list(BEFORE), ids=lambda fn: f"{fn.__module__}.{fn.__name__}")
def test_every_place_shows_token_counts_as_before(formatter) -> None:
    assert " ".join(formatter(count) for count in COUNTS) == BEFORE[formatter]


def test_the_compaction_notice_keeps_its_tenths_below_a_thousand() -> None:
    # The chat's "compacted 45.2k → 3.1k" notice always said thousands, even for 500 tokens.
    shown = [format_tokens(count, k_from=0, trim=False, millions=False) for count in (0, 7, 999, 45_210)]
    assert shown == ["0.0k", "0.0k", "1.0k", "45.2k"]


def test_the_timeline_form_handles_negative_and_fractional_counts() -> None:
    assert [format_tokens(count) for count in (-5, -1500, -2_000_000, 1234.5, 999.6)] == [
        "-5",
        "-1.5k",
        "-2M",
        "1.2k",
        "1000",
    ]


def test_content_text_joins_the_text_blocks_only() -> None:
    blocks = [
        {"type": "text", "text": "one"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "thinking", "thinking": "hidden"},
        {"type": "text", "text": "two"},
        "not a block",
        {"type": "text"},
    ]
    assert content_text(blocks) == "onetwo"
    assert content_text(blocks, "\n") == "one\ntwo\n"
    assert content_text("plain") == "plain"
    assert content_text(None) == "" and content_text({"type": "text", "text": "x"}) == ""


def test_user_and_tool_result_text_agree() -> None:
    content = [
        {"type": "text", "text": "see"},
        {"type": "image", "mimeType": "image/png"},
        {"type": "text", "text": "x"},
    ]
    assert user_text(content) == result_text({"content": content}) == "see\n[image image/png]\nx"
    assert result_text({"content": "plain"}) == "plain" and result_text({}) == ""


def sources() -> list[Path]:
    return sorted(p for top in ("tui", "widgets") for p in (ROOT / top).rglob("*.py"))


def test_token_counts_are_formatted_in_one_place() -> None:
    home = ROOT / "tui/compaction/token_text.py"
    pattern = re.compile(r'\}[kM]"|\+ "[kM]"')  # f"{tokens / 1000:.1f}k", ... + "M"
    copies = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sources()
        if path != home
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert copies == []


def test_text_blocks_are_joined_in_one_place() -> None:
    home = ROOT / "tui/session/content.py"
    pattern = re.compile(r"""join\(.*(\.get\("type"\)|\["type"\]) == "text\"""")
    copies = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sources()
        if path != home
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert copies == []


@pytest.mark.parametrize("formatter", list(BEFORE), ids=lambda fn: f"{fn.__module__}.{fn.__name__}")
def test_huge_counts_are_in_billions_and_trillions_everywhere(formatter) -> None:
    """A file can record a tokensBefore of a trillion (recorded_count takes up to 10**15): the timeline
    showed '1000000M', the chart and the inspector '1000000000.0k'."""
    shown = [formatter(count) for count in (10**9, 2_500_000_000, 10**12, 10**15 - 1)]
    assert [text[-1] for text in shown] == ["B", "B", "T", "T"], shown
    assert all(len(text) <= 7 for text in shown), shown
    assert shown[1].startswith("2.5"), shown


async def test_the_timeline_shows_a_trillion_token_compaction_in_trillions() -> None:
    from textual.app import App, ComposeResult

    from tests.pages import until
    from tests.timeline_helpers import KEEP, RESERVE, WINDOW, compacted_path
    from widgets.timeline import CompactionTimeline

    path = compacted_path()
    path[12]["tokensBefore"] = 10**12

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield CompactionTimeline()

        def on_mount(self) -> None:
            widget = self.query_one(CompactionTimeline)
            widget.update_timeline(path, WINDOW, RESERVE, KEEP)
            widget.expanded = True

    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        widget = app.query_one(CompactionTimeline)

        def text() -> str:
            return "\n".join(widget.render_line(y).text for y in range(widget.size.height))

        await until(pilot, lambda: "Past compactions" in text())
        assert " 1T → " in text() and "000000M" not in text(), text()
