"""Session export: the Markdown transcript, the self-contained HTML page, secret redaction and the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tui.cli import main
from tui.demo import build_demo
from tui.export import export_session
from tui.export.common import anchor, truncate_output
from tui.export.html import export_html
from tui.export.markdown import export_markdown, fenced
from tui.session.redact import REDACTED, Scrubber, secret_env_values
from tui.session.store import SessionStore

FAKE_OPENAI = "sk-proj-Fake0penAiKey1234567890abcdEFGH"
FAKE_ANTHROPIC = "sk-ant-api03-FakeAnthropicKey_0123456789-abcdef"
FAKE_TOKEN = "plain-looking-token-value-42"  # no key shape: only the environment says it is secret
CANARY = "ordinary-env-canary-7731"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo(tmp_path_factory.mktemp("export") / "demo.jsonl")


@pytest.fixture
def store(demo: Path) -> SessionStore:
    with SessionStore.open(demo, read_only=True) as opened:
        yield opened


def abandoned_leaf(store: SessionStore) -> str:
    active = {e["id"] for e in store.get_branch()}
    (leaf,) = [i for i in store.tree.leaves() if i not in active]
    return leaf


def abandoned_ids(store: SessionStore) -> list[str]:
    active = {e["id"] for e in store.get_branch()}
    return [i for i in store.tree.path_ids(abandoned_leaf(store)) if i not in active]


def message_ids(entries: list[dict]) -> list[str]:
    return [e["id"] for e in entries if e["type"] in ("message", "compaction", "branch_summary")]


def text_session(path: Path, user_text: str, tool_output: str, label: str = "mark") -> SessionStore:
    """A small writable session: user, assistant with a tool call, its result, an answer, a label."""
    store = SessionStore.create(path, cwd="/tmp/work")
    user = store.append_message({"role": "user", "content": [{"type": "text", "text": user_text}]})
    store.append_message(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Let me think about <b>it</b>."},
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cat notes.txt"}},
            ],
            "provider": "openai",
            "model": "gpt-test",
            "stopReason": "toolUse",
        }
    )
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": tool_output}],
        }
    )
    store.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "stopReason": "stop"}
    )
    store.append_label(user["id"], label)
    return store


# --- Markdown -----------------------------------------------------------------------------------
def test_markdown_has_the_active_path_in_order(store: SessionStore) -> None:
    md = export_markdown(store)
    positions = [md.index(f'<a id="{anchor(i)}">') for i in message_ids(store.get_branch())]
    assert positions == sorted(positions) and len(positions) > 40
    assert md.startswith("# Demo: fixing the JSONL loader\n")
    assert "- **Session:** `5e55d3e0-0000-4000-8000-00000000de30`" in md
    for entry_id in abandoned_ids(store):
        assert anchor(entry_id) not in md
    assert "Just skip the bad line." not in md and "## Branch from" not in md


def test_markdown_marks_compactions_branch_summary_and_labels(store: SessionStore) -> None:
    md = export_markdown(store)
    compactions = [e for e in store.get_branch() if e["type"] == "compaction"]
    headings = re.findall(r"^### Compacted: (\d+)k tokens → summary", md, flags=re.M)
    assert [int(k) for k in headings] == [round(c["tokensBefore"] / 1000) for c in compactions]
    for compaction in compactions:
        kept = compaction["firstKeptEntryId"]
        assert f"- **First kept entry:** [`{kept}`](#{anchor(kept)})" in md
    assert md.count("- **Read files:** `tests/test_part0.py`") == 2
    assert md.count("- **Modified files:** `src/store.py`") == 2
    assert "> ## Goal\n> Make the JSONL session loader survive torn writes" in md
    summary = md[md.index("### Branch summary") :]
    assert "Summary of the branch left at [" in summary
    assert "> The user tried skipping torn lines" in summary and "> &lt;modified-files>" in summary
    assert "label `start`" in md and "label `crash-safe`" in md
    # Tool calls with their label and arguments, results in fences, cut with a note.
    assert '**Tool call** `[read: src/store.py]`\n\n```json\n{\n  "path": "src/store.py"\n}\n```' in md
    assert "### Tool result · `[bash: pytest -q tests/test_store.py]` · error" in md
    assert "test_case_1399" not in md and "more lines not shown (1402 lines" in md


def test_markdown_all_branches_appends_the_abandoned_branch_once(store: SessionStore) -> None:
    md = export_markdown(store, all_branches=True)
    fork = store.tree.branch_points()[0]
    section = md[md.index("## Branch from") :]
    assert section.startswith("## Branch from [``assistant: The failure is in `parse_line`")
    assert f"](#{anchor(fork)})" in section.splitlines()[0]
    for entry_id in abandoned_ids(store):
        assert md.count(f'<a id="{anchor(entry_id)}">') == 1
        assert anchor(entry_id) in section
    assert section.count("Just skip the bad line.") == 1
    for entry_id in message_ids(store.get_branch()):
        assert md.count(f'<a id="{anchor(entry_id)}">') == 1


def test_nested_branches_each_start_after_what_is_already_exported(tmp_path: Path) -> None:
    def say(store: SessionStore, role: str, text: str) -> str:
        return store.append_message({"role": role, "content": [{"type": "text", "text": text}]})["id"]

    with SessionStore.create(tmp_path / "tree.jsonl") as store:
        root = say(store, "user", "root question")
        answer = say(store, "assistant", "A answer")
        store.branch(root)
        b1 = say(store, "user", "B question")
        say(store, "assistant", "B answer")
        store.branch(b1)
        say(store, "assistant", "C answer")
        store.branch(root)
        store.append_label(answer, "keep")  # hangs under root: a branch with nothing to show
        store.branch(answer)
        md = export_markdown(store, all_branches=True)
    headings = re.findall(r"^## Branch from .*$", md, flags=re.M)
    assert headings == [
        f"## Branch from [`user: root question`](#{anchor(root)})",
        f"## Branch from [`user: B question`](#{anchor(b1)})",
    ]
    for text in ("root question", "A answer", "B question", "B answer", "C answer"):
        assert md.count(f"\n{text}\n") == 1
    assert md.index("A answer") < md.index("B answer") < md.index("C answer")


def test_fences_are_longer_than_any_backtick_run_inside() -> None:
    assert fenced("plain") == "```\nplain\n```"
    text = "before\n````\nnot the end\n```\nafter ``x``"
    block = fenced(text, "json")
    assert block.startswith("`````json\n") and block.endswith("\n`````")
    assert block[len("`````json\n") : -len("\n`````")] == text


def test_markdown_fence_survives_backticks_in_a_tool_output(tmp_path: Path) -> None:
    output = "line one\n``````\nline three"
    with text_session(tmp_path / "s.jsonl", "hi", output) as store:
        md = export_markdown(store)
    opening = re.search(r"^(`{3,})\n" + re.escape(output), md, flags=re.M)
    assert opening is not None and len(opening.group(1)) == 7
    assert f"{output}\n{opening.group(1)}\n" in md
    assert "<details><summary>Thinking</summary>" in md


def test_truncate_output_keeps_the_head_and_says_what_is_left() -> None:
    assert truncate_output("short\ntext") == ("short\ntext", None)
    shown, note = truncate_output("\n".join(f"row {i}" for i in range(200)))
    assert shown.splitlines()[-1] == "row 49" and note is not None and "150 more lines" in note
    shown, note = truncate_output("x" * 10_000)
    assert len(shown) == 6000 and note is not None and "4000 more characters" in note


# --- HTML ---------------------------------------------------------------------------------------
EXTERNAL = re.compile(r"""(?:src|href|action|srcset)\s*=\s*["']?\s*(?:https?:)?//""", re.I)


