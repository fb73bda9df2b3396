"""Host app for the chat-pane snapshots: one deterministic path with every kind of message."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tests import factories as f
from widgets.chat_pane import ChatPane


def every_kind_path() -> list[dict]:
    """A fixed path with user, assistant (thinking, Markdown, tool calls), results, bash, custom and summaries."""
    return f.chain(
        [
            f.compaction(
                "## Goal\nMake the parser fast.\n\n## Done\n- cached tokens", 0, tokens_before=123_456
            ),
            f.branch_summary("Tried a regex tokenizer; it was slower, so we went back.", from_id="1a2b3c4d"),
            f.user("Why is `parse()` slow? Output has [bold]markup[/bold] and \x1b[31mANSI\x1b[0m."),
            f.assistant(
                "Let me look. The hot loop is in **tokenize**:\n\n```python\nfor ch in text:\n    emit(ch)\n```\n",
                thinking="The user wants a profile first.",
                tool_calls=[
                    f.tool_call("read", {"path": "src/parser.py", "offset": 10, "limit": 40}, "c1"),
                    f.tool_call("bash", {"command": "pytest -q tests/test_parser.py"}, "c2"),
                ],
            ),
            f.tool_result("c1", "read", "def parse(text):\n    return list(tokenize(text))\n"),
            f.tool_result("c2", "bash", "1 failed, 12 passed\nE   AssertionError", is_error=True),
            f.bash("git status --short", " M src/parser.py\n?? notes.txt", exit_code=0),
            f.bash("make bench", "make: *** [bench] Error 2", exit_code=2),
            f.custom_message("reminder", "Run the benchmark before committing."),
            f.assistant("The loop emits one token per character; batching them fixes it.", model="gpt-5"),
        ]
    )


class ChatSnapApp(App):
    def compose(self) -> ComposeResult:
        yield ChatPane()

    async def on_mount(self) -> None:
        await self.query_one(ChatPane).load_messages(every_kind_path())


if __name__ == "__main__":
    ChatSnapApp().run()
