"""The ``kompakt`` command: the TUI by default, and headless subcommands over the same core functions.

``tree``, ``context``, ``plan`` and ``stats`` read a session file and print rich text, or JSON with
``--json``; ``export`` writes it as HTML or Markdown. User errors are one clear line on stderr and a
non-zero exit, never a traceback. Textual is imported only when the TUI is asked for.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from tui.session.display import flat
from tui.session.errors import SessionError
from tui.session.sanitize import BIDI_CONTROLS, sanitize
from tui.session.store import SessionStore

EXIT_USER_ERROR = 2


class UserError(Exception):
    """A problem the user can fix; printed as one line."""


# orjson escapes C0 controls but writes C1 controls, bidi controls and line separators as UTF-8: a
# terminal showing the JSON would act on them. As \\u escapes they are still the same JSON strings.
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{BIDI_CONTROLS}\u2028\u2029]")


def json_text(value: Any) -> str:
    """``value`` as indented JSON whose text holds no character a terminal would act on."""
    text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
    return _JSON_UNSAFE.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _dump_json(value: Any) -> None:
    sys.stdout.write(json_text(value) + "\n")
    sys.stdout.flush()


def _warn(message: str) -> None:
    """One line on stderr; it may quote a file name or session text, so it is sanitised (and a carriage
    return in it does not start a line)."""
    print(f"kompakt: {sanitize(message.replace(chr(13), ' '))}", file=sys.stderr)


def _say(message: object) -> None:
    """A line of output that may hold session text or a path: sanitised."""
    print(sanitize(str(message)))


def _console():  # rich is light; import only when printing
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def open_session(path: str) -> SessionStore:
    store = SessionStore.open(Path(path), read_only=True)
    for problem in store.problems:
        _warn(f"warning: {path}: {problem} (skipped)")
    return store


def _leaf(store: SessionStore, leaf: str | None) -> str | None:
    if leaf is None:
        return store.leaf_id
    store.get(leaf)
    return leaf


# --- tree ------------------------------------------------------------------------------------
_ROW_STYLES = {
    "user": "cyan",
    "assistant": "yellow",
    "tool": "bright_black",
    "summary": "magenta",
    "compaction": "bold magenta",
    "meta": "bright_black",
}


# --json rows carry the full prefix width as "indent" and at most this many characters of the prefix.
JSON_PREFIX_COLUMNS = 120


def _painter(console: Any) -> Callable[[str, str], str]:
    """``paint(text, style)``: the text with the escape codes rich's console would give it."""
    from rich.style import Style

    system, no_color = console._color_system, console.no_color
    styles: dict[str, Any] = {}

    def paint(text: str, style: str) -> str:
        if not text or not style or system is None:
            return text
        rich_style = styles.get(style)
        if rich_style is None:
            rich_style = Style.parse(style)
            rich_style = styles[style] = rich_style.without_color if no_color else rich_style
        return rich_style.render(text, color_system=system)

    return paint


def _crop_pieces(paint: Callable[[str, str], str], width: int, pieces: list[tuple[str, str]]) -> str:
    """Styled pieces on one line, cut at ``width`` cells (rich's ``crop=True``)."""
    from rich.cells import cell_len, set_cell_size

    out, used = [], 0
    for text, style in pieces:
        if not text:
            continue
        size = cell_len(text)
        if used + size > width:
            text = set_cell_size(text, width - used) if width > used else ""
            out.append(paint(text, style))
            break
        out.append(paint(text, style))
        used += size
    return "".join(out)


def _tree_line(paint: Callable[[str, str], str], width: int, row: Any, prefix: str) -> str:
    from rich.cells import cell_len, set_cell_size

    pieces = [(prefix, "bright_black")]
    if row.on_active_path:
        pieces.append(("• ", "green"))
    if row.label:
        pieces.append((f"[{flat(sanitize(row.label))}] ", "yellow"))
    suffix = "  ← active" if row.is_leaf else ""
    body = flat(sanitize(row.text))  # one line per row
    # Crop the entry text, not the markers, to the terminal width.
    room = max(8, width - sum(cell_len(t) for t, _ in pieces) - cell_len(suffix))
    if cell_len(body) > room:
        body = set_cell_size(body, room - 1) + "…"
    pieces.append((body, _ROW_STYLES.get(row.kind, "")))
    pieces.append((suffix, "bold green"))
    return _crop_pieces(paint, width, pieces)


def cmd_tree(args: argparse.Namespace) -> int:
    from tui.session.tree_view import TEXT_COLUMNS, render_tree

    store = open_session(args.file)
    leaf = _leaf(store, args.leaf)
    rows = render_tree(store.tree, leaf, args.filter, args.query or "")
    if args.json:
        _dump_json(
            [
                {
                    "id": r.entry_id,
                    "prefix": r.shown_prefix(JSON_PREFIX_COLUMNS),
                    "indent": r.width,
                    "text": r.text,
                    "label": r.label,
                    "labelTimestamp": r.label_time,
                    "active": r.on_active_path,
                    "leaf": r.is_leaf,
                    "kind": r.kind,
                }
                for r in rows
            ]
        )
        return 0
    console = _console()
    # A deep tree's prefix is wider than any terminal: its left end is elided, so each row costs the
    # terminal's width and not the tree's depth.
    width = console.width  # asks the terminal each time it is read
    prefix_columns = max(8, width - TEXT_COLUMNS)
    paint = _painter(console)
    out = [_tree_line(paint, width, row, row.shown_prefix(prefix_columns)) for row in rows]
    out.append(_crop_pieces(paint, width, [(f"({len(rows)} rows)", "bright_black")]))
    # Written at once, styled as rich would: rich's per-row Text and print took most of the command's time.
    console.file.write("\n".join(out) + "\n")
    console.file.flush()
    return 0


