"""End-to-end tests of the real app (``KompaktApp`` and its main screen) driven with Pilot.

Every test runs in an isolated home (tests/app_e2e_helpers.py) with ``openai/fake`` on the loopback server
(tests/fake_openai.py) unless it tests the offline model. They cover sending and streaming, cancelling, tool
calls, tree navigation with and without a branch summary, the tree pane's filters, search, fold and label,
the timeline after ``/compact`` and its what-if against ``kompakt plan``, settings editing and live reload,
watch mode, ``/new`` and ``/resume``, ``!cmd``, the offline model, and R6 (escape sequences stay literal).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from textual.widgets import Input
from textual.widgets._toast import Toast

from tests import factories as f
from tests.app_e2e_helpers import (
    CONTEXT_WINDOW,
    SETTINGS_COMMENT,
    branched_session_app,
    isolated_home,
    loopback_app,
    make_app,
    message,
    new_session,
    ready,
    saved_session_app,
    screen_text,
    settings_toml,
    wait_idle,
    wait_until,
)
from tests.fake_openai import FakeOpenAI, Reply, ToolCall, fake_openai_fixture  # noqa: F401
from tests.pages import MainPage, rendered_strips, until
from tui import cli
from tui.agent.offline import OFFLINE_MODEL, offline_reply
from tui.launch import Launch
from tui.screens.dialogs import LabelDialog, SummarizeBranchDialog
from tui.screens.model_picker import ModelPicker
from tui.screens.session_picker import SessionPicker
from tui.screens.settings_screen import SettingsScreen
from tui.screens.tree_screen import TreeScreen
from tui.session.store import SessionStore
from widgets.chat_messages import (
    AssistantMessage,
    BashMessage,
    BranchSummaryMessage,
    ToolCallView,
    UserMessage,
)
from widgets.timeline import format_tokens

SIZE = (120, 40)


def assistant_texts(store: SessionStore) -> list[str]:
    return [
        "".join(block.get("text", "") for block in e["message"]["content"] if block["type"] == "text")
        for e in store.get_branch()
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]


# --- sending, streaming, cancelling, tools --------------------------------------------------------


async def test_prompt_reply_streams_into_the_chat_and_is_stored(tmp_path, monkeypatch, fake_openai) -> None:
    reply = "Hello **there**: the loopback reply, streamed in small pieces."
    fake_openai.queue(Reply.text_reply(reply, chunk_size=3))
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await MainPage(pilot).send("say hello")
        await wait_idle(pilot, app, lambda: assistant_texts(screen.agent.store), "the reply")
        store = screen.agent.store
        assert [e["message"]["role"] for e in store.get_branch()] == ["user", "assistant"]
        assert assistant_texts(store) == [reply]
        assert store.path.exists() and store.path.read_text().count('"role":"assistant"') == 1
        assert fake_openai.requests[0]["messages"][-1]["content"] in (
            "say hello",
            [{"type": "text", "text": "say hello"}],
        )
        assert [type(w) for w in screen.chat.message_widgets] == [UserMessage, AssistantMessage]
        await wait_until(pilot, lambda: "Hello there: the loopback reply" in screen_text(app), "the reply")
        assert "**" not in screen_text(app)  # rendered as Markdown
        assert screen.prompt.text == "" and not screen.prompt.disabled


async def test_escape_cancels_a_hanging_stream(tmp_path, monkeypatch, fake_openai) -> None:
    fake_openai.queue(Reply.hang(text="partial words so far"))
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await MainPage(pilot).send("tell me a long story")
        # The partial reply is on screen while the server is still holding the stream open.
        await wait_until(pilot, lambda: "partial words so far" in screen_text(app), "the partial reply")
        assert screen.agent.is_streaming and screen.has_class("-streaming")
        await pilot.press("escape")
        await wait_idle(pilot, app, lambda: assistant_texts(screen.agent.store), "the aborted message")
        await wait_until(pilot, lambda: fake_openai.disconnects == 1, "the client to leave the stream")
        last = screen.agent.store.get_branch()[-1]["message"]
        assert last["role"] == "assistant" and last["stopReason"] == "aborted"
        assert not screen.has_class("-streaming") and screen.status.message == ""
        # The UI is idle again: the next prompt goes out and is answered.
        fake_openai.queue(Reply.text_reply("after the cancel"))
        await MainPage(pilot).send("again")
        await wait_idle(pilot, app, lambda: len(assistant_texts(screen.agent.store)) == 2, "the second reply")
        assert assistant_texts(screen.agent.store)[-1] == "after the cancel"


async def test_tool_calls_are_rendered_with_args_and_output(tmp_path, monkeypatch, fake_openai) -> None:
    call = ToolCall("bash", {"command": "echo tool-output-42"})
    fake_openai.queue(Reply.tools(call), Reply.text_reply("the command printed 42"))
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await MainPage(pilot).send("run it")
        await wait_idle(pilot, app, lambda: len(assistant_texts(screen.agent.store)) == 2, "the final reply")
        roles = [e["message"]["role"] for e in screen.agent.store.get_branch()]
        assert roles == ["user", "assistant", "toolResult", "assistant"]
        result = screen.agent.store.get_branch()[2]["message"]
        assert "tool-output-42" in result["content"][0]["text"] and not result["isError"]
        view = await wait_until(pilot, lambda: next(iter(screen.chat.query(ToolCallView)), None), "the call")
        assert view.call_id == call.id and view.result is not None and not view.has_class("-running")
        view.collapsed = False
        await pilot.pause()
        screen.chat.scroll_end(animate=False)
        await wait_until(pilot, lambda: "tool-output-42" in screen_text(app), "the tool output")
        text = screen_text(app)
        assert '"command": "echo tool-output-42"' in text and "the command printed 42" in text


async def test_model_escape_sequences_stay_literal(tmp_path, monkeypatch, fake_openai) -> None:
    evil = "A \x1b[31mred\x1b[0m B \x1b]0;pwned\x07 C \x1b]52;c;ZXZpbA==\x07 D [bold]loud[/bold] E"
    fake_openai.queue(Reply.text_reply(evil, chunk_size=2))
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await MainPage(pilot).send("be evil")
        await wait_idle(pilot, app, lambda: assistant_texts(screen.agent.store), "the reply")
        assert assistant_texts(screen.agent.store) == [evil]  # stored as sent
        await wait_until(pilot, lambda: "[bold]loud[/bold]" in screen_text(app), "the literal markup")
        strips = rendered_strips(app)
        raw = "".join(segment.text for strip in strips for segment in strip)
        assert "\x1b" not in raw and "\x07" not in raw
        # The sequences are dropped whole (OSC payloads too) and the rest reads as plain text.
        assert "pwned" not in raw and "ZXZpbA" not in raw
        assert "A red B C D [bold]loud[/bold] E" in " ".join(screen_text(app).split())
        for strip in strips:
            for segment in strip:
                if "red" in segment.text and segment.style and segment.style.color:
                    assert segment.style.color.name != "red"  # the CSI colour did not apply
        assert "\x1b" not in app.export_screenshot()


async def test_bang_command_adds_a_bash_execution(tmp_path, monkeypatch, fake_openai) -> None:
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await MainPage(pilot).send("!echo bash-says-hi")
        await wait_idle(pilot, app, lambda: screen.agent.store.leaf_id, "the bash entry")
        entry = screen.agent.store.get_branch()[-1]
        assert entry["message"]["role"] == "bashExecution"
        assert entry["message"]["command"] == "echo bash-says-hi"
        assert "bash-says-hi" in entry["message"]["output"] and entry["message"]["exitCode"] == 0
        bash = await wait_until(pilot, lambda: next(iter(screen.chat.query(BashMessage)), None), "the widget")
        assert bash.message["command"] == "echo bash-says-hi"
        await wait_until(pilot, lambda: "exit 0" in screen_text(app), "the exit status")
        assert fake_openai.hit_count == 0  # a shell command is not a model call


async def test_esc_cancels_a_bang_command_and_what_was_typed_meanwhile_goes_back_into_the_prompt(
    tmp_path, monkeypatch, fake_openai
) -> None:
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await MainPage(pilot).send("!sleep 30; echo never")
        await wait_until(pilot, lambda: screen.agent.is_busy, "the command to start")
        assert "esc cancels" in screen.status.message
        await MainPage(pilot).send("typed during the command")
        assert screen.queued_prompts == ["typed during the command"]
        await pilot.press("escape")
        store = screen.agent.store
        await wait_until(pilot, lambda: not screen.agent.is_busy and store.leaf_id, "the cancelled command")
        assert screen.prompt.text == "typed during the command" and screen.queued_prompts == []
        bash = store.get_branch()[-1]["message"]
        assert bash["cancelled"] is True and "never" not in bash["output"]
        assert fake_openai.hit_count == 0  # Esc sent nothing
        await pilot.press("enter")  # the user sends it when they want
        await wait_idle(pilot, app, lambda: assistant_texts(store), "the reply")
        roles = [e["message"]["role"] for e in store.get_branch()]
        assert roles == ["bashExecution", "user", "assistant"]
        assert store.get_branch()[1]["message"]["content"] == [
            {"type": "text", "text": "typed during the command"}
        ]


async def reply_hanging(pilot, app):
    """The app ready, a message sent, and the reply's first words on screen (the server holds the rest)."""
    screen = await ready(pilot, app)
    page = MainPage(pilot)
    await page.send("tell me a long story")
    await wait_until(pilot, lambda: "partial words so far" in screen_text(app), "the partial reply")
    return screen, page


