"""The transcript a summarizer reads: provider-level messages, images as placeholders, long outputs cut.

Messages go through ``convert_to_llm`` first (so bash runs and earlier summaries read as user text),
then every image part becomes a short text placeholder (Hermes guard §2.10: the summarizer never gets
image data, and still knows an image was there), and finally ``serialize_conversation`` writes the
``[User]:`` / ``[Assistant]:`` blocks with tool results cut to 2,000 characters. Secrets are redacted
with the exports' function (Hermes §2.5: the summarizer input is always redacted), so a key the user
pasted or exported in a shell command is neither sent to the summary model nor stored in a summary.
"""

from __future__ import annotations

from collections.abc import Sequence

import prompts
from tui.compaction.serialize import TOOL_RESULT_MAX_CHARS, serialize_conversation
from tui.session.context import convert_to_llm
from tui.session.entries import Message
from tui.session.redact import scrubber


def _without_images(message: Message) -> Message:
    content = message.get("content")
    if not isinstance(content, list) or not any(b.get("type") == "image" for b in content):
        return message
    placeholder = {"type": "text", "text": "\n" + prompts.load("summary_image_placeholder") + "\n"}
    return {**message, "content": [placeholder if b.get("type") == "image" else b for b in content]}


def summarizer_transcript(messages: Sequence[Message]) -> str:
    """``messages`` (context roles) as the plain-text transcript the summarizer receives."""
    llm_messages = [_without_images(m) for m in convert_to_llm(messages)]
    return scrubber()(serialize_conversation(llm_messages, truncate_tool_results=TOOL_RESULT_MAX_CHARS))
