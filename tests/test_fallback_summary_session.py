"""The deterministic fallback summary written through AgentSession when the summarizer fails: a shell
call keeps its command, empty file lists say "none", and a Windows path ends before the question mark."""

from __future__ import annotations

from pathlib import Path

from tests.agent_helpers import make_session, make_settings
from tests.fake_openai import FakeOpenAI, Reply, ToolCall, fake_openai_fixture  # noqa: F401
from tui.compaction.engine import CompactionResult


async def failing_summarize(system_prompt: str, prompt: str, max_tokens: int) -> str:
    raise RuntimeError("the summary model is down")


async def test_fallback_keeps_the_command_says_none_and_trims_windows_paths(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    settings = make_settings(fake_openai, compaction={"keepRecentTokens": 20, "autoContinue": False})
    session = make_session(tmp_path, settings, summarize=failing_summarize)
    fake_openai.queue(
        Reply.tools(ToolCall("bash", {"command": "echo checked-the-build", "cwd": str(session.workspace)})),
        Reply.text_reply("the build is fine", usage=(900, 20)),
        Reply.text_reply("noted", usage=(1000, 20)),
    )
    await session.prompt(r"check the build, then look at C:\Users\ada\notes.txt?")
    await session.prompt("thanks, and next?")

    result = await session.compact()

    assert isinstance(result, CompactionResult) and result.summary_source == "fallback"
    summary = result.entry["summary"]
    tools = summary.split("### Tool Activity", 1)[1].split("###", 1)[0]
    assert "echo checked-the-build" in tools
    assert "### Files Read\n(none)" in summary and "### Files Changed\n(none)" in summary
    paths = summary.split("<mentioned-paths>", 1)[1].split("</mentioned-paths>", 1)[0]
    assert "C:\\Users\\ada\\notes.txt\n" in paths and "?" not in paths


class RecordingSummarizer:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def __call__(self, system_prompt: str, prompt: str, max_tokens: int) -> str:
        self.prompts.append(prompt)
        return "SUMMARY: the user set up a key and ran a command."


KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0" * 2


async def test_secrets_are_redacted_in_the_summarizer_input_the_trail_and_the_fallback(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    settings = make_settings(fake_openai, compaction={"keepRecentTokens": 20, "autoContinue": False})
    recorder = RecordingSummarizer()
    session = make_session(tmp_path, settings, summarize=recorder)
    fake_openai.queue(
        Reply.tools(ToolCall("bash", {"command": f"export OPENAI_API_KEY={KEY}; echo set"})),
        Reply.text_reply("the key is set", usage=(900, 20)),
        Reply.text_reply("noted", usage=(1000, 20)),
    )
    await session.prompt(f"my key is {KEY}, set it up")
    await session.prompt("thanks")

    result = await session.compact()

    assert isinstance(result, CompactionResult) and recorder.prompts
    assert all(KEY not in prompt for prompt in recorder.prompts)
    assert "[redacted]" in recorder.prompts[0]
    assert KEY not in result.entry["summary"] and "[redacted]" in result.entry["summary"]

    session._summarize = failing_summarize
    fake_openai.queue(Reply.text_reply("ok", usage=(1100, 20)))
    await session.prompt(f"once more: {KEY}")
    fallback = await session.compact()
    assert isinstance(fallback, CompactionResult) and fallback.summary_source == "fallback"
    assert KEY not in fallback.entry["summary"]
