"""Prompt: Enter sends, Shift+Enter / Ctrl+J add lines, history recall (memory and file), slash-command
completion with Tab, huge and garbage pastes, auto-grow; and the status bar (Pilot host apps)."""

from __future__ import annotations

import json
from pathlib import Path

from textual import events
from textual.app import App, ComposeResult

from tests.pages import until
from widgets.prompt import CompletionMenu, PromptBox, PromptInput
from widgets.status_bar import StatusBar


class PromptHost(App):
    def __init__(self, history_path: Path | None = None) -> None:
        super().__init__()
        self.history_path = history_path
        self.sent: list[str] = []

    def compose(self) -> ComposeResult:
        yield PromptBox(PromptInput(history_path=self.history_path))
        yield StatusBar()

    def on_mount(self) -> None:
        self.prompt.focus()

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        self.sent.append(event.text)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)


async def type_text(pilot, text: str) -> None:
    await pilot.press(*[{" ": "space", "/": "slash", "!": "exclamation_mark"}.get(ch, ch) for ch in text])


async def test_enter_sends_and_clears() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await until(pilot, lambda: (app.sent == ["hello"]) and (app.prompt.text == ""))
        assert app.sent == ["hello"]
        assert app.prompt.text == ""
        await pilot.press("space", "enter")  # blank: nothing is sent
        await until(pilot, lambda: app.sent == ["hello"])
        assert app.sent == ["hello"]


async def test_shift_enter_and_ctrl_j_insert_newlines() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        await type_text(pilot, "a")
        await pilot.press("shift+enter")
        await type_text(pilot, "b")
        await pilot.press("ctrl+j")
        await type_text(pilot, "c")
        assert app.prompt.text == "a\nb\nc"
        await pilot.press("enter")
        await until(pilot, lambda: app.sent == ["a\nb\nc"])
        assert app.sent == ["a\nb\nc"]


async def test_bang_command_is_sent_as_text() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        await type_text(pilot, "!ls")
        await pilot.press("enter")
        await until(pilot, lambda: app.sent == ["!ls"])
        assert app.sent == ["!ls"]


async def test_alt_a_selects_the_whole_prompt_and_typing_replaces_it() -> None:
    """Select-all is alt+a (TextArea's F7 opens the session picker in the app): a new user who wants to
    start the prompt over selects it all and types, on every line, not only the cursor's."""
    app = PromptHost()
    async with app.run_test() as pilot:
        await type_text(pilot, "first line")
        await pilot.press("shift+enter")
        await type_text(pilot, "second")
        await pilot.press("alt+a")
        await until(pilot, lambda: app.prompt.selected_text == "first line\nsecond")
        assert app.prompt.selected_text == "first line\nsecond"
        await type_text(pilot, "new")
        await until(pilot, lambda: app.prompt.text == "new")
        assert app.prompt.text == "new"


async def test_history_recall_with_up_and_down() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        for text in ("one", "two"):
            await type_text(pilot, text)
            await pilot.press("enter")
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert app.prompt.text == "two"
        await pilot.press("up")
        assert app.prompt.text == "one"
        await pilot.press("up")  # nothing older
        assert app.prompt.text == "one"
        await pilot.press("down")
        assert app.prompt.text == "two"
        await pilot.press("down")
        assert app.prompt.text == "draft"


async def test_up_moves_the_cursor_inside_a_multiline_prompt_first() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        await type_text(pilot, "old")
        await pilot.press("enter")
        app.prompt.insert("line1\nline2")
        await pilot.press("up")
        assert app.prompt.text == "line1\nline2" and app.prompt.cursor_location[0] == 0
        await pilot.press("up")
        assert app.prompt.text == "old"


async def test_history_file_is_loaded_and_appended(tmp_path: Path) -> None:
    path = tmp_path / "state" / "history.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps("from file\nwith two lines") + "\nnot json\n" + json.dumps("latest") + "\n")
    app = PromptHost(history_path=path)
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("up")
        assert app.prompt.text == "latest"
        await pilot.press("up")
        assert app.prompt.text == "from file\nwith two lines"
        app.prompt.clear()
        await type_text(pilot, "new one")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1]) == "new one"
    assert len(lines) == 4


