"""Token estimates, usage arithmetic and the threshold: pi §3 and §12 behaviours 1–7."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tests import factories as f
from tui.compaction.tokens import (
    ContextEstimate,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    json_compact,
    last_usage_index,
    should_compact,
    utf16_len,
)


def test_utf16_len_counts_js_code_units():
    assert utf16_len("") == 0
    assert utf16_len("abc") == 3
    assert utf16_len("naïve") == 5
    assert utf16_len("日本語") == 3
    assert utf16_len("a😀b") == 4  # an astral character is a surrogate pair in JavaScript


@given(st.text())
def test_utf16_len_matches_an_encoding_count(text):
    assert utf16_len(text) == len(text.encode("utf-16-le", "surrogatepass")) // 2


def test_user_text_is_chars_over_four_rounded_up():
    assert estimate_tokens(f.user("x" * 8)["message"]) == 2
    assert estimate_tokens(f.user("x" * 9)["message"]) == 3
    assert estimate_tokens(f.user("")["message"]) == 0


def test_user_blocks_sum_text_and_ignore_images():
    blocks = [
        {"type": "text", "text": "abcd"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "text", "text": "efgh"},
    ]
    assert estimate_tokens(f.user(blocks)["message"]) == 2


def test_tool_result_and_custom_images_count_4800_chars():
    result = f.tool_result("c1", "screenshot", "abcd", images=2)["message"]
    assert estimate_tokens(result) == (4 + 2 * 4800) // 4
    custom = {"role": "custom", "content": [{"type": "image", "data": "A", "mimeType": "image/png"}]}
    assert estimate_tokens(custom) == 1200
    assert estimate_tokens({"role": "custom", "content": "abcde"}) == 2


def test_assistant_counts_text_thinking_and_compact_tool_call_json():
    args = {"path": "src/ä.py", "lines": [1, 2], "opts": {"x": None}}
    msg = f.assistant("hello", thinking="hmm", tool_calls=[f.tool_call("edit", args)])["message"]
    compact = json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    assert compact == '{"path":"src/ä.py","lines":[1,2],"opts":{"x":null}}'
    chars = len("hello") + len("hmm") + len("edit") + len(compact)
    assert estimate_tokens(msg) == -(-chars // 4)


def test_json_compact_matches_json_stringify_forms():
    assert json_compact({"a": "é 😀", "b": [1, 2.5, True, None]}) == '{"a":"é 😀","b":[1,2.5,true,null]}'
    assert json_compact(2**70) == "1180591620717411303424"  # beyond orjson's range: the fallback


def test_bash_summaries_and_unknown_roles():
    assert estimate_tokens(f.bash("ls", "a\nb\n")["message"]) == 2  # 2 + 4 chars
    assert estimate_tokens({"role": "branchSummary", "summary": "x" * 10}) == 3
    assert estimate_tokens({"role": "compactionSummary", "summary": "x" * 4}) == 1
    assert estimate_tokens({"role": "mystery", "content": "x" * 100}) == 0


def test_calculate_context_tokens_prefers_total():  # behaviour 1
    usage = {"input": 1000, "output": 500, "cacheRead": 200, "cacheWrite": 100, "totalTokens": 1800}
    assert calculate_context_tokens(usage) == 1800


def test_calculate_context_tokens_sums_parts_without_total():
    assert (
        calculate_context_tokens({"input": 0, "output": 53, "cacheRead": 176585, "cacheWrite": 1019})
        == 177657
    )


def test_calculate_context_tokens_all_zero():  # behaviour 2
    assert calculate_context_tokens(f.usage()) == 0


def test_last_assistant_usage_is_the_latest():  # behaviour 3
    path = f.chain(
        [
            f.user("a"),
            f.assistant("b", usage=f.usage(input=100)),
            f.user("c"),
            f.assistant("d", usage=f.usage(input=200)),
        ]
    )
    assert path[last_usage_index(path)]["message"]["usage"]["input"] == 200


def test_last_assistant_usage_skips_aborted_and_error():  # behaviour 4
    path = f.chain(
        [
            f.user("a"),
            f.assistant("b", usage=f.usage(input=100)),
            f.user("c"),
            f.assistant("d", usage=f.usage(input=300), stop_reason="error"),
            f.assistant("e", usage=f.usage(input=200), stop_reason="aborted"),
        ]
    )
    assert path[last_usage_index(path)]["message"]["usage"]["input"] == 100


def test_last_assistant_usage_none_without_assistants():  # behaviour 5
    assert last_usage_index(f.chain([f.user("a"), f.user("b")])) is None


def test_should_compact_threshold():  # behaviour 6
    assert should_compact(95_000, 100_000, 10_000)
    assert not should_compact(89_000, 100_000, 10_000)
    assert not should_compact(90_000, 100_000, 10_000)  # strictly greater


def test_should_compact_disabled():  # behaviour 7
    assert not should_compact(95_000, 100_000, 10_000, enabled=False)


def test_context_estimate_adds_trailing_estimate_to_last_usage():
    messages = [
        f.user("x" * 40)["message"],
        f.assistant("ok", usage=f.usage(input=500, output=20))["message"],
        f.tool_result("c", "bash", "y" * 400)["message"],
        f.assistant("bad", usage=f.usage(input=9999), stop_reason="error")["message"],
    ]
    estimate = estimate_context_tokens(messages)
    trailing = 100 + estimate_tokens(messages[3])
    assert estimate == ContextEstimate(520 + trailing, 520, trailing, 1)


def test_context_estimate_without_usage_sums_everything():
    messages = [f.user("x" * 40)["message"], f.assistant("y" * 8, stop_reason="aborted")["message"]]
    assert estimate_context_tokens(messages) == ContextEstimate(12, 0, 12, None)
    assert estimate_context_tokens([]) == ContextEstimate(0, 0, 0, None)
