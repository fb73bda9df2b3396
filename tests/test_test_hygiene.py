"""The suite's own hygiene: no test synchronises by a fixed pause before it asserts.

A test that asserts right after ``await pilot.pause()``, ``asyncio.sleep(...)`` or ``time.sleep(...)`` bets
that the app got there within one frame or that many seconds; on a loaded 2-core machine it loses
(``test_the_focused_row_is_described`` once failed so in the full run). Tests wait for the condition they
assert instead (``tests.pages.wait_until`` and the page object). This guard reads every test module's syntax
tree and reports each assert whose last wait before it, in the same block, is a fixed pause.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def is_fixed_pause(node: ast.AST) -> bool:
    """``pilot.pause(...)``, ``asyncio.sleep(...)`` or ``time.sleep(...)``, awaited or not."""
    if isinstance(node, ast.Await):
        node = node.value
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    name, owner = node.func.attr, node.func.value
    if name == "pause":
        return True
    return name == "sleep" and isinstance(owner, ast.Name) and owner.id in {"asyncio", "time"}


def waits(statement: ast.stmt) -> ast.AST | None:
    """The wait a simple statement makes (an ``await`` or a ``time.sleep``), if any."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Await) or (is_fixed_pause(node) and isinstance(node, ast.Call)):
            return node
    return None


def blocks(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every statement list, except a ``while`` loop's body (a poll: it waits for its condition)."""
    for node in ast.walk(tree):
        for field in (
            ("orelse", "finalbody") if isinstance(node, ast.While) else ("body", "orelse", "finalbody")
        ):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body


def paused_asserts(source: str) -> list[int]:
    """Line numbers of the asserts that follow a fixed pause with no other wait between them."""
    found = []
    for body in blocks(ast.parse(source)):
        last_wait: ast.AST | None = None
        for statement in body:
            if isinstance(statement, ast.Assert):
                if last_wait is not None and is_fixed_pause(last_wait):
                    found.append(statement.lineno)
                    last_wait = None  # one report per pause
                continue
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if isinstance(statement, ast.Expr | ast.Assign | ast.AnnAssign | ast.AugAssign):
                wait = waits(statement)
                if wait is not None:
                    last_wait = wait
            else:
                last_wait = None  # a compound statement: its own blocks are read on their own
    return found


def test_the_scanner_finds_a_pause_before_an_assert() -> None:
    source = (
        "async def test_x(pilot, app):\n"
        "    await pilot.press('a')\n"
        "    await pilot.pause()\n"
        "    rows = app.rows\n"
        "    assert rows\n"
        "    await wait_until(pilot, lambda: app.ready)\n"
        "    assert app.ready\n"
        "    time.sleep(0.1)\n"
        "    assert app.done\n"
        "    while not app.idle:  # a poll, with an invariant checked on each round\n"
        "        await asyncio.sleep(0)\n"
        "        assert not app.failed\n"
    )
    assert paused_asserts(source) == [5, 9]


def test_no_test_asserts_after_a_fixed_pause() -> None:
    offenders = [
        f"{path.name}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        if "__snapshots__" not in path.parts
        for line in paused_asserts(path.read_text())
    ]
    assert offenders == [], f"{len(offenders)} asserts follow a fixed pause: {offenders}"