def test_html_is_self_contained(store: SessionStore) -> None:
    page = export_html(store, all_branches=True)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not EXTERNAL.search(page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert page.count("<script") == 1 and "<style>" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    # Every in-page link leads somewhere on the page.
    ids = set(re.findall(r' id="([^"]+)"', page))
    targets = set(re.findall(r'href="#([^"]+)"', page))
    assert targets and targets <= ids


def test_html_outline_marks_the_branch_point_and_the_active_path(store: SessionStore) -> None:
    page = export_html(store)
    outline = page[page.index('<nav class="outline"') : page.index("</nav>")]
    fork = store.tree.branch_points()[0]
    after_fork = outline[outline.index(f'href="#{anchor(fork)}"') :]
    assert "branch point" in after_fork[: after_fork.index("</li>")]
    assert outline.count("branch point") == 1
    # The fork's children: the active one open, the abandoned one closed and not linked.
    assert outline.count("<details open>") == 1 and outline.count("<details>") == 1
    abandoned = abandoned_ids(store)
    assert f'href="#{anchor(abandoned[0])}"' not in outline
    assert 'class="row kind-user off" title="not in this export">user: Just skip the bad line.' in outline
    # Active rows are marked; the leaf carries the marker.
    for entry_id in message_ids(store.get_branch()):
        if f'href="#{anchor(entry_id)}"' in outline:
            assert re.search(rf'class="row [a-z-]+ on-path" href="#{anchor(entry_id)}"', outline)
    after_leaf = outline[outline.index(f'href="#{anchor(store.leaf_id)}"') :]
    assert "← active" in after_leaf[: after_leaf.index("</li>")] and outline.count("← active") == 1
    assert (
        '<span class="badge">start</span>' in outline and '<span class="badge">crash-safe</span>' in outline
    )
    assert outline.count("kind-compaction") == 2 and outline.count("kind-summary") == 1


def test_html_renders_messages_compactions_and_summaries(store: SessionStore) -> None:
    page = export_html(store)
    main_part = page[page.index("<main>") :]
    for entry_id in message_ids(store.get_branch()):
        assert main_part.count(f'id="{anchor(entry_id)}"') == 1
    assert main_part.count('<article class="entry compaction"') == 2
    assert "Compacted: 73k tokens → summary" in main_part and "Compacted: 68k tokens → summary" in main_part
    assert main_part.count('<article class="entry summary') == 1
    assert "&lt;modified-files&gt;" in main_part
    assert '<details class="part tool-call"><summary>Tool call <code>[read: src/store.py]</code>' in main_part
    assert "Just skip the bad line." not in main_part
    every = export_html(store, all_branches=True)
    assert every.count('<section class="branch"') == 1 and "Just skip the bad line." in every


def test_html_escapes_injected_markup(tmp_path: Path) -> None:
    hostile = '<script>alert(1)</script><img src="https://evil.example/x.png" onerror="alert(2)">'
    with text_session(
        tmp_path / "s.jsonl", hostile, "</pre><script>alert(3)</script>", 'x" onmouseover="alert(4)'
    ) as store:
        page = export_html(store)
        md = export_markdown(store)
    assert page.count("<script") == 1 and "alert(1)</script>" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(3)" in page
    assert 'onmouseover="' not in page and "x&quot; onmouseover=&quot;alert(4)" in page
    assert "Let me think about &lt;b&gt;it&lt;/b&gt;." in page
    assert not EXTERNAL.search(page)
    # Issue 8: the transcript shows the user's text, but a Markdown renderer gets no raw tag from it.
    # (The tool output's <script> stays as written: it is in a code fence.)
    assert hostile.replace("<", "&lt;") in md and "<img" not in md


def test_hostile_entry_ids_never_reach_attributes(tmp_path: Path) -> None:
    path = tmp_path / "ids.jsonl"
    path.write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
        '{"type":"message","id":"a\\"><script>x</script>","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"hello"}}\n'
    )
    with SessionStore.open(path, read_only=True) as store:
        page = export_html(store)
    assert page.count("<script") == 1
    assert re.search(r'id="e-x[0-9a-f]+"', page) and 'href="#e-x' in page


