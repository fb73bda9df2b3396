"""One run of the agent: call the model, run the tools it asks for, feed the results back, until it stops.

Each iteration takes one unit of the :class:`~tui.agent.budget.IterationBudget`, builds the context from the
session (``build_context`` → ``convert_to_llm``), streams the reply (forwarding the provider's events),
appends the assistant message (a reply that failed mid-stream and is retried is appended first, as an
error), then runs each tool call through ``execute_tool_call`` (approval included)
and appends its result. The run ends when a reply does not ask for tools (stopReason ``stop``, ``length``,
``error``) or the budget is spent. Cancelling the task that runs it (an abort) always leaves a well-formed
session: the partial reply is stored as ``aborted`` with its text, and every tool call of a stored reply
gets a result, an "aborted" error for the calls that did not finish, so that no call or result is orphaned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import prompts
from tui.agent.budget import IterationBudget
from tui.agent.events import (
    AgentEvent,
    BudgetUpdate,
    MessageEnd,
    MessageStart,
    Notice,
    ToolExecutionEnd,
    ToolExecutionStart,
)
from tui.agent.provider import Provider
from tui.agent.stream_events import Done, RetryScheduled
from tui.agent.tools import Tool, ToolContext, ToolOutput, execute_tool_call, tool_result_message
from tui.compaction.media import strip_historical_images
from tui.session.context import convert_to_llm
from tui.session.entries import Message
from tui.session.store import SessionStore

Emit = Callable[[AgentEvent], None]
ABORTED_ERROR = "Aborted by the user."


@dataclass(frozen=True)
class LoopOutcome:
    """Why the run stopped: the last reply's stopReason, or ``"budget"``; ``message`` is that last reply."""

    reason: str
    message: Message | None


@dataclass
class AgentLoop:
    """Everything one run needs; :meth:`run` may be called again (a retry, a continue) with a budget."""

    store: SessionStore
    provider: Provider
    model: str
    tools: Sequence[Tool]
    tool_context: ToolContext
    system_prompt: str
    emit: Emit
    reasoning_effort: str | None = None
    # Rewrites the messages of every request of this run, never what is stored (MoA adds the drafts here).
    request_messages: Callable[[list[Message]], list[Message]] | None = None

    async def run(self, budget: IterationBudget) -> LoopOutcome:
        """Iterate until the model stops or the budget is spent; an abort (cancellation) propagates."""
        schemas = [tool.schema() for tool in self.tools]
        last: Message | None = None
        while True:
            if not budget.consume():
                text = prompts.render("budget_exhausted", used=str(budget.used), max=str(budget.max_total))
                self.emit(Notice("warning", text))
                return LoopOutcome("budget", last)
            self.emit(BudgetUpdate(budget.used, budget.max_total))
            last = await self._stream_reply(schemas)
            if last["stopReason"] != "toolUse":
                return LoopOutcome(last["stopReason"], last)
            await self._run_tools(last)

    async def _stream_reply(self, schemas: list[dict[str, Any]]) -> Message:
        context = self.store.build_context()
        messages = convert_to_llm(context.messages)
        if context.messages and context.messages[0].get("role") == "compactionSummary":
            messages = strip_historical_images(messages)  # Hermes §2.10, compacted contexts only
        if self.request_messages is not None:
            messages = self.request_messages(messages)
        builder = self.provider.new_builder(self.model)
        self.emit(MessageStart("assistant"))
        message: Message | None = None
        try:
            async for event in self.provider.stream(
                messages,
                schemas,
                model=self.model,
                system_prompt=self.system_prompt,
                reasoning_effort=self.reasoning_effort,
                builder=builder,
            ):
                if isinstance(event, Done):
                    message = event.message
                elif isinstance(event, RetryScheduled) and event.partial is not None:
                    # Part of the reply had streamed when it failed: it stays in the file as a failed
                    # reply (the request format leaves it out), and the retry streams a new one.
                    self._append(_without_tool_calls(event.partial))
                    self.emit(event)
                    self.emit(MessageStart("assistant"))
                else:
                    self.emit(event)
        except asyncio.CancelledError:
            self._append(_without_tool_calls(builder.finish("aborted", ABORTED_ERROR)))
            raise
        assert message is not None  # the provider always ends with Done
        if message["stopReason"] == "error":
            message = _without_tool_calls(message)
        self._append(message)
        return message

    async def _run_tools(self, reply: Message) -> None:
        calls = [block for block in reply["content"] if block.get("type") == "toolCall"]
        for index, call in enumerate(calls):
            self.emit(ToolExecutionStart(call["id"], call["name"], call.get("arguments")))
            try:
                result = await execute_tool_call(call, self.tools, self.tool_context)
            except asyncio.CancelledError:
                for unfinished in calls[index:]:
                    self._append_result(unfinished, _aborted_result(unfinished))
                raise
            self._append_result(call, result)

    def _append_result(self, call: dict[str, Any], result: Message) -> None:
        self.emit(MessageStart("toolResult"))
        self._append(result)
        self.emit(ToolExecutionEnd(call["id"], call["name"], result, bool(result.get("isError"))))

    def _append(self, message: Message) -> None:
        entry = self.store.append_message(message)
        self.emit(MessageEnd(message, entry["id"]))


def _aborted_result(call: dict[str, Any]) -> Message:
    output = ToolOutput.text(prompts.render("tool_result_aborted"), {"aborted": True}, is_error=True)
    return tool_result_message(call["id"], call["name"], output)


def _without_tool_calls(message: Message) -> Message:
    """A failed or aborted reply keeps its text but not its tool calls.

    Its calls never run (they may be half written), and the provider format leaves failed and aborted
    replies out of the request, so a result for one of them would be an orphan there. Dropping the calls
    keeps the stored session free of both orphan calls and orphan results.
    """
    content = [block for block in message["content"] if block.get("type") != "toolCall"]
    return {**message, "content": content}
