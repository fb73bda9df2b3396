"""The Settings model, the reference settings.toml, dotted keys and single-value validation."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from tui.config import SettingsError, default_settings_path, field_docs, flatten_settings, validate_change
from tui.config.keys import dict_value_type, join_key, model_class, split_key
from tui.config.model import DEFAULT_TOOL_APPROVAL, ModelOverride, Settings

REPO_ROOT = Path(__file__).resolve().parents[1]


def _leaf_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every field path of the model, descending into nested models and into dict-of-model values."""
    paths = []
    for name, info in model.model_fields.items():
        path = (*prefix, info.alias or name)
        paths.append(path)
        sub = model_class(info.annotation) or model_class(dict_value_type(info.annotation))
        if sub is not None:
            paths.extend(_leaf_paths(sub, path))
    return paths


def test_default_settings_path_is_the_repo_file():
    assert default_settings_path() == REPO_ROOT / "settings.toml"


def test_reference_file_parses_validates_and_equals_the_defaults():
    data = tomllib.loads(default_settings_path().read_text("utf-8"))
    assert Settings.model_validate(data) == Settings()
    # Nothing relies on the validator filling in defaults: the file spells every approval out.
    assert data["tools"]["approval"] == DEFAULT_TOOL_APPROVAL


def test_reference_file_mentions_every_field_in_its_table():
    text = default_settings_path().read_text("utf-8")
    # Which table each (possibly commented-out) assignment sits in.
    assignments: set[tuple[str, ...]] = set()
    table: tuple[str, ...] = ()
    for line in text.splitlines():
        header = re.match(r"^#?\s*\[([^\]]+)\]\s*$", line)
        if header:
            table = split_key(header.group(1))
            assignments.add(table)
            continue
        assignment = re.match(r"^#?\s*([A-Za-z0-9_\"./-]+)\s*=", line)
        if assignment:
            assignments.add((*table, *split_key(assignment.group(1))))
    missing = []
    for path in _leaf_paths(Settings):
        # models.<name>.* is documented with an example entry.
        concrete = (path[0], "ollama/llama3.1", *path[1:]) if path[0] == "models" and len(path) > 1 else path
        if not any(entry[: len(concrete)] == concrete for entry in assignments):
            missing.append(join_key(path))
    assert missing == []


def test_every_field_has_a_description():
    assert all(doc.description for doc in field_docs())
    assert all(info.description for info in ModelOverride.model_fields.values())
    keys = [doc.key for doc in field_docs()]
    assert "compaction.keepRecentTokens" in keys and "moa.timeoutS" in keys
    strategy = next(doc for doc in field_docs() if doc.key == "compaction.strategy")
    assert strategy.choices == ("keep-recent", "head-tail") and strategy.default == "keep-recent"
    approval = next(doc for doc in field_docs() if doc.key == "tools.approval")
    assert approval.is_mapping and approval.choices == ("ask", "auto", "deny")


def test_camel_case_and_snake_case_both_validate():
    by_alias = Settings.model_validate({"compaction": {"keepRecentTokens": 5}})
    by_name = Settings.model_validate({"compaction": {"keep_recent_tokens": 5}})
    assert by_alias.compaction.keep_recent_tokens == by_name.compaction.keep_recent_tokens == 5


def test_partial_tool_approval_keeps_the_other_defaults():
    settings = Settings.model_validate({"tools": {"approval": {"bash": "auto", "grep": "deny"}}})
    assert settings.tools.approval["bash"] == "auto"
    assert settings.tools.approval["grep"] == "deny"
    assert settings.tools.approval["write"] == "ask"


def test_settings_ignores_the_process_environment(monkeypatch):
    monkeypatch.setenv("KOMPAKT_COMPACTION__KEEPRECENTTOKENS", "1")
    assert Settings().compaction.keep_recent_tokens == 20000


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("compaction.keepRecentTokens", -1, "greater than or equal to 0"),
        ("retry.maxRetries", -3, "greater than or equal to 0"),
        ("agent.maxIterations", 0, "greater than or equal to 1"),
        ("compaction.strategy", "middle", "'keep-recent' or 'head-tail'"),
        ("compaction.remoteEndpoint", "ftp://x", "http:// or https://"),
        ('models."gpt-4.1".apiBase', "localhost:11434", "http:// or https://"),
        ("moa.timeoutS", 0, "greater than 0"),
        ("ui.treeFilterMode", "mine", "'labeled-only'"),
    ],
)
def test_validate_change_rejects_bad_values(key, value, reason):
    with pytest.raises(SettingsError) as caught:
        validate_change(Settings(), key, value)
    assert caught.value.key == key
    assert reason in caught.value.reason
    assert str(caught.value).startswith(f"{key}: ")


def test_validate_change_applies_and_resets():
    changed = validate_change(Settings(), "compaction.keepRecentTokens", 1234)
    assert changed.compaction.keep_recent_tokens == 1234
    assert (
        validate_change(changed, "compaction.keepRecentTokens", None).compaction.keep_recent_tokens == 20000
    )
    local = validate_change(Settings(), 'models."gpt-4.1".contextWindow', 64000)
    assert local.models["gpt-4.1"].context_window == 64000


def test_validate_change_unknown_key_suggests_the_right_one():
    with pytest.raises(
        SettingsError, match=r"compaction\.keepRecent: unknown key \(did you mean 'keepRecentTokens'\?\)"
    ):
        validate_change(Settings(), "compaction.keepRecent", 1)


def test_dotted_keys_quote_and_split():
    assert join_key(("models", "gpt-4.1", "contextWindow")) == 'models."gpt-4.1".contextWindow'
    assert split_key('models."gpt-4.1".contextWindow') == ("models", "gpt-4.1", "contextWindow")
    assert split_key("models.'a.b' . apiBase") == ("models", "a.b", "apiBase")
    with pytest.raises(SettingsError):
        split_key("models..x")


def test_flatten_settings_lists_dict_entries():
    settings = Settings.model_validate(
        {"models": {"gpt-4.1": {"contextWindow": 9}}, "keymap": {"app.quit": "ctrl+w"}}
    )
    flat = flatten_settings(settings)
    assert flat['models."gpt-4.1".contextWindow'] == 9
    assert flat['keymap."app.quit"'] == "ctrl+w"
    assert flat["tools.approval.bash"] == "ask"
    assert flat["model"] is None


def test_config_package_imports_neither_textual_nor_litellm():
    code = (
        "import sys, tui.config, tui.config.writer, tui.config.watcher; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'litellm')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO_ROOT)