async def test_esc_during_a_reply_puts_the_queued_messages_back_before_the_draft(
    tmp_path, monkeypatch, fake_openai
) -> None:
    fake_openai.queue(Reply.hang(text="partial words so far"))
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen, page = await reply_hanging(pilot, app)
        await page.send("first queued")
        await page.send("second queued")
        screen.prompt.insert("a draft")
        await pilot.press("escape")
        store = screen.agent.store
        await wait_idle(pilot, app, lambda: assistant_texts(store), "the aborted reply")
        assert screen.prompt.text == "first queued\n\nsecond queued\n\na draft"
        assert screen.prompt.cursor_location == screen.prompt.document.end
        assert screen.queued_prompts == [] and fake_openai.hit_count == 1
        assert [e["message"]["role"] for e in store.get_branch()] == ["user", "assistant"]


async def test_a_session_switch_during_a_reply_puts_the_queued_message_back_into_the_prompt(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """The stopped run's queue went to the old session as it was left (or was dropped by the switch)."""
    fake_openai.queue(Reply.hang(text="partial words so far"))
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen, page = await reply_hanging(pilot, app)
        old = screen.agent.store
        await page.send("queued for later")
        await page.send("/new")
        await wait_until(pilot, lambda: screen.agent.store is not old, "the new session")
        await wait_until(
            pilot, lambda: screen.prompt.text == "queued for later", "the queued text in the prompt"
        )
        assert screen.queued_prompts == [] and fake_openai.hit_count == 1
        assert "queued for later" not in old.path.read_text()


async def test_export_command_writes_the_page_or_says_how(tmp_path, monkeypatch, fake_openai) -> None:
    app, _home, _ids = saved_session_app(
        tmp_path, monkeypatch, fake_openai, [("export this question", "and this answer")]
    )
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await ready(pilot, app)
        await MainPage(pilot).send("/export md")
        await wait_until(pilot, lambda: any(n[0] == "Exported" for n in app.notes), "the export")
        written = Path(next(n[1] for n in app.notes if n[0] == "Exported").removeprefix("Wrote "))
        text = written.read_text()
        assert written.suffix == ".md" and "export this question" in text and "and this answer" in text
        # QA issue 13 F6: where kompakt started (the launch's cwd), named in full; not the sessions directory.
        assert written.is_absolute() and written.parent == tmp_path != app.launch.path.parent
        assert written.stem == app.launch.path.stem
        await MainPage(pilot).send("/export jsonl")
        await wait_until(pilot, lambda: [n[0] for n in app.notes].count("Exported") == 2, "the jsonl export")
        branch = Path([n[1] for n in app.notes if n[0] == "Exported"][-1].removeprefix("Wrote "))
        assert branch.is_absolute() and branch.parent == tmp_path and branch.name.endswith(".branch.jsonl")
        await MainPage(pilot).send("/export pdf")
        await wait_until(
            pilot,
            lambda: any("Usage: /export [html|md|jsonl [file]]" in n[1] for n in app.notes),
            "the usage",
        )
        assert [n[0] for n in app.notes].count("Exported") == 2


async def test_a_reserve_that_fills_the_window_is_reported_and_never_compacts(
    tmp_path, monkeypatch, fake_openai
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(fake_openai, reserve_tokens=CONTEXT_WINDOW))
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await wait_until(
            pilot, lambda: any("automatic compaction is off" in n[1] for n in app.notes), "the warning"
        )
        await MainPage(pilot).send("hello")
        await wait_idle(pilot, app, lambda: assistant_texts(screen.agent.store), "the reply")
        assert not any(n[0].startswith("Compact") for n in app.notes)
        assert [e["type"] for e in screen.agent.store.get_branch()] == ["message", "message"]


async def test_offline_model_end_to_end_without_key_or_model(tmp_path, monkeypatch) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(None))
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        assert screen.agent.model == OFFLINE_MODEL and screen.status.offline
        await wait_until(
            pilot,
            lambda: any(severity == "warning" and OFFLINE_MODEL in text for _t, text, severity in app.notes),
            "the offline notice",
        )
        await MainPage(pilot).send("hello?")
        await wait_idle(pilot, app, lambda: assistant_texts(screen.agent.store), "the offline reply")
        assert assistant_texts(screen.agent.store) == [offline_reply()]
        first_line = next(line for line in offline_reply().splitlines() if line.strip())
        words = " ".join(first_line.replace("*", "").replace("`", "").split()[:4])
        await wait_until(pilot, lambda: words in " ".join(screen_text(app).split()), "the offline reply")


