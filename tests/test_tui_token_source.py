"""D11 (issue 13): every token figure says whether it is measured (provider usage) or estimated (chars/4).

The status bar, the timeline's status row and legend, the what-if and the "Compacted" notice mark an
estimate with ``≈``; when the first measured figure after a compaction is larger than the estimate it
replaces, the status bar says so rather than showing a silent rise. The real app on a real session file,
with the loopback OpenAI server; every wait is for the condition asserted.
"""

from __future__ import annotations

import re

from tests.app_e2e_helpers import ready, saved_session_app, screen_text, wait_idle, wait_until
from tests.fake_openai import Reply, fake_openai_fixture  # noqa: F401
from widgets.status_bar import StatusBar

SIZE = (140, 40)
TURNS = [(f"question {i}", f"answer {i}") for i in range(6)]


def status_text(bar: StatusBar) -> str:
    return bar.render().plain


def timeline_usage(app) -> str:
    """The timeline's usage figure (``12.3k / 32k``; the status bar writes ``12.3k/32.0k``)."""
    found = re.search(r"(≈?[\d.]+k?) / [\d.]+k", screen_text(app))
    assert found, screen_text(app)
    return found.group(1)


async def test_estimates_are_marked_and_a_measured_rise_after_a_compaction_is_explained(
    tmp_path, monkeypatch, fake_openai
) -> None:
    app, _home, _ids = saved_session_app(
        tmp_path, monkeypatch, fake_openai, TURNS, chars=2000, keep_recent_tokens=1000
    )
    fake_openai.route("Write handoff notes", Reply.text_reply("The summary of the work so far."))
    fake_openai.route("at most three sentences", Reply.text_reply("Short summary."))
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        store = app.session.store
        # No reply of this session reported usage: every figure is an estimate.
        await wait_until(pilot, lambda: status_text(screen.status).count("≈") == 1, "≈ in the status bar")
        assert screen.timeline.timeline.context_estimated
        await wait_until(pilot, lambda: timeline_usage(app).startswith("≈"), "≈ in the timeline")
        # The what-if's figures are the planner's estimates.
        assert re.search(r"would summarise ≈[\d.]+k, keep ≈[\d.]+k", screen_text(app)), screen_text(app)
        await screen.run_command("compact", "")
        await wait_idle(
            pilot,
            app,
            lambda: any(e.get("type") == "compaction" for e in store.get_branch()),
            "the compaction",
        )
        estimate = screen.status.context_tokens
        assert estimate and screen.status.context_estimated
        await wait_until(pilot, lambda: any(n[0] == "Compacted" for n in app.notes), "the notice")
        notice = next(n[1] for n in app.notes if n[0] == "Compacted")
        assert "→ ≈" in notice and notice.startswith("≈"), notice  # both sides were estimates here
        assert "measured now" not in status_text(screen.status)

        # The next reply measures the context: a larger figure, and the bar says why it rose.
        measured = estimate + 5000
        fake_openai.queue(Reply.text_reply("measured reply", usage=(measured - 10, 10)))
        screen.prompt.focus()
        screen.prompt.text = "go on"
        await pilot.press("enter")
        await wait_idle(pilot, app, lambda: screen.status.context_tokens == measured, "the measured figure")
        text = status_text(screen.status)
        assert not screen.status.context_estimated
        assert f"measured now, was ≈{estimate / 1000:.1f}k" in text, text
        assert "≈" not in text.split("measured now")[0], text
        await wait_until(pilot, lambda: not timeline_usage(app).startswith("≈"), "the measured timeline")

        # A later change of the figure that is not a change of source clears the note.
        fake_openai.queue(Reply.text_reply("another", usage=(measured + 500, 10)))
        screen.prompt.text = "more"
        await pilot.press("enter")
        await wait_idle(pilot, app, lambda: screen.status.context_tokens == measured + 510, "the next figure")
        assert "measured now" not in status_text(screen.status)


