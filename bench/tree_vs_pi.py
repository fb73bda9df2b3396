"""Differential check of kompakt's /tree model against pi's own TreeSelectorComponent.

Builds random session trees (every entry type, session_info titles, branches, several roots, labels
with their label times, tool-call-only turns), random leaves, filters and key sequences (Shift+T too), runs them through pi 0.73.1 (``bench/pi_tree.mjs``,
needs Node and ``KOMPAKT_PI_DIR`` as in :mod:`bench.session_open`) and through :class:`TreeSelector`,
and compares the selected entry and the rendered list window after every key.

Usage: ``KOMPAKT_PI_DIR=/path python -m bench.tree_vs_pi [cases] [first_seed] [terminal_rows]``.
A case whose first view is empty is skipped: pi then forgets the initial target (its selection
lands on the first row once rows appear), while kompakt keeps it — a deliberate difference.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tui.session.tree import TreeIndex
from tui.session.tree_view import TreeSelector

KEYS: dict[str, tuple[str, Callable[[TreeSelector], object]]] = {
    "up": ("\x1b[A", lambda s: s.move(-1)),
    "down": ("\x1b[B", lambda s: s.move(1)),
    "fold": ("\x1b[1;5D", lambda s: s.fold_or_up()),
    "unfold": ("\x1b[1;5C", lambda s: s.unfold_or_down()),
    "pgup": ("\x1b[5~", lambda s: s.page(-1)),
    "pgdn": ("\x1b[6~", lambda s: s.page(1)),
    "ctrl+d": ("\x04", lambda s: s.set_filter("default")),
    "ctrl+t": ("\x14", lambda s: s.toggle_filter("no-tools")),
    "ctrl+u": ("\x15", lambda s: s.toggle_filter("user-only")),
    "ctrl+l": ("\x0c", lambda s: s.toggle_filter("labeled-only")),
    "ctrl+a": ("\x01", lambda s: s.toggle_filter("all")),
    "ctrl+o": ("\x0f", lambda s: s.cycle_filter(1)),
    "esc": ("\x1b", lambda s: s.escape()),
    "backspace": ("\x7f", lambda s: s.backspace()),
    "T": ("T", lambda s: s.toggle_label_times()),  # shift+t: label times (never typed into the search)
    **{ch: (ch, lambda s, ch=ch: s.type_text(ch)) for ch in "abext"},
}
WORDS = ["alpha", "beta", "fix", "bug", "Read", "x y", "tab\tthere", "line\nbreak", "  pad  "]
TOOLS = ["read", "bash", "grep", "edit", "ls", "find", "write", "todo"]


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _label_times() -> list[str]:
    now = datetime.now().astimezone()
    today = now.replace(hour=0, minute=30, second=0, microsecond=0)
    earlier = now.replace(month=1, day=2, hour=9, minute=5) if (now.month, now.day) > (1, 3) else now
    return [_iso(today), _iso(earlier), "2019-07-04T18:07:00.000Z"]


label_times = _label_times()


def random_entries(rng: random.Random, count: int) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    calls: list[tuple[str, str]] = []
    for i in range(count):
        roll = rng.random()
        parent = (
            None
            if not entries or roll < 0.04
            else (rng.choice(entries) if roll < 0.25 else entries[-1])["id"]
        )
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4)))
        kind = rng.random()
        if kind < 0.22:
            entry: dict[str, Any] = {"type": "message", "message": {"role": "user", "content": text}}
        elif kind < 0.40:
            content = [{"type": "text", "text": text}]
            entry = {
                "type": "message",
                "message": {"role": "assistant", "content": content, "stopReason": "stop"},
            }
        elif kind < 0.52:
            call_id, name = f"c{i}", rng.choice(TOOLS)
            calls.append((call_id, name))
            args = {"path": "/home/x/" + text, "command": text, "pattern": text, "limit": 10}
            stop = rng.choice(["toolUse", "toolUse", "error", "aborted", "length", "stop"])
            block = {"type": "toolCall", "id": call_id, "name": name, "arguments": args}
            message = {"role": "assistant", "content": [block], "stopReason": stop}
            if stop == "error":
                message["errorMessage"] = "boom\n" + text
            entry = {"type": "message", "message": message}
        elif kind < 0.64:
            call_id, name = rng.choice(calls) if calls and rng.random() < 0.85 else ("none", "mystery")
            content = [{"type": "text", "text": text}]
            message = {"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": content}
            entry = {"type": "message", "message": message}
        elif kind < 0.68:
            entry = {"type": "message", "message": {"role": "bashExecution", "command": text, "output": ""}}
        elif kind < 0.72:
            entry = {"type": "custom_message", "customType": "note", "content": text, "display": True}
        elif kind < 0.75:
            entry = {
                "type": "compaction",
                "summary": text,
                "firstKeptEntryId": "x",
                "tokensBefore": rng.randint(0, 9) * 500,
            }
        elif kind < 0.78:
            entry = {"type": "branch_summary", "fromId": "x", "summary": text}
        elif kind < 0.82:
            entry = {"type": "model_change", "provider": "p", "modelId": f"m{i}"}
        elif kind < 0.85:
            entry = {"type": "thinking_level_change", "thinkingLevel": "high"}
        elif kind < 0.86 or not entries:
            entry = {"type": "custom", "customType": "ext.thing"}
        elif kind < 0.89:
            entry = {"type": "session_info", "name": rng.choice(["", "  ", "Title", f"fix bug {i}"])}
        else:
            target = rng.choice(entries)["id"]
            entry = {"type": "label", "targetId": target, "label": rng.choice([None, f"cp{i}", "Keep"])}
        stamp = f"2025-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
        if entry["type"] == "label" and rng.random() < 0.5:
            # Today and earlier this year too, for the three label-time formats (a clone's labels keep
            # old times, so a label can be older or newer than anything around it).
            stamp = rng.choice(label_times)
        entry.update(id=f"e{i:03d}", parentId=parent, timestamp=stamp)
        entries.append(entry)
    return entries


def window(selector: TreeSelector, page: int) -> list[str]:
    """The list as pi renders it: a page around the selection, then the footer (cursor column kept)."""
    rows, index = selector.rows, selector.selected_index
    if not rows:
        return ["  No entries found", "  " + selector.footer()]
    start = max(0, min(index - page // 2, len(rows) - page))
    lines = []
    for i in range(start, min(start + page, len(rows))):
        row = rows[i]
        plain = row.plain(selector.show_label_times)
        text = plain.removesuffix("  ← active") if row.is_leaf else plain
        lines.append(("› " if i == index else "  ") + text)
    return [*lines, "  " + selector.footer()]


def main() -> int:
    cases, first_seed, terminal_rows = (int(a) for a in [*sys.argv[1:], "500", "0", "24"][:3])
    pi_dir = os.environ.get("KOMPAKT_PI_DIR")
    if not pi_dir or not shutil.which("node"):
        print("needs node and KOMPAKT_PI_DIR (a dir with @mariozechner/pi-coding-agent@0.73.1 installed)")
        return 2
    page = max(5, terminal_rows // 2)
    specs, runs = [], []
    for seed in range(first_seed, first_seed + cases):
        rng = random.Random(seed)
        entries = random_entries(rng, rng.randint(1, 60))
        ids = [e["id"] for e in entries]
        leaf = rng.choice([*ids, None])
        mode = rng.choice(["default", "default", "no-tools", "user-only", "labeled-only", "all"])
        selected = rng.choice([None, None, rng.choice(ids)])
        keys = [rng.choice(list(KEYS)) for _ in range(rng.randint(0, 25))]
        selector = TreeSelector(TreeIndex(entries), leaf, mode=mode, selected_id=selected, page_size=page)  # type: ignore[arg-type]
        if not selector.rows:
            continue
        steps = []
        for key in keys:
            KEYS[key][1](selector)
            steps.append({"selected": selector.selected_id, "lines": window(selector, page)})
        runs.append((seed, keys, {"steps": steps, "lines": window(selector, page)}))
        specs.append(
            {
                "entries": entries,
                "leafId": leaf,
                "mode": mode,
                "selectedId": selected,
                "keys": [KEYS[k][0] for k in keys],
                "height": terminal_rows,
            }
        )
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(specs, handle)
    script = Path(__file__).with_name("pi_tree.mjs")
    try:
        result = subprocess.run(
            ["node", str(script), handle.name], capture_output=True, text=True, check=True
        )
    finally:
        os.unlink(handle.name)
    differ = 0
    for (seed, keys, ours), theirs in zip(runs, json.loads(result.stdout), strict=True):
        if ours == theirs:
            continue
        differ += 1
        if differ <= 3:
            step = next(
                (i for i, (a, b) in enumerate(zip(ours["steps"], theirs["steps"], strict=False)) if a != b),
                None,
            )
            print(f"seed {seed}: first difference after key #{step} of {keys}")
            mine = ours["lines"] if step is None else ours["steps"][step]["lines"]
            pis = theirs["lines"] if step is None else theirs["steps"][step]["lines"]
            for a, b in zip(mine, pis, strict=False):
                print(("   " if a == b else "!! ") + f"{a!r} | pi {b!r}")
    print(f"{len(runs)} cases compared, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
