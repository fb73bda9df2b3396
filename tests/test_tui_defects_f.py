"""Issue 13 (F, the app as a new user meets it): Pilot tests of the real app for the defects fixed here.

Each test drives :class:`~tui.app.KompaktApp` on real session files in an isolated home, with the loopback
OpenAI server where a model is needed, and waits for the condition it asserts (never a fixed pause).
"""

from __future__ import annotations

import pytest

from tests.app_e2e_helpers import (
    branched_session_app,
    isolated_home,
    main_screen,
    make_app,
    ready,
    saved_session_app,
    screen_text,
    settings_toml,
    wait_idle,
    wait_until,
)
from tests.fake_openai import Reply, fake_openai_fixture  # noqa: F401
from tests.pages import MainPage
from tests.test_app_e2e import choose_in_summary_dialog
from tui.agent.session import AUTO_CONTINUE_TYPE
from tui.launch import Launch
from tui.screens.help import help_markdown
from tui.session.display import displayed_entries as chat_entries
from widgets.chat_history import history_items
from widgets.chat_messages import MessageHeader, UserMessage

SIZE = (120, 40)


async def test_typing_on_a_focused_message_goes_to_the_prompt_and_fires_no_action(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """D1: 'hello there' typed on a focused message neither edits (leaf moves) nor copies; the prompt gets it."""
    app, _home, ids = saved_session_app(tmp_path, monkeypatch, fake_openai, [("first question", "answer")])
    before = app.launch.path.read_bytes()
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await wait_until(pilot, lambda: screen.chat.message_widgets, "the chat")
        user = next(w for w in screen.chat.message_widgets if isinstance(w, UserMessage))
        user.focus()
        await wait_until(pilot, lambda: app.focused is user, "the focused message")
        await pilot.press(*"hello there")
        await wait_until(pilot, lambda: screen.prompt.text == "hello there", "the typed text in the prompt")
        assert app.focused is screen.prompt
        # Tab from the prompt moves focus away; what is typed next still lands in the prompt.
        screen.chat.focus()
        await wait_until(pilot, lambda: app.focused is screen.chat, "the focused chat")
        await pilot.press(*" ce")
        await wait_until(pilot, lambda: screen.prompt.text == "hello there ce", "the text typed on the chat")
        assert copied == [] and app.session.store.leaf_id == ids[-1]
        assert app.launch.path.read_bytes() == before
        # The actions moved to modifier keys.
        user.focus()
        await wait_until(pilot, lambda: app.focused is user, "the focused message again")
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: copied == ["first question"], "the copy")
        assert main_screen(app) is screen


def chat_ids(screen) -> list[str | None]:
    return [w.entry_id for w in screen.chat.message_widgets]


def fresh_chat_ids(store, view: str) -> list[str | None]:
    """What a fresh load of the chat shows, in either view (every item: the session here is short)."""
    if view == "context":
        return [e["id"] for e in chat_entries(store)]
    return [item.entry_id for item in history_items(store.get_branch())]


@pytest.mark.parametrize("view", ["history", "context"])
async def test_the_chat_after_an_automatic_compaction_equals_a_fresh_load(
    tmp_path, monkeypatch, fake_openai, view
) -> None:
    """D4: after a threshold compaction and its auto-continue, each entry shows once, as a fresh load shows it
    (in the history view, the compaction's divider and fold stand where its summarised messages were)."""
    turns = [(f"question {i}", f"answer {i}") for i in range(6)]
    app, _home, _ids = saved_session_app(
        tmp_path, monkeypatch, fake_openai, turns, chars=2000, keep_recent_tokens=1000
    )
    # The reply reports a context over the threshold (32000 - 16384): compaction, then the auto-continue.
    fake_openai.queue(Reply.text_reply("big reply", usage=(20000, 10)))
    fake_openai.default = Reply.text_reply("summary or continued")
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        if view == "context":
            await pilot.press("f9")
            await wait_until(pilot, lambda: screen.chat.view == "context", "the context view")
        screen.prompt.focus()
        screen.prompt.text = "the new question"
        await pilot.press("enter")
        store = app.session.store
        await wait_idle(
            pilot,
            app,
            lambda: (
                any(e.get("customType") == AUTO_CONTINUE_TYPE for e in store.get_branch())
                and any(e.get("type") == "compaction" for e in store.get_branch())
            ),
            "the compaction and the auto-continue",
        )
        await wait_until(
            pilot,
            lambda: chat_ids(screen)[-1] == store.leaf_id,
            "the continued reply in the chat",
        )
        fresh = fresh_chat_ids(store, view)
        # The chat's items are a fresh load's, and the mounted messages are their newest ones (a window).
        assert [item.entry_id for item in screen.chat.items] == fresh
        mounted = chat_ids(screen)
        assert mounted and mounted == fresh[len(fresh) - len(mounted) :]
        shown = [entry_id for entry_id in fresh if entry_id is not None]
        assert len(set(shown)) == len(shown)
        if view == "history":  # the compaction folded what it summarised, behind its divider
            compaction = next(e for e in store.get_branch() if e.get("type") == "compaction")
            assert (
                compaction["id"] in fresh
                and compaction["firstKeptEntryId"] not in fresh[: fresh.index(compaction["id"])]
            )