# --- context ---------------------------------------------------------------------------------
def cmd_context(args: argparse.Namespace) -> int:
    from tui.compaction.context_size import path_context
    from tui.compaction.tokens import estimate_tokens
    from tui.session.context import convert_to_llm, message_text

    store = open_session(args.file)
    leaf = _leaf(store, args.leaf)
    if args.breakdown:
        return _print_breakdown(store, leaf, args)
    sized = path_context(store.get_branch(leaf))
    ctx, estimate = sized.context, sized.estimate
    llm = convert_to_llm(ctx.messages)
    if args.json:
        _dump_json(
            {
                "leafId": leaf,
                "model": ctx.model,
                "thinkingLevel": ctx.thinking_level,
                "messages": [
                    {"role": m.get("role"), "text": _llm_text(m), "tokens": estimate_tokens(m)} for m in llm
                ],
                # The context messages before conversion, with the entry each comes from.
                "entries": [
                    {"role": m.get("role"), "entryId": entry_id, "tokens": estimate_tokens(m)}
                    for m, entry_id in zip(ctx.messages, ctx.entry_ids, strict=True)
                ],
                "estimate": {
                    "tokens": estimate.tokens,
                    "usageTokens": estimate.usage_tokens,
                    "trailingTokens": estimate.trailing_tokens,
                    "lastUsageIndex": estimate.last_usage_index,
                },
            }
        )
        return 0
    from rich.text import Text

    console = _console()
    for message in llm:
        role = str(message.get("role"))
        text = sanitize(_llm_text(message) or message_text(message))
        console.print(Text(f"── {sanitize(role)} ", style=_ROW_STYLES.get(role, "bold")))
        console.print(Text(text[:2000] + ("…" if len(text) > 2000 else "")))
    console.print(
        Text(
            f"{len(llm)} messages, ≈{estimate.tokens:,} tokens "
            f"(usage {estimate.usage_tokens:,} + estimate {estimate.trailing_tokens:,})",
            style="bold",
        )
    )
    return 0


def _print_breakdown(store: SessionStore, leaf: str | None, args: argparse.Namespace) -> int:
    """``context --breakdown``: the context by category, with free space and the reserve."""
    from rich.text import Text

    from tui.agent.session import system_prompt, tool_definitions
    from tui.agent.tools import default_tools
    from tui.compaction.breakdown import context_breakdown
    from tui.plain_table import PlainTable

    path = store.get_branch(leaf)
    # The same settings, model and window as plan, compact and the TUI (--reserve-tokens overrides).
    settings, sources = effective_settings(args, store)
    reserve = settings.compaction.reserve_tokens
    model, _ = resolve_model_source(settings, sources)
    window, window_source = resolve_context_window(args.context_window, settings, model)
    workspace = Path(str(store.header.get("cwd") or "."))
    breakdown = context_breakdown(
        path,
        context_window=window,
        reserve_tokens=reserve,
        system_prompt=system_prompt(workspace),
        tool_definitions=tool_definitions(default_tools()),
    )
    if args.json:
        _dump_json({"leafId": leaf, "contextWindowSource": window_source, **breakdown.to_json()})
        return 0
    table = PlainTable(box=None, pad_edge=False)
    table.add_column("category", style="bold")
    table.add_column("tokens", justify="right")
    table.add_column("of window", justify="right")
    for row in breakdown.rows():
        share = f"{row.tokens / window * 100:.1f} %" if window else ""
        name = (
            row.label
            if row.counted or row.name in ("free space", "reserve")
            else f"{row.label} (not counted)"
        )
        table.add_row(name, f"{row.tokens:,}", share)
    console = _console()
    console.print(table)
    how = "usage of the last reply + estimate" if breakdown.measured else "estimate (no reply reported usage)"
    if breakdown.usage_estimated:
        how = "estimate (the offline model's usage of the last reply, its own guess, + estimate)"
    console.print(
        Text(
            f"context ≈{breakdown.total:,} of {window:,} tokens ({window_source}); {how}; "
            f"threshold {breakdown.threshold:,}",
            style="bold",
        )
    )
    return 0


def _llm_text(message: dict[str, Any]) -> str:
    from tui.session.display import content_text, tool_call_label

    parts = [content_text(message.get("content"))]
    if message.get("role") == "assistant":
        parts += [
            tool_call_label(b.get("name", ""), b.get("arguments"))
            for b in message.get("content") or ()
            if isinstance(b, dict) and b.get("type") == "toolCall"
        ]
    return "\n".join(p for p in parts if p)


# --- settings shared by plan and compact ---------------------------------------------------
# The flags that override a [compaction] setting: (argparse dest, settings field, dotted key).
_COMPACTION_FLAGS = (
    ("keep_recent_tokens", "keep_recent_tokens", "compaction.keepRecentTokens"),
    ("reserve_tokens", "reserve_tokens", "compaction.reserveTokens"),
    ("calibrate", "calibrate", "compaction.calibrate"),
    ("strategy", "strategy", "compaction.strategy"),
)


