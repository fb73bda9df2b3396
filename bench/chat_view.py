"""Benchmark toggling the chat between its history and context views against opening the tree pane.

The real app opens a generated 10k-entry session (bench/gen_session.py: branches, 36 compactions on the
active path, large outputs) with kompakt's home, config and pi directories in a temporary folder and no
model (the offline one). Each round opens the tree pane (F2) and waits for its rows and focus, closes
it, then presses F9 (history → context) and waits until the context view's window is mounted, and F9
again (context → history, every entry of the branch with the compactions folded). The first round of
the tree pane includes building its rows; the chat views are rebuilt on every toggle. Wall times include
Pilot's settle floor, the same for all. The ratio toggle / tree pane is the figure to watch (goal: ≤ 1).
Run ``python -m bench.chat_view [--entries N] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from bench.gen_session import generate
from bench.inspector import SIZE, _timed, _until


async def run(path: Path, rounds: int) -> None:
    from tui.app import KompaktApp
    from tui.config.loader import load_settings
    from tui.launch import Launch
    from tui.screens.dialogs import ConfirmDialog
    from tui.screens.main import MainScreen

    app = KompaktApp(
        Launch("open", path, path.parent),
        load_result=load_settings(None, None, env={}),
        start_background=False,
    )
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: any(isinstance(s, MainScreen) for s in app.screen_stack))
        screen = next(s for s in app.screen_stack if isinstance(s, MainScreen))
        await _until(pilot, lambda: screen.agent is not None and screen.timeline.timeline is not None)
        await pilot.pause(0.2)
        if isinstance(app.screen, ConfirmDialog):  # the generated session's cwd does not exist here
            await pilot.press("y")
            await _until(pilot, lambda: app.screen is screen)
        chat = screen.chat

        def shows(view: str) -> Any:
            widgets = chat.message_widgets
            return chat.view == view and widgets and all(w.is_mounted for w in widgets)

        tree: list[tuple[float, float]] = []
        to_context: list[tuple[float, float]] = []
        to_history: list[tuple[float, float]] = []
        for _ in range(rounds):
            tree.append(
                await _timed(
                    pilot,
                    lambda: pilot.press("f2"),
                    lambda: screen.tree_pane.view.selector is not None and screen.tree_pane.view.has_focus,
                )
            )
            await pilot.press("f2")
            await _until(pilot, lambda: not screen.tree_pane.display)
            to_context.append(await _timed(pilot, lambda: pilot.press("f9"), lambda: shows("context")))
            to_history.append(await _timed(pilot, lambda: pilot.press("f9"), lambda: shows("history")))
        history_items, context_items = len(chat.items), len(app.store.build_context().messages)
    branch = len(app.store.get_branch())
    print(
        f"active branch: {branch} entries; history view {history_items} items, context {context_items} messages"
    )
    for name, data in (("tree pane (F2)", tree), ("F9 → context", to_context), ("F9 → history", to_history)):
        first, rest = data[0], data[1:] or data
        print(
            f"{name:<16} first {first[0]:7.1f} ms wall {first[1]:7.1f} ms cpu   "
            f"then median {statistics.median(w for w, _ in rest):7.1f} ms wall "
            f"{statistics.median(c for _, c in rest):7.1f} ms cpu"
        )
    tree_first, tree_warm = tree[0][0], statistics.median(w for w, _ in tree[1:] or tree)
    for name, data in (("→ context", to_context), ("→ history", to_history)):
        median = statistics.median(w for w, _ in data)
        print(
            f"ratio toggle {name} / tree pane: vs first open {median / tree_first:.2f}, "
            f"vs warm open {median / tree_warm:.2f} (wall, median toggle)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in ("KOMPAKT_HOME", "KOMPAKT_CONFIG_DIR", "KOMPAKT_PI_SESSIONS"):
            os.environ[name] = str(root / name.lower())
        (root / "kompakt_config_dir").mkdir()
        path = generate(root / "bench.jsonl", entries=args.entries)
        print(f"session: {args.entries} entries, {path.stat().st_size / 1e6:.0f} MB")
        asyncio.run(run(path, args.rounds))


if __name__ == "__main__":
    main()