# --- the session tree -------------------------------------------------------------------------------


async def choose_in_summary_dialog(pilot, downs: int) -> SummarizeBranchDialog:
    """Enter on the selected row, then pick the dialog's option ``downs`` rows below "No summary"."""
    await pilot.press("enter")
    dialog = await wait_until(
        pilot,
        lambda: pilot.app.screen if isinstance(pilot.app.screen, SummarizeBranchDialog) else None,
        "dialog",
    )
    await pilot.press(*["down"] * downs, "enter")
    return dialog


def chat_texts(screen) -> list[str]:
    return [w.copy_text() for w in screen.chat.message_widgets]


async def test_tree_navigation_without_summary_and_the_editor_text_rule(tmp_path, monkeypatch, fake_openai):
    app, ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        store = screen.agent.store
        assert store.leaf_id == ids["a3"] and chat_texts(screen)[-1].endswith("new reply")
        # An assistant entry on the other branch becomes the leaf; the editor stays empty.
        await MainPage(pilot).open_tree_on(ids["a2"])
        await choose_in_summary_dialog(pilot, downs=0)
        await wait_until(pilot, lambda: store.leaf_id == ids["a2"], "the leaf to move")
        await wait_until(pilot, lambda: "old reply" in chat_texts(screen)[-1], "the chat to reload")
        shown = "\n".join(chat_texts(screen))
        order = [shown.index(text) for text in ("first question", "first answer", "old idea", "old reply")]
        assert order == sorted(order) and "new idea" not in shown
        assert len(screen.chat.message_widgets) == 4 and screen.prompt.text == ""
        assert not any(e["type"] == "branch_summary" for e in store.entries)
        assert screen.tree_pane.view.selector.leaf_id == ids["a2"]
        # A user message: the leaf goes to its parent and its text lands in the (empty) editor.
        await MainPage(pilot).open_tree_on(ids["u3"])
        await choose_in_summary_dialog(pilot, downs=0)
        await wait_until(pilot, lambda: store.leaf_id == ids["a1"], "the leaf to move to the parent")
        await wait_until(pilot, lambda: screen.prompt.text == "new idea", "the editor text")
        assert len(screen.chat.message_widgets) == 2
        # With a draft in the editor, the draft is kept.
        screen.prompt.text = "my draft"
        await MainPage(pilot).open_tree_on(ids["u2"])
        await choose_in_summary_dialog(pilot, downs=0)
        await wait_until(pilot, lambda: any("Navigated" in n[1] for n in app.notes[-2:]), "the navigation")
        assert store.leaf_id == ids["a1"] and screen.prompt.text == "my draft"
        assert fake_openai.hit_count == 0


