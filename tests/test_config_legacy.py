"""A settings.toml written for the old layout still loads (pi 0.73.1 delta A.12): ``retry.maxDelayMs`` is read
as ``retry.provider.maxRetryDelayMs`` in memory, a one-line notice names the new key (loader, CLI, TUI), and the
user's file is never rewritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app_e2e_helpers import isolated_home, make_app, ready, wait_until
from tui.agent.retry import RetryPolicy
from tui.cli import main
from tui.config import load_settings
from tui.config.legacy import migrate_moved_keys
from tui.config.writer import save_changes
from tui.launch import Launch

OLD_FILE = "# my settings\n[retry]\nmaxRetries = 4\nmaxDelayMs = 1234\n"


def test_an_old_file_loads_with_the_value_under_its_new_key(tmp_path: Path) -> None:
    user = tmp_path / "settings.toml"
    user.write_text(OLD_FILE)
    result = load_settings(user, None, {})
    assert result.settings.retry.provider.max_retry_delay_ms == 1234
    assert result.settings.retry.max_retries == 4
    (notice,) = result.notices
    assert "\n" not in notice
    assert "retry.maxDelayMs" in notice and "retry.provider.maxRetryDelayMs" in notice and str(user) in notice
    assert user.read_text() == OLD_FILE  # not rewritten
    policy = RetryPolicy.from_settings(result.settings.retry.model_dump(by_alias=True))
    assert policy.max_retry_delay_ms == 1234


def test_the_new_key_wins_when_both_are_set(tmp_path: Path) -> None:
    user = tmp_path / "settings.toml"
    user.write_text("[retry]\nmax_delay_ms = 5\n[retry.provider]\nmaxRetryDelayMs = 700\n")
    result = load_settings(user, None, {})
    assert result.settings.retry.provider.max_retry_delay_ms == 700
    (notice,) = result.notices
    assert "ignored" in notice and "retry.provider.maxRetryDelayMs" in notice


def test_a_current_file_has_no_notice(tmp_path: Path) -> None:
    user = tmp_path / "settings.toml"
    user.write_text("[retry.provider]\nmaxRetryDelayMs = 0\n")
    result = load_settings(user, None, {})
    assert result.notices == () and result.settings.retry.provider.max_retry_delay_ms == 0


def test_migration_leaves_its_input_alone() -> None:
    data = {"retry": {"maxDelayMs": 9}}
    migrated, notices = migrate_moved_keys(data)
    assert data == {"retry": {"maxDelayMs": 9}}
    assert migrated == {"retry": {"provider": {"maxRetryDelayMs": 9}}} and len(notices) == 1


def test_saving_another_key_into_an_old_file_works_and_keeps_the_old_line(tmp_path: Path) -> None:
    user = tmp_path / "settings.toml"
    user.write_text(OLD_FILE)
    save_changes(user, {"retry.baseDelayMs": 10})  # validated as the loader reads it: no "unknown key"
    text = user.read_text()
    assert "maxDelayMs = 1234" in text and "baseDelayMs = 10" in text
    assert load_settings(user, None, {}).settings.retry.base_delay_ms == 10


def test_the_cli_prints_the_notice_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(OLD_FILE)
    session = tmp_path / "s.jsonl"
    from tui.session.store import SessionStore

    SessionStore.create(session, cwd=str(tmp_path)).close()
    assert main(["compact", str(session), "--json"]) == 0
    err = capsys.readouterr().err
    (line,) = [line for line in err.splitlines() if line.startswith("kompakt: notice:")]
    assert "retry.provider.maxRetryDelayMs" in line
    assert home.settings_file.read_text() == OLD_FILE


async def test_the_tui_shows_the_notice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(OLD_FILE)
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=(100, 30), notifications=False) as pilot:
        await ready(pilot, app)
        note = await wait_until(
            pilot,
            lambda: [n for n in app.notes if "retry.provider.maxRetryDelayMs" in n[1]],
            "the moved-key notice",
        )
        assert note[0][2] == "warning"
    assert home.settings_file.read_text() == OLD_FILE


@pytest.mark.parametrize(
    "variable", ["KOMPAKT_RETRY__MAXDELAYMS", "KOMPAKT_RETRY__MAX_DELAY_MS", "kompakt_retry__maxDelayMs"]
)
def test_the_old_environment_variable_sets_the_new_key_with_a_notice(variable: str) -> None:
    result = load_settings(None, None, {variable: "4321"})
    assert result.settings.retry.provider.max_retry_delay_ms == 4321
    (notice,) = result.notices
    assert "\n" not in notice and variable in notice
    assert "retry.provider.maxRetryDelayMs" in notice and "KOMPAKT_RETRY__PROVIDER__MAXRETRYDELAYMS" in notice


@pytest.mark.parametrize(
    "new_variable",
    ["KOMPAKT_RETRY__PROVIDER__MAXRETRYDELAYMS", "KOMPAKT_RETRY__PROVIDER__MAX_RETRY_DELAY_MS"],
)
def test_the_new_environment_variable_wins_over_the_old_one(new_variable: str) -> None:
    result = load_settings(None, None, {"KOMPAKT_RETRY__MAXDELAYMS": "5", new_variable: "6"})
    assert result.settings.retry.provider.max_retry_delay_ms == 6
    (notice,) = result.notices
    assert "obsolete and ignored" in notice and "KOMPAKT_RETRY__MAXDELAYMS" in notice


def test_an_environment_json_table_with_the_old_key_loads() -> None:
    result = load_settings(None, None, {"KOMPAKT_RETRY": '{"maxRetries": 2, "maxDelayMs": 777}'})
    assert result.settings.retry.provider.max_retry_delay_ms == 777
    assert result.settings.retry.max_retries == 2
    (notice,) = result.notices
    assert notice.startswith("environment: retry.maxDelayMs is now retry.provider.maxRetryDelayMs")


def test_the_cli_reads_the_old_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_home(tmp_path, monkeypatch)
    monkeypatch.setenv("KOMPAKT_RETRY__MAXDELAYMS", "2500")
    session = tmp_path / "s.jsonl"
    from tui.session.store import SessionStore

    SessionStore.create(session, cwd=str(tmp_path)).close()
    assert main(["compact", str(session), "--json"]) == 0  # before: "retry.MAXDELAYMS: unknown key", exit 2
    (line,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("kompakt: notice:")]
    assert "KOMPAKT_RETRY__MAXDELAYMS" in line