def effective_settings(
    args: argparse.Namespace, store: SessionStore | None = None, *, flags: bool = True
) -> tuple[Any, dict[str, str]]:
    """The settings ``compact`` and the TUI use: the defaults, the user file, the project file and the
    environment, then the session's own values ("Apply to this session", when ``store`` is given),
    then this command's flags (``flags=False`` leaves them out); and where each value came from."""
    from tui.agent.session_settings import apply_overrides, read_overrides
    from tui.config import SettingsError, load_default_settings
    from tui.config.loader import value_sources

    try:
        loaded = load_default_settings()
    except SettingsError as exc:
        raise UserError(exc.listing()) from None
    for line in loaded.notices:
        print(f"kompakt: notice: {line}", file=sys.stderr)
    settings = loaded.settings
    sources = {key: str(source) for key, source in value_sources(loaded).items()}
    if store is not None:
        overrides = read_overrides(store.entries)
        if overrides.problem:
            print(
                f"kompakt: warning: session settings entry {overrides.entry_id} ignored: {overrides.problem}",
                file=sys.stderr,
            )
        settings = apply_overrides(settings, overrides)
        sources |= {key: f"session (entry {overrides.entry_id})" for key in overrides.dotted()}
    updates = compaction_flags(args) if flags else {}
    for dest, name, key in _COMPACTION_FLAGS:
        if name in updates:
            sources[key] = "--" + dest.replace("_", "-")
    if updates:
        settings = settings.model_copy(update={"compaction": settings.compaction.model_copy(update=updates)})
    if getattr(args, "model", None):
        # The model asked for on the command line writes the summary, whatever summaryModel says.
        settings = settings.model_copy(update={"model": args.model, "summary_model": args.model})
        sources["model"] = "--model"
    return settings, sources