async def test_messages_typed_during_a_branch_summary_go_out_after_the_navigation(
    tmp_path, monkeypatch, fake_openai
) -> None:
    app, ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    fake_openai.queue(
        Reply.text_reply("## Goal\nThe new idea.", delay=0.2), Reply.text_reply("queued answer")
    )
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        store = screen.agent.store
        await MainPage(pilot).open_tree_on(ids["a2"])
        await choose_in_summary_dialog(pilot, downs=1)
        await wait_until(pilot, lambda: screen.agent.is_busy, "the branch summary to run")
        screen.prompt.focus()
        screen.prompt.text = "typed while summarising"
        await pilot.press("enter")
        assert screen.queued_prompts == ["typed while summarising"]
        await wait_until(
            pilot, lambda: any(e["type"] == "branch_summary" for e in store.entries), "the summary entry"
        )
        await wait_until(
            pilot,
            lambda: (
                store.leaf_id
                and store.get(store.leaf_id).get("message", {}).get("role") == "assistant"
                and "queued answer" in json.dumps(store.get(store.leaf_id))
            ),
            "the queued reply",
        )
        path = [e["type"] for e in store.get_branch()]
        assert path[-3:] == ["branch_summary", "message", "message"]  # summary, the queued prompt, its reply
        assert screen.queued_prompts == []


async def test_tree_navigation_with_a_branch_summary(tmp_path, monkeypatch, fake_openai) -> None:
    app, ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    fake_openai.queue(
        Reply.text_reply("## Goal\nTried the new idea; it replied."),
        Reply.text_reply("## Goal\nThe old idea, summarised with care."),
    )
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        store = screen.agent.store
        # "Summarize": the branch left (u3, a3) is summarised by the model, the summary becomes the leaf.
        await MainPage(pilot).open_tree_on(ids["a2"])
        await choose_in_summary_dialog(pilot, downs=1)
        summary = await wait_until(
            pilot, lambda: store.leaf_id not in ids.values() and store.get(store.leaf_id), "the summary entry"
        )
        assert summary["type"] == "branch_summary" and summary["parentId"] == ids["a2"]
        # pi records the attach point as fromId (reference pi-compaction, "fromId discrepancy").
        assert "Tried the new idea" in summary["summary"] and summary["fromId"] == ids["a2"]
        assert "new idea" in json.dumps(fake_openai.requests[0]["messages"])
        await wait_until(pilot, lambda: screen.chat.query(BranchSummaryMessage), "the summary in the chat")
        await wait_until(pilot, lambda: "old reply" in "".join(chat_texts(screen)), "the chat to reload")
        # "Summarize with custom prompt": the instructions typed in the dialog reach the summarizer.
        await MainPage(pilot).open_tree_on(ids["a3"])
        dialog = await choose_in_summary_dialog(pilot, downs=2)
        await wait_until(pilot, lambda: dialog.editing, "the instructions editor")
        await pilot.press(*"mention parsers", "enter")
        await wait_until(
            pilot, lambda: fake_openai.hit_count == 2 and store.leaf_id != summary["id"], "summary 2"
        )
        await wait_idle(pilot, app, lambda: True, "the navigation")
        second = store.get(store.leaf_id)
        assert second["type"] == "branch_summary" and second["parentId"] == ids["a3"]
        assert "mention parsers" in json.dumps(fake_openai.requests[1]["messages"])
        assert store.build_context().messages[-1]["role"] == "branchSummary"


async def test_a_failed_branch_summary_reaches_the_user_and_the_leaf_stays(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """The summary model rejects the key during "Summarize": the user is told once (before the fix nothing
    was shown: the navigate worker's error vanished), the status is cleared and the session does not move."""
    app, ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    fake_openai.queue(Reply.unauthorized())
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        store = screen.agent.store
        count = len(store.entries)
        await MainPage(pilot).open_tree_on(ids["a2"])
        await choose_in_summary_dialog(pilot, downs=1)
        failure = await wait_until(
            pilot, lambda: [n for n in app.notes if n[0] == "Tree navigation failed"], "the failure notice"
        )
        assert len(failure) == 1 and failure[0][2] == "error"
        assert "API key" in failure[0][1] or "OPENAI_API_KEY" in failure[0][1], failure
        await wait_idle(pilot, app, lambda: True, "the navigation")
        assert store.leaf_id == ids["a3"] and len(store.entries) == count
        assert screen.status.message == "" and fake_openai.hit_count >= 1


async def test_litellm_failing_to_load_is_reported_and_the_status_stops_saying_loading(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """Before the fix the litellm worker's error vanished and "loading litellm…" stayed for good."""
    import sys

    from tui.agent import litellm_loader

    monkeypatch.setattr(litellm_loader, "_module", None)
    monkeypatch.setitem(sys.modules, "litellm", None)  # ``import litellm`` now raises ImportError
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(fake_openai))
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        screen.status.litellm_loading = True
        app.load_litellm()
        failure = await wait_until(
            pilot, lambda: [n for n in app.notes if n[0] == "litellm failed to load"], "the failure notice"
        )
        assert "import of litellm" in failure[0][1] and failure[0][2] == "error"
        await wait_until(pilot, lambda: not screen.status.litellm_loading, "the status to stop loading")


async def test_tree_pane_filters_search_fold_and_label(tmp_path, monkeypatch, fake_openai) -> None:
    app, ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        view = screen.tree_pane.view
        await MainPage(pilot).open_tree_on(ids["a3"])
        everything = [row.entry_id for row in view.selector.rows]
        assert set(ids.values()) <= set(everything)
        # Filters: user-only, then back to the default with the same key.
        await pilot.press("ctrl+u")
        assert {row.entry_id for row in view.selector.rows} == {ids["u1"], ids["u2"], ids["u3"]}
        await wait_until(pilot, lambda: "new idea" in screen_text(app), "the filtered rows")
        await pilot.press("ctrl+u")
        assert [row.entry_id for row in view.selector.rows] == everything
        # Search as you type, shown in the pane; Escape clears the query.
        await pilot.press(*"old")
        assert view.search_query == "old"
        assert {row.entry_id for row in view.selector.rows} == {ids["u2"], ids["a2"]}
        await wait_until(pilot, lambda: "Type to search: old" in screen_text(app), "the query line")
        await pilot.press("escape")
        assert view.search_query == "" and screen.tree_pane.display
        # Fold the older branch at its branch point, then unfold it.
        while view.selected_id != ids["u2"]:
            await pilot.press("down")
        await pilot.press("ctrl+left")
        assert ids["a2"] not in [row.entry_id for row in view.selector.rows]
        await pilot.press("ctrl+right")
        assert ids["a2"] in [row.entry_id for row in view.selector.rows]
        # Shift+L labels the selected entry; the label is stored and drawn.
        await pilot.press("L")
        await wait_until(pilot, lambda: isinstance(app.screen, LabelDialog), "the label dialog")
        await pilot.press(*"checkpoint", "enter")
        store = screen.agent.store
        await wait_until(pilot, lambda: store.label_of(ids["u2"]) == "checkpoint", "the label entry")
        assert store.entries[-1]["type"] == "label" and store.entries[-1]["targetId"] == ids["u2"]
        await wait_until(
            pilot, lambda: "[checkpoint] user: old idea" in screen_text(app), "the label in the tree"
        )
        # Escape with no query closes the pane and gives the prompt the focus.
        view.focus()
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.tree_pane.display and screen.prompt.has_focus, "the close")