def test_exports_strip_escape_sequences(tmp_path: Path) -> None:
    text = "\x1b[31mred\x1b[0m \x1b]0;new title\x07 \x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ bell\x07 \x9b2J"
    with text_session(tmp_path / "s.jsonl", text, "out\x1b[2Kput\r\n") as store:
        exports = [export_html(store), export_markdown(store)]
    for exported in exports:
        assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", exported)
        assert "red" in exported and "link" in exported and "evil.example" not in exported
        assert "output" in exported


def test_html_embeds_raster_images_only(tmp_path: Path) -> None:
    with SessionStore.create(tmp_path / "img.jsonl") as store:
        store.append_message(
            {
                "role": "user",
                "content": [
                    {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
                    {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2Zz4="},
                ],
            }
        )
        page = export_html(store)
    assert '<img class="attached" alt="attached image" src="data:image/png;base64,iVBORw0KGgo=">' in page
    assert page.count("<img") == 1 and "[image: image/svg+xml, 0 KB]" in page


# --- secrets ------------------------------------------------------------------------------------
def test_secrets_never_appear_in_either_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI)
    monkeypatch.setenv("MY_SERVICE_TOKEN", FAKE_TOKEN)
    monkeypatch.setenv("KOMPAKT_EXPORT_CANARY", CANARY)
    google = "AIza" + "SyFakeGoogleKey0123456789abcdefghij"
    output = f"OPENAI_API_KEY={FAKE_OPENAI}\ntoken: {FAKE_TOKEN}\nanthropic {FAKE_ANTHROPIC}\n{google}"
    with text_session(tmp_path / "s.jsonl", f"use key {FAKE_ANTHROPIC}", output, label=FAKE_TOKEN) as store:
        exports = [export_html(store, all_branches=True), export_markdown(store, all_branches=True)]
    for exported in exports:
        for secret in (FAKE_OPENAI, FAKE_TOKEN, FAKE_ANTHROPIC, google, CANARY):
            assert secret not in exported
        assert exported.count(REDACTED) >= 5


def test_scrubber_matches_key_shapes_and_leaves_words_alone() -> None:
    scrub = Scrubber([])
    keys = [
        "sk-ant-api03-abcdefghij",
        "sk-or-v1-0123456789abcdef",
        "AIza" + "B" * 35,
        "hf_" + "a" * 30,
        "xai-" + "Z" * 40,
        "gsk_" + "9" * 40,
        "ghp_" + "x" * 36,
    ]
    for key in keys:
        assert scrub(f"key={key};") == f"key={REDACTED};"
    prose = "Use sk-learn for task-based risk-free models; ask-me-anything, hf_ prefix."
    assert scrub(prose) == prose


def test_secret_env_values_by_name_suffix_and_length() -> None:
    env = {
        "A_API_KEY": "value-one-long",
        "GITHUB_TOKEN": "  padded-token-value ",
        "DB_SECRET": "tiny",
        "PATH": "/usr/bin:/bin",
        "api_key_plain": "not-a-suffix-match",
    }
    assert secret_env_values(env) == ["padded-token-value", "value-one-long"]
    assert Scrubber(secret_env_values(env))("x padded-token-value y") == f"x {REDACTED} y"


# --- CLI ----------------------------------------------------------------------------------------
def test_cli_writes_both_formats_beside_the_session(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for flag, suffix in (("--md", ".md"), ("--html", ".html")):
        assert main(["export", str(demo), flag]) == 0
        written = demo.with_suffix(suffix)
        assert capsys.readouterr().out.strip() == str(written)
        assert written.stat().st_size > 10_000
    assert demo.with_suffix(".html").read_text().startswith("<!DOCTYPE html>")


def test_cli_leaf_on_the_abandoned_branch(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with SessionStore.open(demo, read_only=True) as store:
        leaf = abandoned_leaf(store)
    out = tmp_path / "nested" / "branch.md"
    assert main(["export", str(demo), "--md", "--leaf", leaf, "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    md = out.read_text()
    assert "Just skip the bad line." in md and "Add the kill -9 test now." not in md
    assert f"- **Leaf:** `{leaf}`" in md and "Compacted:" not in md


def test_cli_stdout_all_branches_and_errors(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(demo), "--html", "--all-branches", "-o", "-"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>") and '<section class="branch"' in page
    assert main(["export", str(demo), "--md", "--leaf", "nope"]) == 2
    assert capsys.readouterr().err.strip() == "kompakt: Entry nope not found"
    with pytest.raises(SystemExit):
        main(["export", str(demo)])  # a format is required


def test_export_session_replaces_an_existing_file(demo: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    target.write_text("old")
    with SessionStore.open(demo, read_only=True) as store:
        assert export_session(store, "md", target) == target
    assert target.read_text().startswith("# Demo") and list(tmp_path.iterdir()) == [target]


def test_an_export_reads_a_snapshot_while_the_session_grows(tmp_path: Path) -> None:
    """/export renders on a thread while the agent appends: it reads a snapshot, a whole prefix holding its
    leaf, that later appends do not change and that cannot be written to."""
    import threading

    from tui.session.store import ReadOnlySessionError
    from tui.session.tree import TreeIndex

    store = text_session(tmp_path / "s.jsonl", "first", "out")
    frozen = store.snapshot()
    frozen_ids = [e["id"] for e in frozen.entries]
    store.append_message({"role": "user", "content": [{"type": "text", "text": "after the snapshot"}]})
    assert [e["id"] for e in frozen.entries] == frozen_ids and frozen.leaf_id == frozen_ids[-1]
    assert "after the snapshot" not in export_markdown(frozen)
    with pytest.raises(ReadOnlySessionError):
        frozen.append_message({"role": "user", "content": "no"})
    fresh = TreeIndex(frozen.entries)
    assert frozen.tree.labels == fresh.labels and frozen.tree.children == fresh.children
    # Snapshots taken on a thread while the store appends are each consistent and render.
    failures: list[BaseException] = []
    done = threading.Event()

    def reader() -> None:
        try:
            while not done.is_set():
                copy = store.snapshot()
                assert copy.leaf_id in copy.tree.by_id
                export_markdown(copy, copy.leaf_id)
        except BaseException as exc:  # reported below, on the test's thread
            failures.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for n in range(300):
            store.append_message({"role": "user", "content": [{"type": "text", "text": f"more {n}"}]})
    finally:
        done.set()
        thread.join()
    assert failures == []
    assert "more 299" in export_markdown(store.snapshot())
