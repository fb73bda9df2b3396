"""Draws one agent's events into the chat, the timeline and the status bar, and owns the streaming state.

:class:`AgentEventView` maps every :mod:`tui.agent.events` type to widget updates with one ``match``; the
``assert_never`` arm makes a new event type a type-check error instead of an event the user never sees.
The main screen hands each event over in one line and keeps routing; what the view needs from the screen
(notifications, the busy classes, the status figures) goes through :class:`AgentViewHost`. The panes that
follow the whole session (the tree, the timeline, a chat redrawn after a compaction) are redrawn by the
screen when the store announces a change, not here.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol, assert_never

from tui.agent.events import (
    AgentEvent,
    BranchSummaryEnd,
    BranchSummaryStart,
    BudgetUpdate,
    CompactionEnd,
    CompactionProgress,
    CompactionStart,
    MessageEnd,
    MessageStart,
    MoaEnd,
    MoaReferenceEnd,
    MoaStart,
    Notice,
    RetryFinished,
    RetryScheduled,
    StateChange,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnEnd,
    TurnStart,
    UsageUpdate,
)
from tui.compaction.token_text import format_tokens

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from tui.session.store import SessionStore
    from widgets.assistant_stream import AssistantStream
    from widgets.chat_pane import ChatPane
    from widgets.moa_group import MoaGroup
    from widgets.status_bar import StatusBar
    from widgets.timeline import CompactionTimeline

_SEVERITY: dict[str, SeverityLevel] = {"info": "information", "warning": "warning", "error": "error"}


class AgentViewHost(Protocol):
    """What the view asks of the screen that shows it."""

    def notify(
        self, message: str, *, title: str = ..., severity: SeverityLevel = ..., timeout: float | None = ...
    ) -> None: ...

    def show_busy(self, streaming: bool, compacting: bool) -> None:
        """The agent started or stopped streaming or compacting (the screen's CSS classes follow it)."""

    def refresh_status(self) -> None:
        """New usage figures: redraw the status bar."""


class AgentEventView:
    """The chat, timeline and status bar as one agent's events draw them."""

    def __init__(
        self,
        host: AgentViewHost,
        store: SessionStore,
        chat: ChatPane,
        timeline: CompactionTimeline,
        status: StatusBar,
    ) -> None:
        self.host, self.store = host, store
        self.chat, self.timeline, self.status = chat, timeline, status
        self._reply: AssistantStream | None = None
        self._streamed_chars = 0  # of the reply being streamed: its tokens (chars/4) show on the timeline
        self._tool_args: dict[str, str] = {}
        self._moa: MoaGroup | None = None

    async def show(self, event: AgentEvent) -> None:
        match event:
            case MessageStart(role="assistant"):
                self._begin_reply()
                self._streamed_chars = 0
                self._tool_args.clear()
            case MessageStart():
                pass  # a user, tool or bash message is drawn at its MessageEnd, once it has an entry id
            case TextDelta(text=text):
                await self._open_reply().append_text(text)
                self._grew(len(text))
            case ThinkingDelta(text=text):
                await self._open_reply().append_thinking(text)
                self._grew(len(text))
            case ToolCallStart(id=call_id, name=name):
                if self._reply is not None:
                    self._tool_args[call_id] = ""
                    await self._open_reply().tool_call_started(call_id, name)
            case ToolCallDelta(id=call_id, arguments=arguments):
                if self._reply is not None:
                    self._tool_args[call_id] = self._tool_args.get(call_id, "") + arguments
                    self._streamed_chars += len(arguments)
                    await self._open_reply().tool_call_args(call_id, self._tool_args[call_id])
            case MessageEnd():
                await self._message_end(event)
            case UsageUpdate():
                self.host.refresh_status()
            case BudgetUpdate(used=used, max=most):
                self.status.iteration, self.status.max_iterations = used, most
            case CompactionStart(reason=reason):
                self.timeline.set_compacting(reason, time.monotonic())
                self.status.message = f"compacting ({reason})… esc to cancel"
            case CompactionProgress(reason=reason, phase=phase):
                self.status.message = f"compacting ({reason}): {phase}… esc to cancel"
            case CompactionEnd():
                await self._compaction_end(event)
            case BranchSummaryStart():
                self.status.message = "Summarizing branch… esc to cancel"
            case BranchSummaryEnd():
                # The navigation's outcome (done, cancelled, failed) is the navigate worker's to report,
                # once: MainScreen.navigate_to and MainScreen._worker_changed.
                self.status.message = ""
            case RetryScheduled(error_message=text, attempt=attempt, max_attempts=most, delay_ms=delay):
                self.status.message = f"{text[:60]} · retry {attempt}/{most} in {delay / 1000:.0f}s"
            case RetryFinished(success=success, final_error=error):
                self.status.message = "" if success else f"retries failed: {error or ''}"[:80]
            case Notice(level=level, text=text):
                self.host.notify(text, severity=_SEVERITY[level], timeout=8)
            case StateChange(is_streaming=streaming, is_compacting=compacting):
                self.host.show_busy(streaming, compacting)
                if not streaming and not compacting:
                    self.status.message = ""
            case TurnEnd():
                self.status.iteration = 0
                if self._reply is not None:
                    self._reply.close()  # a reply left open is no longer kept through redraws
                self._reply = None
            case MoaStart(models=models, aggregator=aggregator):
                self._moa = await self.chat.begin_moa(models, aggregator)
            case MoaReferenceEnd(index=index, answer=answer):
                if self._moa is not None:
                    await self._moa.set_answer(index, answer)
            case MoaEnd(record=record, entry_id=entry_id):
                if self._moa is not None:
                    await self._moa.finish(record, entry_id)
                    self._moa = None
            case TurnStart() | ToolCallEnd() | ToolExecutionStart() | ToolExecutionEnd():
                pass  # shown through other events: the reply's stream and the toolResult's MessageEnd
            case _:
                assert_never(event)

    def _begin_reply(self) -> AssistantStream:
        self._reply = self.chat.begin_assistant()
        return self._reply

    def _open_reply(self) -> AssistantStream:
        """The streaming reply's widget (kept through redraws of the path); a new one when there is none."""
        if self._reply is None or self._reply.lost:
            return self._begin_reply()
        return self._reply

    def _grew(self, chars: int) -> None:
        self._streamed_chars += chars
        self.timeline.set_streaming_tokens(self._streamed_chars // 4)

    async def _message_end(self, event: MessageEnd) -> None:
        role = event.message.get("role")
        if role == "assistant":
            if self.chat.shows_entry(event.entry_id):  # a redraw of the whole path drew it from the store
                await self.chat.discard_stream()
            else:
                reply = self._open_reply()
                await reply.finish(event.message, event.entry_id)
                if not reply.widget.is_attached or reply.widget._pruning:  # a redraw took it as it mounted
                    await self.chat.add_message(
                        self.store.tree.by_id.get(event.entry_id or "") or event.message
                    )
            self._reply = None
            self.timeline.set_streaming_tokens(0)
        elif role == "toolResult":
            await self.chat.add_tool_result(event.message, event.entry_id)
        elif not self.chat.shows_entry(event.entry_id):  # a redraw of the whole path may have drawn it
            # The entry (not just its message) gives the widget its id, for edit-and-resend.
            await self.chat.add_message(self.store.tree.by_id.get(event.entry_id) or event.message)

    async def _compaction_end(self, event: CompactionEnd) -> None:
        self.timeline.set_idle()
        self.status.message = ""
        if event.outcome == "result":
            # tokensAfter is always an estimate (nothing has measured the new context yet); tokensBefore
            # is the provider's usage when a reply on the path reported one.
            details = event.result.entry.get("details") if event.result else None
            record = details.get("kompakt") if isinstance(details, dict) else None
            measured = not isinstance(record, dict) or record.get("tokensBeforeMeasured") is not False
            before = ("" if measured else "≈") + _thousands(event.tokens_before or 0)
            after = "≈" + _thousands(event.tokens_after or 0)
            seconds = event.duration_ms / 1000
            self.host.notify(f"{before} → {after} tokens ({event.reason}, {seconds:.1f}s)", title="Compacted")
        elif event.outcome == "skip":
            # The session's notice says why (manual: the skip; automatic: the advice, once per state, D10);
            # a toast here too said it twice.
            pass
        elif event.outcome == "aborted" and event.reason != "manual":
            self.status.message = "Auto-compaction cancelled"  # pi 0.73.1: a status, not an error
        elif event.outcome == "aborted":
            self.host.notify("Compaction cancelled", title="Compaction", severity="error")
        elif event.reason != "manual":
            # pi 0.73.1 (delta A.7): an automatic failure is a red line in the chat, where the user reads;
            # the session's error notice has already said it once as a notification.
            await self.chat.add_error_line(event.error_message or "Auto-compaction failed.")
        else:
            self.host.notify(
                event.error_message or "Compaction failed.", title="Compaction failed", severity="error"
            )


def _thousands(tokens: int) -> str:
    """The compaction notice's form: always thousands with one decimal (0.5k, 45.2k)."""
    return format_tokens(tokens, k_from=0, trim=False, millions=False)
