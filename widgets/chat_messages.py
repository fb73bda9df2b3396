"""One widget per kind of chat message, each with its own look: the building blocks of the chat pane.

User, assistant (Markdown, with collapsed thinking and tool calls), orphan tool results, ``!cmd`` bash
executions, custom messages, branch summaries and compaction summaries. Every message is focusable,
copies itself with Ctrl+C (or a click on "copy"), and a user message asks for "edit and resend" with Ctrl+E.
Message actions use modifier keys only: printable keys typed on a message go to the prompt (see ChatPane).
All text from the session, the model or a tool is sanitised and shown literally (never as markup);
assistant text goes through Markdown, which builds plain content and parses no inline HTML (text with no
Markdown syntax goes through widgets/plain_text.py, which draws it the same without loading Markdown).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.events import Key
from textual.geometry import Offset, Size
from textual.message import Message as TextualMessage
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from tui.compaction.token_text import format_tokens, recorded_count
from tui.session.content import content_text
from tui.session.display import flat, tool_call_label
from tui.session.entries import Message
from tui.session.sanitize import sanitize
from widgets.lazy_collapsible import LazyCollapsible
from widgets.plain_text import PlainText, is_plain
from widgets.stream_sanitizer import StreamSanitizer

if TYPE_CHECKING:
    from widgets.chunked_markdown import ChunkedMarkdown

OUTPUT_LINES = 40
OUTPUT_CHARS = 4000
ARGS_CHARS = 2000
# Deltas are handed to the Markdown at most this often: every hand-off re-lays out the log, and a
# few updates a second look the same as hundreds while costing far less.
STREAM_FLUSH_SECONDS = 0.05


def plain(text: str) -> Content:
    """Untrusted text as literal content: sanitised, no markup."""
    return Content(sanitize(text))


def tokens_k(tokens: int) -> str:
    return format_tokens(tokens, whole_k_from=0, millions=False)


def truncate_output(text: str) -> str:
    """The head of a tool or command output, with a note when the rest is hidden."""
    clean = sanitize(text[: OUTPUT_CHARS * 2])
    shown = "\n".join(clean.split("\n")[:OUTPUT_LINES])[:OUTPUT_CHARS]
    if len(shown) < len(clean) or len(text) > OUTPUT_CHARS * 2:
        shown += f"\n… truncated ({text.count(chr(10)) + 1:,} lines, {len(text):,} chars in all)"
    return shown


def result_text(message: Message) -> str:
    """A tool result's text blocks, with a placeholder per image."""
    return user_text(message.get("content"))


def user_text(content: Any) -> str:
    """The text blocks of ``content`` one per line, with a placeholder per image."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        if isinstance(block, dict) and block.get("type") == "image":
            parts.append(f"[image {block.get('mimeType', '')}]")
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


def _format_args(args: Any) -> str:
    if isinstance(args, str):
        return args[:ARGS_CHARS]
    shown = json.dumps(args, indent=2, ensure_ascii=False, default=str)
    return shown if len(shown) <= ARGS_CHARS else shown[:ARGS_CHARS] + "\n…"


def type_through(widget: Widget, event: Key) -> None:
    """A printable key on the chat goes to the prompt, never to an action (D1).

    It is handed over synchronously by the first chat widget that sees it (the nearest ancestor with a
    ``take_typing`` method, the chat pane), so a burst of keys typed while focus moves to the prompt keeps its order.
    """
    if not (event.is_printable and event.character):
        return
    event.stop()
    event.prevent_default()
    for node in (widget, *widget.ancestors):
        handler = getattr(node, "take_typing", None)
        if callable(handler):
            handler(event.character)
            return


NARROW_ROOM = 12  # below this many columns left of its words, a wrapping title is no column: they follow it


@lru_cache(maxsize=16)
def _action_words(actions: tuple[str, ...]) -> Content:
    """`` copy edit``: each word a link to the header's ``press`` action (parsed once per set of words)."""
    return Content("").join(Content.from_markup(f" [@click=press('{a}')]{a}[/]") for a in actions)


