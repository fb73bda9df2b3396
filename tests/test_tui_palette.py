"""The command palette and the one action table (issue 13 D8, issue 12 item 4), driven through the real app.

Ctrl+P must list kompakt's own commands, grouped (every F-key action and the slash commands that have
no key), and none of the prompt editor's cursor commands; choosing one runs it through the same action
as its key and its slash command.
"""

from __future__ import annotations

from textual.command import CommandList, CommandPalette
from textual.widgets import TextArea

from tests.app_e2e_helpers import make_app, ready, saved_session_app, wait_until
from tests.fake_openai import fake_openai_fixture  # noqa: F401
from tui.actions import ACTIONS, GROUPS
from tui.launch import Launch

SIZE = (120, 40)
# What D8 names, and every F-key action (their titles in the table).
EXPECTED = (
    "Export", "Label the current entry", "Name session", "Sessions", "Continue", "Mixture of Agents", "Fork",
    "Clone", "Help", "Tree pane", "Full tree", "Timeline", "Settings", "Model", "Compact", "Undo compaction",
    "Inspect compaction", "Session settings", "New session", "Quit", "View",
)  # fmt: skip


async def _open_palette(pilot, app) -> list[str]:
    """Ctrl+P, then the palette's rows (group and title, as plain text) once the list has settled."""
    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
    results = app.screen.query_one(CommandList)

    def rows() -> list[str]:
        return [
            str(results.get_option_at_index(i).prompt).split("\n")[0] for i in range(results.option_count)
        ]

    # Textual's Screenshot is yielded last: once it is listed, everything before it is.
    await wait_until(
        pilot, lambda: any(row.endswith(" Screenshot") for row in rows()), "the palette's commands"
    )
    return rows()


def _titles(rows: list[str]) -> list[tuple[str, str]]:
    """(group, title) of each row: the group is the row's first word (they are one word each)."""
    return [(row.split(maxsplit=1)[0], row.split(maxsplit=1)[1].strip()) for row in rows]


async def test_the_palette_lists_kompakts_commands_grouped_and_no_cursor_commands(
    tmp_path, monkeypatch, fake_openai
) -> None:
    app, _home, _ids = saved_session_app(tmp_path, monkeypatch, fake_openai, [("first question", "answer")])
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        assert app.focused is screen.prompt  # the prompt editor's ~32 cursor bindings are active now
        rows = _titles(await _open_palette(pilot, app))
        titles = [title for _group, title in rows]
        for title in EXPECTED:
            assert title in titles, title
        cursor = {b.description for b in TextArea.BINDINGS if getattr(b, "description", "")}
        assert not cursor & set(titles), sorted(cursor & set(titles))
        assert "Keys" not in titles  # Textual's key panel would list them again
        assert len(titles) == len(set(titles))
        # Grouped: each group's rows together, the groups in their order, and each command in its group.
        groups = [group for group, _title in rows]
        assert groups == sorted(groups, key=GROUPS.index)
        by_title = {action.title: action.group for action in ACTIONS}
        assert all(group == by_title[title] for group, title in rows if title in by_title)

        # A command that needs its argument is typed into the prompt; one that does not runs at once.
        await pilot.press(*"name session")
        await wait_until(
            pilot,
            lambda: (
                str(app.screen.query_one(CommandList).get_option_at_index(0).prompt).find("Name session") >= 0
            ),
            "the search",
        )
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, CommandPalette), "the palette to close")
        await wait_until(pilot, lambda: screen.prompt.text == "/name ", "the typed command")
        assert app.focused is screen.prompt
        screen.prompt.text = ""
        await _open_palette(pilot, app)
        await pilot.press(*"export")
        await wait_until(
            pilot,
            lambda: str(app.screen.query_one(CommandList).get_option_at_index(0).prompt).find("Export") >= 0,
            "the search",
        )
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(n[0] == "Exported" for n in app.notes), "the export")
        assert list(tmp_path.rglob("*.html"))


async def test_a_read_only_palette_and_slash_commands_refuse_writes_through_check_action(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """The same check (``check_action``) hides writes from the palette and refuses them as slash commands."""
    app, home, _ids = saved_session_app(tmp_path, monkeypatch, fake_openai, [("q1", "a1")])
    before = app.launch.path.read_bytes()
    app = make_app(home, Launch("watch", app.launch.path, tmp_path))
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        titles = [title for _group, title in _titles(await _open_palette(pilot, app))]
        for write in ("Compact", "Label the current entry", "Name session", "Continue", "Undo compaction"):
            assert write not in titles
        assert "Export" in titles and "Inspect compaction" in titles
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, CommandPalette), "the palette to close")
        refusals = sum("read-only" in n[1] for n in app.notes)
        for command, argument in (("name", "renamed"), ("label", "x"), ("continue", ""), ("uncompact", "")):
            await screen.run_command(command, argument)
        await wait_until(
            pilot, lambda: sum("read-only" in n[1] for n in app.notes) == refusals + 4, "four refusals"
        )
        assert fake_openai.hit_count == 0 and app.launch.path.read_bytes() == before
