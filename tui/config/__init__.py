"""Settings: the pydantic-settings model, the layered loader, the comment-keeping tomlkit writer and the watcher.

The light, always-needed parts are re-exported here; import ``tui.config.writer`` (tomlkit) and
``tui.config.watcher`` (watchfiles) where they are used.
"""

from tui.config.errors import SettingsError
from tui.config.loader import (
    LoadResult,
    ValueSource,
    default_settings_path,
    load_default_settings,
    load_settings,
    project_settings_path,
    user_settings_path,
    value_sources,
)
from tui.config.model import Settings, field_docs, flatten_settings
from tui.config.validation import validate_change

__all__ = [
    "LoadResult",
    "Settings",
    "SettingsError",
    "ValueSource",
    "default_settings_path",
    "field_docs",
    "flatten_settings",
    "load_default_settings",
    "load_settings",
    "project_settings_path",
    "user_settings_path",
    "validate_change",
    "value_sources",
]
