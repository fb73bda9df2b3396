"""The write and edit tools: atomic writes, parent directories, exact unique replacement and the diff."""

import os
import stat

import pytest

from tests.tools_helpers import make_ctx, output_text
from tui.agent.tools import ToolError
from tui.agent.tools.edit import EditTool
from tui.agent.tools.write import WriteTool


async def test_write_creates_parents_and_reports_size(tmp_path):
    ctx = make_ctx(tmp_path)
    out = await WriteTool().run({"path": "a/b/c.txt", "content": "héllo\n"}, ctx)
    assert (ctx.workspace / "a/b/c.txt").read_text() == "héllo\n"
    assert out.details == {"path": "a/b/c.txt", "bytes": 7, "created": True}
    assert output_text(out) == "Created a/b/c.txt (7 bytes)"


async def test_write_overwrites_keeps_mode_and_leaves_no_temp_files(tmp_path):
    ctx = make_ctx(tmp_path)
    target = ctx.workspace / "run.sh"
    target.write_text("old")
    target.chmod(0o750)
    out = await WriteTool().run({"path": "run.sh", "content": "new"}, ctx)
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert out.details["created"] is False
    assert os.listdir(ctx.workspace) == ["run.sh"]


async def test_write_to_directory_fails(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "d").mkdir()
    with pytest.raises(ToolError, match=r"d is a directory"):
        await WriteTool().run({"path": "d", "content": "x"}, ctx)


async def test_edit_replaces_unique_text_and_returns_diff(tmp_path):
    ctx = make_ctx(tmp_path)
    f = ctx.workspace / "m.py"
    f.write_text("a = 1\nb = 2\nc = 3\n")
    out = await EditTool().run({"path": "m.py", "old_text": "b = 2", "new_text": "b = 20"}, ctx)
    assert f.read_text() == "a = 1\nb = 20\nc = 3\n"
    assert out.details["firstChangedLine"] == 2
    diff = out.details["diff"]
    assert diff.startswith("--- a/m.py\n+++ b/m.py\n")
    assert "-b = 2\n+b = 20\n" in diff
    assert output_text(out) == "Edited m.py at line 2."


async def test_edit_missing_text_fails_and_leaves_file(tmp_path):
    ctx = make_ctx(tmp_path)
    f = ctx.workspace / "m.py"
    f.write_text("a = 1\n")
    with pytest.raises(ToolError, match=r"old_text was not found in m.py"):
        await EditTool().run({"path": "m.py", "old_text": "a  = 1", "new_text": "a = 2"}, ctx)
    assert f.read_text() == "a = 1\n"


async def test_edit_non_unique_text_says_how_many(tmp_path):
    ctx = make_ctx(tmp_path)
    f = ctx.workspace / "m.py"
    f.write_text("x\nx\nx\n")
    with pytest.raises(ToolError, match=r"occurs 3 times in m.py"):
        await EditTool().run({"path": "m.py", "old_text": "x", "new_text": "y"}, ctx)
    assert f.read_text() == "x\nx\nx\n"


async def test_edit_rejects_empty_and_identical_text(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "m.py").write_text("x\n")
    with pytest.raises(ToolError, match=r"old_text is empty"):
        await EditTool().run({"path": "m.py", "old_text": "", "new_text": "y"}, ctx)
    with pytest.raises(ToolError, match=r"the same"):
        await EditTool().run({"path": "m.py", "old_text": "x", "new_text": "x"}, ctx)


async def test_edit_keeps_crlf_line_endings(tmp_path):
    ctx = make_ctx(tmp_path)
    f = ctx.workspace / "w.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await EditTool().run({"path": "w.txt", "old_text": "one\ntwo", "new_text": "1\n2"}, ctx)
    assert f.read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_refuses_binary_and_missing_files(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "b.bin").write_bytes(b"\x00\x01x")
    with pytest.raises(ToolError, match=r"binary"):
        await EditTool().run({"path": "b.bin", "old_text": "x", "new_text": "y"}, ctx)
    with pytest.raises(ToolError, match=r"File not found"):
        await EditTool().run({"path": "none.txt", "old_text": "x", "new_text": "y"}, ctx)
