"""Layered loading: precedence, deep merge, the environment, error messages and value sources."""

from pathlib import Path

import pytest

from tui.config import SettingsError, ValueSource, load_settings, value_sources
from tui.config.loader import content_hash, project_settings_path, user_settings_path


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    user = tmp_path / "config" / "settings.toml"
    project = tmp_path / "project" / ".kompakt" / "settings.toml"
    user.parent.mkdir(parents=True)
    project.parent.mkdir(parents=True)
    return user, project


def test_no_files_no_env_gives_defaults(files):
    user, project = files
    result = load_settings(user, project, {})
    assert result.settings.compaction.keep_recent_tokens == 20000
    assert result.layers == ()
    assert result.hashes == {user: None, project: None}


def test_precedence_user_then_project_then_env(files):
    user, project = files
    user.write_text('model = "user-model"\n[compaction]\nkeepRecentTokens = 1\nreserveTokens = 2\n')
    project.write_text("[compaction]\nkeepRecentTokens = 10\n")
    env = {"KOMPAKT_COMPACTION__KEEPRECENTTOKENS": "100"}
    settings = load_settings(user, project, env).settings
    assert settings.compaction.keep_recent_tokens == 100  # env beats both files
    assert settings.compaction.reserve_tokens == 2  # the user file's other key survives the project table
    assert settings.model == "user-model"
    assert load_settings(user, project, {}).settings.compaction.keep_recent_tokens == 10  # project beats user


def test_deep_merge_per_key_across_files_and_dict_entries(files):
    user, project = files
    user.write_text('[models."ollama/qwen"]\ncontextWindow = 32768\n[tools.approval]\nbash = "auto"\n')
    project.write_text(
        '[models."ollama/qwen"]\napiBase = "http://localhost:11434"\n[tools.approval]\nwrite = "deny"\n'
    )
    load_settings(user, project, {}).trust_project()  # a project's apiBase applies once it is trusted
    settings = load_settings(user, project, {}).settings
    qwen = settings.models["ollama/qwen"]
    assert (qwen.context_window, qwen.api_base) == (32768, "http://localhost:11434")
    assert settings.tools.approval["bash"] == "auto"
    assert settings.tools.approval["write"] == "deny"
    assert settings.tools.approval["edit"] == "ask"


def test_snake_case_in_one_file_merges_with_camel_case_in_another(files):
    user, project = files
    user.write_text("[retry]\nmax_retries = 7\n")
    project.write_text("[retry]\nmaxRetries = 9\n")
    assert load_settings(user, project, {}).settings.retry.max_retries == 9


def test_env_json_tables_lists_and_case_insensitive_names(files):
    env = {
        "KOMPAKT_HOOKS__MODULES": '["a_hooks", "b_hooks"]',
        "kompakt_retry__max_retries": "6",
        "KOMPAKT_UI": '{"showTimeline": false}',
        "KOMPAKT_UI__THEME": "nord",
        "KOMPAKT_MODELS__local__APIBASE": "http://127.0.0.1:8000",
        "KOMPAKT_CONFIG_DIR": "/somewhere",  # not a setting
        "KOMPAKT_MODEL": "",  # empty means unset
    }
    settings = load_settings(None, None, env).settings
    assert settings.hooks.modules == ["a_hooks", "b_hooks"]
    assert settings.retry.max_retries == 6
    assert (settings.ui.show_timeline, settings.ui.theme) == (False, "nord")
    assert settings.models["local"].api_base == "http://127.0.0.1:8000"
    assert settings.model is None


