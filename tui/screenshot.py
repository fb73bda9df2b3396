"""Render the README screenshots: the main screen on the demo session, and its chat's history view, as SVG.

``python -m tui.screenshot [OUT.svg] [--size 140x42] [--history]`` runs the real app headless in a scratch
home (no user settings, no keys) and saves what the terminal would show. By default it opens the tree pane
on the demo session and expands nothing else (``tui/assets/main-screen.svg``); with ``--history`` it
scrolls the chat to the compaction dividers (``tui/assets/history-view.svg``, also the history-view snapshot of tests/test_snapshots_main.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path(__file__).parent / "assets" / "main-screen.svg"


async def show_history(pilot: Any, screen: Any, *, open_latest: bool = False) -> None:
    """Scroll the chat (history view) to its first compaction divider: the dividers, their folds, the ▼
    boundary and the kept messages below it (``open_latest``: to the latest divider, its fold open)."""
    from widgets.chat_history import CompactionDivider

    chat = screen.chat
    while chat.first_loaded > 0:
        await chat.load_earlier()
    dividers = [w for w in chat.message_widgets if isinstance(w, CompactionDivider)]
    top = dividers[0]
    if open_latest:  # its summarised messages, dimmed, right below the latest divider
        top = dividers[-1]
        fold = chat.message_widgets[chat.message_widgets.index(top) + 1]
        await chat.toggle_fold(fold.row.state)  # type: ignore[attr-defined]
    for _ in range(3):  # heights settle over a few refreshes
        await pilot.pause()
    chat.release_anchor()
    chat.scroll_to_widget(top, top=True, animate=False, immediate=True)
    await pilot.pause()


async def render(out: Path, size: tuple[int, int], *, history: bool = False) -> Path:
    with tempfile.TemporaryDirectory() as home:
        for key in ("KOMPAKT_HOME", "KOMPAKT_CONFIG_DIR", "KOMPAKT_PI_SESSIONS"):
            os.environ[key] = str(Path(home) / key.lower())
        from tui.app import KompaktApp
        from tui.config.loader import load_settings
        from tui.launch import Launch

        app = KompaktApp(
            Launch("demo"), load_result=load_settings(None, None, env={}), start_background=False
        )
        async with app.run_test(size=size, notifications=False) as pilot:
            await pilot.pause(0.5)
            if history:
                await show_history(pilot, app.screen)
                await pilot.pause(0.3)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(
                    app.export_screenshot(title="kompakt --demo: the history view"), encoding="utf-8"
                )
                return out
            await pilot.press("f2")
            await pilot.pause(0.3)
            screen = app.screen
            store = app.session.store
            latest = next(e["id"] for e in reversed(store.get_branch()) if e["type"] == "compaction")
            screen.tree_pane.select(latest)  # the detail panel then shows the summary and its boundary
            await pilot.pause(0.6)
            svg = app.export_screenshot(title="kompakt --demo")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(svg, encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--size", default="140x42", help="columns x rows")
    parser.add_argument("--history", action="store_true", help="the chat's history view at the dividers")
    args = parser.parse_args()
    columns, rows = (int(n) for n in args.size.lower().split("x"))
    out = (
        args.out if args.out != DEFAULT_OUT or not args.history else DEFAULT_OUT.with_name("history-view.svg")
    )
    print(asyncio.run(render(out, (columns, rows), history=args.history)))


if __name__ == "__main__":
    main()
