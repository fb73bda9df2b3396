"""The read tool: line ranges, the 2,000-line / 50 KB cap, binary refusal and image blocks."""

import base64

import pytest

from tests.tools_helpers import make_ctx, output_text
from tui.agent.tools import ToolError
from tui.agent.tools.read import ReadTool

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(20)


async def test_reads_whole_small_file(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "a.txt").write_text("one\ntwo\nthree\n")
    out = await ReadTool().run({"path": "a.txt"}, ctx)
    assert output_text(out) == "one\ntwo\nthree"
    assert out.details == {
        "path": "a.txt",
        "offset": 1,
        "lines": 3,
        "totalLines": 3,
        "truncated": False,
    }
    assert not out.is_error


async def test_offset_and_limit_are_one_based_and_say_how_to_continue(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = await ReadTool().run({"path": "a.txt", "offset": 3, "limit": 2}, ctx)
    text = output_text(out)
    assert text.startswith("line 3\nline 4\n\n")
    assert "Lines 3-4 of 10" in text
    assert "offset=5" in text
    assert out.details["truncated"] is False


async def test_offset_past_end_is_an_error(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "a.txt").write_text("x\ny\n")
    with pytest.raises(ToolError, match=r"past the end.*2 lines"):
        await ReadTool().run({"path": "a.txt", "offset": 5}, ctx)


async def test_caps_at_2000_lines(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 2501)))
    out = await ReadTool().run({"path": "big.txt"}, ctx)
    body, _, note = output_text(out).partition("\n\n")
    assert body.splitlines()[-1] == "2000"
    assert len(body.splitlines()) == 2000
    assert "Lines 1-2000 of 2500" in note and "offset=2001" in note
    assert out.details["truncated"] is True


async def test_caps_at_50_kb(tmp_path):
    ctx = make_ctx(tmp_path)
    line = "x" * 999  # 1,000 bytes with the newline: 51 lines fit, the 52nd would not
    (ctx.workspace / "wide.txt").write_text((line + "\n") * 100)
    out = await ReadTool().run({"path": "wide.txt"}, ctx)
    body, _, note = output_text(out).partition("\n\n")
    assert len(body.splitlines()) == 51
    assert "offset=52" in note
    assert out.details["truncated"] is True


async def test_one_line_over_50_kb_is_cut(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "one.txt").write_text("é" * 40000 + "\nnext\n")
    out = await ReadTool().run({"path": "one.txt"}, ctx)
    body, _, note = output_text(out).partition("\n\n")
    assert len(body.encode()) <= 50 * 1024
    assert set(body) == {"é"}
    assert "Line 1 is longer than 50 KB" in note and "offset=2" in note


async def test_refuses_binary_file(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "blob.bin").write_bytes(b"abc\x00def")
    with pytest.raises(ToolError, match=r"blob.bin is a binary file"):
        await ReadTool().run({"path": "blob.bin"}, ctx)


async def test_refuses_non_utf8_text(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "latin.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ToolError, match=r"not UTF-8"):
        await ReadTool().run({"path": "latin.txt"}, ctx)


async def test_missing_file_and_directory(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "sub").mkdir()
    with pytest.raises(ToolError, match=r"File not found: nope.txt"):
        await ReadTool().run({"path": "nope.txt"}, ctx)
    with pytest.raises(ToolError, match=r"sub is a directory"):
        await ReadTool().run({"path": "sub"}, ctx)


async def test_empty_file(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "empty.txt").write_text("")
    out = await ReadTool().run({"path": "empty.txt"}, ctx)
    assert output_text(out) == "(empty.txt is empty)"
    assert out.details["totalLines"] == 0


async def test_image_is_returned_as_image_block(tmp_path):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "pic.dat").write_bytes(PNG)
    out = await ReadTool().run({"path": "pic.dat"}, ctx)
    image = out.content[1]
    assert image["type"] == "image"
    assert image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]) == PNG
    assert out.details["mimeType"] == "image/png"


@pytest.mark.parametrize(
    ("head", "mime"),
    [
        (b"\xff\xd8\xff\xe0" + bytes(8), "image/jpeg"),
        (b"GIF89a" + bytes(8), "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(4), "image/webp"),
    ],
)
async def test_other_image_types(tmp_path, head, mime):
    ctx = make_ctx(tmp_path)
    (ctx.workspace / "img").write_bytes(head)
    out = await ReadTool().run({"path": "img"}, ctx)
    assert out.content[1]["mimeType"] == mime


async def test_absolute_path_outside_workspace_is_readable(tmp_path):
    ctx = make_ctx(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("hello\n")
    out = await ReadTool().run({"path": str(outside)}, ctx)
    assert output_text(out) == "hello"
    assert out.details["path"] == str(outside)
