"""The export's context-size chart: the samples from a session path, and the inline SVG in the HTML page.

Paths are built with the factories and written to real session files; the page is the real export.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from tests import factories as f
from tui.cli import main
from tui.compaction.token_text import format_tokens
from tui.compaction.tokens import estimate_tokens
from tui.demo import build_demo
from tui.export.chart import chart_svg, context_series
from tui.export.html import export_html
from tui.session.store import SessionStore

SVG = "{http://www.w3.org/2000/svg}"


def session_path() -> list[dict]:
    return f.chain(
        [
            f.user("u" * 4000),  # 1,000 tokens
            f.assistant("a" * 400, usage=f.usage(input=5_000, output=100)),  # measured 5,100
            f.user("v" * 800),  # +200
            f.assistant("b" * 400),  # no usage: 5,100 + 200 + 100, estimated
            f.compaction("S" * 40, 2, 5_400, details={"kompakt": {"tokensAfter": 1_234}}),
            f.user("w" * 40),
            f.assistant("c" * 40),  # estimated from the compaction's after figure
        ]
    )


def test_the_series_has_each_reply_and_each_compaction_drop():
    path = session_path()
    samples = context_series(path)
    assert [(s.kind, s.tokens, s.measured, s.after) for s in samples] == [
        ("reply", 5_100, True, None),
        ("reply", 5_400, False, None),
        ("compaction", 5_400, False, 1_234),
        ("reply", 1_234 + 10 + 10, False, None),
    ]
    assert samples[2].entry_id == path[4]["id"]
    assert estimate_tokens(path[6]["message"]) == 10


def test_a_compaction_without_a_stored_after_figure_is_estimated():
    path = f.chain(
        [f.user("u" * 4000), f.assistant("a" * 4000), f.user("k" * 400), f.compaction("S" * 400, 2, 2_000)]
    )
    (_, compaction) = context_series(path)
    assert compaction.after == 100 + 100  # the summary and the kept message, chars/4


def test_the_svg_draws_the_line_the_drops_the_threshold_and_the_window():
    samples = context_series(session_path())
    svg = chart_svg(samples, context_window=10_000, reserve_tokens=2_000)
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag == f"{SVG}svg"
    (line,) = root.iter(f"{SVG}polyline")
    assert len(line.get("points").split()) == len(samples) + 1  # a compaction has two points
    titles = [t.text for t in root.iter(f"{SVG}title")]
    assert any("5,400 → 1,234 tokens" in t for t in titles)
    assert any("5,100 tokens (measured)" in t for t in titles)
    assert any("5,400 tokens (estimated)" in t for t in titles)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "threshold 8,000 (window − reserve 2,000)" in texts and "window 10,000" in texts
    assert root.find(f"{SVG}script") is None and root.find(f"{SVG}style") is None
    assert chart_svg([], 10_000, 2_000) == ""


def test_a_figure_far_above_the_window_does_not_flatten_the_rest():
    """A hand-edited or foreign file's tokensBefore of a trillion: the other points keep their heights."""
    path = session_path()
    path[4]["tokensBefore"] = 10**12
    samples = context_series(path)
    root = ET.fromstring(chart_svg(samples, context_window=10_000, reserve_tokens=2_000))
    (line,) = root.iter(f"{SVG}polyline")
    heights = [float(point.split(",")[1]) for point in line.get("points").split()]
    axis, top_edge = 16 + 188, 16  # _TOP + plot height; _TOP
    first_reply = axis - 188 * 5_100 / 20_000  # the scale stops at two windows
    assert abs(heights[0] - first_reply) < 0.1
    assert heights[2] == top_edge  # the compaction's huge before figure sits on the top edge
    off = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "off-scale"]
    assert off == ["▲ " + format_tokens(10**12, trim=False, millions=False)]
    assert any("1,000,000,000,000 → 1,234 tokens" in t.text for t in root.iter(f"{SVG}title"))
    # A negative figure stays on the axis.
    path[4]["tokensBefore"] = -5
    root = ET.fromstring(chart_svg(context_series(path), context_window=10_000, reserve_tokens=2_000))
    (line,) = root.iter(f"{SVG}polyline")
    assert max(float(point.split(",")[1]) for point in line.get("points").split()) <= axis


def test_the_html_page_has_the_chart_inline_within_its_csp(tmp_path: Path):
    demo = build_demo(tmp_path / "demo.jsonl")
    with SessionStore.open(demo, read_only=True) as store:
        page = export_html(store)
        compactions = [e for e in store.get_branch() if e["type"] == "compaction"]
    (svg,) = re.findall(r"<svg class=\"context-chart\".*?</svg>", page, re.S)
    root = ET.fromstring(svg)
    drops = [t.text for t in root.iter(f"{SVG}title") if t.text.startswith("compaction")]
    assert len(drops) == len(compactions) == 2
    # Nothing is loaded: no URL but the SVG namespace, no href, no external image.
    assert re.findall(r"https?://[^\"' ]+", svg) == ["http://www.w3.org/2000/svg"]
    assert "href" not in svg
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in policy
    assert page.index("<h2>Context size</h2>") < page.index("<h2>Active path</h2>")


def test_a_session_with_no_reply_has_no_chart(tmp_path: Path, capsys):
    with SessionStore.create(tmp_path / "s.jsonl", cwd=str(tmp_path)) as store:
        store.append_message(f.user("only a question")["message"])
        path = store.path
    assert main(["export", str(path), "--html", "-o", "-"]) == 0
    assert "context-chart" not in capsys.readouterr().out


def test_the_session_reserve_sets_the_threshold(tmp_path: Path):
    from tui.agent.session_settings import SESSION_SETTINGS_TYPE

    demo = build_demo(tmp_path / "demo.jsonl")
    with SessionStore.open(demo) as store:
        store.append_custom(SESSION_SETTINGS_TYPE, {"compaction": {"reserveTokens": 50_000}})
        page = export_html(store)
    assert "(window − reserve 50,000)" in page