def compaction_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The [compaction] values given as flags (settings field names)."""
    values = {name: getattr(args, dest, None) for dest, name, _ in _COMPACTION_FLAGS}
    return {name: value for name, value in values.items() if value is not None}


def _model_overrides(settings: Any) -> dict[str, dict[str, Any]]:
    return {name: o.model_dump(by_alias=True, exclude_none=True) for name, o in settings.models.items()}


def resolve_model_source(settings: Any, sources: dict[str, str]) -> tuple[str, str]:
    """The model ``compact`` and the TUI would use, and why: the setting, a provider key, or offline."""
    from tui.agent.offline import DEFAULT_MODELS, resolve_model

    model, offline = resolve_model(settings.model)
    if settings.model and settings.model.strip():
        return model, sources.get("model", "settings")
    if offline:
        return model, "no model setting and no provider key: the offline model"
    key = next(var for var, default in DEFAULT_MODELS if default == model and os.environ.get(var))
    return model, f"no model setting: the default for {key}"


def resolve_context_window(explicit: int | None, settings: Any, model: str) -> tuple[int, str]:
    """``(window, where it came from)`` for ``model``, as ``compact`` and the TUI size it."""
    from tui.agent import model_info

    if explicit:
        return explicit, "--context-window"
    overrides = _model_overrides(settings)
    return model_info.context_window(model, overrides), model_info.context_window_source(model, overrides)


# --- plan ------------------------------------------------------------------------------------
def cmd_plan(args: argparse.Namespace) -> int:
    from tui.compaction.context_size import context_size
    from tui.compaction.engine import prepare_session_compaction, trigger_check
    from tui.compaction.head_tail import HeadTailPlan
    from tui.compaction.plan import CompactionPlan

    store = open_session(args.file)
    settings, sources = effective_settings(args, store)
    config = settings.compaction
    leaf = _leaf(store, args.leaf)
    path = store.get_branch(leaf)
    model, model_source = resolve_model_source(settings, sources)
    window, window_source = resolve_context_window(args.context_window, settings, model)
    if config.reserve_tokens >= window:
        raise UserError(
            f"reserveTokens {config.reserve_tokens:,} ({sources['compaction.reserveTokens']}) leaves no room "
            f"in the {window:,}-token context window ({window_source})"
        )
    prepared = prepare_session_compaction(path, settings, window, prune=not args.no_prune)
    plan, pruning = prepared.plan, prepared.prune
    # The agent's threshold test: on the pruned path, the usage minus what the prune saved (omp).
    check = trigger_check(prepared.planned_path, settings, window, context_size(prepared.planned_path).tokens)
    limit, context_tokens, crossed, measure = check.threshold, check.tokens, check.crossed, check.measure
    result = {
        **plan.to_json(),
        "leafId": leaf,
        "model": model,
        "modelSource": model_source,
        "strategy": config.strategy,
        "calibrate": config.calibrate,
        "contextWindow": window,
        "contextWindowSource": window_source,
        "settingsSources": {key: sources[key] for _, _, key in _COMPACTION_FLAGS},
        "threshold": limit,
        "contextTokens": context_tokens,
        "contextTokensMeasure": measure,
        "thresholdCrossed": crossed,
        "pruning": pruning.to_json(),
    }
    if args.json:
        _dump_json(result)
        return 0
    from rich.text import Text

    from tui.plain_table import key_value_table

    console = _console()
    table = key_value_table()
    table.add_row("model", f"{model} ({model_source})")
    table.add_row("context", f"{context_tokens:,} / {window:,} tokens ({measure}; window: {window_source})")
    said = "crossed" if crossed else "not crossed"
    reserve = f"reserve {config.reserve_tokens:,} from {sources['compaction.reserveTokens']}"
    rule = (
        f"head-tail's trigger, window − {reserve}"
        if measure == "head-tail estimate"
        else f"window − {reserve}"
    )
    table.add_row("threshold", f"{limit:,} ({rule}): {said}")
    table.add_row("strategy", f"{config.strategy} ({sources['compaction.strategy']})")
    if isinstance(plan, CompactionPlan):
        table.add_row("firstKeptEntryId", plan.first_kept_entry_id)
        split = f"yes (turn starts at {plan.turn_start_id})" if plan.is_split_turn else "no"
        table.add_row("split turn", split)
        table.add_row("tokensBefore", f"{plan.tokens_before:,}")
        keep = f"{plan.keep_recent_tokens:,}"
        if plan.calibration_ratio and plan.keep_recent_tokens != plan.requested_keep_recent_tokens:
            keep += f" (calibrated from {plan.requested_keep_recent_tokens:,}, ratio {plan.calibration_ratio:.3f})"
        keep += f"; from {sources['compaction.keepRecentTokens']}"
        table.add_row("keepRecentTokens", keep)
        table.add_row(
            "summarise", f"{len(plan.summarize_entry_ids)} messages, ≈{plan.summarized_tokens:,} tokens"
        )
        if plan.is_split_turn:
            table.add_row(
                "turn prefix",
                f"{len(plan.turn_prefix_entry_ids)} messages, ≈{plan.turn_prefix_tokens:,} tokens",
            )
        table.add_row("keep", f"{len(plan.kept_entry_ids)} messages, ≈{plan.kept_tokens:,} tokens")
        table.add_row("files", f"read {len(result['readFiles'])}, modified {len(result['modifiedFiles'])}")
    elif isinstance(plan, HeadTailPlan):
        table.add_row("firstKeptEntryId", plan.first_kept_entry_id)
        table.add_row("tokensBefore", f"{plan.tokens_before:,}")
        table.add_row(
            "head",
            f"{len(plan.head_entry_ids)} messages, ≈{plan.head_tokens:,} tokens (reproduced in the summary)",
        )
        if plan.pinned_entry_ids:
            table.add_row("pinned", f"latest request {plan.pinned_entry_ids[0]} (reproduced in the summary)")
        table.add_row(
            "summarise", f"{len(plan.summarize_entry_ids)} messages, ≈{plan.summarized_tokens:,} tokens"
        )
        table.add_row("keep", f"{len(plan.kept_entry_ids)} messages, ≈{plan.kept_tokens:,} tokens")
    else:
        table.add_row("plan", Text(plan.message, style="yellow"))
    prune = (
        f"{len(pruning.entries)} tool outputs, saves ≈{pruning.tokens_saved:,} tokens"
        if pruning
        else "nothing"
    )
    table.add_row("pruning", prune)
    console.print(table)
    return 0


# --- stats -----------------------------------------------------------------------------------
def session_stats(store: SessionStore) -> dict[str, Any]:
    from tui.compaction.context_size import path_context

    by_type = Counter(str(e.get("type")) for e in store.entries)
    roles = Counter(
        str((e.get("message") or {}).get("role")) for e in store.entries if e.get("type") == "message"
    )
    path = store.get_branch()
    sized = path_context(path)
    return {
        "file": str(store.path),
        "sessionId": store.session_id,
        "name": store.name,
        "version": store.header.get("version"),
        "bytes": store.path.stat().st_size,
        "entries": len(store.entries),
        "byType": dict(by_type.most_common()),
        "roles": dict(roles.most_common()),
        "branchPoints": len(store.tree.branch_points()),
        "leaves": len(store.tree.leaves()),
        "compactions": by_type.get("compaction", 0),
        "branchSummaries": by_type.get("branch_summary", 0),
        "leafId": store.leaf_id,
        "activePathEntries": len(path),
        "contextMessages": len(sized.context.messages),
        "contextTokens": sized.estimate.tokens,
        "problems": [str(p) for p in store.problems],
    }


def cmd_stats(args: argparse.Namespace) -> int:
    store = open_session(args.file)
    stats = session_stats(store)
    if args.json:
        _dump_json(stats)
        return 0
    from tui.plain_table import key_value_table

    table = key_value_table()
    for key in (
        "file",
        "sessionId",
        "name",
        "version",
        "bytes",
        "entries",
        "branchPoints",
        "leaves",
        "compactions",
        "branchSummaries",
        "leafId",
        "activePathEntries",
        "contextMessages",
        "contextTokens",
    ):
        value = stats[key]
        if value is None:  # an unnamed session, an empty one's leaf: words, not Python's None
            text = "(unnamed)" if key == "name" else "(none)"
        else:
            text = f"{value:,}" if isinstance(value, int) and key != "version" else str(value)
        table.add_row(key, text)
    table.add_row("byType", ", ".join(f"{k} {v}" for k, v in stats["byType"].items()))
    table.add_row("roles", ", ".join(f"{k} {v}" for k, v in stats["roles"].items()))
    _console().print(table)
    return 0


# --- export --------------------------------------------------------------------------------
def cmd_export(args: argparse.Namespace) -> int:
    from tui.export import export_session, render_export

    store = open_session(args.file)
    leaf = _leaf(store, args.leaf)
    if args.jsonl:
        return _export_jsonl(store, args, leaf)
    fmt = "html" if args.html else "md"
    if args.output == "-":
        sys.stdout.write(render_export(store, fmt, leaf, args.all_branches))
        sys.stdout.flush()
        return 0
    try:
        written = export_session(
            store, fmt, Path(args.output) if args.output else None, leaf, args.all_branches
        )
    except OSError as exc:
        raise UserError(f"cannot write the export: {exc}") from None
    _say(written)
    return 0


def _export_jsonl(store: SessionStore, args: argparse.Namespace, leaf: str | None) -> int:
    """The branch as a pi session file, as pi's ``/export file.jsonl`` writes it."""
    from tui.session.branching import branch_jsonl_entries, export_branch_jsonl
    from tui.session.store import encode_entry

    if args.all_branches:
        raise UserError("--jsonl writes one branch (pi's format); --all-branches does not apply")
    if args.output == "-":
        # Escaped for a terminal like --json; the lines are the same JSON values.
        lines = (encode_entry(e).decode("utf-8") for e in branch_jsonl_entries(store, leaf))
        sys.stdout.write("".join(_JSON_UNSAFE.sub(_json_escape, line) for line in lines))
        sys.stdout.flush()
        return 0
    try:
        written = export_branch_jsonl(store, Path(args.output) if args.output else None, leaf)
    except OSError as exc:
        raise UserError(f"cannot write the export: {exc}") from None
    _say(written)
    return 0


