"""Translate pi-format LLM messages and tool specs into the OpenAI chat format that litellm accepts.

The input is the output of ``tui.session.context.convert_to_llm``: ``user`` messages (a string or text and
image blocks), ``assistant`` messages (text, thinking and toolCall blocks) and ``toolResult`` messages.
Failed or aborted assistant turns are left out, as pi does, because their tool calls may be half
written. A tool call with no result gets a placeholder result so that the provider accepts the history,
and images returned by tools travel in a user message right after the tool results, because OpenAI's
``tool`` role carries text only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import prompts
from tui.session.content import content_text

Message = Mapping[str, Any]
OpenAIMessage = dict[str, Any]


def to_openai_messages(system_prompt: str | None, messages: Sequence[Message]) -> list[OpenAIMessage]:
    """The OpenAI message list for a system prompt plus pi-format messages."""
    out: list[OpenAIMessage] = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    pending: dict[str, str] = {}  # tool call id → tool name, for calls still waiting for a result
    images: list[dict[str, Any]] = []
    image_tools: list[str] = []
    for message in messages:
        role = message.get("role")
        if role != "toolResult":
            _close_pending(out, pending)
            _flush_tool_images(out, images, image_tools)
        if role == "user":
            out.append({"role": "user", "content": _user_content(message.get("content"))})
        elif role == "assistant":
            if message.get("stopReason") in ("error", "aborted"):
                continue
            converted = _assistant(message)
            if converted is not None:
                out.append(converted)
                for call in converted.get("tool_calls", []):
                    pending[call["id"]] = call["function"]["name"]
        elif role == "toolResult":
            call_id = message.get("toolCallId", "")
            pending.pop(call_id, None)
            text, tool_images = _split_tool_content(message.get("content"))
            out.append({"role": "tool", "tool_call_id": call_id, "content": text})
            if tool_images:
                images.extend(tool_images)
                image_tools.append(message.get("toolName", "tool"))
    _close_pending(out, pending)
    _flush_tool_images(out, images, image_tools)
    return out


def to_openai_tools(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI function tools from ``{name, description, parameters}`` specs; OpenAI-shaped specs pass through."""
    converted = []
    for tool in tools:
        if tool.get("type") == "function":
            converted.append(dict(tool))
            continue
        function = {"name": tool["name"], "description": tool.get("description", "")}
        function["parameters"] = tool.get("parameters") or {"type": "object", "properties": {}}
        converted.append({"type": "function", "function": function})
    return converted


def image_url(block: Mapping[str, Any]) -> dict[str, Any]:
    mime = block.get("mimeType") or "image/png"
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{block.get('data', '')}"}}


def _user_content(content: Any) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    blocks = list(content or [])
    if all(b.get("type") == "text" for b in blocks):
        # A plain string suits every server, including local ones that reject content arrays.
        return content_text(blocks, "\n")
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "text":
            parts.append({"type": "text", "text": block.get("text", "")})
        elif block.get("type") == "image":
            parts.append(image_url(block))
    return parts


def _assistant(message: Message) -> OpenAIMessage | None:
    text_parts: list[str] = []
    tool_calls: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            text_parts.append(block.get("text", ""))
        elif kind == "toolCall":
            arguments = block.get("arguments")
            encoded = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
            tool_calls.append(
                {
                    "id": block.get("id", ""),
                    "type": "function",
                    "function": {"name": block.get("name", ""), "arguments": encoded},
                }
            )
        # Thinking blocks stay out: the chat format has no portable field for them.
    text = "".join(text_parts)
    if not text and not tool_calls:
        return None
    converted: OpenAIMessage = {"role": "assistant", "content": text or None}
    if tool_calls:
        converted["tool_calls"] = tool_calls
    return converted


def _split_tool_content(content: Any) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for block in content or []:
        if block.get("type") == "text":
            texts.append(block.get("text", ""))
        elif block.get("type") == "image":
            images.append(image_url(block))
    return "\n".join(texts), images


def _close_pending(out: list[OpenAIMessage], pending: dict[str, str]) -> None:
    for call_id in pending:
        out.append(
            {"role": "tool", "tool_call_id": call_id, "content": prompts.render("tool_result_missing")}
        )
    pending.clear()


def _flush_tool_images(out: list[OpenAIMessage], images: list[dict[str, Any]], tools: list[str]) -> None:
    if not images:
        return
    intro = prompts.render("tool_result_images", tool=", ".join(dict.fromkeys(tools)))
    out.append({"role": "user", "content": [{"type": "text", "text": intro}, *images]})
    images.clear()
    tools.clear()
