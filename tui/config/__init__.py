"""Settings: the pydantic-settings model, the comment-keeping tomlkit writer and the file watcher."""
