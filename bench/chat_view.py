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

import statistics
from pathlib import Path
from typing import Any

from bench.pilot_session import Timing, bench_main, open_tree_pane, opened_main, report, timed


async def run(path: Path, rounds: int) -> None:
    async with opened_main(path) as (app, pilot, screen):
        chat = screen.chat

        def shows(view: str) -> Any:
            widgets = chat.message_widgets
            return chat.view == view and widgets and all(w.is_mounted for w in widgets)

        tree: list[Timing] = []
        to_context: list[Timing] = []
        to_history: list[Timing] = []
        for _ in range(rounds):
            tree.append(await open_tree_pane(pilot, screen))
            to_context.append(await timed(pilot, lambda: pilot.press("f9"), lambda: shows("context")))
            to_history.append(await timed(pilot, lambda: pilot.press("f9"), lambda: shows("history")))
        history_items, context_items = len(chat.items), len(app.store.build_context().messages)
    branch = len(app.store.get_branch())
    print(
        f"active branch: {branch} entries; history view {history_items} items, context {context_items} messages"
    )
    for name, data in (("tree pane (F2)", tree), ("F9 → context", to_context), ("F9 → history", to_history)):
        report(name, data)
    tree_first, tree_warm = tree[0][0], statistics.median(w for w, _ in tree[1:] or tree)
    for name, data in (("→ context", to_context), ("→ history", to_history)):
        median = statistics.median(w for w, _ in data)
        print(
            f"ratio toggle {name} / tree pane: vs first open {median / tree_first:.2f}, "
            f"vs warm open {median / tree_warm:.2f} (wall, median toggle)"
        )


if __name__ == "__main__":
    bench_main(__doc__, run)