async def test_full_screen_tree_labels_the_selected_entry(tmp_path, monkeypatch, fake_openai) -> None:
    app, _ids = branched_session_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, TreeScreen), "the tree screen")
        tree_screen = app.screen
        store = screen.agent.store
        target = store.leaf_id
        await pilot.press("L")
        await wait_until(pilot, lambda: isinstance(app.screen, LabelDialog), "the label dialog")
        await pilot.press(*"[/x] mark", "enter")
        await wait_until(pilot, lambda: store.label_of(target) == "[/x] mark", "the label entry")
        assert app.screen is tree_screen
        await wait_until(pilot, lambda: "[[/x] mark]" in screen_text(app), "the label in the tree")


async def test_notifications_show_markup_literally(tmp_path, monkeypatch, fake_openai) -> None:
    # "[/foo]" in a model name once crashed the app while the toast was drawn.
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot, app)
        screen.prompt.focus()
        await pilot.press(*"/model x[/foo] [b]y", "enter")

        def toasts() -> list[str]:
            return [toast.render().plain for toast in app.screen.query(Toast)]

        await wait_until(
            pilot, lambda: any("Model: x[/foo] [b]y" in t for t in toasts()), "the literal toast"
        )
        await until(pilot, lambda: app.is_running and screen.agent.model == "x[/foo] [b]y")
        assert app.is_running and screen.agent.model == "x[/foo] [b]y"


async def test_f6_and_f7_open_the_pickers_while_the_prompt_has_focus(
    tmp_path, monkeypatch, fake_openai
) -> None:
    # The prompt's TextArea binds F6 and F7 itself (select line, select all): the screen's keys must win.
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        screen.prompt.focus()
        await pilot.press("f6")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), "the model picker")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "the main screen")
        screen.prompt.focus()
        await pilot.press("f7")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker), "the session picker")


# --- the compaction timeline ----------------------------------------------------------------------


async def test_timeline_boundary_after_compact(tmp_path, monkeypatch, fake_openai) -> None:
    # The summaries are asked for at the same time: answer the history summary by its prompt.
    fake_openai.route("Write handoff notes", Reply.text_reply("## Goal\nA compact summary of six questions."))
    app, _home, ids = saved_session_app(
        tmp_path,
        monkeypatch,
        fake_openai,
        [(f"question {n}", f"answer {n}") for n in range(6)],
        chars=2000,
        keep_recent_tokens=1500,
    )
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        assert screen.timeline.timeline.boundary_id is None
        await MainPage(pilot).send("/compact keep the numbers")
        await wait_idle(
            pilot, app, lambda: screen.agent.store.get_branch()[-1]["type"] == "compaction", "the compaction"
        )
        store = screen.agent.store
        compaction = store.get_branch()[-1]
        assert compaction["type"] == "compaction" and "six questions" in compaction["summary"]
        history = [r for r in fake_openai.requests if "Write handoff notes" in json.dumps(r["messages"])]
        assert len(history) == 1 and "keep the numbers" in json.dumps(history[0]["messages"])
        first_kept = compaction["firstKeptEntryId"]
        assert first_kept in ids[1:]  # something was summarised, something kept
        timeline = await wait_until(
            pilot,
            lambda: (
                screen.timeline.timeline
                if screen.timeline.timeline.compaction_id == compaction["id"]
                else None
            ),
            "the timeline to show the compaction",
        )
        path_ids = [e["id"] for e in store.get_branch()]
        assert timeline.boundary_id == first_kept
        assert timeline.boundary_index == path_ids.index(first_kept)
        assert [c.entry_id for c in timeline.compactions] == [compaction["id"]]
        assert timeline.compactions[0].reason == "manual"
        await wait_until(
            pilot,
            lambda: (
                f"▼ {first_kept}" in MainPage(pilot).timeline_text()
                or f"{first_kept} ▼" in MainPage(pilot).timeline_text()
            ),
            "the ▼ label at the boundary",
        )
        # The history view now starts with the compaction's divider, its summary card beside it (above the
        # window mounted for the first frame).
        await wait_until(
            pilot,
            lambda: (
                screen.chat.items[0].row is not None and screen.chat.items[0].entry_id == compaction["id"]
            ),
            "the divider first in the chat",
        )
        while screen.chat.first_loaded > 0:
            await screen.chat.load_earlier()
        await wait_until(pilot, lambda: "six questions" in chat_texts(screen)[0], "the divider mounted")
        # The context view starts with the summary, as the model gets it.
        await pilot.press("f9")
        await wait_until(
            pilot,
            lambda: (
                screen.chat.items[0].message.get("role") == "compactionSummary"
                and "six questions" in str(screen.chat.items[0].message.get("summary"))
            ),
            "the summary first in the context view",
        )
        await screen.chat.load_earlier()
        await wait_until(pilot, lambda: "six questions" in chat_texts(screen)[0], "the summary mounted")