def test_unknown_top_level_key_names_file_line_and_key(files):
    user, _ = files
    user.write_text("# comment\nmodle = 'x'\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(user, None, {})
    error = caught.value
    assert (error.path, error.line, error.key) == (user, 2, "modle")
    assert str(error) == f"{user}:2: modle: unknown key (did you mean 'model'?)"


def test_unknown_nested_key_names_file_line_and_dotted_key(files):
    _, project = files
    project.write_text("[compaction]\nenabled = true\n\nkeepRecentTokenz = 5\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(None, project, {})
    assert str(caught.value) == (
        f"{project}:4: compaction.keepRecentTokenz: unknown key (did you mean 'keepRecentTokens'?)"
    )


def test_unknown_key_inside_a_model_override(files):
    user, _ = files
    user.write_text('[models."gpt-4.1"]\ncontextWindow = 5\nwindow = 5\n')
    with pytest.raises(SettingsError, match=r'settings\.toml:3: models\."gpt-4\.1"\.window: unknown key'):
        load_settings(user, None, {})


def test_bad_value_names_file_key_and_reason(files):
    user, _ = files
    user.write_text("[retry]\nenabled = true\nmaxRetries = -2\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(user, None, {})
    assert str(caught.value) == (
        f"{user}:3: retry.maxRetries: Input should be greater than or equal to 0 (got -2)"
    )


def test_bad_type_and_bad_choice(files):
    user, _ = files
    user.write_text('[compaction]\nonSummaryFailure = "retry"\nreserveTokens = "lots"\n')
    with pytest.raises(SettingsError) as caught:
        load_settings(user, None, {})
    error = caught.value
    assert error.key == "compaction.reserveTokens" or error.key == "compaction.onSummaryFailure"
    assert error.more == 1
    assert "(and 1 more problem)" in str(error)


def test_a_table_given_a_scalar(files):
    user, _ = files
    user.write_text("compaction = 5\n")
    with pytest.raises(SettingsError, match=r"settings\.toml:1: compaction: expected a table \(got 5\)"):
        load_settings(user, None, {})


def test_toml_syntax_error_has_the_line(files):
    _, project = files
    project.write_text('model = "x"\n\n[compaction\nenabled = true\n')
    with pytest.raises(SettingsError) as caught:
        load_settings(None, project, {})
    assert caught.value.line == 3
    assert str(caught.value).startswith(f"{project}:3: invalid TOML at column")


def test_toml_error_at_the_end_of_the_file_points_at_the_last_line(files):
    user, _ = files
    user.write_text('[ui]\ntheme = "nord')
    with pytest.raises(SettingsError) as caught:
        load_settings(user, None, {})
    assert str(caught.value) == f"{user}:2: invalid TOML at the end of the file: Unterminated string"


def test_env_errors_name_the_variable(files):
    with pytest.raises(SettingsError) as caught:
        load_settings(None, None, {"KOMPAKT_RETRY__MAXRETRIES": "several"})
    assert str(caught.value).startswith(
        "environment variable KOMPAKT_RETRY__MAXRETRIES: retry.maxRetries: Input should be a valid integer"
    )
    with pytest.raises(SettingsError, match=r"KOMPAKT_RETRY__BOGUS: retry\.BOGUS: unknown key"):
        load_settings(None, None, {"KOMPAKT_RETRY__BOGUS": "1"})
    with pytest.raises(SettingsError, match=r"KOMPAKT_HOOKS__MODULES: hooks\.modules: expected JSON"):
        load_settings(None, None, {"KOMPAKT_HOOKS__MODULES": "a,b"})


def test_file_errors_are_reported_before_env_is_considered(files):
    user, _ = files
    user.write_text("[agent]\nmaxIterations = 0\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(user, None, {"KOMPAKT_AGENT__MAXITERATIONS": "5"})
    assert caught.value.path == user  # the file is broken even though env would override the key


def test_value_sources_tell_default_file_and_env(files):
    user, project = files
    user.write_text('[compaction]\nkeepRecentTokens = 1\n[models."gpt-4.1"]\ncontextWindow = 9\n')
    project.write_text("[compaction]\nreserveTokens = 3\n")
    env = {"KOMPAKT_RETRY__MAXRETRIES": "5", "KOMPAKT_UI": '{"theme": "nord"}'}
    sources = value_sources(load_settings(user, project, env))
    assert sources["compaction.keepRecentTokens"] == ValueSource("user", user)
    assert sources["compaction.reserveTokens"] == ValueSource("project", project)
    assert sources["compaction.enabled"] == ValueSource("default")
    assert sources["retry.maxRetries"] == ValueSource("env", env_var="KOMPAKT_RETRY__MAXRETRIES")
    assert sources["ui.theme"] == ValueSource("env", env_var="KOMPAKT_UI")
    assert sources['models."gpt-4.1".contextWindow'] == ValueSource("user", user)
    assert sources['models."gpt-4.1".apiBase'] == ValueSource("default")
    assert str(sources["retry.maxRetries"]) == "env KOMPAKT_RETRY__MAXRETRIES"
    assert str(sources["compaction.reserveTokens"]) == f"project file {project}"


def test_hashes_are_of_the_bytes_read(files):
    user, _ = files
    user.write_bytes(b"[ui]\ntheme = 'nord'\n")
    assert load_settings(user, None, {}).hashes[user] == content_hash(b"[ui]\ntheme = 'nord'\n")


def test_standard_paths(tmp_path):
    assert user_settings_path({"KOMPAKT_CONFIG_DIR": str(tmp_path)}) == tmp_path / "settings.toml"
    assert user_settings_path({}).name == "settings.toml"
    assert project_settings_path(tmp_path) == tmp_path / ".kompakt" / "settings.toml"