def test_a_status_bar_notes_a_change_of_source_only_within_one_context() -> None:
    bar = StatusBar()
    bar.show_context(5000, 128_000, True, "c1")
    assert status_text(bar).startswith("≈5.0k/128.0k")
    bar.show_context(9000, 128_000, False, "c2")  # another branch (another compaction): no note
    assert "measured now" not in status_text(bar) and "≈" not in status_text(bar)
    bar.show_context(4000, 128_000, True, "c1")
    bar.show_context(3000, 128_000, False, "c1")  # measured and smaller: a fall from the change of source
    assert "measured now, was ≈4.0k" in status_text(bar)
    bar.show_context(3000, 128_000, False, "c1")
    bar.show_context(3400, 128_000, False, "c1")  # measured again: growth, no note
    assert "measured now" not in status_text(bar)
    bar.show_context(4000, 128_000, True, "c1")
    bar.show_context(6000, 128_000, False, "c1")
    assert "measured now, was ≈4.0k" in status_text(bar)
    bar.show_context(6000, 128_000, False, "c1")  # the same figure again keeps the note
    assert "measured now, was ≈4.0k" in status_text(bar)


def test_a_session_switch_forgets_the_old_sessions_figures() -> None:
    """Review (session 18): a long session's figures are counted on a worker; until then the old session's
    stayed, and the new count was compared with them (no compaction in either: the same 'context')."""
    bar = StatusBar()
    bar.show_context(50_000, 128_000, True, None)
    bar.cost = 1.25
    bar.forget_figures()
    assert bar.context_tokens is None and bar.cost == 0.0
    bar.show_context(80_000, 128_000, False, None)  # the other session's measured figure
    assert bar.replaced_figure is None


def test_a_status_bar_notes_a_measured_figure_giving_way_to_an_estimate() -> None:
    bar = StatusBar()
    bar.show_context(95_200, 128_000, False, "c1")
    bar.show_context(88_300, 128_000, True, "c1")  # the offline model's own guess replaced a count
    text = status_text(bar)
    assert text.startswith("≈88.3k/128.0k") and "estimated now, was 95.2k" in text, text
    bar.show_context(89_000, 128_000, True, "c1")  # an estimate again: no change of source
    assert "now, was" not in status_text(bar)


def test_the_offline_models_usage_is_an_estimate_and_the_figure_says_so(tmp_path) -> None:
    """pi's figure is kept (the last usage plus what follows), but the offline model's usage is its
    own chars/4 guess, so the figure is marked an estimate (the demo fell 95.2k → 88.3k unmarked)."""
    from tests import factories as f
    from tui.agent.offline import OFFLINE_PROVIDER
    from tui.compaction.context_size import context_size
    from tui.compaction.tokens import ESTIMATING_PROVIDERS
    from tui.export.chart import context_series

    assert OFFLINE_PROVIDER in ESTIMATING_PROVIDERS
    path = f.chain(
        [
            f.user("question"),
            f.assistant("answer", usage=f.usage(input=95_000, output=152)),
            f.user("hello there"),
            f.assistant(
                "offline", usage=f.usage(input=88_060, output=238), provider=OFFLINE_PROVIDER, model="echo"
            ),
        ]
    )
    estimate = context_size(path)
    assert estimate.tokens == 88_298 and estimate.usage_estimated and not estimate.measured
    measured = context_size(path[:2])
    assert measured.tokens == 95_152 and measured.measured
    samples = context_series(path)
    assert [s.measured for s in samples] == [True, False]


async def test_an_offline_reply_after_a_measured_one_is_marked_and_explained(tmp_path, monkeypatch) -> None:
    """The demo's case: a real reply measured 95.2k; the offline model's reply reported its own guess
    (88.3k) and the figure fell with no ≈. Now it reads ≈ and says what it replaced."""
    from tests import factories as f
    from tests.app_e2e_helpers import isolated_home, make_app, settings_toml
    from tui.launch import Launch
    from tui.session.catalog import new_session_path
    from tui.session.store import SessionStore

    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(None))  # no model, no key: the offline model
    store = SessionStore.create(new_session_path(str(tmp_path)), cwd=str(tmp_path))
    store.append_message(f.user("question")["message"])
    store.append_message(f.assistant("answer", usage=f.usage(input=95_000, output=152))["message"])
    store.close()
    app = make_app(home, Launch("open", store.path, tmp_path))
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await wait_until(pilot, lambda: screen.status.context_tokens == 95_152, "the measured figure")
        assert not screen.status.context_estimated
        screen.prompt.focus()
        screen.prompt.text = "hello there"
        await pilot.press("enter")
        await wait_idle(pilot, app, lambda: screen.status.context_estimated, "the offline reply's figure")
        text = status_text(screen.status)
        assert text.count("≈") == 1 and "estimated now, was 95.2k" in text, text
        await wait_until(pilot, lambda: timeline_usage(app).startswith("≈"), "≈ in the timeline")
