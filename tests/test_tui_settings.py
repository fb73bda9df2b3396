"""The settings screen: editors per type, validation as you type, saving with comments kept, sources, what-if."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input, Label, Select, Static, Switch, TextArea

from tests.pages import rendered_text, until
from tests.settings_ui_helpers import USER_TOML, SettingsHost, clear_kompakt_env, settings_ready
from tui.config import field_docs, load_settings
from tui.screens.settings_screen import ConfirmDiscard, SettingsScreen
from widgets.settings_form import SettingRow, SettingsForm, editor_id


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    config = tmp_path / "config"
    config.mkdir()
    clear_kompakt_env(monkeypatch, config)
    user = config / "settings.toml"
    user.write_text(USER_TOML)
    return user, tmp_path / "project" / ".kompakt" / "settings.toml"


def row(app: SettingsHost, key: str) -> SettingRow:
    return app.screen.query_one(f"#row-{editor_id(key)}", SettingRow)


def editor(app: SettingsHost, key: str, kind: type):
    return app.screen.query_one(f"#{editor_id(key)}", kind)


def text_of(widget: Static) -> str:
    return str(widget.render())


async def type_into(pilot, app: SettingsHost, key: str, text: str) -> None:
    field = editor(app, key, Input)
    field.focus()
    field.value = ""
    await pilot.press(*text)
    await pilot.pause()


async def test_each_editor_type_renders_with_the_effective_value(files):
    user, project = files
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        await until(
            pilot,
            lambda: (
                (isinstance(app.screen, SettingsScreen))
                and (editor(app, "compaction.enabled", Switch).value is True)
                and (editor(app, "branchSummary.skipPrompt", Switch).value is False)
                and (editor(app, "compaction.strategy", Select).value == "keep-recent")
            ),
        )
        assert isinstance(app.screen, SettingsScreen)
        assert editor(app, "compaction.enabled", Switch).value is True
        assert editor(app, "branchSummary.skipPrompt", Switch).value is False
        assert editor(app, "compaction.strategy", Select).value == "keep-recent"
        keep = editor(app, "compaction.keepRecentTokens", Input)
        assert (keep.value, keep.type) == ("20000", "integer")
        assert editor(app, "moa.timeoutS", Input).type == "number"
        assert editor(app, "model", Input).value == "openai/gpt-4o-mini"
        assert editor(app, "hooks.modules", Input).value == "[]"
        approval = editor(app, "tools.approval", TextArea).text
        assert '"bash": "ask"' in approval and '"read": "auto"' in approval
        assert editor(app, "models", TextArea).text == "{}"
        assert editor(app, "keymap", TextArea).text == "{}"
        # Every key of the model has a row, grouped under section headings.
        headings = [text_of(s) for s in app.screen.query(".settings-form--section")]
        sections = [h.split(" — ")[0] for h in headings]
        assert sections[:4] == ["model", "compaction", "branchSummary", "retry"]
        assert {"models", "tools", "agent", "ui", "keymap", "hooks", "moa"} <= set(sections)
        assert len(app.screen.query(SettingRow)) == len(field_docs())
        label = text_of(row(app, "compaction.keepRecentTokens").query_one(".setting-row--label", Static))
        assert "keepRecentTokens" in label and "integer · default 20000" in label


async def test_the_focused_row_is_described(files):
    user, project = files
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        editor(app, "retry.maxRetries", Input).focus()
        await until(
            pilot,
            lambda: (
                "retry.maxRetries" in text_of(app.screen.query_one("#settings-form-help", Static))
                and "How many times a failed call is retried."
                in text_of(app.screen.query_one("#settings-form-help", Static))
                and (f"user file {user}" in text_of(app.screen.query_one("#settings-form-help", Static)))
            ),
        )
        help_text = text_of(app.screen.query_one("#settings-form-help", Static))
        assert "retry.maxRetries" in help_text
        assert "How many times a failed call is retried." in help_text
        assert f"user file {user}" in help_text


async def test_an_invalid_value_shows_the_reason_and_is_not_saved(files):
    user, project = files
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        await type_into(pilot, app, "retry.maxRetries", "500")
        error_row = row(app, "retry.maxRetries")
        assert error_row.has_class("-invalid")
        error = text_of(error_row.query_one(".setting-row--error", Static))
        assert "less than or equal to 100" in error and "500" in error
        form = app.screen.query_one(SettingsForm)
        assert form.pending_changes() == {}
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: (user.read_text() == USER_TOML) and (app.saved == []))
        assert user.read_text() == USER_TOML
        assert app.saved == []
        # Fixing the value clears the error.
        await type_into(pilot, app, "retry.maxRetries", "7")
        assert not error_row.has_class("-invalid")
        assert form.pending_changes() == {"retry.maxRetries": 7}


async def test_a_url_setting_rejects_a_non_url(files):
    user, project = files
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        await type_into(pilot, app, "compaction.remoteEndpoint", "ftp://x")
        error = text_of(row(app, "compaction.remoteEndpoint").query_one(".setting-row--error", Static))
        assert "http:// or https:// URL" in error


async def test_a_valid_edit_saved_with_ctrl_s_keeps_the_comments(files):
    user, project = files
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        await type_into(pilot, app, "compaction.keepRecentTokens", "8000")
        editor(app, "compaction.calibrate", Switch).value = False
        editor(app, "compaction.strategy", Select).value = "head-tail"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        await until(
            pilot,
            lambda: (
                [
                    line
                    for line in user.read_text().splitlines()
                    if line not in ["calibrate = false", 'strategy = "head-tail"']
                ]
                == USER_TOML.replace("keepRecentTokens = 20000", "keepRecentTokens = 8000").splitlines()
                and tomllib.loads(user.read_text())["compaction"]
                == {
                    "keepRecentTokens": 8000,
                    "reserveTokens": 16384,
                    "calibrate": False,
                    "strategy": "head-tail",
                }
                and (len(app.saved) == 1)
            ),
        )
        text = user.read_text()
        added = ["calibrate = false", 'strategy = "head-tail"']
        kept = [line for line in text.splitlines() if line not in added]
        assert kept == USER_TOML.replace("keepRecentTokens = 20000", "keepRecentTokens = 8000").splitlines()
        assert tomllib.loads(text)["compaction"] == {
            "keepRecentTokens": 8000,
            "reserveTokens": 16384,
            "calibrate": False,
            "strategy": "head-tail",
        }
        assert len(app.saved) == 1
        saved = app.saved[0]
        assert saved.path == user
        assert saved.settings.compaction.keep_recent_tokens == 8000
        assert saved.settings.compaction.strategy == "head-tail"
        # The watcher will skip our own write.
        assert len(app.ignore_hashes) == 1
        form = app.screen.query_one(SettingsForm)
        assert not form.dirty
        assert (
            text_of(row(app, "compaction.calibrate").query_one(".setting-row--source", Static)) == "user file"
        )
        await pilot.press("escape")
        await until(pilot, lambda: app.dismissed[0].compaction.keep_recent_tokens == 8000)
        assert app.dismissed[0].compaction.keep_recent_tokens == 8000


async def test_table_edits_are_saved_entry_by_entry(files):
    user, project = files
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        approval = editor(app, "tools.approval", TextArea)
        approval.text = '{"bash": "auto"}'
        models = editor(app, "models", TextArea)
        models.text = '{ "ollama/qwen" = { apiBase = "http://localhost:11434", contextWindow = 32768 } }'
        await until(
            pilot,
            lambda: (
                app.screen.query_one(SettingsForm).invalid == {}
                and app.screen.query_one(SettingsForm).pending_changes()
                == {
                    "tools.approval.bash": "auto",
                    'models."ollama/qwen"': {"apiBase": "http://localhost:11434", "contextWindow": 32768},
                }
            ),
        )
        form = app.screen.query_one(SettingsForm)
        assert form.invalid == {}
        assert form.pending_changes() == {
            "tools.approval.bash": "auto",
            'models."ollama/qwen"': {"apiBase": "http://localhost:11434", "contextWindow": 32768},
        }
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        await until(
            pilot,
            lambda: (
                tomllib.loads(user.read_text())["tools"] == {"approval": {"bash": "auto"}}
                and tomllib.loads(user.read_text())["models"]
                == {"ollama/qwen": {"apiBase": "http://localhost:11434", "contextWindow": 32768}}
                and user.read_text().startswith(USER_TOML)
            ),
        )
        data = tomllib.loads(user.read_text())
        assert data["tools"] == {"approval": {"bash": "auto"}}
        assert data["models"] == {
            "ollama/qwen": {"apiBase": "http://localhost:11434", "contextWindow": 32768}
        }
        assert user.read_text().startswith(USER_TOML)
        # Removing an entry deletes just that entry from the file.
        approval.text = "{}"
        await until(pilot, lambda: form.pending_changes() == {"tools.approval.bash": "ask"})
        assert form.pending_changes() == {"tools.approval.bash": "ask"}
        models.text = '{"ollama/qwen": {"apiBase": 3'
        await until(pilot, lambda: "invalid JSON" in form.invalid["models"])
        assert "invalid JSON" in form.invalid["models"]


async def test_the_project_file_toggle_saves_there(files):
    user, project = files
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        await type_into(pilot, app, "agent.maxIterations", "12")
        label = app.screen.query_one("#settings-target-label", Label)
        assert str(label.content) == "Save to: user file"
        await pilot.press("ctrl+t")
        await until(
            pilot,
            lambda: (app.screen.target_path == project) and (str(label.content) == "Save to: project file"),
        )
        assert app.screen.target_path == project
        assert str(label.content) == "Save to: project file"
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        await until(
            pilot,
            lambda: (
                (user.read_text() == USER_TOML) and (project.read_text() == "[agent]\nmaxIterations = 12\n")
            ),
        )
        assert user.read_text() == USER_TOML
        assert project.read_text() == "[agent]\nmaxIterations = 12\n"
        source = row(app, "agent.maxIterations").query_one(".setting-row--source", Static)
        assert text_of(source) == "project file"


async def test_the_source_column_shows_an_environment_override(files, monkeypatch):
    user, project = files
    monkeypatch.setenv("KOMPAKT_COMPACTION__RESERVETOKENS", "4096")
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        await until(
            pilot,
            lambda: (
                text_of(row(app, "compaction.reserveTokens").query_one(".setting-row--source", Static))
                == "env KOMPAKT_COMPACTION__RESERVETOKENS"
                and (
                    row(app, "compaction.reserveTokens").has_class("-env")
                    and row(app, "compaction.reserveTokens").has_class("-overridden")
                )
            ),
        )
        reserve = row(app, "compaction.reserveTokens")
        assert (
            text_of(reserve.query_one(".setting-row--source", Static))
            == "env KOMPAKT_COMPACTION__RESERVETOKENS"
        )
        assert reserve.has_class("-env") and reserve.has_class("-overridden")
        note = text_of(reserve.query_one(".setting-row--note", Static))
        assert "KOMPAKT_COMPACTION__RESERVETOKENS" in note and "wins over every file" in note
        assert editor(app, "compaction.reserveTokens", Input).value == "4096"
        keep = row(app, "compaction.keepRecentTokens")
        assert text_of(keep.query_one(".setting-row--source", Static)) == "user file"
        assert not keep.has_class("-overridden")
        assert text_of(row(app, "ui.theme").query_one(".setting-row--source", Static)) == "default"


async def test_a_project_value_warns_only_while_saving_to_the_user_file(files):
    user, project = files
    project.parent.mkdir(parents=True)
    project.write_text("[ui]\nshowTimeline = false\n")
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        await until(
            pilot,
            lambda: (
                editor(app, "ui.showTimeline", Switch).value is False
                and row(app, "ui.showTimeline").has_class("-overridden")
            ),
        )
        timeline = row(app, "ui.showTimeline")
        assert editor(app, "ui.showTimeline", Switch).value is False
        assert timeline.has_class("-overridden")
        await pilot.press("ctrl+t")
        await until(pilot, lambda: not timeline.has_class("-overridden"))
        assert not timeline.has_class("-overridden")


async def test_what_if_is_posted_while_keep_recent_tokens_is_edited(files):
    user, project = files
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        await until(pilot, lambda: app.what_ifs == [])
        assert app.what_ifs == []  # opening the screen previews nothing
        await type_into(pilot, app, "compaction.keepRecentTokens", "9000")
        assert app.what_ifs[-1] == (9000, 16384)
        assert (900, 16384) in app.what_ifs  # live, keystroke by keystroke
        count = len(app.what_ifs)
        await type_into(pilot, app, "compaction.keepRecentTokens", "-")  # not a valid value: no preview
        assert len(app.what_ifs) == count
        await type_into(pilot, app, "compaction.reserveTokens", "8000")
        assert app.what_ifs[-1] == (20000, 8000)
        assert user.read_text() == USER_TOML


async def test_escape_asks_before_discarding_edits(files):
    user, project = files
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        await type_into(pilot, app, "agent.maxIterations", "12")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDiscard))
        assert isinstance(app.screen, ConfirmDiscard)
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, SettingsScreen))
        assert isinstance(app.screen, SettingsScreen)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDiscard))
        await pilot.press("y")
        await until(pilot, lambda: (app.dismissed == [None]) and (user.read_text() == USER_TOML))
        assert app.dismissed == [None]
        assert user.read_text() == USER_TOML


async def test_escape_without_edits_closes_at_once(files):
    user, project = files
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        await pilot.pause()
        await pilot.press("escape")
        await until(pilot, lambda: app.dismissed == [None])
        assert app.dismissed == [None]


async def test_the_description_follows_a_save(files):
    """D13: the focused row's description says where its value comes from, and a save moves it from
    the default to the user file at once (it used to keep "default" until the focus moved)."""
    user, project = files
    app = SettingsHost(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)

        def help_text() -> str:
            return text_of(app.screen.query_one("#settings-form-help", Static))

        await type_into(pilot, app, "agent.maxIterations", "12")
        await until(pilot, lambda: "agent.maxIterations" in help_text() and "from default" in help_text())
        assert "from default" in help_text()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "maxIterations = 12" in user.read_text() and len(app.saved) == 1)
        await until(pilot, lambda: f"from user file {user}" in help_text())
        assert f"from user file {user}" in help_text() and "agent.maxIterations" in help_text()


async def test_an_invalid_file_on_disk_is_listed_with_every_problem(files):
    """D13: the app keeps the last good settings when the file turns invalid; F5 says so and lists
    every problem (three here, each with its line), not only the first."""
    user, project = files
    good = user.read_text()

    class EditedOnDisk(SettingsHost):
        def on_mount(self, event: events.Mount) -> None:
            event.prevent_default()  # not SettingsHost's own mount, which would load the bad file
            result = load_settings(self.user_file, self.project_file)  # the last good settings
            self.user_file.write_text(
                good.replace("keepRecentTokens = 20000", 'keepRecentTokens = "x"').replace(
                    "maxRetries = 3", "maxRetries = -1\nbogus = 1"
                )
            )
            screen = SettingsScreen(
                result, self.user_file, self.ignore_hashes, project_path=self.project_file
            )
            self.push_screen(screen, self.dismissed.append)

    app = EditedOnDisk(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)

        def banner() -> str:
            widget = app.screen.query_one("#settings-file-problems", Static)
            return text_of(widget) if widget.display else ""

        await until(pilot, lambda: "invalid" in banner())
        text = banner()
        assert "compaction.keepRecentTokens" in text and "retry.maxRetries" in text and "retry.bogus" in text
        assert f"{user}:6: compaction.keepRecentTokens" in text  # each with its line
        assert text.count("  • ") == 3


async def test_every_problem_of_a_file_with_many_can_be_scrolled_to_in_the_banner(files):
    """QA issue 13 F3: twelve problems do not fit the banner's eight lines; the box scrolls to the last."""
    user, project = files
    good = user.read_text()

    class EditedOnDisk(SettingsHost):
        def on_mount(self, event: events.Mount) -> None:
            event.prevent_default()
            result = load_settings(self.user_file, self.project_file)
            self.user_file.write_text(good + "[retry]\n" + "".join(f"bogus{n} = 1\n" for n in range(12)))
            screen = SettingsScreen(
                result, self.user_file, self.ignore_hashes, project_path=self.project_file
            )
            self.push_screen(screen, self.dismissed.append)

    app = EditedOnDisk(user, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_ready(pilot, app)
        banner = app.screen.query_one("#settings-file-problems", Static)
        await until(pilot, lambda: banner.display and "bogus11" in text_of(banner))
        box = app.screen.query_one("#settings-file-problems-box")
        await until(pilot, lambda: box.max_scroll_y > 0)
        box.scroll_end(animate=False, immediate=True)
        await until(pilot, lambda: "retry.bogus11" in rendered_text(app))