def _one_line(title: Content) -> Content:
    """A title from the session (a model name, a custom type) with its line breaks as spaces: a second
    line would push the action words out of a one-row header."""
    plain = title.plain
    if "\n" not in plain and "\r" not in plain:
        return title
    return Content(flat(plain))


class MessageHeader(Widget):
    """A message's header line: its title (cut to fit, or wrapped) and, at the right, the small clickable
    words of its actions ("copy", "edit"), each a link that runs the action on the message.

    One widget, not a row of them: the first frame of a 10k-entry session drew ten headers, and as a
    row of a title and an affordance widget each they cost it about 20 ms. An action the message refuses
    (``check_action``: no edit & resend in a read-only session) is left out."""

    DEFAULT_CSS = """
    MessageHeader {
        height: 1; color: $text-muted; text-wrap: nowrap;
        link-color: $text-muted; link-background: transparent; link-style: none;
        link-color-hover: $accent; link-background-hover: transparent; link-style-hover: underline;
        &.-wrap { height: auto; text-wrap: wrap; }
        & > .message--title { text-style: bold; color: $foreground; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"message--title"}

    class Pressed(TextualMessage):
        def __init__(self, action: str) -> None:
            super().__init__()
            self.action = action

    def __init__(self, title: Content, actions: tuple[str, ...], *, wrap: bool = False) -> None:
        super().__init__(classes="-wrap" if wrap else "")
        self._title = _one_line(title)
        self.actions = actions

    @property
    def title(self) -> Content:
        return self._title

    @title.setter
    def title(self, title: Content) -> None:
        self._title = _one_line(title)
        self.refresh(layout=self.has_class("-wrap"))

    def shown_actions(self) -> list[str]:
        message = self.parent
        if not isinstance(message, Widget):
            return []
        return [action for action in self.actions if message.check_action(action, ()) is not False]

    def word_offset(self, action: str) -> Offset | None:
        """Where the word of ``action`` is in the header (to click it), or None when it is not shown."""
        shown = self.shown_actions()
        x = self.size.width - sum(1 + len(word) for word in shown)
        if action not in shown or (self.has_class("-wrap") and x < NARROW_ROOM):
            return None  # not shown, or (too narrow for a column) wherever the wrapped title ends
        for word in shown[: shown.index(action)]:
            x += 1 + len(word)
        return Offset(x + 1, 0)

    def render(self) -> Content:
        return self._content(self.size.width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # Laid out (height auto, when it wraps) before its size is set: measured at the width given.
        return len(self._content(width).wrap(max(width, 1)))

    def _content(self, width: int) -> Content:
        words = _action_words(tuple(self.shown_actions()))
        title = self._title.stylize(self.get_visual_style("message--title", partial=True))
        room = width - words.cell_length
        if title.cell_length <= room:
            return title.pad_right(room - title.cell_length) + words
        if self.has_class("-wrap") and room < NARROW_ROOM:
            return title + words  # too narrow for a column: the words follow the title
        if self.has_class("-wrap"):  # the title wrapped in the room left of the words, as a column
            first, *rest = title.wrap(max(room, 1)) or [Content("")]
            return Content("\n").join([first.pad_right(room - first.cell_length) + words, *rest])
        return title.truncate(max(room, 1), ellipsis=True) + words

    def action_press(self, action: str) -> None:
        self.post_message(self.Pressed(action))


class ChatMessage(Vertical, can_focus=True):
    """Base of every message widget: header with a role title, copy affordance and bindings."""

    DEFAULT_CSS = """
    ChatMessage {
        height: auto; margin: 0 0 1 0; padding: 0 1; border-left: wide $panel;
        &:focus { border-left: wide $accent; background: $boost; }
        & .message--body { height: auto; }
        & .message--notice { color: $warning; }
        & .message--error { color: $error; }
    }
    """
    HELP = """
