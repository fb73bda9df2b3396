"""Render the README screenshot: the main screen on the demo session, as SVG.

``python -m tui.screenshot [OUT.svg] [--size 140x42]`` runs the real app headless in a scratch home (no
user settings, no keys), opens the tree pane on the demo session and expands nothing else, then saves
what the terminal would show. The README embeds ``tui/assets/main-screen.svg`` made this way.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path

DEFAULT_OUT = Path(__file__).parent / "assets" / "main-screen.svg"


async def render(out: Path, size: tuple[int, int]) -> Path:
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
    args = parser.parse_args()
    columns, rows = (int(n) for n in args.size.lower().split("x"))
    print(asyncio.run(render(args.out, (columns, rows))))


if __name__ == "__main__":
    main()