async def test_slash_completion_menu_and_tab() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        menu = app.query_one(CompletionMenu)
        assert not menu.display or menu.has_class("-empty")
        await type_text(pilot, "/com")
        await until(
            pilot,
            lambda: (
                ([c.name for c in app.prompt.completions] == ["/compact"])
                and (not menu.has_class("-empty") and menu.option_count == 1)
                and (app.prompt.suggestion == "pact")
            ),
        )
        assert [c.name for c in app.prompt.completions] == ["/compact"]
        assert not menu.has_class("-empty") and menu.option_count == 1
        assert app.prompt.suggestion == "pact"
        await pilot.press("tab")
        await until(pilot, lambda: (app.prompt.text == "/compact ") and (menu.has_class("-empty")))
        assert app.prompt.text == "/compact "
        assert menu.has_class("-empty")
        await type_text(pilot, "keep the API notes")
        await pilot.press("enter")
        await until(pilot, lambda: app.sent == ["/compact keep the API notes"])
        assert app.sent == ["/compact keep the API notes"]


async def test_slash_menu_lists_all_commands_and_arrows_choose() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        await type_text(pilot, "/")
        await until(
            pilot,
            lambda: (
                [c.name for c in app.prompt.completions][:3] == ["/compact", "/tree", "/model"]
                and {"/settings", "/label", "/export", "/new", "/resume", "/moa", "/help"}
                <= set([c.name for c in app.prompt.completions])
            ),
        )
        names = [c.name for c in app.prompt.completions]
        assert names[:3] == ["/compact", "/tree", "/model"]
        assert {"/settings", "/label", "/export", "/new", "/resume", "/moa", "/help"} <= set(names)
        await pilot.press("down")
        await until(pilot, lambda: app.query_one(CompletionMenu).highlighted == 1)
        assert app.query_one(CompletionMenu).highlighted == 1
        await pilot.press("enter")  # with the menu open, Enter accepts
        assert app.prompt.text == "/tree" and app.sent == []
        await pilot.press("enter")
        await until(pilot, lambda: app.sent == ["/tree"])
        assert app.sent == ["/tree"]


async def test_escape_closes_the_menu_and_tab_without_menu_moves_focus() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        await type_text(pilot, "/he")
        await pilot.press("escape")
        assert app.prompt.completions == []
        app.prompt.clear()
        await type_text(pilot, "plain")
        await pilot.press("tab")
        assert app.prompt.text == "plain"


async def test_huge_paste_is_collapsed_and_submitted_whole() -> None:
    big = ("0123456789abcdef" * 64 + "\n") * 1200  # about 1.2 MB
    app = PromptHost()
    async with app.run_test() as pilot:
        await type_text(pilot, "see: ")
        app.prompt.post_message(events.Paste(big))
        await until(
            pilot,
            lambda: (app.prompt.text == "see: [pasted 1.2 MB #1]") and (app.prompt.document.line_count == 1),
        )
        assert app.prompt.text == "see: [pasted 1.2 MB #1]"
        assert app.prompt.document.line_count == 1
        await pilot.press("enter")
        await until(pilot, lambda: (app.sent == ["see: " + big]) and (app.prompt.text == ""))
        assert app.sent == ["see: " + big]
        assert app.prompt.text == ""