## Chat message
- **ctrl+c**: copy this message to the clipboard
- **ctrl+e**: on your own message, edit it and resend (starts a branch)
- typing (letters, digits, space) goes to the prompt
- **up / down**: move between messages
"""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "copy", "Copy", id="chat.copy"),
    ]
    ACTIONS: ClassVar[tuple[str, ...]] = ("copy",)

    class EditRequested(TextualMessage):
        """The user wants to edit and resend the user message ``entry_id`` (the lead branches)."""

        def __init__(self, entry_id: str | None, text: str) -> None:
            super().__init__()
            self.entry_id = entry_id
            self.text = text

    def __init__(self, message: Message, entry_id: str | None = None, *, classes: str = "") -> None:
        super().__init__(classes=classes)
        self.message = message
        self.entry_id = entry_id

    def title(self) -> Content:
        return Content(str(self.message.get("role", "message")))

    def copy_text(self) -> str:
        return ""

    HEADER_WRAPS = False  # the title wraps rather than being cut to one line

    def compose(self) -> ComposeResult:
        yield MessageHeader(self.title(), self.ACTIONS, wrap=self.HEADER_WRAPS)
        yield from self.compose_body()

    def compose_body(self) -> ComposeResult:
        yield from ()

    def on_key(self, event: Key) -> None:
        type_through(self, event)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(sanitize(self.copy_text()))
        self.notify("Message copied to the clipboard", timeout=2)

    @on(MessageHeader.Pressed)
    async def _affordance(self, event: MessageHeader.Pressed) -> None:
        event.stop()
        await self.run_action(event.action)


class UserMessage(ChatMessage):
    DEFAULT_CSS = """
    UserMessage { border-left: wide $primary; background: $boost; }
    UserMessage > MessageHeader > .message--title { color: $primary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+e", "edit", "Edit & resend", id="chat.edit"),
    ]
    ACTIONS = ("copy", "edit")

    def title(self) -> Content:
        return Content("You")

    def copy_text(self) -> str:
        return user_text(self.message.get("content"))

    def compose_body(self) -> ComposeResult:
        yield Static(plain(self.copy_text()), classes="message--body")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # A read-only session (watch, a locked file) offers no edit & resend: it would write a leaf move.
        if action == "edit":
            return not any(node.has_class("-read-only") for node in self.ancestors)
        return True

    def action_edit(self) -> None:
        self.post_message(self.EditRequested(self.entry_id, sanitize(self.copy_text())))


# A collapsible made collapsed carries the class it would get on mount: Collapsible's mount handler then
# changes nothing, where adding it restyled the whole subtree (a third of mounting the first screen's
# tool calls and thinking blocks on a 10k-entry session).
COLLAPSED = "-collapsed"


class ToolCallView(LazyCollapsible):
    """A tool call with its arguments and, once it arrives, its (truncated) result; the two views are
    made when it is first expanded (widgets/lazy_collapsible.py)."""

    DEFAULT_CSS = """
    ToolCallView { background: transparent; border-top: none; padding: 0; margin: 0; }
    ToolCallView > Contents { padding: 0 0 0 2; }
    ToolCallView .tool--args { color: $text-muted; }
    ToolCallView .tool--output { margin-top: 1; }
    ToolCallView.-running CollapsibleTitle { color: $warning; }
    ToolCallView.-error CollapsibleTitle { color: $error; }
    ToolCallView.-error .tool--output { color: $error; }
    """

    def __init__(self, call_id: str, name: str, args: Any, result: Message | None = None) -> None:
        self.call_id = call_id
        self.name_ = name
        self.args: Any = args
        self.result: Message | None = result
        self._args_text: str | None = None  # streamed raw arguments; None: shown from ``args``
        self._args_view: Static | None = None
        self._output_view: Static | None = None
        super().__init__(title=self._heading(), collapsed=True, classes=COLLAPSED)
        if result is not None:
            self._show_result(result)
        else:
            self.add_class("-running")

    def build_body(self) -> list[Widget]:
        self._args_view = Static(self._args_content(), classes="tool--args")
        self._output_view = Static(self._output_content(), classes="tool--output")
        return [self._args_view, self._output_view]

    def _args_content(self) -> Content:
        return plain(_format_args(self.args) if self._args_text is None else self._args_text)

    def _output_content(self) -> Content:
        return Content("" if self.result is None else truncate_output(result_text(self.result)))

    def _heading(self) -> Content:
        # One row: a name or path from the session may hold line breaks (pi's label keeps them).
        label = flat(tool_call_label(self.name_, self.args if isinstance(self.args, dict) else None))
        if self.result is None:
            status = " …"
        elif self.result.get("isError"):
            status = " ✗ error"
        else:
            status = " ✓"
        return Content(sanitize(label) + status)

    def set_call(self, name: str, args: Any) -> None:
        self.name_, self.args, self._args_text = name, args, None
        if self._args_view is not None:
            self._args_view.update(self._args_content())
        self.title = self._heading()

    def set_args_text(self, args_json: str) -> None:
        """Partial arguments while they stream (raw JSON text); the label follows once it parses."""
        try:
            parsed = json.loads(args_json) if args_json.rstrip().endswith("}") else None
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            self.set_call(self.name_, parsed)
            return
        self._args_text = args_json[:ARGS_CHARS]
        if self._args_view is not None:
            self._args_view.update(self._args_content())

    def set_result(self, result: Message) -> None:
        self._show_result(result)
        self.title = self._heading()

    def _show_result(self, result: Message) -> None:
        self.result = result
        self.remove_class("-running")
        self.set_class(bool(result.get("isError")), "-error")
        if self._output_view is not None:
            self._output_view.update(self._output_content())


