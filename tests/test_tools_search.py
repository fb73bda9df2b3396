"""The ls, grep and find tools: listing, regex search with filters and limits, glob matching."""

import pytest

from tests.tools_helpers import make_ctx, output_text
from tui.agent.tools import ToolError
from tui.agent.tools.find import FindTool
from tui.agent.tools.grep import GrepTool
from tui.agent.tools.ls import LsTool
from tui.agent.tools.walk import glob_matcher


@pytest.fixture
def ctx(tmp_path):
    ctx = make_ctx(tmp_path)
    ws = ctx.workspace
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("import os\nTODO = 1\nprint('Hello')\n")
    (ws / "src" / "pkg" / "test_x.py").write_text("def test():\n    # todo: more\n    pass\n")
    (ws / "README.md").write_text("Hello world\n")
    (ws / ".env").write_text("SECRET=1\n")
    (ws / "data.bin").write_bytes(b"TODO\x00binary")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("TODO in git\n")
    return ctx


async def test_ls_lists_sorted_with_dirs_marked(ctx):
    out = await LsTool().run({}, ctx)
    assert output_text(out).splitlines() == [".env", ".git/", "data.bin", "README.md", "src/"]
    assert out.details == {"path": ".", "entries": 5, "truncated": False}


async def test_ls_limit_and_errors(ctx):
    out = await LsTool().run({"path": ".", "limit": 2}, ctx)
    assert output_text(out) == ".env\n.git/\n\n[2 of 5 entries shown.]"
    with pytest.raises(ToolError, match=r"README.md is a file"):
        await LsTool().run({"path": "README.md"}, ctx)
    with pytest.raises(ToolError, match=r"Directory not found: nowhere"):
        await LsTool().run({"path": "nowhere"}, ctx)


async def test_ls_empty_directory(ctx):
    (ctx.workspace / "empty").mkdir()
    out = await LsTool().run({"path": "empty"}, ctx)
    assert output_text(out) == "(empty is empty)"


async def test_grep_finds_matches_skipping_binary_and_git(ctx):
    out = await GrepTool().run({"pattern": "TODO"}, ctx)
    assert output_text(out) == "src/app.py:2:TODO = 1"
    assert out.details["matches"] == 1


async def test_grep_ignore_case_and_glob(ctx):
    out = await GrepTool().run({"pattern": "todo", "ignore_case": True, "glob": "test_*.py"}, ctx)
    assert output_text(out) == "src/pkg/test_x.py:2:    # todo: more"
    out = await GrepTool().run({"pattern": "hello", "ignore_case": True, "glob": "*.md"}, ctx)
    assert output_text(out) == "README.md:1:Hello world"


async def test_grep_single_file_and_regex(ctx):
    out = await GrepTool().run({"pattern": r"^\w+ = \d$", "path": "src/app.py"}, ctx)
    assert output_text(out) == "src/app.py:2:TODO = 1"


async def test_grep_limit_stops_and_says_so(ctx):
    (ctx.workspace / "many.txt").write_text("hit\n" * 10)
    out = await GrepTool().run({"pattern": "hit", "path": "many.txt", "limit": 3}, ctx)
    lines = output_text(out).splitlines()
    assert lines[:3] == ["many.txt:1:hit", "many.txt:2:hit", "many.txt:3:hit"]
    assert "Stopped after 3 matches" in lines[-1]
    assert out.details["truncated"] is True


async def test_grep_shortens_long_lines(ctx):
    (ctx.workspace / "long.txt").write_text("x" * 2000 + "\n")
    out = await GrepTool().run({"pattern": "x", "path": "long.txt"}, ctx)
    assert output_text(out) == "long.txt:1:" + "x" * 500 + "..."


async def test_grep_no_match_bad_regex_and_missing_path(ctx):
    out = await GrepTool().run({"pattern": "zzz"}, ctx)
    assert output_text(out) == "No matches for /zzz/ in ."
    assert not out.is_error
    with pytest.raises(ToolError, match=r"invalid regular expression"):
        await GrepTool().run({"pattern": "("}, ctx)
    with pytest.raises(ToolError, match=r"Path not found: gone"):
        await GrepTool().run({"pattern": "x", "path": "gone"}, ctx)


async def test_grep_stops_when_cancelled(ctx):
    ctx.cancel.set()
    with pytest.raises(ToolError, match=r"cancelled"):
        await GrepTool().run({"pattern": "x"}, ctx)


async def test_find_by_name_at_any_depth(ctx):
    out = await FindTool().run({"pattern": "*.py"}, ctx)
    assert output_text(out).splitlines() == ["src/app.py", "src/pkg/test_x.py"]


async def test_find_with_path_glob_and_directories(ctx):
    out = await FindTool().run({"pattern": "src/**/test_*.py"}, ctx)
    assert output_text(out) == "src/pkg/test_x.py"
    out = await FindTool().run({"pattern": "pkg"}, ctx)
    assert output_text(out) == "src/pkg/"
    out = await FindTool().run({"pattern": "**/*.py", "path": "src/pkg"}, ctx)
    assert output_text(out) == "src/pkg/test_x.py"


async def test_find_skips_git_and_honours_limit(ctx):
    out = await FindTool().run({"pattern": "config"}, ctx)
    assert output_text(out) == "No paths match config under ."
    out = await FindTool().run({"pattern": "*", "limit": 2}, ctx)
    text = output_text(out)
    assert text.splitlines()[:2] == ["src/", ".env"]
    assert "Stopped after 2 results" in text


async def test_find_missing_directory(ctx):
    with pytest.raises(ToolError, match=r"Directory not found: nope"):
        await FindTool().run({"pattern": "*", "path": "nope"}, ctx)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "a/b/c.pyc", False),
        ("a/*.py", "a/c.py", True),
        ("a/*.py", "a/b/c.py", False),
        ("a/**/c.py", "a/c.py", True),
        ("a/**/c.py", "a/x/y/c.py", True),
        ("**/c.py", "c.py", True),
        ("a/**", "a/x/y", True),
        ("a/[bc].txt", "a/c.txt", True),
        ("a/[!bc].txt", "a/c.txt", False),
        ("./a/?.txt", "a/z.txt", True),
        ("a+b/*.txt", "a+b/x.txt", True),
    ],
)
def test_glob_matcher(pattern, path, expected):
    assert glob_matcher(pattern)(path) is expected
