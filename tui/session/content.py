"""The text of a message's content: a plain string, or the text blocks of a block list joined.

pi stores a message's content either as a string or as a list of typed blocks (text, image, thinking,
toolCall). Summaries, the context, navigation, exports and the screen all need "the text of it"; this is
the one function they call. Anything that is not a text block (or not a block at all) adds nothing.
"""

from __future__ import annotations

from typing import Any


def content_text(content: Any, separator: str = "") -> str:
    """``content`` itself if it is a string; else its text blocks' text joined by ``separator``."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return separator.join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )
