"""Terminal-injection payloads, and a session file that carries them in every text field.

Each payload is something a hostile model, tool output or session file could hold: escape sequences
that drive the terminal (OSC 52 clipboard writes, window titles, screen clears, CSI queries, DCS),
8-bit C1 controls, Rich markup that would turn into hyperlinks or crash the renderer, raw HTML for the
exports, and the bidirectional overrides that reorder what the reader sees (Trojan Source).
:func:`write_hostile_session` puts the whole corpus into each field a command or export shows, and
:func:`terminal_problems` lists what in a command's raw output would reach the terminal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.factories import (
    assistant,
    bash,
    branch_summary,
    chain,
    compaction,
    custom_message,
    label,
    model_change,
    session_info,
    tool_call,
    tool_result,
    user,
)

PAYLOADS: dict[str, str] = {
    "osc52-clipboard": "\x1b]52;c;cm0gLXJmIH4K\x07",
    "osc52-st": "\x1b]52;p;ZXZpbA==\x1b\\",
    "osc0-title": "\x1b]0;pwned title\x07",
    "osc2-title-st": "\x1b]2;pwned\x1b\\",
    "osc8-hyperlink": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "clear-screen": "\x1b[2J\x1b[3J\x1b[H",
    "reset-terminal": "\x1bc",
    "alt-screen": "\x1b[?1049h",
    "csi-color": "\x1b[31;1mred\x1b[0m",
    "csi-device-status": "\x1b[6n",
    "csi-hide-cursor": "\x1b[?25l",
    "dcs-query": "\x1bP+q544e\x1b\\",
    "apc": "\x1b_Gf=100;AAAA\x1b\\",
    "c1-csi": "\x9b2J",
    "c1-osc": "\x9d0;c1 title\x9c",
    "c1-dcs": "\x90qsixel\x9c",
    "c1-nel": "a\x85b",
    "bell-backspace": "bell\x07 back\x08\x08",
    "carriage-return": "visible\rHIDDEN",
    "rich-link": "[link=https://evil.example/]click me[/link]",
    "rich-close": "[/x]",
    "rich-bare-close": "[/]",
    "rich-style": "[bold red on white]styled[/bold red on white]",
    "rich-emoji": ":thumbs_up: :warning:",
    "html-script": "<script>alert(1)</script>",
    "html-img": '<img src=x onerror="alert(1)">',
    "html-comment": "<!-- hidden --> <b>bold</b>",
    "bidi-rlo": "admin\u202e\u2066 // check later\u2069\u2066",
    "bidi-embeddings": "\u202a\u202b\u202c\u202d",
    "bidi-isolates": "\u2066\u2067\u2068\u2069",
    "bidi-marks": "\u200e\u200f\u061c",
}

# Every payload in one string, separated so that no two of them merge into a different sequence.
ALL = " | ".join(PAYLOADS.values())

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# What may never reach a terminal: C0 controls but newline and tab, DEL, C1 controls, bidi controls.
_FORBIDDEN = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}]")
# The styling Rich itself emits when colour is forced (SGR only): allowed, it is not from the session.
_RICH_SGR = re.compile(r"\x1b\[[0-9;]*m")


def terminal_problems(raw: bytes, *, styled: bool = False) -> list[str]:
    """What in a command's raw output would act on a terminal, each with a little context.

    ``styled``: the output was produced with colour forced, so SGR colour sequences are Rich's own.
    """
    text = raw.decode("utf-8", errors="replace")
    if styled:
        text = _RICH_SGR.sub("", text)
    return [repr(text[max(0, m.start() - 20) : m.end() + 20]) for m in _FORBIDDEN.finditer(text)]


def hostile_entries() -> list[dict[str, Any]]:
    """A pi v3 path with the whole corpus in every field that a command or an export shows."""
    text = "text " + ALL
    entries = [
        session_info("name " + ALL),
        model_change("prov" + ALL, "model" + ALL),
        user(text),
        assistant(
            "reply " + ALL,
            tool_calls=[tool_call("bash", {"command": "echo " + ALL}, "c1")],
            thinking="thinking " + ALL,
            provider="provider" + ALL,
            model="model" + ALL,
        ),
        tool_result("c1", "bash", "output " + ALL),
        assistant(tool_calls=[tool_call("tool" + ALL, {"path": "p" + ALL}, "c2")], model="m" + ALL),
        tool_result("c2", "tool" + ALL, "result " + ALL, is_error=True),
        bash("cmd " + ALL, "bash output " + ALL, exit_code=3),
        custom_message("type" + ALL, "custom " + ALL),
        branch_summary("branch summary " + ALL, from_id="gone" + ALL),
        user("second " + ALL),
        assistant("second reply " + ALL),
        compaction(
            "compaction summary " + ALL,
            first_kept=10,
            tokens_before=1234,
            details={"readFiles": ["r" + ALL], "modifiedFiles": ["w" + ALL]},
        ),
        user("after " + ALL),
        assistant("last reply " + ALL, stop_reason="error"),
    ]
    entries[-1]["message"]["errorMessage"] = "error " + ALL
    chain(entries)
    entries.append(label(entries[3]["id"], "label " + ALL))
    entries[-1]["id"] = "0000ffff"
    entries[-1]["parentId"] = entries[-2]["id"]
    entries[-1]["timestamp"] = entries[-2]["timestamp"]
    return entries


def write_hostile_session(path: Path, cwd: str = "/tmp/cwd" + ALL) -> Path:
    """The session of :func:`hostile_entries`; its header's ``cwd`` holds the corpus too unless given."""
    header = {
        "type": "session",
        "version": 3,
        "id": "hostile-session",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": cwd,
    }
    lines = [header, *hostile_entries()]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