def plan_json(path: Path, keep: int, reserve: int) -> dict:
    """``kompakt plan FILE --json`` run in-process."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with contextlib.redirect_stdout(out):
        code = cli.main(
            ["plan", str(path), "--json", "--keep-recent-tokens", str(keep), "--reserve-tokens", str(reserve)]
        )
        out.flush()
    assert code == 0
    return json.loads(out.buffer.getvalue())


async def test_what_if_boundary_follows_keep_recent_and_matches_kompakt_plan(
    tmp_path, monkeypatch, fake_openai
) -> None:
    app, _home, ids = saved_session_app(
        tmp_path,
        monkeypatch,
        fake_openai,
        [(f"question {n}", f"answer {n}") for n in range(8)],
        chars=4000,
        keep_recent_tokens=3000,
    )
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        timeline = screen.timeline
        screen.prompt.focus()
        await pilot.press("f4")  # expands and focuses the timeline: its what-if keys work at once
        await wait_until(pilot, lambda: timeline.expanded and timeline.has_focus, "the focused timeline")
        seen = []
        for keys, keep in (((), 3000), (("minus",), 2000), (("plus", "plus", "plus"), 5000)):
            await pilot.press(*keys)
            await wait_until(
                pilot,
                lambda k=keep: timeline.timeline.what_if.keep_recent_tokens == k,
                f"the what-if at {keep}",
            )
            what_if = timeline.timeline.what_if
            expected = plan_json(app.launch.path, keep, what_if.reserve_tokens)
            assert what_if.first_kept_entry_id == expected["firstKeptEntryId"]
            assert what_if.first_kept_entry_id in ids
            seen.append(ids.index(what_if.first_kept_entry_id))
            if keys:  # a nudged what-if shows its numbers in the status line
                shown = f"◆ {format_tokens(keep)}/{format_tokens(what_if.reserve_tokens)}"
                await wait_until(
                    pilot, lambda s=shown: s in MainPage(pilot).timeline_text(), "the status line"
                )
        # Less to keep moves the boundary later, more to keep moves it earlier; nothing was written.
        assert seen[1] > seen[0] > seen[2]
        assert not any(e["type"] == "compaction" for e in screen.agent.store.entries)
        assert app.settings.compaction.keep_recent_tokens == 3000


# --- settings ------------------------------------------------------------------------------------


async def test_settings_edit_and_save_through_f5(tmp_path, monkeypatch, fake_openai) -> None:
    app, home, _ids = saved_session_app(tmp_path, monkeypatch, fake_openai, [("q", "a")])
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        assert screen.timeline.timeline.threshold == CONTEXT_WINDOW - 16384
        await pilot.press("f5")
        settings = await wait_until(
            pilot, lambda: app.screen if isinstance(app.screen, SettingsScreen) else None, "the settings"
        )
        field = settings.query_one("#setting-compaction-reserveTokens", Input)
        field.focus()
        field.value = ""
        await pilot.press(*"10000")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "reserveTokens = 10000" in home.settings_file.read_text(), "the save")
        text = home.settings_file.read_text()
        assert SETTINGS_COMMENT in text and "# small, so short sessions compact" in text
        await wait_until(pilot, lambda: app.settings.compaction.reserve_tokens == 10000, "the new settings")
        assert screen.agent.settings.compaction.reserve_tokens == 10000
        assert screen.timeline.timeline.threshold == CONTEXT_WINDOW - 10000
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "the settings to close")
        await wait_until(
            pilot,
            lambda: f"threshold {format_tokens(CONTEXT_WINDOW - 10000)}" in MainPage(pilot).timeline_text(),
            "the threshold to be redrawn",
        )


async def test_external_settings_edits_are_picked_up_and_invalid_files_ignored(
    tmp_path, monkeypatch, fake_openai
) -> None:
    app, home, _ids = saved_session_app(tmp_path, monkeypatch, fake_openai, [("q", "a")])
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        app.run_worker(app._watch_settings(), group="settings-watch", exclusive=True, exit_on_error=False)
        await pilot.pause()
        home.settings_file.write_text(settings_toml(fake_openai, reserve_tokens=8000))
        await wait_until(pilot, lambda: app.settings.compaction.reserve_tokens == 8000, "the reload")
        assert screen.agent.settings.compaction.reserve_tokens == 8000
        assert screen.timeline.timeline.threshold == CONTEXT_WINDOW - 8000
        reloaded = [n for n in app.notes if n[0] == "Settings reloaded"]
        assert reloaded and "compaction.reserveTokens 16384 → 8000" in reloaded[-1][1]
        # An invalid file: an error names the file, line and reason; the last good settings stay.
        home.settings_file.write_text('# broken\n[compaction]\nreserveTokens = "lots"\n')
        await wait_until(pilot, lambda: app.settings_error is not None, "the error")
        _title, text, severity = next(n for n in reversed(app.notes) if n[0] == "Settings not applied")
        assert (
            severity == "error"
            and "settings.toml" in text
            and "settings.toml:3: compaction.reserveTokens" in text
        )
        assert app.settings.compaction.reserve_tokens == 8000
        assert screen.timeline.timeline.threshold == CONTEXT_WINDOW - 8000
        # Fixing the file applies again.
        home.settings_file.write_text(settings_toml(fake_openai, reserve_tokens=12000))
        await wait_until(pilot, lambda: app.settings.compaction.reserve_tokens == 12000, "the fixed file")
        assert app.settings_error is None and screen.timeline.timeline.threshold == CONTEXT_WINDOW - 12000


# --- watch mode, sessions ------------------------------------------------------------------------


async def test_watch_mode_shows_lines_appended_by_another_writer(tmp_path, monkeypatch, fake_openai) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(fake_openai))
    writer, ids = new_session(tmp_path, [("first question", "first answer")])
    app = make_app(home, Launch("watch", writer.path, tmp_path))
    try:
        async with app.run_test(size=SIZE, notifications=False) as pilot:
            screen = await ready(pilot, app)
            assert app.session.read_only and screen.prompt.disabled
            assert len(screen.chat.message_widgets) == 2
            await pilot.press("f2")
            await wait_until(pilot, lambda: screen.tree_pane.view.selector is not None, "the tree pane")
            await pilot.pause(0.2)  # let the follower start watching (appends before it are read too)
            user = writer.append_message(message(f.user("appended by pi")))
            reply = writer.append_message(message(f.assistant("appended reply")))
            await wait_until(
                pilot, lambda: len(screen.chat.message_widgets) == 4, "the new messages in the chat"
            )
            assert "appended by pi" in chat_texts(screen)[2] and "appended reply" in chat_texts(screen)[3]
            tree = screen.tree_pane.view.selector
            await wait_until(pilot, lambda: reply["id"] in {r.entry_id for r in tree.rows}, "the tree rows")
            assert user["id"] in {r.entry_id for r in tree.rows} and tree.leaf_id == reply["id"]
            assert screen.timeline.timeline.path_length == 4
            assert [s.entry_id for s in screen.timeline.timeline.segments][-1] == reply["id"]
            assert ids[0] in {r.entry_id for r in tree.rows}
            # Shift+L in a read-only session warns instead of failing to append.
            screen.tree_pane.view.focus()
            await pilot.press("L")
            await wait_until(pilot, lambda: any("read-only" in n[1] for n in app.notes), "the warning")
            assert not isinstance(app.screen, LabelDialog) and app.is_running
    finally:
        writer.close()


async def test_new_and_resume_switch_sessions(tmp_path, monkeypatch, fake_openai) -> None:
    app, _home, _ids = saved_session_app(
        tmp_path, monkeypatch, fake_openai, [("resume me please", "resumed answer")]
    )
    first = app.launch.path
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        assert len(screen.chat.message_widgets) == 2
        await MainPage(pilot).send("/new")
        await wait_until(pilot, lambda: app.session.store.path != first, "a new session")
        assert app.session.store.leaf_id is None and not app.session.read_only
        await wait_until(pilot, lambda: not screen.chat.message_widgets, "an empty chat")
        assert screen.agent.store is app.session.store
        # The new session works: a prompt is answered and stored in it, not in the first one.
        fake_openai.queue(Reply.text_reply("fresh answer"))
        await MainPage(pilot).send("fresh start")
        await wait_idle(pilot, app, lambda: assistant_texts(app.session.store), "the reply")
        second = app.session.store.path
        assert assistant_texts(app.session.store) == ["fresh answer"]
        await MainPage(pilot).send("/resume")
        picker = await wait_until(
            pilot, lambda: app.screen if isinstance(app.screen, SessionPicker) else None, "the session picker"
        )
        await wait_until(pilot, lambda: {first, second} <= set(picker.visible_paths), "the session list")
        await pilot.press(*"please")  # only the first session says it
        await wait_until(pilot, lambda: picker.visible_paths == [first], "the filtered list")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.session.store.path == first, "the resumed session")
        await wait_until(pilot, lambda: len(screen.chat.message_widgets) == 2, "the resumed chat")
        assert "resume me please" in chat_texts(screen)[0]
        assert screen.agent.store is app.session.store
        assert "fresh answer" not in "".join(chat_texts(screen))


async def test_edit_and_resend_branches_from_the_edited_message(tmp_path, monkeypatch, fake_openai) -> None:
    fake_openai.queue(Reply.text_reply("first answer"), Reply.text_reply("answer to the edit"))
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await MainPage(pilot).send("original question")
        await wait_idle(pilot, app, lambda: assistant_texts(screen.agent.store), "the first reply")
        store = screen.agent.store
        original = store.get_branch()[0]
        user_widget = next(w for w in screen.chat.message_widgets if isinstance(w, UserMessage))
        assert user_widget.entry_id == original["id"]  # live messages carry their entry id
        user_widget.focus()
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: screen.prompt.text == "original question", "the text in the prompt")
        assert store.leaf_id is None and screen.chat.message_widgets == []
        # QA issue 13 F7: the cursor is at the end of the text, where the user goes on typing.
        assert screen.prompt.cursor_location == screen.prompt.document.end
        await pilot.press(*", edited")
        await wait_until(pilot, lambda: screen.prompt.text == "original question, edited", "the typing")
        await pilot.press("enter")
        await wait_idle(
            pilot, app, lambda: "answer to the edit" in assistant_texts(store), "the second reply"
        )
        assert len(store.tree.roots) == 2  # the original conversation is still there, beside the new one
        assert next(
            e["message"]["content"][0]["text"] for e in store.get_branch() if e["type"] == "message"
        ) == ("original question, edited")


@pytest.mark.parametrize("edited", [False, True])
async def test_esc_right_after_edit_and_resend_moves_the_leaf_back(
    tmp_path, monkeypatch, fake_openai, edited
) -> None:
    """QA (session 17): Ctrl+E wrote its leaf move at once and Esc did not take it back."""
    fake_openai.queue(Reply.text_reply("first answer"), Reply.text_reply("second answer"))
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        page = MainPage(pilot)
        await page.send("first question")
        await wait_idle(pilot, app, lambda: assistant_texts(screen.agent.store), "the first reply")
        await page.send("second question")
        await wait_idle(pilot, app, lambda: len(assistant_texts(screen.agent.store)) == 2, "the second reply")
        store = screen.agent.store
        leaf = store.leaf_id
        second = next(
            w for w in screen.chat.message_widgets if isinstance(w, UserMessage) and "second" in w.copy_text()
        )
        second.focus()
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: screen.prompt.text == "second question", "the text in the prompt")
        assert store.leaf_id != leaf
        if edited:
            await pilot.press(*" again")
            await wait_until(pilot, lambda: screen.prompt.text.endswith(" again"), "the typing")
        await pilot.press("escape")
        await wait_until(pilot, lambda: store.leaf_id == leaf, "the leaf back")
        await wait_until(pilot, lambda: len(screen.chat.message_widgets) == 4, "the whole chat again")
        # Edited text is never thrown away; the untouched copy goes.
        assert screen.prompt.text == ("second question again" if edited else "")
        with SessionStore.open(store.path, read_only=True) as reopened:
            assert reopened.leaf_id == leaf  # the move back is saved too
        await pilot.press("escape")  # a second Esc has nothing to take back
        assert store.leaf_id == leaf


async def test_esc_after_edit_and_resend_and_a_session_switch_moves_nothing(
    tmp_path, monkeypatch, fake_openai
) -> None:
    """Review (session 18): the edit was kept across /new (whose empty leaf equals a first message's
    branch point) and /clone (same ids), and Esc branched the new store to an entry it lacks: a crash."""
    fake_openai.queue(Reply.text_reply("first answer"))
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        page = MainPage(pilot)
        await page.send("first question")
        await wait_idle(pilot, app, lambda: assistant_texts(screen.agent.store), "the first reply")
        old = screen.agent.store
        next(w for w in screen.chat.message_widgets if isinstance(w, UserMessage)).focus()
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: screen.prompt.text == "first question", "the text in the prompt")
        screen.prompt.clear()
        await page.send("/new")
        await wait_until(pilot, lambda: screen.agent.store is not old, "the other session")
        new = screen.agent.store
        leaf, lines = new.leaf_id, new.path.read_bytes() if new.path.exists() else b""
        await pilot.press("escape")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "the main screen")
        assert app._exception is None and app.is_running
        assert new.leaf_id == leaf and (new.path.read_bytes() if new.path.exists() else b"") == lines


async def test_ctrl_q_with_a_draft_asks_before_quitting(tmp_path, monkeypatch, fake_openai) -> None:
    """QA issue 13 F7: Ctrl+Q quit at once and the draft in the prompt was gone."""
    from tui.screens.dialogs import QuitDialog

    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await MainPage(pilot).type("a long draft")
        await pilot.press("ctrl+q")
        dialog = await wait_until(
            pilot, lambda: isinstance(app.screen, QuitDialog) and app.screen, "the question"
        )
        assert "unsent text in the prompt" in str(dialog.query_one(".dialog-title").render())
        await wait_until(pilot, lambda: dialog.drawn_at is not None, "the dialog drawn")
        await pilot.press("escape")  # keep editing
        await wait_until(pilot, lambda: app.screen is screen, "the main screen")
        assert app.return_code is None and screen.prompt.text == "a long draft"
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitDialog), "the question again")
        await pilot.press("ctrl+q")  # twice: quit
        await wait_until(pilot, lambda: app.return_code is not None, "the app to quit")


async def test_ctrl_q_with_an_empty_prompt_quits_at_once(tmp_path, monkeypatch, fake_openai) -> None:
    app = loopback_app(tmp_path, monkeypatch, fake_openai)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await ready(pilot, app)
        await MainPage(pilot).type("   ")  # blank: nothing to lose
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: app.return_code is not None, "the app to quit")


async def test_prompt_history_survives_a_restart(tmp_path, monkeypatch, fake_openai) -> None:
    fake_openai.queue(Reply.text_reply("ok"))
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(fake_openai))
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, app)
        await MainPage(pilot).send("remember this prompt")
        await wait_idle(pilot, app, lambda: assistant_texts(screen.agent.store), "the reply")
    again = make_app(home, Launch("new", cwd=tmp_path))
    async with again.run_test(size=SIZE, notifications=False) as pilot:
        screen = await ready(pilot, again)
        screen.prompt.focus()
        await pilot.press("up")
        await wait_until(pilot, lambda: screen.prompt.text == "remember this prompt", "the recalled prompt")


def test_reload_notices_show_values_as_written_in_settings_toml() -> None:
    from tui.app import _as_toml

    assert [_as_toml(v) for v in (None, True, False, 8000, 0.5, "openai/gpt-5", ["a", "b"])] == [
        "unset",
        "true",
        "false",
        "8000",
        "0.5",
        '"openai/gpt-5"',
        '["a", "b"]',
    ]