# --- inspect -------------------------------------------------------------------------------
def cmd_trust(args: argparse.Namespace) -> int:
    """Trust the project settings file of the current directory as it is now (an edit asks again)."""
    from tui.config import SettingsError, load_default_settings

    try:
        loaded = load_default_settings()
    except SettingsError as exc:
        raise UserError(exc.listing()) from None
    project, digest = loaded.project_file, loaded.project_hash
    if project is None or digest is None:
        print("No project settings file here (./.kompakt/settings.toml): nothing to trust.")
        return 0
    shown = sanitize(str(project))
    if not loaded.withheld:
        print(f"{shown}: nothing is held back (it sets no key that needs trust, or it is trusted).")
        return 0
    if args.show:
        print(f"{shown}: held back until trusted: {', '.join(loaded.withheld)}")
        return 0
    loaded.trust_project()
    print(f"{shown}: trusted as it is now; it may set {', '.join(loaded.withheld)}.")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from rich.text import Text

    from tui.compaction.inspect import NotACompaction, compactions_on, inspect_compaction
    from tui.plain_table import key_value_table

    store = open_session(args.file)
    if args.id is not None:
        store.get(args.id)
        path = store.get_branch(args.id)
    else:
        path = store.get_branch(_leaf(store, args.leaf))
    ids = compactions_on(path)
    if not ids:
        raise UserError("no compaction on this path")
    try:
        inspection = inspect_compaction(path, args.id or ids[-1])
    except NotACompaction as exc:
        raise UserError(str(exc)) from None
    if args.json:
        _dump_json(inspection.to_json())
        return 0
    facts = inspection.facts

    def measured(flag: bool | None) -> str:
        return "unknown" if flag is None else "measured" if flag else "estimated"

    console = _console()
    table = key_value_table()
    table.add_row("compaction", inspection.compaction_id)
    table.add_row(
        "tokens",
        f"{facts.tokens_before:,} ({measured(facts.tokens_before_measured)}) → "
        f"{facts.tokens_after:,} ({measured(facts.tokens_after_measured)})",
    )
    for key, value in (
        ("reason", facts.reason),
        ("model", facts.model),
        ("summary source", facts.summary_source),
        ("duration", None if facts.duration_ms is None else f"{facts.duration_ms / 1000:.1f} s"),
        ("cost", None if facts.cost_usd is None else f"${facts.cost_usd:.4f}"),
        ("keepRecentTokens", facts.keep_recent_tokens),
        ("reserveTokens", facts.reserve_tokens),
        ("strategy", facts.strategy),
    ):
        table.add_row(
            key, "unknown" if value is None else f"{value:,}" if isinstance(value, int) else str(value)
        )
    table.add_row(
        "summarised", f"{len(inspection.summarised)} messages, ≈{inspection.summarised_tokens:,} tokens"
    )
    if inspection.protected:
        table.add_row(
            "protected head",
            f"{len(inspection.protected)} messages, ≈{inspection.protected_tokens:,} tokens (copied into the summary)",
        )
    table.add_row("kept", f"{len(inspection.kept)} messages, ≈{inspection.kept_tokens:,} tokens")
    table.add_row("firstKeptEntryId", str(inspection.first_kept_entry_id))
    console.print(table)
    parts = [("summarised", inspection.summarised), ("kept", inspection.kept)]
    if inspection.protected:
        parts.insert(0, ("protected head (copied into the summary)", inspection.protected))
    for title, rows in parts:
        console.print(Text(f"── {title}", style="bold magenta"))
        for row in rows:
            line = Text(f"{sanitize(row.entry_id)}  {row.tokens:>7,}  ", style="bright_black")
            line.append(flat(sanitize(row.text)))
            line.truncate(max(20, console.width), overflow="ellipsis")
            console.print(line, no_wrap=True, crop=True)
    console.print(Text("── summary", style="bold magenta"))
    console.print(Text(sanitize(inspection.summary)))
    return 0


# --- uncompact -----------------------------------------------------------------------------
def cmd_uncompact(args: argparse.Namespace) -> int:
    from tui.compaction.inspect import NotACompaction
    from tui.compaction.undo import plan_uncompact, uncompact

    store = SessionStore.open(Path(args.file))
    try:
        for problem in store.problems:
            _warn(f"warning: {args.file}: {problem} (skipped)")
        try:
            plan = plan_uncompact(store, args.id)
        except NotACompaction as exc:
            raise UserError(str(exc)) from None
        if plan.needs_confirmation and not args.yes:
            _warn(
                f"{plan.later_messages} message(s) were added after compaction {plan.compaction_id}; "
                "they stay on its branch. Run again with --yes to undo it."
            )
            return 1
        uncompact(store, plan)
    finally:
        store.close()
    report = {
        "compactionId": plan.compaction_id,
        "leafId": plan.target_id,
        "laterMessages": plan.later_messages,
    }
    if args.json:
        _dump_json(report)
    else:
        _say(f"leaf moved to {plan.target_id} (before compaction {plan.compaction_id}); nothing was deleted")
    return 0