class ThinkingBlock(LazyCollapsible):
    """The model's reasoning: collapsed and dim. A finished one (``text`` given) makes its Markdown when
    first expanded; a streamed one has it from the start, to write into."""

    DEFAULT_CSS = """
    ThinkingBlock { background: transparent; border-top: none; padding: 0; margin: 0; }
    ThinkingBlock CollapsibleTitle { color: $text-muted; text-style: italic; }
    ThinkingBlock > Contents { padding: 0 0 0 2; }
    ThinkingBlock ChatMarkdown { color: $text-muted; text-style: italic; }
    """

    def __init__(self, text: str = "") -> None:
        self.thinking = text
        self.markdown: ChunkedMarkdown | None = None
        super().__init__(title=Content("Thinking"), collapsed=True, classes=COLLAPSED)
        if not text:
            self.open_body()

    def build_body(self) -> list[Widget]:
        from widgets.chunked_markdown import ChunkedMarkdown  # markdown-it loads with the first message

        self.markdown = ChunkedMarkdown(self.thinking)
        return [self.markdown]


class SummaryBlock(LazyCollapsible):
    """A summary, collapsed: its Markdown is made when it is first opened (most never are, and a
    summary's blocks were the one Markdown of many a long session's first screen)."""

    def __init__(self, summary: str, title: Content | str) -> None:
        self.summary = summary
        super().__init__(title=title, collapsed=True, classes=COLLAPSED)

    def build_body(self) -> list[Widget]:
        from widgets.chunked_markdown import ChatMarkdown

        return [ChatMarkdown(self.summary)]


def part_markdown(widget: Widget) -> ChunkedMarkdown | None:
    """The Markdown of a text or thinking part (None: plain text, or a thinking block not expanded yet)."""
    markdown = widget.markdown if isinstance(widget, ThinkingBlock) else widget
    if markdown is None or isinstance(markdown, PlainText):
        return None  # before the import: a scroll over plain parts does not load markdown-it
    from widgets.chunked_markdown import ChunkedMarkdown

    assert isinstance(markdown, ChunkedMarkdown)
    return markdown


class _OpenPart:
    """The text or thinking part a reply is streaming into, with deltas waiting for the next flush."""

    def __init__(self, widget: Widget) -> None:
        self.widget = widget
        markdown = part_markdown(widget)
        assert markdown is not None  # a streamed part is made with its Markdown (ThinkingBlock(""))
        self.markdown = markdown
        self.sanitizer = StreamSanitizer()
        self.pending: list[str] = []
        self.timer: Timer | None = None


def assistant_parts(message: Message) -> list[tuple[str, Any]]:
    """The displayed parts of an assistant message in order: text, thinking and tool calls."""
    content = message.get("content")
    if isinstance(content, str):
        return [("text", content)] if content else []
    parts: list[tuple[str, Any]] = []
    for block in content or ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            parts.append(("text", block["text"]))
        elif kind == "thinking" and block.get("thinking"):
            parts.append(("thinking", block["thinking"]))
        elif kind == "toolCall":
            parts.append(("tool", block))
    return parts


