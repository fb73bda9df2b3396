"""The compaction timeline: the active path as a token-proportional bar above the prompt.

A three-row strip (markers, bar, figures) that expands into a panel with a legend, the what-if
details, the keys, the context by category, a sparkline of the context over the turns and the past
compactions (cut section by section to fit the screen, :func:`_fit`). Segments, chart points and past
compactions can be pointed at: a click or ←/→ (↓/↑ in the list) selects one and posts ``EntryPointed``
so the screen shows that entry in the tree and the chat; hovering sets the tooltip
(:mod:`widgets.timeline_pointer`); Enter on a selected past compaction asks for the inspector. The bar shows the summarised history, the summary,
the kept region from ``firstKeptEntryId`` (▼), the entries since, the threshold and the window;
the ghost ◆ marks where a compaction with the what-if settings would cut, computed by the same
planner as ``kompakt plan``, for either strategy (Ctrl+T switches the what-if between keep-recent and
head-tail at once; a head-tail compaction also shows the protected head it copied into its summary).
Keys nudge keepRecentTokens and reserveTokens of the what-if; the
widget posts messages upward and never touches the session itself. Rendering uses the line API
with a cache of strips rebuilt only when the state or the width changes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from rich.cells import cell_len
from rich.segment import Segment as RichSegment
from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.events import Click, Key, Leave, MouseEvent, MouseMove
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget
from textual.worker import Worker

from tui.compaction.timeline_names import (
    REGION_AFTER,
    REGION_HEAD,
    REGION_KEPT,
    REGION_SUMMARISED,
    REGION_SUMMARY,
    STRATEGY_HEAD_TAIL,
    STRATEGY_KEEP_RECENT,
)
from tui.session.entries import Entry
from tui.session.sanitize import sanitize
from widgets.footer import FooterKeys
from widgets.latest_only import LatestOnly
from widgets.read_only import session_read_only
from widgets.timeline_build import BuiltTimeline, PathSource, build, read_path, samples_of
from widgets.timeline_chart import (
    CLIPPED_MARK,
    FILL_COMPACTION,
    FILL_ESTIMATED,
    FILL_MEASURED,
    FILL_OVER,
    FILL_THRESHOLD,
    ContextChart,
)
from widgets.timeline_layout import (
    FILL_FREE,
    FILL_OVERHEAD,
    FILL_RESERVE,
    FILL_STREAMING,
    LEFT_EIGHTHS,
    BarLayout,
)
from widgets.timeline_pointer import (
    compaction_text,
    format_tokens,
    sample_text,
    segment_text,
    threshold_text,
)
from widgets.worker_failures import pass_failure_on

if TYPE_CHECKING:
    from tui.compaction.breakdown import ContextBreakdown
    from tui.compaction.head_tail import HeadTailConfig
    from tui.compaction.timeline import Timeline
    from tui.export.chart import Sample

# A drawn row and what it points at for the mouse: ("bar", None), ("past", id), ("chart", chart) or None.
Row = tuple[Strip, tuple[str, Any] | None]

KEEP_STEP = 1_000
KEEP_BIG_STEP = 5_000
RESERVE_STEP = 1_000
RESERVE_BIG_STEP = 5_000
# Above this many entries after the latest compaction the what-if is planned in a thread.
WORKER_ENTRIES = 3_000
# A path of up to this many entries is built in the frame that asks (tens of ms on a loaded machine, so a
# small session never flickers); a longer one on a worker thread (group "timeline-build").
BUILD_WORKER_ENTRIES = 2_000
# A rebuild still running after this long says so beside the last timeline (a quicker one would flicker).
BUILDING_NOTE_DELAY = 0.3
BUILDING_TEXT = "Building the timeline…"
FAILED_TEXT = "The timeline could not be built (the error was shown)"
PAST_ROWS = 8
# The panel leaves the chat and the prompt this many rows of the screen; past that it drops detail.
SCREEN_ROWS_KEPT = 10
MIN_PANEL_ROWS = 6
# The panel's sections, least needed first: each step of _fit takes one of them to its next smaller form.
SHRINK_ORDER = (
    "chart",
    "chart",  # a chart row before the markers' key: ┃ ▼ ◆ ├┤ say what the strip shows
    "markers",
    "figures",
    "breakdown",
    "past",
    "chart",
    "legend",
    "breakdown",
    "past",
    "cut",
    "settings",
    "keys",
)
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
# The threshold a what-if reserveTokens would give, beside the saved one (┃).
GHOST_THRESHOLD = "╏"

_FILLS = (
    REGION_HEAD,
    REGION_SUMMARISED,
    REGION_SUMMARY,
    REGION_KEPT,
    f"{REGION_KEPT}-tool",
    REGION_AFTER,
    f"{REGION_AFTER}-tool",
    FILL_OVERHEAD,
    FILL_STREAMING,
    FILL_FREE,
    FILL_RESERVE,
)


def _short_time(timestamp: str) -> str:
    """``2026-11-01T09:12:05.000Z`` → ``2026-11-01 09:12:05`` (the stored UTC time, as is)."""
    return sanitize(timestamp)[:19].replace("T", " ")


class _Line:
    """A row being assembled cell by cell: plain text with a style per character.

    Every cell also records what holds it: nothing, a bracket dash (which the keep label may cover) or
    a mark or text that nothing may overwrite, so labels go where they hide no marker.
    """

    EMPTY, DASH, SOLID = 0, 1, 2

    def __init__(self, width: int, style: Style) -> None:
        self.chars = [" "] * width
        self.styles = [style] * width
        self.holds = [self.EMPTY] * width

    def put(self, column: int, text: str, style: Style, hold: int = SOLID) -> None:
        for offset, char in enumerate(text):
            if 0 <= column + offset < len(self.chars):
                self.chars[column + offset] = char
                self.styles[column + offset] = style
                self.holds[column + offset] = hold

    def place(self, text: str, style: Style, columns: Sequence[int], allowed: int = EMPTY) -> bool:
        """Write ``text`` at the first of ``columns`` where it fits on the row and covers nothing above
        ``allowed``, with a cell either side that holds nothing above ``allowed`` either (so text never
        touches a mark)."""
        width = len(self.chars)
        for column in columns:
            if column < 0 or column + len(text) > width:
                continue
            around = self.holds[max(0, column - 1) : min(width, column + len(text) + 1)]
            if all(hold <= allowed for hold in around):
                self.put(column, text, style)
                return True
        return False

    def strip(self) -> Strip:
        segments: list[RichSegment] = []
        for char, style in zip(self.chars, self.styles, strict=True):
            if segments and segments[-1].style is style:
                segments[-1] = RichSegment(segments[-1].text + char, style)
            else:
                segments.append(RichSegment(char, style))
        return Strip(segments, len(self.chars))


def _text_strip(parts: Sequence[tuple[str, Style]], width: int, base: Style) -> Strip:
    """Styled text parts on one row, padded to ``width``; what does not fit ends with an ellipsis."""
    strip = Strip([RichSegment(text, style) for text, style in parts if text])
    if strip.cell_length > width:
        cropped = list(strip.crop(0, max(0, width - 1)))
        strip = Strip([*cropped, RichSegment("…", cropped[-1].style if cropped else base)])
    return strip.crop_extend(0, width, base)


def _fitted(variants: Sequence[Sequence[tuple[str, Style]]], width: int, base: Style) -> Strip:
    """The first variant (fullest first) that fits in ``width``; the last one, ellipsised, if none does."""
    for parts in variants:
        if sum(cell_len(text) for text, _style in parts) <= width:
            return _text_strip(parts, width, base)
    return _text_strip(variants[-1], width, base)


def _fit(sections: dict[str, list[list[Row]]], budget: int) -> list[Row]:
    """The sections' rows in order, each in the fullest form that lets the whole fit in ``budget`` rows.

    ``sections`` maps a name to its forms, fullest first (the last may be empty); :data:`SHRINK_ORDER`
    says which section shrinks next while the panel is too tall.
    """
    chosen = dict.fromkeys(sections, 0)
    steps = iter(SHRINK_ORDER)
    while sum(len(forms[chosen[name]]) for name, forms in sections.items()) > budget:
        name = next(steps, None)
        if name is None:
            break
        if name in sections and chosen[name] + 1 < len(sections[name]):
            chosen[name] += 1
    return [row for name, forms in sections.items() for row in forms[chosen[name]]]


def _wrap(items: Sequence[Sequence[tuple[str, Style]]], width: int, base: Style) -> list[Strip]:
    """Items (each a few styled parts) laid out left to right over as many rows as they need."""
    rows: list[list[tuple[str, Style]]] = [[]]
    used = 0
    for item in items:
        length = sum(cell_len(text) for text, _style in item)
        if used and used + length > width:
            rows.append([])
            used = 0
        rows[-1].extend(item)
        used += length
    return [_text_strip(parts, width, base) for parts in rows if parts]


class CompactionTimeline(Widget, can_focus=True):
    """The active path's token budget, the compaction boundary and a live what-if."""

    HELP: ClassVar[str] = """
## Compaction timeline

The bar is the active path, each entry as wide as its tokens (scaled by the provider's usage when
it is known). **░** is history already summarised, then the summary, the kept region from the
boundary **▼** (its `firstKeptEntryId`), and everything since. **┃** is the threshold
(window − reserveTokens). After each reply kompakt compares it with that reply's usage plus an
estimate of the messages after it (tool results), the figure shown as the context size; pi compares
the reply's usage alone. The bracket is keepRecentTokens from the end, and **◆** is where a
compaction with the what-if settings would cut; **╏** is the threshold a what-if reserveTokens would
give (the free space and the reserve on the bar follow it). With the head-tail strategy, **▒** is the
protected head a head-tail compaction copied into its summary, and the bracket is the tail budget
(keepRecentTokens does not apply there). A figure marked **≈** is an estimate (about four
characters a token, scaled by the provider's count when there is one): the context size right after
a compaction, until a reply reports usage (the offline model's usage is its own estimate too), the
size of each region in the legend, and everything the what-if predicts.

- `+` / `-`: keepRecentTokens ±1k (`>` / `<`: ±5k)
- `]` / `[`: reserveTokens ±1k (`}` / `{`: ±5k)
- `ctrl+t`: switch the what-if between the keep-recent and head-tail strategies
- `ctrl+r`: reset the what-if to the current settings
- `ctrl+g`: preview the compaction the what-if would write (a summarizer call; the inspector shows it,
  Enter writes it, Esc drops it)
- `ctrl+o`: inspect the latest compaction (what it summarised, its summary, what it kept)
- `ctrl+s`: apply the what-if to this session only (stored in the session file; `/session-settings clear`
  removes it)
- `enter`: compact now with the what-if settings, after a yes (with a past compaction selected: inspect it)
- `ctrl+f`: jump to the boundary entry in the tree
- `left` / `right`: walk the bar's segments; the tree pane selects the entry and the chat scrolls to it
  (a click on a segment, a point of the context chart or a past compaction does the same; hovering
  says what it is)
- `down` / `up`: select a past compaction in the panel (`enter` or a second click inspects it)
- `space`: expand or collapse the panel
- `escape`: cancel a running compaction, else clear the selection
"""

    # The what-if footer at 80 columns (widgets/footer.py): Esc and F9 first, each +/- pair as one key.
    _FOOTER_KEYS: ClassVar[FooterKeys] = {
        "cancel_compaction": (None, "Cancel"),
        "command('toggle_chat_view')": (None, None),
        "nudge_keep(1)": ("+/-", "Keep"),
        "nudge_keep(-1)": (None, ""),
        "nudge_reserve(1)": ("]/[", "Reserve"),
        "nudge_reserve(-1)": (None, ""),
        "compact_now": (None, "Compact"),
        "switch_strategy": (None, "Strategy"),
        "reset_what_if": (None, "Reset"),
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("plus", "nudge_keep(1)", "Keep +1k", id="timeline.keep_up"),
        Binding("minus", "nudge_keep(-1)", "Keep −1k", id="timeline.keep_down"),
        Binding("greater_than_sign", "nudge_keep(5)", "Keep +5k", show=False, id="timeline.keep_up_big"),
        Binding("less_than_sign", "nudge_keep(-5)", "Keep −5k", show=False, id="timeline.keep_down_big"),
        Binding("right_square_bracket", "nudge_reserve(1)", "Reserve +1k", id="timeline.reserve_up"),
        Binding("left_square_bracket", "nudge_reserve(-1)", "Reserve −1k", id="timeline.reserve_down"),
        Binding(
            "right_curly_bracket", "nudge_reserve(5)", "Reserve +5k", show=False, id="timeline.reserve_up_big"
        ),
        Binding(
            "left_curly_bracket",
            "nudge_reserve(-5)",
            "Reserve −5k",
            show=False,
            id="timeline.reserve_down_big",
        ),
        # Letters would fire when a message is typed into the focused timeline (its first letter acts
        # before the focus moves to the prompt): every action with a letter has a Ctrl key instead. The
        # symbols and Space stay: they only move the what-if view, and a message seldom starts with one.
        Binding("ctrl+t", "switch_strategy", "Switch strategy", id="timeline.switch_strategy"),
        Binding("ctrl+r", "reset_what_if", "Reset what-if", id="timeline.reset_what_if"),
        # Off the footer (its row is full; "Compact now" would drop out): listed by F1 and the palette.
        Binding(
            "ctrl+s", "apply_to_session", "Apply to this session", show=False, id="timeline.apply_to_session"
        ),
        Binding("ctrl+g", "preview", "Preview compaction", show=False, id="timeline.preview"),
        Binding("ctrl+o", "inspect", "Inspect last compaction", show=False, id="timeline.inspect"),
        Binding("enter", "compact_now", "Compact now", id="timeline.compact_now"),
        Binding("ctrl+f", "jump_to_boundary", "Jump to boundary", id="timeline.jump_boundary"),
        Binding("left", "walk(-1)", "Previous segment", show=False, id="timeline.previous_segment"),
        Binding("right", "walk(1)", "Next segment", show=False, id="timeline.next_segment"),
        Binding("down", "walk_past(1)", "Older compaction", show=False, id="timeline.older_compaction"),
        Binding("up", "walk_past(-1)", "Newer compaction", show=False, id="timeline.newer_compaction"),
        Binding("space", "toggle_expanded", "Expand timeline", id="timeline.toggle"),
        Binding("escape", "cancel_compaction", "Cancel compaction", id="timeline.cancel"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *(f"timeline--{fill}" for fill in _FILLS),
        "timeline--boundary",
        "timeline--ghost",
        "timeline--threshold",
        "timeline--keep",
        "timeline--muted",
        "timeline--title",
        "timeline--busy",
        "timeline--selected",
        "timeline--chart",
    }

    DEFAULT_CSS = """
    CompactionTimeline {
        height: auto;
        padding: 0 1;
        background: $surface;
        color: $foreground;
        &:focus { background: $boost; }
        & > .timeline--head { color: $secondary-lighten-2; background: $secondary-darken-1; }
        & > .timeline--summarised { color: $foreground-muted; background: $panel; }
        & > .timeline--summary { background: $accent; }
        & > .timeline--kept { background: $success-darken-1; }
        & > .timeline--kept-tool { background: $success-darken-3; }
        & > .timeline--after { background: $primary; }
        & > .timeline--after-tool { background: $primary-darken-2; }
        & > .timeline--overhead { background: $secondary-darken-2; }
        & > .timeline--streaming { background: $warning-darken-1; }
        & > .timeline--free { background: $panel-lighten-1; }
        & > .timeline--reserve { background: $warning-muted; }
        & > .timeline--boundary { color: $accent; text-style: bold; }
        & > .timeline--ghost { color: $warning; text-style: bold; }
        & > .timeline--threshold { color: $warning; }
        & > .timeline--keep { color: $success; }
        & > .timeline--muted { color: $foreground-muted; }
        & > .timeline--title { text-style: bold; }
        & > .timeline--busy { color: $warning; text-style: bold; }
        & > .timeline--selected { color: $background; background: $foreground; text-style: bold; }
        & > .timeline--chart { color: $primary-lighten-1; }
    }
    """

    expanded: reactive[bool] = reactive(False, layout=True)

    class WhatIfChanged(Message):
        """The what-if settings changed from the keyboard."""

        def __init__(self, keep_recent_tokens: int, reserve_tokens: int) -> None:
            super().__init__()
            self.keep_recent_tokens = keep_recent_tokens
            self.reserve_tokens = reserve_tokens

    class CompactNowRequested(Message):
        """The user asked to compact now with these settings (and this strategy)."""

        def __init__(
            self, keep_recent_tokens: int, reserve_tokens: int, strategy: str = STRATEGY_KEEP_RECENT
        ) -> None:
            super().__init__()
            self.keep_recent_tokens = keep_recent_tokens
            self.reserve_tokens = reserve_tokens
            self.strategy = strategy

    class ApplyToSessionRequested(Message):
        """Keep these what-if values for this session only (not in a settings file)."""

        def __init__(self, keep_recent_tokens: int, reserve_tokens: int, strategy: str) -> None:
            super().__init__()
            self.keep_recent_tokens = keep_recent_tokens
            self.reserve_tokens = reserve_tokens
            self.strategy = strategy

    class PreviewRequested(Message):
        """Generate the compaction these values would write, without writing it."""

        def __init__(self, keep_recent_tokens: int, reserve_tokens: int, strategy: str) -> None:
            super().__init__()
            self.keep_recent_tokens = keep_recent_tokens
            self.reserve_tokens = reserve_tokens
            self.strategy = strategy

    class InspectRequested(Message):
        """Open the inspector on this compaction (None: the latest of the active path)."""

        def __init__(self, compaction_id: str | None = None) -> None:
            super().__init__()
            self.compaction_id = compaction_id

    class EntryPointed(Message):
        """A segment (or a chart point, or a past compaction) was clicked or walked to: show its entry."""

        def __init__(self, entry_id: str) -> None:
            super().__init__()
            self.entry_id = entry_id

    class StrategyChanged(Message):
        """The what-if strategy was switched from the keyboard."""

        def __init__(self, strategy: str) -> None:
            super().__init__()
            self.strategy = strategy

    class JumpToEntry(Message):
        """Show this entry (the boundary) in the session tree."""

        def __init__(self, entry_id: str) -> None:
            super().__init__()
            self.entry_id = entry_id

    class CancelRequested(Message):
        """The user asked to cancel the running compaction."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._path: Sequence[Entry] = ()
        self._timeline: Timeline | None = None
        self._what_if: tuple[int, int] | None = None
        self._what_if_strategy: str | None = None
        self._strategy: str | None = None
        self._head_tail: HeadTailConfig | None = None
        self._what_if_generation = 0
        self._streaming_tokens = 0
        # The build in flight only brings the open panel's figures (the path has not changed).
        self._figures_only = False
        self._compacting: tuple[str, float] | None = None
        self._spinner: Timer | None = None
        self._lines: tuple[int, list[Strip]] | None = None  # (width, rows) as last built
        # Pointing: the selected segment's entry, the selected past compaction, what each drawn row
        # points at (for the mouse) and the bar's geometry as last drawn.
        self._selected: str | None = None
        self._past_selected: str | None = None
        self._row_targets: list[tuple[str, Any] | None] = []
        self._layout: BarLayout | None = None
        self._segment_indices: tuple[tuple[Any, ...], dict[str, int]] | None = None
        self._entries: dict[str, Entry] | None = None
        # Set by the screen: the label of an entry (the tree's labels are not on the path), and the
        # context by category (it needs the system prompt and the tools, which only the agent knows).
        self.label_of: Callable[[str], str | None] | None = None
        self.breakdown_source: Callable[[], ContextBreakdown | None] | None = None
        self._breakdown: tuple[ContextBreakdown | None] | None = None  # computed once per path
        self._samples: list[Sample] | None = None
        self._budget = 0  # rows the whole widget may take, from the screen's height
        self._typing_away = False  # a key went to the prompt: the rest of the burst goes there too
        # A long path is built on a worker thread; the last request, for the panel's figures later.
        self._builder: LatestOnly[BuiltTimeline] = LatestOnly(
            self, "timeline-build", self._show_built, failed=self._build_failed
        )
        self._failed = False  # the latest build raised (the screen reported it): said instead of a bar
        self._building_since = 0.0
        self._long_path = False  # the path shown is built (and its figures computed) off the event loop
        self._last_request: tuple[PathSource, dict[str, Any]] | None = None

    # --- public API -------------------------------------------------------------------------

    @property
    def timeline(self) -> Timeline | None:
        """The timeline as last drawn."""
        return self._timeline

    @property
    def what_if_settings(self) -> tuple[int, int] | None:
        """The ``(keep, reserve)`` the ghost boundary shows; the current settings when no what-if is set."""
        if self._what_if is not None:
            return self._what_if
        if self._timeline is None:
            return None
        return self._timeline.keep_recent_tokens, self._timeline.reserve_tokens

    def update_timeline(
        self,
        path_entries: PathSource,
        context_window: int,
        reserve_tokens: int,
        keep_recent_tokens: int,
        calibrate: bool = True,
        *,
        strategy: str | None = None,
        head_tail: HeadTailConfig | None = None,
        size: int | None = None,
    ) -> None:
        """Redraw for a new path or new settings; a streamed tail is dropped (it is an entry now).

        ``path_entries`` is the path, or a function that reads it (on the worker thread); ``size`` bounds
        its length (default: a list's length; a function's path without one counts as long). A path of
        up to :data:`BUILD_WORKER_ENTRIES` entries is drawn at once; a longer one is built on a worker
        thread while the last timeline stays drawn (:data:`BUILDING_TEXT` in place of the bar before the
        first one, beside it once a rebuild takes :data:`BUILDING_NOTE_DELAY`); of the requests made
        meanwhile only the latest is built and drawn. ``strategy`` and ``head_tail`` are
        ``compaction.strategy`` and the head-tail knobs; None keeps the last ones given (at first the
        settings' defaults).
        """
        if strategy is not None:
            self._strategy = strategy
        if head_tail is not None:
            self._head_tail = head_tail
        if size is None:
            size = BUILD_WORKER_ENTRIES + 1 if callable(path_entries) else len(path_entries)
        options: dict[str, Any] = {
            "context_window": context_window,
            "reserve_tokens": reserve_tokens,
            "keep_recent_tokens": keep_recent_tokens,
            "calibrate": calibrate,
            "what_if": self._what_if,
            "what_if_strategy": self._what_if_strategy,
            **({"strategy": self._strategy} if self._strategy is not None else {}),
            "head_tail": self._head_tail,
        }
        self._last_request = (path_entries, options)
        self._figures_only = False
        if size <= BUILD_WORKER_ENTRIES:
            self._builder.cancel()  # a long path's build still running is not shown
            self._long_path = False
            self._show_built(build(read_path(path_entries), options, None, figures=False))
            return
        if not self._builder.busy:
            self._building_since = time.monotonic()
            self.set_timer(BUILDING_NOTE_DELAY, self._redraw)  # the note, if it still builds then
        figures, source, width = self.expanded, self.breakdown_source, self.content_size.width
        self._builder.request(lambda: build(path_entries, options, source, figures=figures, width=width))
        if self._timeline is None:
            self._redraw()  # the building line in place of the loading one

    @property
    def building(self) -> bool:
        """A long path's timeline is being built on a worker thread (the one drawn is older, or none)."""
        return self._builder.busy

    def _build_failed(self) -> None:
        self._failed = True
        self._redraw()

    def _show_built(self, built: BuiltTimeline) -> None:
        """Draw a build (at once, or from the worker); a what-if changed meanwhile is planned again."""
        self._failed = False
        self._long_path = len(built.path) > BUILD_WORKER_ENTRIES
        self._path, self._timeline, self._layout = built.path, built.timeline, built.layout
        self._entries = None
        self._samples, self._breakdown = built.samples, built.breakdown
        if not self._figures_only:  # a reply streaming now is still streaming after a figures build
            self._streaming_tokens = 0
        self._figures_only = False
        self._what_if_generation += 1  # a plan for the timeline drawn before is stale
        if built.what_if != (self._what_if, self._what_if_strategy):
            self._replan()  # a key nudged the what-if while it was built
        self._redraw()
        self._fetch_figures()

    def _fetch_figures(self) -> None:
        """The open panel of a long path needs its chart and breakdown: a build brings them."""
        wanted = self.expanded and self._long_path and self._samples is None
        if wanted and not self._builder.busy and self._last_request is not None:
            path, options = self._last_request
            source, width = self.breakdown_source, self.content_size.width
            options = {**options, "what_if": self._what_if, "what_if_strategy": self._what_if_strategy}
            self._figures_only = True
            self._builder.request(lambda: build(path, options, source, figures=True, width=width))

    @property
    def FOOTER_KEYS(self) -> FooterKeys:  # upper case: the name widgets/footer.py reads
        """The footer's labels for the keys as they act now: Enter inspects a selected past compaction,
        Esc clears a selection when nothing runs (it said Compact and Cancel there)."""
        keys = dict(self._FOOTER_KEYS)
        if self.expanded and self.selected_compaction_id is not None:
            keys["compact_now"] = (None, "Inspect")
        if self._compacting is None:
            keys["cancel_compaction"] = (None, "Clear")
        return keys

    @property
    def selected_entry_id(self) -> str | None:
        """The entry of the selected segment, if it is still on the bar."""
        return self._selected if self._segment_index(self._selected) is not None else None

    @property
    def selected_compaction_id(self) -> str | None:
        """The past compaction selected in the panel's list, if it is still on the path."""
        if self._timeline is None or self._past_selected is None:
            return None
        ids = {c.entry_id for c in self._timeline.compactions}
        return self._past_selected if self._past_selected in ids else None

    def describe_segment(self, index: int) -> str:
        """Segment ``index`` of the bar in words (its tooltip)."""
        assert self._timeline is not None
        segment = self._timeline.segments[index]
        if self._entries is None:
            self._entries = {str(e.get("id")): e for e in self._path}
        label = self.label_of(segment.entry_id) if self.label_of is not None else None
        return segment_text(segment, self._entries.get(segment.entry_id), label)

    def set_what_if(self, keep_recent_tokens: int, reserve_tokens: int) -> None:
        """Show where a compaction with these settings would cut."""
        self._what_if = (max(0, keep_recent_tokens), max(0, reserve_tokens))
        self._replan()

    def clear_what_if(self) -> None:
        """Back to the current settings (and the configured strategy)."""
        self._what_if = None
        self._what_if_strategy = None
        self._replan()

    @property
    def what_if_strategy(self) -> str | None:
        """The strategy the ghost boundary shows (the configured one unless switched)."""
        if self._what_if_strategy is not None:
            return self._what_if_strategy
        return self._timeline.strategy if self._timeline is not None else None

    def set_what_if_strategy(self, strategy: str | None) -> None:
        """Preview the other strategy (None: the configured one); re-planned and redrawn at once."""
        self._what_if_strategy = strategy
        self._replan()

    def set_streaming_tokens(self, extra_tokens: int) -> None:
        """Grow the tail while a reply streams; cheap, nothing is re-planned."""
        if extra_tokens != self._streaming_tokens:
            self._streaming_tokens = max(0, extra_tokens)
            self._redraw()

    def set_compacting(self, reason: str, started_at: float) -> None:
        """Show the spinner; ``started_at`` is a ``time.monotonic()`` reading."""
        self._compacting = (reason, started_at)
        self.refresh_bindings()  # Esc (cancel / clear) comes and goes with it
        if self._spinner is None:
            self._spinner = self.set_interval(0.1, self._redraw)
        self._redraw()

    def set_idle(self) -> None:
        """The compaction finished or was cancelled."""
        self._compacting = None
        self.refresh_bindings()  # Esc (cancel / clear) comes and goes with it
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None
        self._redraw()

    # --- what-if planning -------------------------------------------------------------------

    def _replan(self) -> None:
        timeline = self._timeline
        if timeline is None:
            return
        keep, reserve = self.what_if_settings or (0, 0)
        self._what_if_generation += 1
        after = timeline.path_length - (timeline.compaction_index or 0)
        if after > WORKER_ENTRIES:
            # Keep the last drawn ghost until the worker's plan arrives.
            self._plan_in_thread(
                timeline, self._path, keep, reserve, self._what_if_strategy, self._what_if_generation
            )
        else:
            self._timeline = timeline.with_what_if(self._path, keep, reserve, self._what_if_strategy)
            self._redraw()

    @work(thread=True, exclusive=True, group="timeline-what-if", exit_on_error=False)
    def _plan_in_thread(
        self,
        timeline: Timeline,
        path: Sequence[Entry],
        keep: int,
        reserve: int,
        strategy: str | None,
        generation: int,
    ) -> None:
        # The path comes with the timeline: a build landing meanwhile replaces the widget's own.
        planned = timeline.with_what_if(path, keep, reserve, strategy)
        self.app.call_from_thread(self._planned, planned, generation)

    def _planned(self, timeline: Timeline, generation: int) -> None:
        if generation == self._what_if_generation:
            self._timeline = timeline
            self._redraw()

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        pass_failure_on(self, event)  # a failed plan or build is reported by the screen

    # --- actions ----------------------------------------------------------------------------

    def _nudge(self, keep_delta: int, reserve_delta: int) -> None:
        settings = self.what_if_settings
        if settings is None:
            return
        keep, reserve = settings
        self.set_what_if(keep + keep_delta, reserve + reserve_delta)
        keep, reserve = self._what_if or settings
        self.post_message(self.WhatIfChanged(keep, reserve))

    def action_nudge_keep(self, steps: int) -> None:
        self._nudge(steps * KEEP_STEP, 0)

    def action_nudge_reserve(self, steps: int) -> None:
        self._nudge(0, steps * RESERVE_STEP)

    def action_reset_what_if(self) -> None:
        self.clear_what_if()
        if self._timeline is not None:
            self.post_message(
                self.WhatIfChanged(self._timeline.keep_recent_tokens, self._timeline.reserve_tokens)
            )

    def action_switch_strategy(self) -> None:
        current = self.what_if_strategy
        if current is None:
            return
        other = STRATEGY_KEEP_RECENT if current == STRATEGY_HEAD_TAIL else STRATEGY_HEAD_TAIL
        self.set_what_if_strategy(other)
        self.post_message(self.StrategyChanged(other))

    def on_key(self, event: Key) -> None:
        """Printable keys go to the prompt (the screen's ``take_typing``), so a message typed with the
        timeline focused is not lost and its Enter sends it (D1's rule). A key the timeline binds (a
        what-if symbol, Space) acts only until typing starts: the keys of a burst reach the timeline
        before the focus has moved, and once one went to the prompt the rest follow it."""
        if not (event.is_printable and event.character):
            return
        if event.key in self._bindings.key_to_bindings and not self._typing_away:
            return
        event.stop()
        event.prevent_default()
        for node in self.ancestors:
            take_typing = getattr(node, "take_typing", None)
            if callable(take_typing):
                self._typing_away = True
                take_typing(event.character)
                return

    def on_focus(self) -> None:
        self._typing_away = False  # back on the timeline: its keys act again

    def action_compact_now(self) -> None:
        if self.expanded and (selected := self.selected_compaction_id) is not None:
            self.post_message(self.InspectRequested(selected))
            return
        settings = self.what_if_settings
        strategy = self.what_if_strategy
        if settings is not None and strategy is not None and self._compacting is None:
            self.post_message(self.CompactNowRequested(*settings, strategy=strategy))

    def action_apply_to_session(self) -> None:
        settings = self.what_if_settings
        strategy = self.what_if_strategy
        if settings is not None and strategy is not None:
            self.post_message(self.ApplyToSessionRequested(*settings, strategy=strategy))

    def action_preview(self) -> None:
        settings = self.what_if_settings
        strategy = self.what_if_strategy
        if settings is not None and strategy is not None and self._compacting is None:
            self.post_message(self.PreviewRequested(*settings, strategy=strategy))

    def action_inspect(self) -> None:
        self.post_message(self.InspectRequested())

    def action_jump_to_boundary(self) -> None:
        if self._timeline is not None and self._timeline.boundary_id:
            self.post_message(self.JumpToEntry(self._timeline.boundary_id))

    def action_toggle_expanded(self) -> None:
        self.expanded = not self.expanded

    def action_cancel_compaction(self) -> None:
        if self._compacting is not None:
            self.post_message(self.CancelRequested())
            return
        # Escape with no compaction running clears what the keys or the mouse selected, and goes on to
        # the screen (whose Escape cancels a running reply).
        self._selected = self._past_selected = None
        self.refresh_bindings()  # Esc (cancel / clear) comes and goes with it
        self._redraw()
        raise SkipAction()

    def _segment_index(self, entry_id: str | None) -> int | None:
        timeline = self._timeline
        if timeline is None or entry_id is None:
            return None
        if self._segment_indices is None or self._segment_indices[0] is not timeline.segments:
            indices = {segment.entry_id: i for i, segment in enumerate(timeline.segments)}
            self._segment_indices = (timeline.segments, indices)
        return self._segment_indices[1].get(entry_id)

    def select_segment(self, index: int) -> None:
        """Select segment ``index`` of the bar and ask the screen to show its entry."""
        assert self._timeline is not None
        entry_id = self._timeline.segments[index].entry_id
        self._selected = entry_id
        self.refresh_bindings()  # Esc (cancel / clear) comes and goes with it
        self._redraw()
        self.post_message(self.EntryPointed(entry_id))

    def action_walk(self, step: int) -> None:
        timeline = self._timeline
        if timeline is None or not timeline.segments:
            return
        last = len(timeline.segments) - 1
        current = self._segment_index(self._selected)
        # The first press starts at the end it points to.
        index = (last if step < 0 else 0) if current is None else min(last, max(0, current + step))
        self.select_segment(index)

    def _select_past(self, compaction_id: str | None) -> None:
        self._past_selected = compaction_id
        self.refresh_bindings()  # Esc (cancel / clear) comes and goes with it
        self._redraw()
        if compaction_id is not None:
            self.post_message(self.EntryPointed(compaction_id))

    def action_walk_past(self, step: int) -> None:
        """↓ selects the newest past compaction, then older ones; ↑ goes back up and off the list."""
        if self._timeline is None:
            return
        newest_first = [c.entry_id for c in reversed(self._timeline.compactions)]
        if not newest_first:
            return
        current = self.selected_compaction_id
        if current is None:
            if step > 0:
                self._select_past(newest_first[0])
            return
        index = newest_first.index(current) + step
        if index < 0:
            self._select_past(None)
        else:
            self._select_past(newest_first[min(index, len(newest_first) - 1)])

    # --- the mouse --------------------------------------------------------------------------

    def _target_at(self, event: MouseEvent) -> tuple[str, Any] | None:
        """What the mouse is on: ``("segment", index)``, ``("past", id)`` or ``("area", text)``."""
        offset = event.get_content_offset(self)
        if offset is None or not 0 <= offset.y < len(self._row_targets):
            return None
        target = self._row_targets[offset.y]
        if target is None:
            return None
        kind = target[0]
        if kind == "bar" and self._layout is not None:
            index = self._layout.segment_at(offset.x)
            if index is not None:
                return ("segment", index)
            area = self._area_text(offset.x)
            return ("area", area) if area else None
        if kind == "past":
            return target
        if kind == "chart":
            index = target[1].sample_at(offset.x)
            return ("sample", (target[1], index)) if index is not None else None
        return None

    def _area_text(self, column: int) -> str | None:
        """What a cell of the bar that is no entry shows: the overhead, free space, the reserve."""
        layout, timeline = self._layout, self._timeline
        if layout is None or timeline is None or not 0 <= column < layout.width:
            return None
        cell = layout.cells[column]
        threshold = threshold_text(timeline.what_if.threshold)
        return {
            FILL_OVERHEAD: f"system prompt, tools and what the provider adds: {format_tokens(timeline.overhead_tokens)} "
            "tokens (usage − the estimate of the messages)",
            FILL_FREE: f"free space up to the {threshold}",
            FILL_RESERVE: f"reserve: {format_tokens(timeline.what_if.reserve_tokens)} tokens above the threshold",
            FILL_STREAMING: f"the reply streaming now: +{format_tokens(self._streaming_tokens)} tokens",
        }.get(cell.left)

    def on_click(self, event: Click) -> None:
        target = self._target_at(event)
        if target is None:
            return
        event.stop()
        kind, value = target
        if kind == "segment":
            self.select_segment(value)
        elif kind == "sample":
            chart, index = value
            entry_id = chart.samples[index].entry_id
            self._selected = entry_id if self._segment_index(entry_id) is not None else None
            self.refresh_bindings()  # Esc (cancel / clear) comes and goes with it
            self._redraw()
            self.post_message(self.EntryPointed(entry_id))
        elif kind == "past":
            if value == self.selected_compaction_id:
                self.post_message(self.InspectRequested(value))  # a second click opens it
            else:
                self._select_past(value)

    def on_mouse_move(self, event: MouseMove) -> None:
        target = self._target_at(event)
        text: str | None = None
        if target is not None:
            kind, value = target
            if kind == "segment":
                text = self.describe_segment(value)
            elif kind == "sample":
                chart, index = value
                text = sample_text(chart.samples[index], chart.turn_of(index))
            elif kind == "past":
                past = {c.entry_id: c for c in self._timeline.compactions} if self._timeline else {}
                text = compaction_text(past[value]) if value in past else None
            else:
                text = value
        # Rich Text, never a str: Textual would parse a str tooltip as markup (a label "[/]" would raise).
        shown = self.tooltip.plain if isinstance(self.tooltip, Text) else None
        if text != shown:
            self.tooltip = Text(text) if text is not None else None

    def on_leave(self, event: Leave) -> None:
        self.tooltip = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_compaction":
            return self._compacting is not None or bool(self._selected or self._past_selected)
        if action == "walk_past":
            return self.expanded and bool(self._timeline and self._timeline.compactions)
        if action == "compact_now" and self.expanded and self.selected_compaction_id is not None:
            return True  # Enter inspects the selected past compaction (reading is fine read-only)
        if action in ("compact_now", "apply_to_session", "preview"):
            return not session_read_only(self.app)  # D5: no write action on a read-only session
        return True

    # --- rendering --------------------------------------------------------------------------

    def watch_expanded(self) -> None:
        self.refresh_bindings()  # Enter inspects a selected past compaction only in the panel
        self._redraw()
        self._fetch_figures()

    def _redraw(self) -> None:
        self._lines = None
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        budget = max(MIN_PANEL_ROWS + 3, viewport.height - SCREEN_ROWS_KEPT)
        if budget != self._budget:
            self._budget = budget
            self._lines = None
        return len(self._rows(width))

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        rows = self._rows(width)
        return rows[y] if y < len(rows) else Strip.blank(width, self.rich_style)

    def _rows(self, width: int) -> list[Strip]:
        if self._lines is None or self._lines[0] != width:
            self._lines = (width, self._build(width))
        return self._lines[1]

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"timeline--{name}")

    def _build(self, width: int) -> list[Strip]:
        base = self.rich_style
        width = max(1, width)
        timeline = self._timeline
        if timeline is None:
            # Filled once the session is open; on a big one that is a while after the first frame.
            text = BUILDING_TEXT if self.building else FAILED_TEXT if self._failed else "Loading the session…"
            empty = _text_strip([(text, self._style("muted"))], width, base)
            self._row_targets, self._layout = [], None
            return [Strip.blank(width, base), empty, Strip.blank(width, base)]
        layout = BarLayout(timeline, width, self._streaming_tokens, reuse=self._layout)
        self._layout = layout
        selected = self._segment_index(self._selected)
        rows: list[tuple[Strip, tuple[str, Any] | None]] = [
            (self._marker_row(layout, base), ("bar", None)),
            (self._bar_row(layout, selected), ("bar", None)),
            (self._status_row(timeline, width, base), None),
        ]
        if selected is not None:
            rows.append((self._pointer_row(selected, width, base), None))
        if self.expanded:
            budget = (self._budget or max(MIN_PANEL_ROWS + 3, self.app.size.height - SCREEN_ROWS_KEPT)) - len(
                rows
            )
            rows.extend(self._panel_rows(timeline, width, base, max(MIN_PANEL_ROWS, budget)))
        self._row_targets = [target for _strip, target in rows]
        return [strip for strip, _target in rows]

    def _pointer_row(self, index: int, width: int, base: Style) -> Strip:
        """The selected segment in words, with the keys that move it."""
        text = self.describe_segment(index)
        selected = self._style("selected")
        return _fitted(
            [
                [
                    ("▸", selected),
                    (f" {text}", self._style("title")),
                    ("  ← → walk · esc clear", self._style("muted")),
                ],
                [("▸", selected), (f" {text}", self._style("title"))],
            ],
            width,
            base,
        )

    def _bar_row(self, layout: BarLayout, selected: int | None = None) -> Strip:
        fills = {fill: self._style(fill) for fill in _FILLS}
        segments = []
        for cell in layout.cells:
            style = fills[cell.left]
            if cell.right is None:
                char = {REGION_SUMMARISED: "░", REGION_HEAD: "▒"}.get(cell.left, " ")
                segments.append(RichSegment(char, style))
            else:
                # The left region as the block's foreground over the right region's background.
                split = Style(color=style.bgcolor, bgcolor=fills[cell.right].bgcolor)
                segments.append(RichSegment(LEFT_EIGHTHS[cell.eighths], split))
        if selected is not None:
            style = self._style("selected")
            for column in layout.segment_columns(selected):
                segments[column] = RichSegment(" ", style)
        return Strip(segments, layout.width).simplify()

    def _marker_row(self, layout: BarLayout, base: Style) -> Strip:
        timeline = self._timeline
        assert timeline is not None
        what_if = timeline.what_if
        line = _Line(layout.width, base)
        # Marks first, each in its own cell; the labels then go where they cover none of them.
        span = what_if.keep_span
        start, end = layout.column(span.start), layout.column(span.end - 1)
        keep_style = self._style("keep")
        if end > start:
            line.put(start, "├", keep_style)
            line.put(start + 1, "─" * (end - start - 1), keep_style, _Line.DASH)
            line.put(end, "┤", keep_style)
        else:
            line.put(start, "│", keep_style)
        # A reserveTokens as large as the window leaves no threshold to mark (the status row says so).
        if 0 < timeline.threshold < layout.extent:
            line.put(layout.column(timeline.threshold), "┃", self._style("threshold"))
        if what_if.threshold != timeline.threshold and 0 < what_if.threshold < layout.extent:
            # The ghost threshold: where the what-if reserveTokens would put it.
            line.put(layout.column(what_if.threshold), GHOST_THRESHOLD, self._style("ghost"))
        window = layout.position(timeline.context_window)
        line.put(
            layout.column(timeline.context_window),
            "▕" if window >= layout.width else "▏",
            self._style("muted"),
        )
        if what_if.position is not None:
            line.put(layout.column(what_if.position), "◆", self._style("ghost"))
        if timeline.boundary_index is not None and timeline.boundary_id:
            column = layout.column(timeline.positions[timeline.boundary_index])
            line.put(column, "▼", self._style("boundary"))
            self._place_boundary_label(line, column, sanitize(timeline.boundary_id)[:12])
        if end > start:
            self._place_keep_label(line, start, end)
        return line.strip()

    def _place_boundary_label(self, line: _Line, column: int, label: str) -> None:
        """The boundary id right of ▼, else left of it, else shortened with an ellipsis."""
        style = self._style("boundary")
        for length in range(len(label), min(len(label), 4) - 1, -1):
            text = label if length == len(label) else label[: length - 1] + "…"
            if line.place(text, style, (column + 2, column - 1 - length)):
                return

    def _place_keep_label(self, line: _Line, start: int, end: int) -> None:
        """The bracket's budget inside it, nearest the middle and clear of the ◆, else just outside it."""
        timeline = self._timeline
        assert timeline is not None
        what_if = timeline.what_if
        if what_if.strategy == STRATEGY_HEAD_TAIL:
            text = f"tail {format_tokens(what_if.keep_span.keep_tokens)}"
        else:
            text = f"keep {format_tokens(what_if.keep_recent_tokens)}"
        inside = f" {text} "
        middle = start + (end - start + 1 - len(inside)) // 2
        # Inside, at least one dash must stay on either side of the label.
        columns = sorted(range(start + 2, end - len(inside)), key=lambda c: abs(c - middle))
        if not line.place(inside, self._style("keep"), columns, allowed=_Line.DASH):
            line.place(text, self._style("keep"), (start - 1 - len(text), end + 2))

    def _status_row(self, timeline: Timeline, width: int, base: Style) -> Strip:
        """Usage, threshold, streaming and the what-if, shortened part by part until the row fits."""
        muted, ghost = self._style("muted"), self._style("ghost")
        busy: list[tuple[str, Style]] = []
        if self._compacting is not None:
            reason, started = self._compacting
            elapsed = max(0.0, time.monotonic() - started)
            frame = SPINNER[int(elapsed * 10) % len(SPINNER)]
            text = f"{frame} compacting ({sanitize(reason)}) {elapsed:.1f}s · esc to cancel · "
            busy.append((text, self._style("busy")))
        if self.building and time.monotonic() - self._building_since >= BUILDING_NOTE_DELAY:
            busy.append((f"{BUILDING_TEXT} · ", self._style("busy")))
        estimated = "≈" if timeline.context_estimated else ""  # no usage since the compaction
        usage = (
            f"{estimated}{format_tokens(timeline.context_tokens)} / {format_tokens(timeline.context_window)} "
            f"({timeline.percent:.0f}%)",
            self._style("title"),
        )
        limit, short_limit = (threshold_text(timeline.what_if.threshold, short=s) for s in (False, True))
        streaming = format_tokens(self._streaming_tokens)
        long_ghost, medium_ghost, short_ghost = self._ghost_texts(timeline)

        def variant(threshold: str | None, stream: str | None, what_if: str) -> list[tuple[str, Style]]:
            parts = [*busy, usage]
            if threshold is not None:
                parts.append((threshold, muted))
            if stream is not None and self._streaming_tokens:
                parts.append((stream, muted))
            return [*parts, (what_if, ghost)]

        # Fullest first: the what-if's wording goes first, then the words of the threshold and the
        # streaming tail, then the threshold itself, then the tail.
        return _fitted(
            [
                variant(f" · {limit}", f" · +{streaming} streaming", long_ghost),
                variant(f" · {limit}", f" · +{streaming} streaming", medium_ghost),
                variant(f" · {limit}", f" · +{streaming} streaming", short_ghost),
                variant(f" · {short_limit}", f" · +{streaming} streaming", short_ghost),
                variant(f" · {short_limit}", f" · +{streaming}", short_ghost),
                variant(None, f" · +{streaming}", short_ghost),
                variant(None, None, short_ghost),
            ],
            width,
            base,
        )

    def _ghost_texts(self, timeline: Timeline) -> tuple[str, str, str]:
        """The what-if in words, in fewer words, and as ``◆ ≈−summarised/+kept``."""
        what_if = timeline.what_if
        prefix = " · ◆ "
        if self._what_if is not None:
            # The proposed keep/reserve, so a nudge shows its numbers even at 80 columns.
            prefix += f"{format_tokens(what_if.keep_recent_tokens)}/{format_tokens(what_if.reserve_tokens)}: "
        if what_if.strategy == STRATEGY_HEAD_TAIL:
            prefix += "head-tail: "
        if what_if.skip_message:
            return (prefix + "nothing to compact",) * 3
        summarise = format_tokens(what_if.summarise_tokens + what_if.turn_prefix_tokens)
        kept = format_tokens(what_if.kept_tokens)
        # The planner's figures are estimates (chars/4, scaled by the usage ratio when there is one).
        medium = f"summarise ≈{summarise}, keep ≈{kept}"
        long = f"{prefix}would {medium}"
        medium = prefix + medium
        short = f"{prefix}≈−{summarise}/+{kept}"
        if what_if.head_tokens:  # the protected head is the planner's estimate too
            head = format_tokens(what_if.head_tokens)
            long += f" + head ≈{head}"
            medium += f" + head ≈{head}"
            short += f" +head ≈{head}"
        return long, medium, short

    def _key_shown(self, binding_id: str) -> str:
        """The first key of this widget's binding ``binding_id`` as the footer shows it (``^t``), a
        ``[keymap]`` remap applied (Textual keeps the keymap on the app; it reaches the bindings lazily)."""
        keymap: dict[str, str] = getattr(self.app, "_keymap", {}) or {}
        for binding in self.BINDINGS:
            if isinstance(binding, Binding) and binding.id == binding_id:
                keys = keymap.get(binding_id, binding.key)
                return self.app.get_key_display(Binding(keys.split(",")[0].strip(), ""))
        return ""

    def _panel_rows(self, timeline: Timeline, width: int, base: Style, budget: int) -> list[Row]:
        """The panel below the strip, cut to ``budget`` rows (section by section, see :func:`_fit`)."""
        muted = self._style("muted")
        title = self._style("title")
        regions = timeline.region_tokens
        # Every region's size is an estimate (chars/4, scaled to the usage when there is one): ≈.
        items = [
            *(
                [(REGION_HEAD, "▒", f"head ≈{format_tokens(regions[REGION_HEAD])}")]
                if REGION_HEAD in regions
                else []
            ),
            (REGION_SUMMARISED, "░", f"summarised ≈{format_tokens(regions[REGION_SUMMARISED])}"),
            (REGION_SUMMARY, "█", f"summary ≈{format_tokens(regions[REGION_SUMMARY])}"),
            (REGION_KEPT, "█", f"kept ≈{format_tokens(regions[REGION_KEPT])}"),
            (REGION_AFTER, "█", f"after ≈{format_tokens(regions[REGION_AFTER])}"),
            (f"{REGION_AFTER}-tool", "█", "tool"),
        ]
        if timeline.overhead_tokens:
            items.append((FILL_OVERHEAD, "█", f"system ≈{format_tokens(timeline.overhead_tokens)}"))
        if pruned := timeline.pruned:
            saved = format_tokens(sum(s.saved for s in pruned))
            items.append((f"{REGION_AFTER}-tool", "█", f"{len(pruned)} pruned, ≈{saved} tokens saved"))
        legend: list[list[tuple[str, Style]]] = []
        for fill, glyph, text in items:
            style = self._style(fill)
            colour = style.color if fill in (REGION_SUMMARISED, REGION_HEAD) else style.bgcolor
            legend.append([(glyph, Style(color=colour)), (f" {text}  ", muted)])
        # What ≈ means is never cut off: a legend too wide for one row goes on two.
        approx = ("≈", self._style("title"))
        legends = [
            _wrap([*legend, [approx, (" estimate (chars/4), unmarked: provider usage", muted)]], width, base),
            _wrap([*legend, [approx, (" estimate, unmarked: usage", muted)]], width, base),
        ]
        legend_forms = [[(strip, None) for strip in rows] for rows in sorted(legends, key=len)[:1]]
        # What the threshold is compared with (B.5): kompakt adds an estimate of the messages after
        # the last reply to its usage, where pi compares the reply's usage alone; head-tail uses its estimate.
        if timeline.strategy == STRATEGY_HEAD_TAIL:
            checks = (" threshold (head-tail estimate)  ", " threshold  ")
        else:
            checks = (" threshold (last reply's usage + later messages)  ", " threshold: usage + later  ")
        moved = timeline.what_if.threshold != timeline.threshold and timeline.what_if.threshold > 0
        ghost_threshold = (
            [(GHOST_THRESHOLD, self._style("ghost")), (" what-if threshold  ", muted)] if moved else []
        )
        ghost_short = [(GHOST_THRESHOLD, self._style("ghost")), ("  ", muted)] if moved else []
        long_markers = [
            ("┃", self._style("threshold")),
            (checks[0], muted),
            ("▼", self._style("boundary")),
            (" boundary (firstKeptEntryId)  ", muted),
            ("◆", self._style("ghost")),
            (" what-if  ", muted),
            *ghost_threshold,
            ("├┤", self._style("keep")),
            (" keepRecentTokens", muted),
        ]
        short_markers = [
            ("┃", self._style("threshold")),
            (checks[1], muted),
            ("▼", self._style("boundary")),
            (" boundary  ", muted),
            ("◆", self._style("ghost")),
            (" what-if  ", muted),
            *ghost_short,
            ("├┤", self._style("keep")),
            (" keep", muted),
        ]
        markers = [long_markers, short_markers]

        what_if = timeline.what_if
        keep_text = f"{what_if.keep_recent_tokens:,}"
        if what_if.keep_span.keep_tokens != what_if.keep_recent_tokens:
            keep_text += f" (calibrated {what_if.keep_span.keep_tokens:,})"
        settings_row = [
            ("What-if (head-tail)  " if what_if.strategy == STRATEGY_HEAD_TAIL else "What-if  ", title),
            (f"keepRecentTokens {keep_text} · reserveTokens {what_if.reserve_tokens:,}", muted),
        ]
        if what_if.strategy == STRATEGY_HEAD_TAIL:
            settings_row[1] = (
                f"tail budget {what_if.keep_span.keep_tokens:,} · reserveTokens {what_if.reserve_tokens:,}",
                muted,
            )
        ghost = self._style("ghost")
        threshold_words = f"threshold {what_if.threshold:,}" if what_if.threshold > 0 else threshold_text(0)
        if what_if.skip_message:
            cut_row = [("◆ ", ghost), (f"{what_if.skip_message} · {threshold_words}", muted)]
            figures_row = []
        else:
            cut = f"first kept {sanitize(what_if.first_kept_entry_id or '')}"
            if what_if.is_split_turn:
                cut += f" · split turn from {sanitize(what_if.plan.turn_start_id or '')}"
            cut_row = [("◆ ", ghost), (f"{cut} · {threshold_words}", muted)]
            prefix = (
                f" + turn prefix ≈{format_tokens(what_if.turn_prefix_tokens)}"
                if what_if.is_split_turn
                else ""
            )
            if what_if.head_tokens:
                prefix += f" · copy head ≈{format_tokens(what_if.head_tokens)}"
            figures_row = [
                (
                    f"  summarise ≈{format_tokens(what_if.summarise_tokens)}{prefix}"
                    f" · keep ≈{format_tokens(what_if.kept_tokens)} · after ≈{format_tokens(what_if.tokens_after)}",
                    muted,
                )
            ]
        key = self._key_shown  # the keys as bound now (a [keymap] remap shows), not the old letters
        strategy, reset, jump = (
            key(f"timeline.{name}") for name in ("switch_strategy", "reset_what_if", "jump_boundary")
        )
        keys = f"+ - < > keep · [ ] {{ }} reserve · {strategy} strategy · {reset} reset"
        inspect = self.selected_compaction_id is not None
        enter_long, enter_short = (
            ("enter inspect", "⏎ inspect") if inspect else ("enter compact now", "⏎ compact")
        )
        keys_rows = [
            [(f"{keys} · {enter_long} · {jump} go to ▼ · ← → segments · ↓ ↑ compactions", muted)],
            [(f"{keys} · {enter_long} · {jump} go to ▼", muted)],
            [(f"{keys} · {enter_short} · {jump} ▼", muted)],
        ]
        one: Callable[[Strip], list[Row]] = lambda strip: [(strip, None)]  # noqa: E731
        breakdown = self._breakdown_rows(width, base)
        breakdown_line = self._breakdown_line(width, base)
        chart = [self._chart_rows(timeline, width, base, height) for height in (3, 2, 1)]
        past = [self._past_rows(timeline, width, base, limit) for limit in (PAST_ROWS, 2, 1)]
        sections: dict[str, list[list[Row]]] = {
            "legend": [*legend_forms, []],
            "markers": [one(_fitted(markers, width, base)), []],
            "settings": [one(_text_strip(settings_row, width, base)), []],
            "cut": [one(_text_strip(cut_row, width, base)), []],
            "figures": [one(_text_strip(figures_row, width, base)), []],
            "keys": [one(_fitted(keys_rows, width, base)), []],
            "breakdown": [breakdown, breakdown_line, []] if breakdown else [[]],
            "chart": [*chart, []] if chart[0] else [[]],
            "past": past,
        }
        return _fit(sections, budget)

    def context_samples(self) -> list[Sample]:
        """Each reply's context size and each compaction on the path (the chart's points), once per path."""
        if self._samples is None:
            if self._long_path or self._timeline is None:
                return []  # a long path's come from the worker (_fetch_figures)
            self._samples = samples_of(self._timeline, self._path)
        return self._samples

    def context_breakdown(self) -> ContextBreakdown | None:
        """The context by category from :attr:`breakdown_source`, once per path (None without a source)."""
        if self._breakdown is None:
            if self._long_path:
                return None  # a long path's comes from the worker (_fetch_figures)
            self._breakdown = (self.breakdown_source() if self.breakdown_source is not None else None,)
        return self._breakdown[0]

    def _chart_rows(self, timeline: Timeline, width: int, base: Style, height: int) -> list[Row]:
        """A title and ``height`` rows of the context size over the turns (:class:`ContextChart`)."""
        samples = self.context_samples()
        if not samples:
            return []
        # The dotted line follows a what-if reserveTokens, as the bar's ghost threshold does (QA, D3).
        line = timeline.what_if.threshold
        chart = ContextChart(samples, width, height, timeline.context_window, line)
        muted = self._style("muted")
        colours = {
            FILL_MEASURED: self._style("chart"),
            FILL_ESTIMATED: Style(color=muted.color),
            FILL_COMPACTION: Style(color=self._style("summary").bgcolor),
            FILL_OVER: self._style("threshold"),
            FILL_THRESHOLD: self._style("threshold"),
        }
        replies = sum(1 for sample in samples if sample.kind == "reply")
        peak = max(sample.tokens for sample in samples)
        limit = threshold_text(line)
        if line != timeline.threshold:
            limit += " what-if"  # the saved one is on the bar (┃)
        # A sample past the chart's scale is cut at the top (marked ↑): say so beside the peak.
        cut = f" ({CLIPPED_MARK} clipped)" if chart.clipped else ""
        title = self._style("title")
        heading = f"Context over {replies} replies"
        key = [
            ("  █", colours[FILL_MEASURED]),
            (" measured ", muted),
            ("█", colours[FILL_ESTIMATED]),
            (" estimated ", muted),
            ("█", colours[FILL_COMPACTION]),
            (" compaction ", muted),
            ("┈", colours[FILL_THRESHOLD]),
            (f" {limit} · peak {format_tokens(peak)}{cut} of {format_tokens(chart.top)}", muted),
        ]
        rows: list[Row] = [
            (
                _fitted(
                    [
                        [(heading, title), *key],
                        [(heading, title), (f" · peak {format_tokens(peak)}{cut}", muted)],
                    ],
                    width,
                    base,
                ),
                None,
            )
        ]
        for y in range(height):
            cells = chart.row(y)
            strip = Strip([RichSegment(char, colours.get(fill, base)) for char, fill in cells], width)
            rows.append((strip.simplify().crop_extend(0, width, base), ("chart", chart)))
        return rows

    def _breakdown_rows(self, width: int, base: Style) -> list[Row]:
        """The context by category (``kompakt context --breakdown``), as many rows as it needs."""
        breakdown = self.context_breakdown()
        if breakdown is None:
            return []
        muted, title = self._style("muted"), self._style("title")
        how = "usage + estimate" if breakdown.measured else "estimate"
        if breakdown.usage_estimated:
            how = "≈ offline usage + estimate"  # the offline model's usage is its own guess
        items: list[list[tuple[str, Style]]] = [
            [("Context by category ", title), (f"({how}, {format_tokens(breakdown.total)}): ", muted)]
        ]
        for category in breakdown.rows():
            note = "" if category.counted or category.name in ("free space", "reserve") else " (not counted)"
            items.append(
                [(f"{category.label}{note} ", muted), (format_tokens(category.tokens), title), ("  ", muted)]
            )
        return [(strip, None) for strip in _wrap(items, width, base)]

    def _breakdown_line(self, width: int, base: Style) -> list[Row]:
        """The breakdown on one row: the largest categories first, as many as fit, then free space."""
        breakdown = self.context_breakdown()
        if breakdown is None:
            return []
        muted, title = self._style("muted"), self._style("title")
        largest = sorted(
            (c for c in breakdown.categories if c.counted and c.tokens > 0), key=lambda c: -c.tokens
        )
        tail = [(" · free ", muted), (format_tokens(breakdown.free_tokens), title)]
        head = [("Context ", title)]
        variants = []
        for count in range(len(largest), -1, -1):
            parts = list(head)
            for i, category in enumerate(largest[:count]):
                parts += [
                    (" · " if i else "", muted),
                    (f"{category.name} ", muted),
                    (format_tokens(category.tokens), title),
                ]
            if count < len(largest):
                parts.append((f" · +{len(largest) - count} more", muted))
            variants.append(parts + tail)
        return [(_fitted(variants, width, base), None)]

    def _past_rows(self, timeline: Timeline, width: int, base: Style, limit: int = PAST_ROWS) -> list[Row]:
        """The past compactions, newest first: at most ``limit``, scrolled to the selected one (the title
        says how many are out of view, so the rows never exceed ``limit`` + 1)."""
        muted, title = self._style("muted"), self._style("title")
        newest_first = list(reversed(timeline.compactions))
        selected = self.selected_compaction_id
        at = next((i for i, c in enumerate(newest_first) if c.entry_id == selected), 0)
        first = max(0, at - limit + 1)
        older = max(0, len(newest_first) - first - limit)
        hidden = [f"{first} newer" if first else "", f"{older} older" if older else ""]
        more = f" · {' · '.join(h for h in hidden if h)} not shown" if any(hidden) else ""
        heading = f"Past compactions ({len(newest_first)}), newest first"
        rows: list[Row] = [(_text_strip([(heading, title), (more, muted)], width, base), None)]
        if not newest_first:
            rows.append((_text_strip([("  none on this path", muted)], width, base), None))
            return rows
        for compaction in newest_first[first : first + limit]:
            after = ("" if compaction.tokens_after_measured else "≈") + format_tokens(compaction.tokens_after)
            before = ("≈" if compaction.tokens_before_measured is False else "") + format_tokens(
                compaction.tokens_before
            )
            duration = f"  {compaction.duration_ms / 1000:.1f}s" if compaction.duration_ms is not None else ""
            chosen = compaction.entry_id == selected
            rows.append(
                (
                    _text_strip(
                        [
                            ("▸ " if chosen else "  ", self._style("selected") if chosen else muted),
                            (f"{_short_time(compaction.timestamp)}  ", muted),
                            (sanitize(compaction.entry_id)[:12], self._style("boundary")),
                            (f"  {before} → {after}  ", title),
                            (
                                f"{compaction.reason}{duration}  ▼ {sanitize(compaction.first_kept_entry_id)[:12]}",
                                muted,
                            ),
                            (f"  {sanitize(compaction.method)}" if compaction.method else "", muted),
                            (
                                f"  ⚠ {sanitize(compaction.warning)}" if compaction.warning else "",
                                self._style("threshold"),
                            ),
                        ],
                        width,
                        base,
                    ),
                    ("past", compaction.entry_id),
                )
            )
        return rows