# --- compact -------------------------------------------------------------------------------
def cmd_compact(args: argparse.Namespace) -> int:
    import asyncio

    from tui.agent.events import Notice
    from tui.agent.session import AgentSession
    from tui.compaction.engine import CompactionSkip
    from tui.compaction.errors import CompactionFailed
    from tui.launch import MissingSessionCwdError, session_cwd

    # The session applies its own values over the settings layers; the flags go on top of both below.
    settings, _ = effective_settings(args, flags=False)
    if args.model:
        from tui.agent.model_info import unroutable_reason

        # A model named on the command line that cannot be called is a typo, not a reason to write the
        # deterministic summary: stop before the file is opened for writing (a failing call still falls back).
        if problem := unroutable_reason(args.model, _model_overrides(settings)):
            raise UserError(f"--model: {problem}; nothing was written")
    # A dry run opens the file read-only: nothing can be appended, and the bytes stay as they were.
    store = SessionStore.open(Path(args.file), read_only=args.dry_run)
    try:
        workspace = session_cwd(store)  # a stored cwd that is gone stops here, as in pi's print mode
    except MissingSessionCwdError as exc:
        store.close()
        raise UserError(str(exc)) from None
    for problem in store.problems:
        _warn(f"warning: {args.file}: {problem} (skipped)")
    if args.reserve_tokens is not None and args.context_window and args.reserve_tokens >= args.context_window:
        raise UserError(
            f"--reserve-tokens {args.reserve_tokens:,} leaves no room in the "
            f"{args.context_window:,}-token context window"
        )
    budgets: dict[str, Any] = {**compaction_flags(args), "context_window": args.context_window}
    notices: list[Notice] = []
    try:
        session = AgentSession(store, settings, workspace=workspace)
        session.subscribe(lambda event: notices.append(event) if isinstance(event, Notice) else None)
        if args.dry_run:
            draft = asyncio.run(session.draft_compaction(args.instructions, **budgets))
            return _report_draft(draft, session.summary_model, args.json)
        try:
            result = asyncio.run(session.compact(args.instructions, **budgets))
        except CompactionFailed:
            result = None  # the notice printed below says why
    finally:
        store.close()
    for notice in notices:
        if notice.level != "info":
            _warn(f"{notice.level}: {notice.text}")
    if result is None:
        return 1  # cancelled by a hook or failed; the notice above says why
    if isinstance(result, CompactionSkip):
        if args.json:
            _dump_json({"compacted": False, "reason": result.reason, "message": result.message})
        else:
            _say(result.message)
        return 0
    entry = result.entry
    report = {
        "compacted": True,
        "entryId": entry["id"],
        "firstKeptEntryId": entry["firstKeptEntryId"],
        "tokensBefore": result.tokens_before,
        "tokensAfter": result.tokens_after,
        "summarySource": result.summary_source,
        "summaryError": result.summary_error,
        "noProgress": result.no_progress,
        "prunedToolOutputs": result.pruned_count,
        "durationMs": result.duration_ms,
        "model": session.summary_model,
    }
    if args.json:
        _dump_json(report)
        return 0
    from tui.plain_table import key_value_table

    table = key_value_table()
    table.add_row("tokens", f"{result.tokens_before:,} → {result.tokens_after:,}")
    table.add_row("firstKeptEntryId", entry["firstKeptEntryId"])
    source = result.summary_source
    if result.summary_error:
        source += f" (deterministic summary; the summarizer failed: {result.summary_error})"
    elif source == "fallback":
        source += " (deterministic summary)"
    table.add_row("summary", source)
    table.add_row("entry", entry["id"])
    _console().print(table)
    return 0


def _report_draft(draft: Any, model: str, as_json: bool) -> int:
    """Print what ``compact --dry-run`` would write: the plan, the figures and the summary itself."""
    from rich.text import Text

    from tui.compaction.engine import CompactionSkip
    from tui.plain_table import key_value_table

    if draft is None:
        return 1  # cancelled by a hook
    if isinstance(draft, CompactionSkip):
        if as_json:
            _dump_json({"compacted": False, "dryRun": True, "reason": draft.reason, "message": draft.message})
        else:
            _say(draft.message)
        return 0
    if as_json:
        _dump_json({**draft.to_json(), "model": model})
        return 0
    plan = draft.plan
    prefix_tokens = getattr(plan, "turn_prefix_tokens", 0)  # a head-tail plan splits no turn
    console = _console()
    table = key_value_table()
    table.add_row("dry run", "nothing was written")
    table.add_row("tokens", f"{draft.tokens_before:,} → {draft.tokens_after:,}")
    table.add_row("firstKeptEntryId", draft.first_kept_entry_id)
    table.add_row(
        "summarise",
        f"{len(plan.summarize_entry_ids) + len(plan.turn_prefix_entry_ids)} messages, "
        f"≈{plan.summarized_tokens + prefix_tokens:,} tokens",
    )
    table.add_row("keep", f"{len(plan.kept_entry_ids)} messages, ≈{plan.kept_tokens:,} tokens")
    kompakt = draft.details.get("kompakt", {})
    table.add_row(
        "budgets",
        f"keepRecentTokens {kompakt.get('keepRecentTokensUsed', kompakt.get('keepRecentTokens')):,}, "
        f"reserveTokens {kompakt.get('reserveTokens'):,}, strategy {kompakt.get('strategy')}",
    )
    source = draft.summary_source + (" (deterministic summary)" if draft.summary_source == "fallback" else "")
    table.add_row("summary source", source)
    if draft.prune:
        table.add_row("pruning", f"{len(draft.prune.entries)} tool outputs")
    console.print(table)
    if draft.short_summary:
        console.print(Text("── short summary", style="bold magenta"))
        console.print(Text(sanitize(draft.short_summary)))
    console.print(Text("── summary it would write", style="bold magenta"))
    console.print(Text(sanitize(draft.summary)))
    return 0


