"""Trust for a project's settings file: what ``./.kompakt/settings.toml`` may not do until the user agrees.

A project file comes with the directory (a cloned repository, say), so it is not the user's own word. The keys
that send the transcript or a key somewhere else (a model's ``apiBase``, ``apiKeyEnv`` or ``headers``,
``compaction.remoteEndpoint``), that run code (``hooks.modules``) or that weaken approvals (``tools.approval``
set to ``auto``) are withheld from a project file until the user trusts that file, as editors do for workspace
settings. Trust is recorded in the user's config directory for the file's resolved path and content hash, so an
edit of the file asks again (as direnv does). Every other project key applies as before.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from tui.config.keys import split_key

TRUST_FILE_NAME = "trusted-projects.json"


def is_sensitive(dotted_key: str, value: object) -> bool:
    """Whether a project file needs the user's trust to set this key to this value."""
    parts = split_key(dotted_key)
    if parts[:1] == ("models",) and len(parts) >= 3:
        return parts[2] in ("apiBase", "apiKeyEnv", "headers")
    if parts[:2] == ("compaction", "remoteEndpoint") or parts[:2] == ("hooks", "modules"):
        return True
    return parts[:2] == ("tools", "approval") and value == "auto"


def sensitive_keys(flat: dict[str, object]) -> list[str]:
    return sorted(key for key, value in flat.items() if is_sensitive(key, value))


def trust_file(config_dir: Path) -> Path:
    return config_dir / TRUST_FILE_NAME


def _load(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return (
        {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}
        if isinstance(data, dict)
        else {}
    )


def _key(project_file: Path) -> str:
    return str(project_file.resolve())


def is_trusted(config_dir: Path, project_file: Path, digest: str | None) -> bool:
    """Whether the user trusted exactly this content of ``project_file``."""
    return digest is not None and _load(trust_file(config_dir)).get(_key(project_file)) == digest


def trust(config_dir: Path, project_file: Path, digest: str) -> None:
    """Record that the user trusts this content of ``project_file`` (written whole, then renamed)."""
    path = trust_file(config_dir)
    entries = _load(path)
    entries[_key(project_file)] = digest
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(json.dumps(entries, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def withheld_notice(project_file: Path, keys: Iterable[str]) -> str:
    """The one line that says what was not applied and how to allow it."""
    names = ", ".join(keys)
    return (
        f"{project_file}: not applied until you trust this project's settings: {names} "
        "(they send data elsewhere, run code or weaken approvals). Trust it with `kompakt trust` "
        "or when the app asks."
    )
