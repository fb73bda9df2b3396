"""``kompakt tree`` (text and ``--json``) on sessions with 500 to 4,000 branch points: linear, not quadratic.

Each branch point adds an indentation level (pi's rule), so a prefix grows with the depth. The rows
share their prefixes (a linked lead) and the output elides a prefix wider than the terminal (text) or
120 columns (JSON). Printed: seconds and bytes per row for each size, as ratios against the smallest size
measured in the same run (linear: ~1.0 at every size; quadratic would double with each doubling), and
the JSON bytes the full prefixes would have taken. Run ``python -m bench.tree_cli``.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from pathlib import Path

import orjson

from tui import cli
from tui.session.store import SessionStore
from tui.session.tree_view import render_tree

SIZES = (500, 1000, 2000, 4000)


def branchy(path: Path, branch_points: int) -> None:
    """A main line where every user message also has a side reply: one branch point per turn."""
    rows: list[dict] = [
        {"type": "session", "version": 3, "id": "b", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"}
    ]
    parent = None
    for i in range(branch_points):
        stamp = f"2026-01-01T00:00:00.{i % 1000:03d}Z"
        user = f"u{i:07d}"
        rows.append(
            {
                "type": "message",
                "id": user,
                "parentId": parent,
                "timestamp": stamp,
                "message": {"role": "user", "content": f"question {i}", "timestamp": i},
            }
        )
        for kind in ("s", "a"):
            rows.append(
                {
                    "type": "message",
                    "id": f"{kind}{i:07d}",
                    "parentId": user,
                    "timestamp": stamp,
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": f"{kind} {i}"}],
                        "timestamp": i,
                    },
                }
            )
        parent = f"a{i:07d}"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def run(argv: list[str]) -> tuple[float, int]:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        cli.main(argv)
    elapsed = time.perf_counter() - start
    out.flush()
    return elapsed, len(out.buffer.getvalue())  # type: ignore[attr-defined]


def main() -> None:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in SIZES:
            path = Path(tmp) / f"b{size}.jsonl"
            branchy(path, size)
            rows = 3 * size
            text_s, _ = run(["tree", str(path)])
            json_s, json_bytes = run(["tree", "--json", str(path)])
            with SessionStore.open(path, read_only=True) as store:
                full = sum(len(r.prefix.encode()) for r in render_tree(store.tree, store.leaf_id))
            results.append((size, rows, text_s / rows, json_s / rows, json_bytes / rows, full))
    base = results[0]
    print(
        f"{'branch points':>13} {'text s':>8} {'ratio':>6} {'json s':>8} {'ratio':>6} {'json B/row':>10} "
        f"{'ratio':>6} {'full prefixes MB':>16}"
    )
    for size, rows, text, json_, per_row, full in results:
        print(
            f"{size:>13,} {text * rows:>8.2f} {text / base[2]:>6.2f} {json_ * rows:>8.2f} {json_ / base[3]:>6.2f} "
            f"{per_row:>10.0f} {per_row / base[4]:>6.2f} {full / 1e6:>16.1f}"
        )


if __name__ == "__main__":
    main()
