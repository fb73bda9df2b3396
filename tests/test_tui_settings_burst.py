"""Keys that arrive faster than the settings form handles them keep their order (issue F, D2).

A terminal delivers a burst of keys at once (fast typing, key repeat, tmux send-keys). Backspace is a binding:
its key event bubbles from the Input through the form and the screen before its action runs, so a slow handler
on the way (validating every setting on each keystroke) used to let the digits typed after it overtake it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Input

from tests.app_e2e_helpers import wait_until
from tests.settings_ui_helpers import USER_TOML, SettingsHost, clear_kompakt_env
from widgets.prompt import PromptInput
from widgets.settings_form import SettingsForm, editor_id

KEY = "compaction.keepRecentTokens"


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    config = tmp_path / "config"
    config.mkdir()
    clear_kompakt_env(monkeypatch, config)
    user = config / "settings.toml"
    user.write_text(USER_TOML)
    return user, tmp_path / "project" / ".kompakt" / "settings.toml"


def burst(app: SettingsHost, keys: list[str]) -> None:
    """Queue every key at once, as a terminal does, without waiting for any handler in between."""
    driver = app._driver
    assert driver is not None
    for key in keys:
        char = key if len(key) == 1 else None
        event = events.Key(key, char)
        event.set_sender(app)
        driver.send_message(event)


async def test_backspaces_and_digits_sent_in_one_burst_keep_their_order(files):
    user, project = files
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query(f"#{editor_id(KEY)}")), "the form")
        field = app.screen.query_one(f"#{editor_id(KEY)}", Input)
        field.focus()
        field.cursor_position = len(field.value)
        await wait_until(pilot, lambda: field.has_focus, "focus")
        assert field.value == "20000"
        form = app.screen.query_one(SettingsForm)
        for _ in range(3):  # a few bursts: one lucky ordering must not pass the test
            burst(app, ["backspace"] * 5 + list("5000"))
            await wait_until(pilot, lambda: field.value == "5000", "the typed value")
            await wait_until(pilot, lambda: form.pending.get(KEY) == 5000, "the pending edit")
            burst(app, ["backspace"] * 4 + list("20000"))
            await wait_until(pilot, lambda: field.value == "20000", "the typed value")
            await wait_until(pilot, lambda: KEY not in form.pending, "the edit undone")


class PromptHost(App[None]):
    def compose(self) -> ComposeResult:
        with Vertical(), Vertical():
            yield PromptInput(id="prompt")


async def test_the_prompt_applies_a_burst_of_edits_in_order():
    app = PromptHost()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        prompt.focus()
        await wait_until(pilot, lambda: prompt.has_focus, "focus")
        burst(app, [*"helo", "backspace", *"lo there", "home", *">> "])
        await wait_until(pilot, lambda: prompt.text == ">> hello there", "the typed text")
