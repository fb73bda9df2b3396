"""The tomlkit writer: comments kept byte for byte, tables created, None deletes, atomic, invalid refused."""

import os
import stat
from pathlib import Path

import pytest

from tui.config import SettingsError, default_settings_path, load_settings
from tui.config.loader import content_hash
from tui.config.writer import atomic_write, save_changes, set_value

ORIGINAL = """\
# My kompakt settings.
# Keep this header.

model = "openai/gpt-4o-mini"   # the everyday model

[compaction]
# how much stays verbatim
keepRecentTokens = 20000  # tuned by hand
reserveTokens = 16384

# --- retries below ---
[retry]
maxRetries = 3
"""


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    path = tmp_path / "settings.toml"
    path.write_text(ORIGINAL)
    return path


def test_changing_one_value_keeps_everything_else_byte_for_byte(settings_file):
    set_value(settings_file, "compaction.keepRecentTokens", 8000)
    assert settings_file.read_text() == ORIGINAL.replace(
        "keepRecentTokens = 20000  # tuned by hand", "keepRecentTokens = 8000  # tuned by hand"
    )


def test_new_keys_and_tables_are_created_and_the_rest_kept(settings_file):
    save_changes(
        settings_file,
        {
            "retry.baseDelayMs": 500,
            'models."ollama/qwen2.5".apiBase': "http://localhost:11434",
            "tools.approval.bash": "auto",
            "summaryModel": "openai/gpt-4o-mini",
        },
    )
    text = settings_file.read_text()
    assert text.startswith("# My kompakt settings.\n# Keep this header.\n\n")
    assert 'model = "openai/gpt-4o-mini"   # the everyday model\n' in text
    assert (
        "# how much stays verbatim\nkeepRecentTokens = 20000  # tuned by hand\nreserveTokens = 16384\n"
        in text
    )
    assert '[models."ollama/qwen2.5"]\napiBase = "http://localhost:11434"\n' in text
    assert "[models]\n" not in text  # no empty parent table header
    assert '[tools.approval]\nbash = "auto"\n' in text
    settings = load_settings(settings_file, None, {}).settings
    assert settings.retry.base_delay_ms == 500
    assert settings.models["ollama/qwen2.5"].api_base == "http://localhost:11434"
    assert settings.tools.approval["bash"] == "auto"
    assert settings.summary_model == "openai/gpt-4o-mini"
    assert settings.compaction.keep_recent_tokens == 20000


def test_none_deletes_the_key_and_is_never_written(settings_file):
    set_value(settings_file, "model", None)
    text = settings_file.read_text()
    assert "model =" not in text and "None" not in text and "null" not in text
    assert load_settings(settings_file, None, {}).settings.model is None
    set_value(settings_file, "moa.aggregator", None)  # deleting an absent key changes nothing
    assert settings_file.read_text() == text


def test_model_values_drop_none_entries(settings_file):
    set_value(settings_file, 'models."gpt-4.1"', {"contextWindow": 1000, "apiBase": None})
    assert '[models."gpt-4.1"]\ncontextWindow = 1000\n' in settings_file.read_text()


def test_snake_case_key_in_the_file_is_updated_in_place(tmp_path):
    path = tmp_path / "settings.toml"
    path.write_text("[retry]\nmax_retries = 3  # snake\n")
    set_value(path, "retry.maxRetries", 4)
    assert path.read_text() == "[retry]\nmax_retries = 4  # snake\n"


def test_invalid_value_is_refused_and_the_file_untouched(settings_file):
    before = settings_file.read_bytes()
    inode = settings_file.stat().st_ino
    with pytest.raises(SettingsError) as caught:
        set_value(settings_file, "compaction.reserveTokens", -1)
    assert caught.value.path == settings_file
    assert caught.value.key == "compaction.reserveTokens"
    assert str(caught.value) == (
        f"{settings_file}:9: compaction.reserveTokens: Input should be greater than or equal to 0 (got -1)"
    )
    assert settings_file.read_bytes() == before
    assert settings_file.stat().st_ino == inode
    assert [p.name for p in settings_file.parent.iterdir()] == ["settings.toml"]  # no temp file left


def test_unknown_key_is_refused(settings_file):
    before = settings_file.read_bytes()
    with pytest.raises(SettingsError, match=r"compaction\.keepRecent: unknown key"):
        save_changes(settings_file, {"retry.maxRetries": 5, "compaction.keepRecent": 5})
    assert settings_file.read_bytes() == before  # all or nothing


def test_broken_file_is_reported_not_overwritten(settings_file):
    settings_file.write_text("[compaction\n")
    with pytest.raises(SettingsError) as caught:
        set_value(settings_file, "retry.maxRetries", 5)
    assert caught.value.line == 1
    assert settings_file.read_text() == "[compaction\n"


def test_missing_file_and_directory_are_created(tmp_path):
    path = tmp_path / "fresh" / "kompakt" / "settings.toml"
    digest = set_value(path, "ui.theme", "nord")
    assert path.read_text() == '[ui]\ntheme = "nord"\n'
    assert digest == content_hash(path.read_bytes())


def test_write_is_atomic_replace_and_returns_the_hash(settings_file):
    inode = settings_file.stat().st_ino
    os.chmod(settings_file, 0o600)
    ignore: set[str] = set()
    digest = set_value(settings_file, "retry.maxRetries", 9, ignore_hashes=ignore)
    assert settings_file.stat().st_ino != inode  # replaced by rename, never rewritten in place
    assert stat.S_IMODE(settings_file.stat().st_mode) == 0o600  # permissions carried over
    assert digest == content_hash(settings_file.read_bytes())
    assert ignore == {digest}
    assert sorted(p.name for p in settings_file.parent.iterdir()) == ["settings.toml"]


def test_atomic_write_failure_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "settings.toml"
    path.write_text("old")

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, b"new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["settings.toml"]


def test_writing_through_a_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "dotfiles" / "kompakt.toml"
    real.parent.mkdir()
    real.write_text("[ui]\ntheme = 'nord'\n")
    link = tmp_path / "settings.toml"
    link.symlink_to(real)
    set_value(link, "ui.showTimeline", False)
    assert link.is_symlink()
    assert "showTimeline = false" in real.read_text()


def test_editing_the_reference_file_keeps_all_its_comments(tmp_path):
    reference = default_settings_path().read_text()
    path = tmp_path / "settings.toml"
    path.write_text(reference)
    set_value(path, "compaction.keepRecentTokens", 12345)
    assert path.read_text() == reference.replace("keepRecentTokens = 20000", "keepRecentTokens = 12345")
