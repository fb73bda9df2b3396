"""``kompakt tree`` writes each row's escape codes itself; they must be what rich's console prints for the row.

The oracle is the rows drawn with rich ``Text`` and ``Console.print(no_wrap, crop)`` (how the command drew
them before): same bytes, in colour, without colour (``NO_COLOR``) and plain, at narrow and wide widths,
on sessions with labels, wide characters, long texts and deep prefixes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text

from bench.gen_session import generate
from tests import factories as f
from tui.cli import _ROW_STYLES
from tui.session.display import flat
from tui.session.sanitize import sanitize
from tui.session.store import SessionStore
from tui.session.tree_view import render_tree

ROOT = Path(__file__).resolve().parents[1]


def rich_oracle(path: Path, env: dict[str, str]) -> bytes:
    """The tree as rich's console prints it, in a child process with the same environment."""
    code = f"""
import sys
from tests.test_cli_tree_render import draw
sys.stdout.write(draw({str(path)!r}))
"""
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, check=True)
    return out.stdout


def draw(path: str) -> str:
    console = Console(highlight=False, soft_wrap=False, record=False)
    with SessionStore.open(Path(path), read_only=True) as store:
        rows = render_tree(store.tree, store.leaf_id)
    lines = []
    columns = max(8, console.width - 30)
    for row in rows:
        line = Text(row.shown_prefix(columns), style="bright_black")
        if row.on_active_path:
            line.append("• ", style="green")
        if row.label:
            line.append(f"[{flat(sanitize(row.label))}] ", style="yellow")
        suffix = Text("  ← active", style="bold green") if row.is_leaf else Text("")
        body = Text(flat(sanitize(row.text)), style=_ROW_STYLES.get(row.kind, ""))
        body.truncate(max(8, console.width - line.cell_len - suffix.cell_len), overflow="ellipsis")
        lines.append(line + body + suffix)
    lines.append(Text(f"({len(rows)} rows)", style="bright_black"))
    with console.capture() as capture:
        console.print(Text("\n").join(lines), no_wrap=True, crop=True)
    return capture.get()


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("trees")
    big = generate(tmp / "gen.jsonl", entries=400, seed=3, big_output_lines=2)
    wide = tmp / "wide.jsonl"
    with SessionStore.open(big, read_only=True) as store:
        first = next(iter(store.tree.by_id))
    lines = big.read_text().splitlines()
    extra = f.label(first, "漢字のラベル " * 6)
    extra.update(id="lab1", parentId=None, timestamp="2030-01-01T00:00:00.000Z")
    user = f.user("全角の文字 " * 40 + "\x1b[31m red")
    user.update(id="wide1", parentId=first, timestamp="2030-01-01T00:00:01.000Z")
    wide.write_text("\n".join([*lines, json.dumps(extra), json.dumps(user)]) + "\n")
    return [big, wide]


@pytest.mark.parametrize("width", [12, 37, 80, 161])
@pytest.mark.parametrize("mode", ["color", "no_color", "plain"])
def test_tree_text_is_what_rich_would_print(sessions: list[Path], width: int, mode: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TERM")}
    env["COLUMNS"] = str(width)
    if mode != "plain":
        env["FORCE_COLOR"] = "1"
    if mode == "no_color":
        env["NO_COLOR"] = "1"
    for path in sessions:
        ours = subprocess.run(
            [sys.executable, "-m", "tui.cli", "tree", str(path)], env=env, cwd=ROOT, capture_output=True
        )
        assert ours.returncode == 0, ours.stderr
        assert ours.stdout == rich_oracle(path, env), (path.name, width, mode)


def test_tree_does_not_load_the_settings_model(sessions: list[Path]) -> None:
    """``kompakt tree`` needs no settings: building the parser no longer imports pydantic-settings (~0.5 s)."""
    code = f"""
import sys
from tui.cli import main
main(["tree", {str(sessions[0])!r}])
print("LOADED", sorted(m for m in ("pydantic_settings", "tui.config.model") if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "LOADED []"
