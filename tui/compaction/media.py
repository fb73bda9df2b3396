"""Images in a compacted context (Hermes §2.10): only the latest image-bearing user message keeps its images.

After a compaction the model works from the summary and what followed; screenshots sent earlier are
history, and each costs about as much as a page of text on every request. So every image in a message
before the last user message that carries one becomes a short text note saying an image was there.
The session file keeps the images; only the request changes. Without such a user message, or when it
is the first message, nothing changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import prompts
from tui.session.entries import Message


def _has_image(message: Message) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "image" for b in content
    )


def strip_historical_images(messages: Sequence[Message]) -> list[Message]:
    """``messages`` (provider roles) with the images before the last image-bearing user message replaced."""
    anchor = next(
        (
            i
            for i in range(len(messages) - 1, -1, -1)
            if messages[i].get("role") == "user" and _has_image(messages[i])
        ),
        None,
    )
    if not anchor:
        return list(messages)
    note = {"type": "text", "text": prompts.load("image_stripped")}
    return [
        {**m, "content": [note if b.get("type") == "image" else b for b in m["content"]]}
        if i < anchor and _has_image(m)
        else m
        for i, m in enumerate(messages)
    ]