class AssistantMessage(ChatMessage):
    """An assistant reply; also the target of a streaming reply (see :class:`AssistantStream`)."""

    DEFAULT_CSS = """
    AssistantMessage { border-left: wide $accent 50%; }
    AssistantMessage > MessageHeader > .message--title { color: $accent; }
    """

    def __init__(
        self,
        message: Message,
        entry_id: str | None = None,
        results: dict[str, Message] | None = None,
    ) -> None:
        super().__init__(message, entry_id)
        self.results: dict[str, Message] = dict(results or {})
        self._parts: list[tuple[str, Widget]] = []
        self._open: _OpenPart | None = None

    def title(self) -> Content:
        model = self.message.get("model")
        return Content("Assistant" + (f" · {sanitize(str(model))}" if model else ""))

    def copy_text(self) -> str:
        return content_text(self.message.get("content"))

    def compose_body(self) -> ComposeResult:
        for kind, payload in assistant_parts(self.message):
            widget = self._part_widget(kind, payload)
            self._parts.append((kind, widget))
            yield widget
        yield from self._notices()

    def _part_widget(self, kind: str, payload: Any) -> Widget:
        if kind == "text":
            text = sanitize(payload)
            if is_plain(text):  # finished text without Markdown syntax: drawn the same, without Markdown
                return PlainText(text, classes="message--body")
            from widgets.chunked_markdown import ChunkedMarkdown

            return ChunkedMarkdown(text, classes="message--body")
        if kind == "thinking":
            return ThinkingBlock(sanitize(payload))
        call_id = str(payload.get("id"))
        return ToolCallView(
            call_id, str(payload.get("name", "")), payload.get("arguments"), self.results.get(call_id)
        )

    def _notices(self) -> ComposeResult:
        if self.message.get("stopReason") == "aborted":
            yield Static(Content("(aborted)"), classes="message--notice")
        elif self.message.get("errorMessage"):
            yield Static(plain(str(self.message["errorMessage"])), classes="message--error")

    def tool_view(self, call_id: str) -> ToolCallView | None:
        for kind, widget in self._parts:
            if kind == "tool" and isinstance(widget, ToolCallView) and widget.call_id == call_id:
                return widget
        return None

    def set_tool_result(self, result: Message) -> None:
        call_id = str(result.get("toolCallId"))
        self.results[call_id] = result
        view = self.tool_view(call_id)
        if view is not None:
            view.set_result(result)

    def reveal_folds(self) -> None:
        """Unfold long streamed text near the screen again (the chat pane calls this on scroll)."""
        for kind, widget in self._parts:
            if kind != "tool" and (markdown := part_markdown(widget)) is not None:
                markdown.reveal()

    # Streaming -----------------------------------------------------------------------------------

    async def stream_text(self, delta: str) -> None:
        await self._stream_into("text", delta)

    async def stream_thinking(self, delta: str) -> None:
        await self._stream_into("thinking", delta)

    async def _stream_into(self, kind: str, delta: str) -> None:
        if not self._parts or self._parts[-1][0] != kind:
            await self._close_stream()
            widget = self._part_widget(kind, "")
            await self.mount(widget)
            if widget.parent is not self:
                return  # Textual skips a mount into a widget it is removing: finish() draws the message whole
            self._parts.append((kind, widget))
        widget = self._parts[-1][1]
        if self._open is None or self._open.widget is not widget:
            self._open = _OpenPart(widget)
        open_part = self._open
        clean = open_part.sanitizer.feed(delta)
        if clean:
            open_part.pending.append(clean)
            if open_part.timer is None:
                open_part.timer = self.set_timer(STREAM_FLUSH_SECONDS, self._flush_pending)

    async def _flush_pending(self) -> None:
        open_part = self._open
        if open_part is None:
            return
        open_part.timer = None
        if open_part.pending:
            text = "".join(open_part.pending)
            open_part.pending.clear()
            await open_part.markdown.write(text)

    async def _close_stream(self) -> None:
        open_part, self._open = self._open, None
        if open_part is None:
            return
        if open_part.timer is not None:
            open_part.timer.stop()
        rest = "".join(open_part.pending) + open_part.sanitizer.flush()
        if rest:
            await open_part.markdown.write(rest)
        await open_part.markdown.stop()

    async def start_tool_call(self, call_id: str, name: str) -> ToolCallView:
        await self._close_stream()
        view = ToolCallView(call_id, name, {})
        await self.mount(view)
        self._parts.append(("tool", view))
        return view

    async def stream_tool_args(self, call_id: str, args_json: str) -> None:
        view = self.tool_view(call_id)
        if view is not None:
            view.set_args_text(args_json)

    async def finish(self, message: Message) -> None:
        """Show the final message: in place when the streamed parts match it, else rebuilt."""
        await self._close_stream()
        self.message = message
        if self._pruning or not self.is_attached:
            return  # being removed (a redraw took it): the store's entry draws the reply
        final = assistant_parts(message)
        streamed = [kind for kind, _ in self._parts]
        if streamed == [kind for kind, _ in final] and all(
            widget.parent is self for _, widget in self._parts
        ):
            for (kind, payload), (_, widget) in zip(final, self._parts, strict=True):
                await self._refresh_part(kind, payload, widget)
        else:
            await self.remove_children([widget for _, widget in self._parts if widget.parent is self])
            self._parts = [(kind, self._part_widget(kind, payload)) for kind, payload in final]
            await self.mount_all([widget for _, widget in self._parts])
        self.query_one(MessageHeader).title = self.title()
        notices = list(self._notices())
        if notices:
            await self.mount_all(notices)

    async def _refresh_part(self, kind: str, payload: Any, widget: Widget) -> None:
        if isinstance(widget, ToolCallView):
            widget.set_call(str(payload.get("name", "")), payload.get("arguments"))
            return
        markdown = part_markdown(widget)
        assert markdown is not None  # only streamed parts are refreshed, and they have their Markdown
        await markdown.finalize(sanitize(payload))

    async def on_unmount(self) -> None:
        if self._open is not None:
            if self._open.timer is not None:
                self._open.timer.stop()
            await self._open.markdown.close()
            self._open = None