async def test_backspace_or_delete_at_a_paste_chip_removes_it_whole() -> None:
    """QA issue 13 F7: Backspace after ``[pasted … #1]`` took it apart character by character, and a half
    chip was sent as text with the paste lost. Now Backspace (after) or Delete (before) takes the whole
    chip, Ctrl+Z brings it back whole, and what is sent is the user's text with the pastes still there."""
    one, two = "a" * 150_000, "b" * 150_000
    app = PromptHost()
    async with app.run_test() as pilot:
        prompt = app.prompt
        await type_text(pilot, "x ")
        prompt.post_message(events.Paste(one))
        await until(pilot, lambda: prompt.text == "x [pasted 150 KB #1]")
        await type_text(pilot, " y ")
        prompt.post_message(events.Paste(two))
        await until(pilot, lambda: prompt.text == "x [pasted 150 KB #1] y [pasted 150 KB #2]")
        await pilot.press("backspace")
        await until(pilot, lambda: prompt.text == "x [pasted 150 KB #1] y ")
        await pilot.press("ctrl+z")
        await until(pilot, lambda: prompt.text == "x [pasted 150 KB #1] y [pasted 150 KB #2]")
        prompt.move_cursor((0, 2))
        await pilot.press("delete")
        await until(pilot, lambda: prompt.text == "x  y [pasted 150 KB #2]")
        prompt.post_message(events.Paste(one))  # a new chip gets a new number, never #2 again
        await until(pilot, lambda: "#3]" in prompt.text)
        await pilot.press("enter")
        await until(pilot, lambda: len(app.sent) == 1)
        assert app.sent == [f"x {one} y {two}"]


async def test_a_cut_paste_chip_is_not_sent() -> None:
    """Review (session 18): a chip cut other than by Backspace or Delete at its edge (typing inside it, a
    selection over part of it, Ctrl+K) was sent as literal text and its paste was lost."""
    pasted = "p" * 150_000
    app = PromptHost()
    async with app.run_test() as pilot:
        prompt = app.prompt
        prompt.post_message(events.Paste(pasted))
        await until(pilot, lambda: prompt.text == "[pasted 150 KB #1]")
        prompt.move_cursor((0, 5))
        await type_text(pilot, "x")
        await until(pilot, lambda: "x" in prompt.text)
        cut = prompt.text
        assert "x" in cut and cut.startswith("[pas") and cut.endswith("ed 150 KB #1]")
        await pilot.press("enter")
        await until(pilot, lambda: any("was cut" in n.message for n in app._notifications))
        assert app.sent == [] and prompt.text == cut  # kept, nothing sent
        await pilot.press("ctrl+z")
        await until(pilot, lambda: prompt.text == "[pasted 150 KB #1]")
        await pilot.press("enter")
        await until(pilot, lambda: len(app.sent) == 1)
        assert app.sent == [pasted]


async def test_garbage_paste_loses_control_characters() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        app.prompt.post_message(events.Paste("ok\x1b[31m red\x00\x07\x1b]0;t\x07\tend\r\nnext"))
        await until(pilot, lambda: app.prompt.text == "ok red\tend\nnext")
        assert app.prompt.text == "ok red\tend\nnext"


async def test_prompt_grows_up_to_ten_lines() -> None:
    app = PromptHost()
    async with app.run_test(size=(80, 40)) as pilot:
        single = app.prompt.outer_size.height
        app.prompt.insert("\n".join("abc" for _ in range(4)))
        await until(pilot, lambda: app.prompt.outer_size.height == single + 3)
        assert app.prompt.outer_size.height == single + 3
        app.prompt.insert("\n" * 30)
        await until(pilot, lambda: app.prompt.outer_size.height == single + 9)
        assert app.prompt.outer_size.height == single + 9


async def test_status_bar_shows_its_fields() -> None:
    app = PromptHost()
    async with app.run_test(size=(140, 20)) as pilot:
        bar = app.query_one(StatusBar)
        bar.model = "gpt-5 [bold]x"
        bar.offline = True
        bar.context_tokens = 150_000
        bar.context_window = 200_000
        bar.cost = 1.234
        bar.litellm_loading = True
        bar.iteration, bar.max_iterations = 3, 20
        bar.message = "saved\x1b[2J"
        await until(
            pilot,
            lambda: (
                str(bar.render())
                == "gpt-5 [bold]x  offline  · 150.0k/200.0k (75%) · $1.23 · loading litellm… · tools 3/20 · saved"
            ),
        )
        text = str(bar.render())
        assert text == (
            "gpt-5 [bold]x  offline  · 150.0k/200.0k (75%) · $1.23 · loading litellm… · tools 3/20 · saved"
        )
        bar.litellm_loading = False
        bar.context_tokens = None
        assert "loading" not in str(bar.render()) and "%" not in str(bar.render())
