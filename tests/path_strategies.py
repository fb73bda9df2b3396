"""Hypothesis strategies for linear pi session paths, built with :mod:`tests.factories`.

A path is a list of chunks: a user prompt, an assistant turn with tool calls and their results,
a plain reply, a bash run, settings changes, labels, custom entries, custom messages, branch
summaries and compactions (whose kept entry is an earlier position). Text sizes are large enough
for cut points to move under budgets of a few thousand tokens.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests import factories as f

_TOOLS = ["read", "write", "edit", "bash", "skill", "grep"]
_sizes = st.integers(min_value=0, max_value=12_000)


def _text(size: int) -> str:
    return f.text_of(size)


@st.composite
def _assistant_turn(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(0, 3))
    tools = [draw(st.sampled_from(_TOOLS)) for _ in range(count)]
    calls = [f.tool_call(name, {"path": f"src/f{i}.py"}, f"call{i}") for i, name in enumerate(tools)]
    entries = [f.assistant(_text(draw(_sizes) // 4), tool_calls=calls, usage=draw(_usage()))]
    entries += [f.tool_result(f"call{i}", name, _text(draw(_sizes))) for i, name in enumerate(tools)]
    return entries


def _usage() -> st.SearchStrategy[dict[str, Any] | None]:
    return st.one_of(st.none(), st.builds(lambda n: f.usage(input=n, output=10), st.integers(0, 200_000)))


_metadata = st.one_of(
    st.builds(lambda: [f.thinking_change("high")]),
    st.builds(lambda: [f.model_change("openai", "gpt-4")]),
    st.builds(lambda: [f.label("00000001", "mark")]),
    st.builds(lambda: [f.custom("ext.state", {"n": 1})]),
    st.builds(lambda n: [f.custom_message("note", _text(n))], _sizes),
    st.builds(lambda n: [f.branch_summary(_text(n))], _sizes),
)

_chunk = st.one_of(
    st.builds(lambda n: [f.user(_text(n))], _sizes),
    _assistant_turn(),
    st.builds(lambda n: [f.assistant(_text(n))], _sizes),
    st.builds(lambda n: [f.bash("ls", _text(n))], _sizes),
    _metadata,
    st.builds(lambda back: [("compaction", back)], st.integers(1, 12)),
)


def _build(chunks: list[list[Any]]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for chunk in chunks:
        for item in chunk:
            if isinstance(item, tuple):  # a compaction keeping from `back` entries earlier
                entries.append(f.compaction("summary so far", max(0, len(entries) - item[1]), 1000))
            else:
                entries.append(item)
    return f.chain(entries)


def paths(min_chunks: int = 0, max_chunks: int = 30) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Linear root→leaf paths of pi v3 entries."""
    return st.lists(_chunk, min_size=min_chunks, max_size=max_chunks).map(_build)