class ToolResultMessage(ChatMessage):
    """A tool result whose call is not shown (for example above the loaded window)."""

    DEFAULT_CSS = """
    ToolResultMessage { border-left: wide $secondary 50%; }
    ToolResultMessage.-error { border-left: wide $error; }
    ToolResultMessage .message--body { color: $text-muted; }
    """

    def __init__(self, message: Message, entry_id: str | None = None) -> None:
        super().__init__(message, entry_id, classes="-error" if message.get("isError") else "")

    def title(self) -> Content:
        status = " ✗ error" if self.message.get("isError") else ""
        return Content(f"Tool result [{sanitize(str(self.message.get('toolName', 'tool')))}]{status}")

    def copy_text(self) -> str:
        return result_text(self.message)

    def compose_body(self) -> ComposeResult:
        yield Static(Content(truncate_output(self.copy_text())), classes="message--body")


class BashMessage(ChatMessage):
    """A ``!cmd`` the user ran: the command, its output and how it ended."""

    DEFAULT_CSS = """
    BashMessage { border-left: wide $success 50%; }
    BashMessage > MessageHeader > .message--title { color: $success; }
    BashMessage .bash--output { color: $text-muted; }
    BashMessage .bash--status { color: $text-muted; }
    BashMessage.-failed .bash--status { color: $error; }
    """

    def __init__(self, message: Message, entry_id: str | None = None) -> None:
        code = message.get("exitCode")
        failed = message.get("cancelled") or code not in (0, None)
        super().__init__(message, entry_id, classes="-failed" if failed else "")

    def title(self) -> Content:
        prefix = "!! " if self.message.get("excludeFromContext") else "! "
        return Content(prefix + sanitize(str(self.message.get("command", ""))).replace("\n", " "))

    def copy_text(self) -> str:
        return f"$ {self.message.get('command', '')}\n{self.message.get('output') or ''}"

    def status(self) -> str:
        parts = []
        if self.message.get("cancelled"):
            parts.append("cancelled")
        elif self.message.get("exitCode") is not None:
            parts.append(f"exit {self.message.get('exitCode')}")
        if self.message.get("truncated"):
            path = self.message.get("fullOutputPath")
            parts.append(f"output truncated (full output: {path})" if path else "output truncated")
        if self.message.get("excludeFromContext"):
            parts.append("not sent to the model")
        return " · ".join(parts)

    def compose_body(self) -> ComposeResult:
        output = str(self.message.get("output") or "")
        if output:
            yield Static(Content(truncate_output(output)), classes="message--body bash--output")
        yield Static(plain(self.status()), classes="bash--status")


