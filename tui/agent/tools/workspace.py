"""Path handling for tools: resolve an argument against the workspace and tell whether it stays inside.

Paths are resolved with symlinks followed, so a link inside the workspace that points elsewhere counts as
outside. Paths are shown relative to the workspace when they are inside it, which keeps tool output short.
"""

from __future__ import annotations

from pathlib import Path


def resolve_path(workspace: Path, raw: str) -> Path:
    """``raw`` with ``~`` expanded, made absolute against ``workspace`` and resolved."""
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = workspace / path
    return path.resolve()


def is_inside(workspace: Path, path: Path) -> bool:
    return path == workspace or path.is_relative_to(workspace)


def display_path(workspace: Path, path: Path) -> str:
    """The path relative to the workspace when it is inside, else absolute."""
    if is_inside(workspace, path):
        return str(path.relative_to(workspace))
    return str(path)
