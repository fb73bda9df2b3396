"""Whether the app's session is open read-only (``watch``, or locked by another kompakt).

Panes hide their write actions (compact, label, apply settings, undo a compaction) from the footer, the
command palette and F1 help through ``check_action``; they ask the app, so every copy of a pane agrees.
"""

from __future__ import annotations

from textual.app import App


def session_read_only(app: App) -> bool:
    return bool(getattr(getattr(app, "session", None), "read_only", False))