class CustomMessage(ChatMessage):
    """A message an extension injected into the context (``custom_message``)."""

    DEFAULT_CSS = """
    CustomMessage { border-left: wide $secondary; }
    CustomMessage > MessageHeader > .message--title { color: $secondary; }
    """

    def title(self) -> Content:
        return Content(f"◆ {sanitize(str(self.message.get('customType', 'custom')))}")

    def copy_text(self) -> str:
        return user_text(self.message.get("content"))

    def compose_body(self) -> ComposeResult:
        yield Static(plain(self.copy_text()), classes="message--body")


class _SummaryMessage(ChatMessage):
    """A summary in a collapsed section (its title is the message's header)."""

    DEFAULT_CSS = """
    _SummaryMessage { border-left: wide $warning 60%; }
    _SummaryMessage > Collapsible { background: transparent; border-top: none; padding: 0; }
    _SummaryMessage CollapsibleTitle { color: $warning; }
    _SummaryMessage Collapsible > Contents { padding: 0 0 0 2; }
    """
    ACTIONS = ()

    def copy_text(self) -> str:
        return str(self.message.get("summary") or "")

    def compose(self) -> ComposeResult:
        yield SummaryBlock(sanitize(self.copy_text()), self.title())


class BranchSummaryMessage(_SummaryMessage):
    def title(self) -> Content:
        source = self.message.get("fromId")
        return Content("Branch summary" + (f" (from {sanitize(str(source))})" if source else ""))


class CompactionSummaryMessage(_SummaryMessage):
    def title(self) -> Content:
        return Content(
            f"Compacted from {tokens_k(recorded_count(self.message.get('tokensBefore')) or 0)} tokens"
        )


# The role of a line that only the chat shows (never stored, never sent): an automatic failure's report.
ERROR_LINE_ROLE = "kompaktErrorLine"


def error_line_message(text: str) -> Message:
    return {"role": ERROR_LINE_ROLE, "content": [{"type": "text", "text": text}]}


class ErrorLine(ChatMessage):
    """A red line in the chat: an automatic compaction that failed (pi 0.73.1 shows it there, delta A.7).

    It is part of the live chat only; a redraw of the path from the session file does not bring it back.
    """

    DEFAULT_CSS = """
    ErrorLine { border-left: wide $error; }
    ErrorLine > .message--error { height: auto; }
    """
    ACTIONS = ()

    def copy_text(self) -> str:
        return user_text(self.message.get("content"))

    def compose(self) -> ComposeResult:
        yield Static(plain(self.copy_text()), classes="message--error")


def message_widget(
    message: Message, entry_id: str | None = None, results: dict[str, Message] | None = None
) -> ChatMessage | None:
    """The widget for a context message, or None for roles the chat does not show."""
    role = message.get("role")
    if role == "user":
        return UserMessage(message, entry_id)
    if role == "assistant":
        return AssistantMessage(message, entry_id, results)
    if role == "toolResult":
        return ToolResultMessage(message, entry_id)
    if role == "bashExecution":
        return BashMessage(message, entry_id)
    if role == "custom":
        return CustomMessage(message, entry_id) if message.get("display", True) else None
    if role == "branchSummary":
        return BranchSummaryMessage(message, entry_id)
    if role == "compactionSummary":
        return CompactionSummaryMessage(message, entry_id)
    if role == ERROR_LINE_ROLE:
        return ErrorLine(message)
    return None
