"""Issue 8: session text never drives the terminal or a Markdown renderer, in any CLI command or export.

The corpus of :mod:`tests.injection_corpus` sits in every field of one session file; each command runs
as a real process, and its raw stdout and stderr bytes are searched for anything a terminal would act
on (escape sequences, C1 and bidi controls), with colour off (a pipe) and forced on (as in a terminal).
Rich markup in the session must come out literally, and the Markdown export is rendered by a real
CommonMark parser to check that no raw HTML tag survives outside code.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from asyncio.subprocess import PIPE
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.fake_openai import FakeOpenAI, Reply
from tests.injection_corpus import ALL, PAYLOADS, terminal_problems, write_hostile_session
from tui.agent.offline import DEFAULT_MODELS
from tui.cli import json_text
from tui.export.markdown_html import escape_markdown_html
from tui.session.sanitize import reveal, sanitize

READ_COMMANDS = [
    ["tree"],
    ["tree", "--filter", "all"],
    ["context"],
    ["plan"],
    ["plan", "--context-window", "2000", "--reserve-tokens", "100", "--keep-recent-tokens", "100"],
    ["stats"],
    ["inspect"],
    ["context", "--breakdown"],
    ["compact", "--dry-run"],
    ["export", "--jsonl", "-o", "-"],
    ["export", "--md", "-o", "-"],
    ["export", "--md", "--all-branches", "-o", "-"],
    ["export", "--html", "-o", "-"],
]
JSON_COMMANDS = [
    ["tree", "--json"],
    ["context", "--json"],
    ["context", "--breakdown", "--json"],
    ["plan", "--json"],
    ["stats", "--json"],
    ["inspect", "--json"],
    ["compact", "--dry-run", "--json"],
]
MARKUP = PAYLOADS["rich-link"]


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return write_hostile_session(tmp_path / "hostile.jsonl")


def isolated_env(home: Path, *, styled: bool) -> dict[str, str]:
    """No provider keys, settings under ``home``; ``styled`` forces colour as a terminal would get it."""
    env = {k: v for k, v in os.environ.items() if k not in {var for var, _ in DEFAULT_MODELS}}
    env.pop("NO_COLOR", None)
    env |= {"KOMPAKT_CONFIG_DIR": str(home / "config"), "COLUMNS": "160", "PYTHONIOENCODING": "utf-8"}
    if styled:
        env["FORCE_COLOR"] = "1"
    return env


def run_cli(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *argv], capture_output=True, env=env, cwd=cwd, timeout=120
    )


def assert_inert(proc: subprocess.CompletedProcess[bytes], *, styled: bool) -> None:
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()[-2000:]
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert terminal_problems(proc.stdout, styled=styled) == []
    assert terminal_problems(proc.stderr, styled=styled) == []
    assert b"\x1b]8;" not in proc.stdout  # no hyperlink, whatever the styling


@pytest.mark.parametrize("styled", [False, True], ids=["piped", "colour"])
@pytest.mark.parametrize("argv", READ_COMMANDS, ids=lambda a: " ".join(a))
def test_read_commands_print_session_text_inertly(
    hostile: Path, tmp_path: Path, argv: list[str], styled: bool
) -> None:
    env = isolated_env(tmp_path, styled=styled)
    if argv[0] == "compact":
        hostile = write_hostile_session(hostile, cwd=str(tmp_path))  # see the compact test below
    if argv[0] == "tree":
        env["COLUMNS"] = "5000"  # rows are cut to the width: leave room for the whole corpus
    proc = run_cli([argv[0], str(hostile), *argv[1:]], env, tmp_path)

    assert_inert(proc, styled=styled)
    out = proc.stdout.decode()
    if argv[0] in ("tree", "context") and "--breakdown" not in argv:
        # Markup is text: it is printed as written, neither applied nor swallowed.
        assert MARKUP in out and PAYLOADS["rich-close"] in out
    if argv[0] in ("context", "export") and not {"--breakdown", "--jsonl"} & set(argv):
        assert "U+202E" in out  # a bidi override is shown, not applied
    if argv[0] == "tree":
        *rows, count = out.splitlines()
        assert count.endswith(
            f"({len(rows)} rows)" + ("\x1b[0m" if styled else "")
        )  # one line per row: no name or label breaks one


@pytest.mark.parametrize("styled", [False, True], ids=["piped", "colour"])
def test_stats_shows_a_markup_name_literally(hostile: Path, tmp_path: Path, styled: bool) -> None:
    """The session name held ``[/x]``: stats crashed with a MarkupError."""
    proc = run_cli(["stats", str(hostile)], isolated_env(tmp_path, styled=styled), tmp_path)

    assert_inert(proc, styled=styled)
    assert "[/x]" in proc.stdout.decode()


@pytest.mark.parametrize("argv", JSON_COMMANDS, ids=lambda a: " ".join(a))
def test_json_escapes_c1_and_bidi_controls_losslessly(hostile: Path, tmp_path: Path, argv: list[str]) -> None:
    if argv[0] == "compact":
        hostile = write_hostile_session(hostile, cwd=str(tmp_path))
    proc = run_cli([argv[0], str(hostile), *argv[1:]], isolated_env(tmp_path, styled=False), tmp_path)

    assert_inert(proc, styled=False)
    decoded = json.loads(proc.stdout)
    if argv == ["context", "--json"]:
        # The JSON still holds the session's text exactly: the escapes are JSON's, not a sanitiser's.
        assert any(ALL in m["text"] for m in decoded["messages"])
    if argv[0] == "stats":
        assert decoded["name"] == "name " + ALL


def test_json_text_escapes_what_orjson_leaves_raw() -> None:
    value = {"k\x9b": "a\x9b2J\u202e\u2028\x1b[0m\x85é"}
    text = json_text(value)
    assert "\x9b" not in text and "\u202e" not in text and "\u2028" not in text and "\x85" not in text
    assert "\\u009b" in text and "\\u202e" in text and "é" in text
    assert json.loads(text) == value


def write_compact_settings(home: Path, model: str, api_base: str) -> None:
    """Settings that make compaction cut early, with ``model`` served at ``api_base`` and no retries."""
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(
        "[compaction]\nkeepRecentTokens = 50\n\n[retry]\nenabled = false\n"
        f"\n[models.{json.dumps(model)}]\napiBase = {json.dumps(api_base)}\n"
    )


@pytest.mark.parametrize("styled", [False, True], ids=["piped", "colour"])
@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
async def test_compact_reports_inertly_after_appending(
    hostile: Path, tmp_path: Path, styled: bool, as_json: bool
) -> None:
    """The provider's error (the summarizer's failure, shown in the report) and the model name hold markup
    and escapes: compact crashed with a MarkupError after it had appended the compaction."""
    # compact stops on a stored cwd that does not exist (as pi's print mode does): give it this one.
    hostile = write_hostile_session(tmp_path / "compact.jsonl", cwd=str(tmp_path))
    model = "openai/fake" + PAYLOADS["rich-close"] + PAYLOADS["osc0-title"]
    error = "bad request " + PAYLOADS["rich-close"] + PAYLOADS["rich-link"] + PAYLOADS["osc52-clipboard"]
    async with FakeOpenAI(default=Reply.error(400, {"error": {"message": error, "type": "x"}})) as server:
        write_compact_settings(tmp_path, model, server.api_base)
        argv = ["compact", str(hostile), "--model", model] + (["--json"] if as_json else [])
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tui", *argv, cwd=tmp_path,
            env=isolated_env(tmp_path, styled=styled), stdout=PIPE, stderr=PIPE,
        )  # fmt: skip
        stdout, stderr = await asyncio.wait_for(child.communicate(), 120)
        assert server.hit_count  # the summarizer asked the server, and got the error
    proc = subprocess.CompletedProcess(argv, child.returncode or 0, stdout, stderr)

    assert_inert(proc, styled=styled)
    appended = json.loads(hostile.read_bytes().splitlines()[-1])
    assert appended["type"] == "compaction"
    out = proc.stdout.decode()
    if as_json:
        report = json.loads(out)
        assert report["entryId"] == appended["id"] and report["model"] == model
        assert "[/x]" in report["summaryError"]
    else:
        assert appended["id"] in out and "[/x]" in out and "the summarizer failed" in out


# --- the Markdown export under a real CommonMark renderer ---------------------------------------------
def rendered_tags(markdown: str) -> list[str]:
    """Raw HTML that a CommonMark + tables renderer lets through from ``markdown``."""
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    found = []
    for token in md.parse(markdown):
        if token.type == "html_block":
            found.append(token.content)
        for child in token.children or ():
            if child.type == "html_inline":
                found.append(child.content)
    return found


HOSTILE_MARKDOWN = [
    "<script>alert(1)</script>",
    "text <img src=x onerror=alert(1)> more",
    "<!-- hidden -->",
    "\\`<b>after an escaped backtick</b>`",
    "- item\n  ```\n<script>after a list fence</script>\n```",
    "```\nunclosed fence",  # must not swallow what comes next in the export
    "| a | b |\n|---|---|\n| `x | <b>y</b> |` |",
    "    ```\n<i>indented four</i>\n```",
    "> ```\n<b>quoted fence</b>",
    "~~~\n<ok in code>\n~~~\n<b>after</b>",
    "``a ` <b>b</b>``",
    "<http://evil.example/autolink>",
]


@pytest.mark.parametrize("text", HOSTILE_MARKDOWN)
def test_escaped_markdown_renders_no_raw_html(text: str) -> None:
    # Two texts in a row, as two entries of an export: the first cannot change how the second reads.
    joined = (
        escape_markdown_html(text) + "\n\n" + escape_markdown_html("```\n<b>next entry</b>\n```\n<u>x</u>")
    )
    assert rendered_tags(joined) == []


def test_escaped_markdown_keeps_code_as_written() -> None:
    text = "Use `Vec<T>` here:\n\n```rust\nlet v: Vec<u8> = vec![];\n```\n\nand a < b."
    out = escape_markdown_html(text)
    assert "`Vec<T>`" in out and "let v: Vec<u8> = vec![];" in out and "a &lt; b" in out


def test_markdown_export_of_the_corpus_renders_no_raw_html(hostile: Path, tmp_path: Path) -> None:
    env = isolated_env(tmp_path, styled=False)
    proc = run_cli(["export", "--md", "--all-branches", "-o", "-", str(hostile)], env, tmp_path)

    assert_inert(proc, styled=False)
    tags = rendered_tags(proc.stdout.decode())
    # The export's own anchors and thinking folds are the only HTML in it.
    own = ('<a id="e-', "</a>", "<details><summary>Thinking</summary>", "</details>")
    assert tags and all(t.startswith(own) for t in tags), [t for t in tags if not t.startswith(own)]


# --- the sanitiser ---------------------------------------------------------------------------------
def test_sanitize_shows_bidi_controls() -> None:
    assert sanitize("a\u202eb\u2066c\u200f") == "a<U+202E>b<U+2066>c<U+200F>"


def test_reveal_names_every_control_and_drops_nothing() -> None:
    command = "echo hi\x1b]0;title\x07 \x9b2J\rrm -rf ~ \u202e"
    shown = reveal(command)
    assert shown == "echo hi<ESC>]0;title<BEL> <U+009B>2J<CR>rm -rf ~ <U+202E>"
    assert reveal("a\n\tb") == "a\n\tb"


# --- the TUI ---------------------------------------------------------------------------------------
async def test_the_tui_shows_the_corpus_inertly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chat, tree pane and status of the hostile session: what reaches the screen has no control, no bidi
    override (shown as <U+202E>), and markup stays text."""
    from tests.app_e2e_helpers import RecordingApp, isolated_home, ready, wait_until
    from tui.launch import Launch

    isolated_home(tmp_path, monkeypatch)
    path = write_hostile_session(tmp_path / "hostile.jsonl", cwd=str(tmp_path))
    app = RecordingApp(Launch("open", path, tmp_path), start_background=False)
    async with app.run_test(size=(160, 60), notifications=False) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f2")
        await wait_until(pilot, lambda: screen.tree_pane.display, "the tree pane")
        await wait_until(pilot, lambda: "U+202E" in app.export_screenshot(), "a bidi override, shown")
        screen_text = app.export_screenshot()
    assert terminal_problems(screen_text.encode()) == []
    assert "[/x]" in screen_text and "evil.example" in screen_text  # markup as text, not a link
