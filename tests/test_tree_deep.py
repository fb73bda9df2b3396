"""A tree with thousands of branch points: rows share their prefixes and the CLI output stays linear."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import orjson

from bench.tree_cli import branchy
from tests.pages import until
from tui import cli
from tui.session.store import SessionStore
from tui.session.tree_view import render_tree


def run(argv: list[str], monkeypatch) -> bytes:
    monkeypatch.setenv("COLUMNS", "100")
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with contextlib.redirect_stdout(out):
        assert cli.main(argv) == 0
    out.flush()
    return out.buffer.getvalue()  # type: ignore[attr-defined]


def test_json_rows_of_a_deep_tree_have_bounded_prefixes(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "deep.jsonl"
    branchy(path, 1500)
    rows = orjson.loads(run(["tree", "--json", str(path)], monkeypatch))
    assert len(rows) == 4500
    assert max(len(r["prefix"]) for r in rows) == cli.JSON_PREFIX_COLUMNS
    deepest = max(rows, key=lambda r: r["indent"])
    assert deepest["indent"] > 4000 and deepest["prefix"].startswith("…")
    with SessionStore.open(path, read_only=True) as store:
        full = {r.entry_id: r.prefix for r in render_tree(store.tree, store.leaf_id)}
    for row in rows:  # the shown part is the end of the real prefix; short ones are whole
        real = full[row["id"]]
        assert len(real) == row["indent"]
        assert row["prefix"] == real if len(real) <= 120 else real.endswith(row["prefix"][1:])


def test_text_rows_of_a_deep_tree_fit_the_terminal(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "deep.jsonl"
    branchy(path, 1500)
    lines = run(["tree", str(path)], monkeypatch).decode().splitlines()
    assert len(lines) == 4501 and max(len(line) for line in lines) <= 100
    assert any(line.startswith("…") for line in lines)


async def test_the_panes_rows_of_a_deep_tree_keep_their_text_on_screen(tmp_path: Path) -> None:
    """As `kompakt tree` does: a prefix wider than the list loses its left end, so the entry text shows."""
    from tests.test_tui_tree import TreeHost, lines

    path = tmp_path / "deep.jsonl"
    branchy(path, 1500)
    with SessionStore.open(path, read_only=True) as store:
        tree, leaf = store.tree, store.leaf_id
    app = TreeHost(tree, leaf)
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.view
        await until(pilot, lambda: view.selected_id == leaf and lines(view))
        drawn = lines(view)
        assert view.selector is not None and max(r.width for r in view.selector.rows) > 4000
        assert drawn and all(len(line) <= view.size.width for line in drawn)
        assert all("…" in line and ("user:" in line or "assistant:" in line) for line in drawn), drawn
        assert any(line.startswith("› ") and line.endswith("← active") for line in drawn)
