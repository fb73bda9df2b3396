"""Session export: a self-contained HTML page or a Markdown transcript, written next to the session.

:func:`export_session` is what ``kompakt export`` and the TUI's ``/export`` call; the renderers are
:func:`tui.export.html.export_html` and :func:`tui.export.markdown.export_markdown`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from tui.session.store import SessionStore

ExportFormat = Literal["html", "md"]


def render_export(
    store: SessionStore, fmt: ExportFormat, leaf_id: str | None = None, all_branches: bool = False
) -> str:
    """The export of ``store`` in ``fmt`` as text."""
    if fmt == "html":
        from tui.export.html import export_html

        return export_html(store, leaf_id, all_branches)
    from tui.export.markdown import export_markdown

    return export_markdown(store, leaf_id, all_branches)


def default_export_path(session_path: Path, fmt: ExportFormat) -> Path:
    """Beside the session file, with the format's suffix: ``s.jsonl`` → ``s.html``."""
    return session_path.with_suffix(f".{fmt}")


def export_session(
    store: SessionStore,
    fmt: ExportFormat,
    out: Path | None = None,
    leaf_id: str | None = None,
    all_branches: bool = False,
) -> Path:
    """Write the export to ``out`` (default: beside the session) and return where it went.

    The file is written whole to a temporary name and then renamed, so a reader never sees half a page.
    """
    target = out if out is not None else default_export_path(store.path, fmt)
    text = render_export(store, fmt, leaf_id, all_branches)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)
    return target