# --- parser ----------------------------------------------------------------------------------
def run_tui(
    launch_mode: str, path: str | None, session_dir: str | None = None, *, resume_demo: bool = False
) -> int:
    """Start the full-screen app (the only place Textual gets imported)."""
    from tui.launch import Launch
    from tui.launch import open_session as launch_session

    if path is not None:
        import os

        from tui.session.jsonl import open_regular

        # A FIFO, a device, a directory or an unreadable file: one line here, not a TUI that cannot open it.
        os.close(open_regular(Path(path), os.O_RDONLY))
    launch = Launch(launch_mode, Path(path) if path else None, resume_demo=resume_demo)  # type: ignore[arg-type]
    if session_dir:
        from tui.session.catalog import expand_home

        launch.session_dir = Path(expand_home(session_dir))
    # A file named on the command line that cannot be opened (not a session, an unknown version) is an
    # error here, before the screen takes over: the TUI's fallback of a new session is for -c and friends.
    opened = None
    if path is not None:
        from tui.loading_note import open_with_note

        opened = open_with_note(Path(path), lambda: launch_session(launch))
    from tui.app import KompaktApp

    # The file is open already: no second read of it on a thread (the app's prefetch is for its own open).
    app = KompaktApp(launch, prefetch=opened is None)
    if opened is not None:
        from tui.loading_note import erase_note

        app.use_session(launch, opened)
        erase_note()
    from tui.paste_parser import install

    install()  # a paste that holds escape bytes arrives as one paste, not as keys and Enters
    app.run()
    # Textual prints a crash's traceback and sets return_code 1; an exit after a crash is never 0.
    return app.return_code or 0


def cmd_open(args: argparse.Namespace) -> int:
    return run_tui("open", args.file)


def cmd_watch(args: argparse.Namespace) -> int:
    return run_tui("watch", args.file)


def _tokens(least: int) -> Callable[[str], int]:
    """An argparse type: a whole number of tokens, at least ``least`` (the same bounds as the settings)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} is below {least}")
        return value

    return parse


class _SettingDefaultsFormatter(argparse.HelpFormatter):
    """Fills in each compaction flag's default from the settings model, only when help is printed.

    Importing the settings model (pydantic-settings) costs about half a second, which every command
    paid at start-up just to build help text that is rarely shown (``kompakt tree`` and the rest).
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        field = getattr(action, "setting_field", None)
        if text is None or field is None:
            return text
        from tui.config.model import CompactionSettings

        return text.replace(DEFAULT_SLOT, str(getattr(CompactionSettings(), field)))


DEFAULT_SLOT = "<default>"  # replaced by the setting's default when the help is printed


def _setting_help(text: str, key: str, default: object) -> str:
    return f"{text} (default: the setting {key}, {default} if no layer sets it)"


def _add_setting_flag(
    command: argparse.ArgumentParser, flag: str, field: str, text: str, key: str, **kw: Any
) -> None:
    action = command.add_argument(flag, help=_setting_help(text, key, DEFAULT_SLOT), **kw)
    action.setting_field = field  # type: ignore[attr-defined]  # read by _SettingDefaultsFormatter


def _add_compaction_flags(command: argparse.ArgumentParser) -> None:
    """The [compaction] overrides plan and compact share: the same flags pick the same cut."""
    _add_setting_flag(
        command,
        "--keep-recent-tokens",
        "keep_recent_tokens",
        "tokens of recent messages kept verbatim",
        "compaction.keepRecentTokens",
        type=_tokens(0),
        metavar="N",
    )
    _add_setting_flag(
        command,
        "--reserve-tokens",
        "reserve_tokens",
        "tokens kept free for the reply; the threshold is the window minus this",
        "compaction.reserveTokens",
        type=_tokens(0),
        metavar="N",
    )
    command.add_argument(
        "--calibrate",
        action=argparse.BooleanOptionalAction,
        help=_setting_help(
            "scale keepRecentTokens by the measured usage/estimate ratio (oh-my-pi)",
            "compaction.calibrate",
            "on",
        ),
    )
    _add_setting_flag(
        command,
        "--strategy",
        "strategy",
        "the planner",
        "compaction.strategy",
        choices=["keep-recent", "head-tail"],
    )
    command.add_argument(
        "--model",
        help="litellm model name: sizes the context window and writes the summary "
        "(default: the model setting, else the default model of the first provider key in the environment, "
        "else the offline model; as the TUI)",
    )


def _add_json(command: argparse.ArgumentParser) -> None:
    command.add_argument("--json", action="store_true", help="print JSON instead of text (default: text)")


def _add_leaf(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--leaf",
        metavar="ID",
        help="entry id to treat as the active leaf (default: the leaf stored in the file)",
    )