async def test_a_read_only_session_refuses_compaction_at_once_and_offers_no_write_action(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """D5: in ``watch``, F8 and /compact refuse before any model call; footer, palette and help offer no
    compaction, label or timeline write action."""
    app, home, _ids = saved_session_app(
        tmp_path, monkeypatch, fake_openai, [("q1", "a1"), ("q2", "a2")], chars=2000, keep_recent_tokens=500
    )
    before = app.launch.path.read_bytes()
    app = make_app(home, Launch("watch", app.launch.path, tmp_path))
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f8")
        await wait_until(pilot, lambda: any("read-only" in n[1] for n in app.notes), "the refusal")
        await screen.run_command("compact", "")
        await wait_until(
            pilot, lambda: sum("read-only" in n[1] for n in app.notes) >= 2, "the /compact refusal"
        )
        assert fake_openai.hit_count == 0
        assert app.launch.path.read_bytes() == before
        assert "Compact" not in screen_text(app).splitlines()[-1]
        await pilot.press("f4")
        await wait_until(pilot, lambda: app.focused is screen.timeline, "the focused timeline")
        await pilot.press("f2")
        await wait_until(pilot, lambda: screen.tree_pane.display, "the tree pane")
        screen.tree_pane.view.focus()
        await wait_until(pilot, lambda: app.focused is screen.tree_pane.view, "the focused tree")
        offered = [c.title for c in app.get_system_commands(screen)]
        helped = help_markdown(screen)
        for action in ("Compact", "Compact now", "Apply to this session", "Preview compaction", "Label"):
            assert action not in offered
            assert f"| {action} |" not in helped
        assert "Go here" in offered  # navigation (without a summary) stays
        # Choosing a model records a model_change entry: refused too, by name and by the picker (F6).
        model = screen.agent.model
        await screen.run_command("model", "openai/other")
        await pilot.press("f6")
        await wait_until(
            pilot, lambda: sum("read-only" in n[1] for n in app.notes) >= 4, "the model refusals"
        )
        assert screen.agent.model == model and app.screen is screen
        assert app.launch.path.read_bytes() == before


async def test_a_read_only_session_offers_no_edit_and_says_why_a_hidden_write_key_does_nothing(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """QA (D5): in ``watch`` a focused user message offered "Ctrl+E Edit & resend" in the footer and "edit"
    in its header, and F8 with the message focused did nothing, silently."""
    app, home, _ids = saved_session_app(tmp_path, monkeypatch, fake_openai, [("q1", "a1")])
    before = app.launch.path.read_bytes()
    app = make_app(home, Launch("watch", app.launch.path, tmp_path))
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        user = await wait_until(pilot, lambda: next(iter(screen.query(UserMessage)), None), "the message")
        user.focus()
        await wait_until(pilot, lambda: "Copy" in screen_text(app).splitlines()[-1], "its footer")
        assert "Edit" not in screen_text(app).splitlines()[-1]
        header = user.query_one(MessageHeader)
        assert header.word_offset("edit") is None and header.render().plain.endswith(" copy")
        await pilot.press("ctrl+e")
        await pilot.press("f8")
        refused = "This session is open read-only: nothing can be written to it."
        await wait_until(pilot, lambda: any(n[1] == refused for n in app.notes), "the refusal")
        assert [n[1] for n in app.notes].count(refused) == 1  # F8 said it once; Ctrl+E is not offered
        assert app.launch.path.read_bytes() == before


async def test_an_unknown_command_keeps_its_text_and_a_double_slash_sends_one(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """D19: '/nosuch arg' stays in the prompt with the error; '//etc is a dir' is sent as '/etc is a dir'."""
    app, _home, _ids = saved_session_app(tmp_path, monkeypatch, fake_openai, [("q1", "a1")])
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        screen.prompt.focus()
        await pilot.press(*"/nosuch arg", "escape", "enter")
        await wait_until(
            pilot, lambda: any("Unknown command /nosuch" in n[1] for n in app.notes), "the error"
        )
        assert screen.prompt.text == "/nosuch arg"
        screen.prompt.text = "//etc is a dir"
        await pilot.press("enter")
        store = app.session.store
        await wait_idle(pilot, app, lambda: len(store.get_branch()) == 4, "the reply")
        sent = store.get_branch()[2]["message"]["content"][0]["text"]
        assert sent == "/etc is a dir"


def compact_key(screen) -> str | None:
    return next(
        (b.binding.key for b in screen.active_bindings.values() if b.binding.id == "main.compact"), None
    )


async def test_removing_a_keymap_override_or_the_settings_file_restores_the_default_keys(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """D9: ctrl+k for main.compact, then the [keymap] table removed, then the file itself: f8 comes back."""
    home = isolated_home(tmp_path, monkeypatch)
    plain = settings_toml(fake_openai)
    home.settings_file.write_text(plain + '\n[keymap]\n"main.compact" = "ctrl+k"\n')
    app = make_app(home, Launch("new", cwd=tmp_path), start_background=True)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await wait_until(pilot, lambda: compact_key(screen) == "ctrl+k", "the override")
        home.settings_file.write_text(plain)
        await wait_until(pilot, lambda: compact_key(screen) == "f8", "the default key again")
        home.settings_file.write_text(plain + '\n[keymap]\n"main.compact" = "ctrl+k"\n')
        await wait_until(pilot, lambda: compact_key(screen) == "ctrl+k", "the override again")
        home.settings_file.unlink()
        await wait_until(pilot, lambda: compact_key(screen) == "f8", "the default key with no file")


async def test_after_enter_in_the_tree_pane_the_prompt_has_focus(tmp_path, monkeypatch, fake_openai) -> None:
    """Item 6 (pi switching): after a navigation, what is typed goes to the prompt, not the tree's search."""
    app, ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await MainPage(pilot).open_tree_on(ids["a2"])
        await choose_in_summary_dialog(pilot, downs=0)
        await wait_until(pilot, lambda: app.session.store.leaf_id == ids["a2"], "the leaf to move")
        await wait_until(pilot, lambda: app.focused is screen.prompt, "the focused prompt")
        await pilot.press(*"next")
        await wait_until(pilot, lambda: screen.prompt.text == "next", "the typed text in the prompt")


def palette_key(app) -> str | None:
    return next(
        (b.binding.key for b in app.screen.active_bindings.values() if b.binding.action == "command_palette"),
        None,
    )


async def test_a_live_keymap_change_keeps_the_command_palette(tmp_path, monkeypatch, fake_openai) -> None:
    """QA item 5: a [keymap] written and removed while the app runs leaves Ctrl+P (and the footer's ^p) alone."""
    from textual.command import CommandPalette

    home = isolated_home(tmp_path, monkeypatch)
    plain = settings_toml(fake_openai)
    home.settings_file.write_text(plain)
    app = make_app(home, Launch("new", cwd=tmp_path), start_background=True)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        assert palette_key(app) == "ctrl+p"
        home.settings_file.write_text(plain + '\n[keymap]\n"main.compact" = "ctrl+k"\n')
        await wait_until(pilot, lambda: compact_key(screen) == "ctrl+k", "the override")
        assert palette_key(app) == "ctrl+p"
        home.settings_file.unlink()
        await wait_until(pilot, lambda: compact_key(screen) == "f8", "the default key with no file")
        assert palette_key(app) == "ctrl+p"
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the command palette")
