"""A tree with thousands of branch points: rows share their prefixes and the CLI output stays linear."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import orjson

from bench.tree_cli import branchy
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