def build_parser() -> argparse.ArgumentParser:
    from tui import __version__

    parser = argparse.ArgumentParser(
        prog="kompakt",
        description="Tree-shaped LLM sessions with live compaction. Without a command, the TUI starts.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"kompakt {__version__} (pi session format v3, follows pi 0.73.1)",
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the newest kompakt or pi session of this directory (default: start a new session)",
    )
    parser.add_argument(
        "--demo", action="store_true", help="open a copy of the bundled demo session (default: off)"
    )
    parser.add_argument(
        "--session-dir",
        metavar="DIR",
        help="keep new sessions in DIR and search it first, as pi's --session-dir (default: "
        "PI_CODING_AGENT_SESSION_DIR, else sessionDir in pi's settings.json, searched but not written)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    open_ = sub.add_parser("open", help="open any pi-format session file in the TUI")
    open_.add_argument("file", help="the session file (.jsonl)")
    open_.set_defaults(func=cmd_open)

    watch = sub.add_parser("watch", help="follow a session file another process writes (read-only TUI)")
    watch.add_argument("file", help="the session file (.jsonl)")
    watch.set_defaults(func=cmd_watch)

    tree = sub.add_parser("tree", help="print the session tree as pi draws it")
    tree.add_argument("file", help="the session file (.jsonl)")
    tree.add_argument(
        "--filter",
        default="default",
        choices=["default", "no-tools", "user-only", "labeled-only", "all"],
        help="which entries to list, as pi's /tree filters (default: default)",
    )
    _add_leaf(tree)
    tree.add_argument("--query", help="search words, all must match (default: none)")
    _add_json(tree)
    tree.set_defaults(func=cmd_tree)

    context = sub.add_parser("context", help="print the messages the model would see")
    context.add_argument("file", help="the session file (.jsonl)")
    _add_leaf(context)
    context.add_argument(
        "--breakdown", action="store_true", help="the context by category, like /context (default: off)"
    )
    context.add_argument(
        "--reserve-tokens",
        type=_tokens(0),
        metavar="N",
        help="with --breakdown (default: the setting compaction.reserveTokens)",
    )
    context.add_argument(
        "--context-window", type=_tokens(1), metavar="N", help="with --breakdown (default: the model's)"
    )
    _add_json(context)
    context.set_defaults(func=cmd_context)

    plan = sub.add_parser(
        "plan",
        formatter_class=_SettingDefaultsFormatter,
        help="show where compaction would cut, without running it",
        description="Show what `kompakt compact` would do now: the same settings, model, pruning and planner. "
        "Settings come from the defaults, the user file (~/.config/kompakt/settings.toml or $KOMPAKT_CONFIG_DIR), "
        "./.kompakt/settings.toml and KOMPAKT_* variables, as in the TUI; each flag overrides one setting "
        "for this run only.",
    )
    plan.add_argument("file", help="the session file (.jsonl)")
    _add_leaf(plan)
    _add_compaction_flags(plan)
    plan.add_argument(
        "--context-window",
        type=_tokens(1),
        metavar="N",
        help='the model\'s context window (default: models."<model>".contextWindow from the settings, '
        "else litellm's model map, else 128000)",
    )
    plan.add_argument(
        "--no-prune",
        action="store_true",
        help="plan the path as stored, without the tool-output pruning compact applies first "
        "(default: prune, as compact does)",
    )
    _add_json(plan)
    plan.set_defaults(func=cmd_plan)

    stats = sub.add_parser("stats", help="entries, branches, compactions and tokens of a session")
    stats.add_argument("file", help="the session file (.jsonl)")
    _add_json(stats)
    stats.set_defaults(func=cmd_stats)

    export = sub.add_parser(
        "export",
        help="write the session as an HTML page, a Markdown transcript or the branch as a pi session file",
    )
    export.add_argument("file", help="the session file (.jsonl)")
    fmt = export.add_mutually_exclusive_group(required=True)
    fmt.add_argument("--html", action="store_true", help="one self-contained HTML page with the tree")
    fmt.add_argument("--md", action="store_true", help="a Markdown transcript of the active path")
    fmt.add_argument(
        "--jsonl",
        action="store_true",
        help="the active path as a pi session file (pi's /export file.jsonl; default name FILE.branch.jsonl)",
    )
    export.add_argument(
        "--leaf", metavar="ID", help="export the path to this entry (default: the leaf stored in the file)"
    )
    export.add_argument(
        "--all-branches", action="store_true", help="include the abandoned branches too (default: off)"
    )
    export.add_argument(
        "-o", "--output", help="output file (default: beside the session, same name; - for stdout)"
    )
    export.set_defaults(func=cmd_export)

    trust = sub.add_parser(
        "trust",
        help="let this directory's .kompakt/settings.toml set the keys that need trust "
        "(apiBase, apiKeyEnv, headers, remoteEndpoint, hooks, auto approvals)",
    )
    trust.add_argument("--show", action="store_true", help="only say which keys are held back (default: off)")
    trust.set_defaults(func=cmd_trust)
    inspect = sub.add_parser("inspect", help="what a past compaction summarised, wrote and kept")
    inspect.add_argument("file", help="the session file (.jsonl)")
    inspect.add_argument(
        "id", nargs="?", help="the compaction entry (default: the latest on the active path)"
    )
    _add_leaf(inspect)
    _add_json(inspect)
    inspect.set_defaults(func=cmd_inspect)

    undo = sub.add_parser("uncompact", help="undo a compaction: move the leaf to before it (deletes nothing)")
    undo.add_argument("file", help="the session file (.jsonl)")
    undo.add_argument("id", nargs="?", help="the compaction entry (default: the latest on the active path)")
    undo.add_argument(
        "--yes", action="store_true", help="undo even when messages were added after it (default: refuse)"
    )
    _add_json(undo)
    undo.set_defaults(func=cmd_uncompact)

    compact = sub.add_parser(
        "compact",
        formatter_class=_SettingDefaultsFormatter,
        help="compact the session now (appends a compaction entry)",
        description="Compact the session file now, as /compact in the TUI. The flags override one setting "
        "each for this run, exactly as for `kompakt plan`.",
    )
    compact.add_argument("file", help="the session file (.jsonl)")
    compact.add_argument("--instructions", help="what the summary should focus on (default: none)")
    compact.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan and the summary it would write; write nothing (default: write)",
    )
    _add_compaction_flags(compact)
    compact.add_argument(
        "--context-window",
        type=_tokens(1),
        metavar="N",
        help='the model\'s context window (default: models."<model>".contextWindow from the settings, '
        "else litellm's model map, else 128000)",
    )
    _add_json(compact)
    compact.set_defaults(func=cmd_compact)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command is None:
            mode = "demo" if args.demo else "continue" if args.continue_ else "new"
            return run_tui(mode, None, args.session_dir, resume_demo=args.demo and args.continue_)
        return int(args.func(args) or 0)
    except (SessionError, UserError) as exc:
        for line in str(exc).split("\n"):  # a settings error lists each of its problems on a line
            _warn(line)
        return EXIT_USER_ERROR
    except BrokenPipeError:
        return 0
    except OSError as exc:  # permissions, a full disk, a vanished file: one clear line
        where = f"{exc.filename}: " if exc.filename else ""
        _warn(f"{where}{exc.strerror or exc}")
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
