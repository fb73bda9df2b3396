"""Side by side with pi 0.73.1: ``kompakt plan`` and ``kompakt context`` against pi's own functions.

Writes random session trees (branches, tool turns, usage, aborted and error replies, bash runs, custom
messages, branch summaries with and without text, settings entries and several compactions whose
``firstKeptEntryId`` is a real cut, an arbitrary entry or an unknown id) as pi JSONL files, then for
several leaves of each runs ``kompakt plan FILE --json --no-calibrate`` and ``kompakt context FILE
--json`` (in-process, through :func:`tui.cli.main`) and pi's ``prepareCompaction`` /
``buildSessionContext`` (``bench/pi_compaction.mjs``, Node). Compared: ``firstKeptEntryId``,
``isSplitTurn``, the number of messages to summarise and in the turn prefix, ``tokensBefore``, the
range start, the previous summary, the per-entry estimates of the range, the context roles (before and
after conversion), the thinking level, the model and the context size.

Documented deviations are counted apart, not as differences: "nothing to summarise" is a skip in
kompakt where pi returns an empty preparation (DESIGN.md deviation 4), a tail over budget moves
kompakt's cut (deviation 2, pi #7201), a context size pi reports as unknown (after a compaction,
before a reply) is estimated by kompakt, and when ``plan`` prunes old tool outputs first (oh-my-pi's
pruning, which ``compact`` applies too) the comparison uses ``plan --no-prune``.

Usage: ``KOMPAKT_PI_DIR=/path python -m bench.compaction_vs_pi [trees] [first_seed]``, where ``/path`` is
a directory with ``npm install @mariozechner/pi-coding-agent@0.73.1`` done. Exit status 1 when any differ.
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

PACKAGE = "node_modules/@mariozechner/pi-coding-agent/package.json"
KEEPS = (1, 60, 400, 1_500, 4_000, 9_000, 20_000)
RESERVE = 16_384
TOOLS = ("read", "edit", "write", "bash", "grep")
LETTERS = "abcdefghij" * 3 + "é中😀"  # JavaScript counts 😀 as two (UTF-16)


def pi_dir_problem(pi_dir: str | None) -> str | None:
    """Why pi cannot be run (None when it can): no node, no directory, or no 0.73.1 package in it."""
    if not shutil.which("node"):
        return "node is not installed"
    if not pi_dir:
        return "KOMPAKT_PI_DIR is not set (a dir with @mariozechner/pi-coding-agent@0.73.1 installed)"
    manifest = Path(pi_dir) / PACKAGE
    if not manifest.exists():
        return f"{manifest} does not exist (npm install @mariozechner/pi-coding-agent@0.73.1 there)"
    version = json.loads(manifest.read_text()).get("version")
    if version != "0.73.1":
        return f"{manifest} is version {version}, not 0.73.1"
    return None


# --- random trees -----------------------------------------------------------------------------------
def _text(rng: random.Random, most: int) -> str:
    size = rng.choice((0, rng.randint(1, 40), rng.randint(40, most)))
    return "".join(rng.choice(LETTERS) for _ in range(min(size, 60))) * max(1, size // 60)


def _usage(rng: random.Random) -> dict[str, Any]:
    """pi writes usage on every reply; zeros when the provider reported none."""
    if rng.random() < 0.4:
        return {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": {"total": 0},
        }
    parts = {k: rng.randint(0, 30_000) for k in ("input", "output", "cacheRead", "cacheWrite")}
    total = rng.choice((0, sum(parts.values())))
    return {**parts, "totalTokens": total, "cost": {"total": 0}}


class _Tree:
    """Appends entries as pi would, each under the current leaf; ``plan_cut`` picks real cut points."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.entries: list[dict[str, Any]] = []
        self.leaf: str | None = None

    def add(self, entry: dict[str, Any]) -> dict[str, Any]:
        n = len(self.entries)
        entry.update(
            id=f"{n:04x}{self.rng.randrange(16**4):04x}",
            parentId=self.leaf,
            timestamp=f"2025-03-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        )
        self.entries.append(entry)
        self.leaf = entry["id"]
        return entry

    def message(self, message: dict[str, Any]) -> None:
        message.setdefault("timestamp", 1_740_787_200_000 + len(self.entries) * 1000)
        self.add({"type": "message", "message": message})

    def path(self) -> list[dict[str, Any]]:
        by_id = {e["id"]: e for e in self.entries}
        out = []
        current = by_id.get(self.leaf) if self.leaf else None
        while current is not None:
            out.append(current)
            current = by_id.get(current["parentId"]) if current["parentId"] else None
        return out[::-1]

    def first_kept(self) -> str:
        from tui.compaction.plan import CompactionPlan, prepare_compaction

        rng, path = self.rng, self.path()
        roll = rng.random()
        if roll < 0.7:
            plan = prepare_compaction(path, keep_recent_tokens=rng.choice(KEEPS), calibrate=False)
            if isinstance(plan, CompactionPlan):
                return plan.first_kept_entry_id
        if roll < 0.85 and path:
            return rng.choice(path)["id"]
        if roll < 0.95 and self.entries:
            return rng.choice(self.entries)["id"]  # maybe on another branch
        return "ffffffff"  # an id no entry has


def random_tree(rng: random.Random, size: int) -> list[dict[str, Any]]:
    tree = _Tree(rng)
    for _ in range(size):
        if tree.entries and rng.random() < 0.07:
            tree.leaf = rng.choice(tree.entries)["id"]  # navigate: the next entry branches
        roll = rng.random()
        if roll < 0.22:
            content: Any = _text(rng, 6_000)
            if rng.random() < 0.3:
                content = [
                    {"type": "text", "text": content},
                    {"type": "image", "data": "AA", "mimeType": "image/png"},
                ]
            tree.message({"role": "user", "content": content})
        elif roll < 0.42:
            calls = [
                {
                    "type": "toolCall",
                    "id": f"c{len(tree.entries)}_{k}",
                    "name": rng.choice(TOOLS),
                    "arguments": {"path": f"src/{rng.choice(LETTERS)}.py"},
                }
                for k in range(rng.randint(1, 3))
            ]
            reply: dict[str, Any] = {
                "role": "assistant",
                "content": [{"type": "text", "text": _text(rng, 800)}, *calls],
                "provider": "anthropic",
                "model": rng.choice(("claude-sonnet-4-5", "claude-opus-4-1")),
                "stopReason": "toolUse",
            }
            reply["usage"] = _usage(rng)
            tree.message(reply)
            for call in calls:
                tree.message(
                    {
                        "role": "toolResult",
                        "toolCallId": call["id"],
                        "toolName": call["name"],
                        "content": [{"type": "text", "text": _text(rng, 12_000)}],
                        "isError": False,
                    }
                )
        elif roll < 0.58:
            content = [{"type": "text", "text": _text(rng, 4_000)}]
            if rng.random() < 0.3:
                content.insert(0, {"type": "thinking", "thinking": _text(rng, 2_000)})
            stop = rng.choice(("stop", "stop", "stop", "aborted", "error", "length"))
            reply = {
                "role": "assistant",
                "content": content,
                "provider": "openai",
                "model": "gpt-5",
                "stopReason": stop,
            }
            reply["usage"] = _usage(rng)
            tree.message(reply)
        elif roll < 0.63:
            bash: dict[str, Any] = {
                "role": "bashExecution",
                "command": "ls",
                "output": _text(rng, 3_000),
                "exitCode": 0,
            }
            if rng.random() < 0.3:
                bash["excludeFromContext"] = True
            tree.message(bash)
        elif roll < 0.67:
            content = _text(rng, 2_000)
            tree.add(
                {
                    "type": "custom_message",
                    "customType": "note",
                    "display": True,
                    "content": content if rng.random() < 0.5 else [{"type": "text", "text": content}],
                }
            )
        elif roll < 0.71:
            tree.add({"type": "branch_summary", "fromId": "root", "summary": _text(rng, 2_000)})
        elif roll < 0.74:
            tree.add({"type": "thinking_level_change", "thinkingLevel": rng.choice(("off", "low", "high"))})
        elif roll < 0.76:
            tree.add({"type": "model_change", "provider": "openai", "modelId": "gpt-5-mini"})
        elif roll < 0.78 and tree.entries:
            tree.add({"type": "label", "targetId": rng.choice(tree.entries)["id"], "label": "mark"})
        elif roll < 0.80:
            tree.add({"type": "custom", "customType": "ext.state", "data": {"n": 1}})
        elif roll < 0.9:
            tree.add(
                {
                    "type": "compaction",
                    "summary": _text(rng, 3_000) or "summary",
                    "firstKeptEntryId": tree.first_kept(),
                    "tokensBefore": rng.randint(0, 200_000),
                }
            )
        else:
            tree.message({"role": "user", "content": _text(rng, 200)})
    return tree.entries


def write_session(path: Path, entries: list[dict[str, Any]]) -> None:
    header = {
        "type": "session",
        "version": 3,
        "id": path.stem,
        "timestamp": "2025-03-01T00:00:00.000Z",
        "cwd": str(path.parent),
    }
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [header, *entries]))


# --- running both --------------------------------------------------------------------------------------
def kompakt_json(argv: list[str]) -> dict[str, Any]:
    """``kompakt ARGV`` in this process, its JSON output parsed."""
    from tui.cli import main

    buffer = io.BytesIO()
    wrapper = io.TextIOWrapper(buffer, encoding="utf-8")
    stdout, sys.stdout = sys.stdout, wrapper
    try:
        code = main(argv)
        wrapper.flush()
        output = buffer.getvalue()
    finally:
        sys.stdout = stdout
        wrapper.detach()
    if code != 0:
        raise RuntimeError(f"kompakt {' '.join(argv)} exited {code}")
    return orjson.loads(output)


@dataclass
class Report:
    trees: int = 0
    cases: int = 0
    differ: int = 0
    fields: Counter[str] = field(default_factory=Counter)
    deviations: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    compactions_on_path: Counter[int] = field(default_factory=Counter)
    full_plans: int = 0  # both planned a compaction and every field was compared

    def summary(self) -> str:
        lines = [
            f"{self.trees} trees, {self.cases} cases (tree × leaf × keepRecentTokens) compared, {self.differ} differ",
            f"plans compared field by field: {self.full_plans}; compactions on the path: "
            + ", ".join(f"{k}: {v}" for k, v in sorted(self.compactions_on_path.items())),
        ]
        if self.fields:
            lines.append("differing fields: " + ", ".join(f"{k} {v}" for k, v in self.fields.most_common()))
        if self.deviations:
            lines.append(
                "documented deviations: " + ", ".join(f"{k} {v}" for k, v in self.deviations.most_common())
            )
        return "\n".join([*lines, *self.examples[:5]])


def _compare_plan(ours: dict[str, Any], pi: dict[str, Any] | None, report: Report) -> list[str]:
    if ours["skip"]:
        if ours["reason"] == "nothing_to_summarize" and pi is not None:
            if pi["summarize"] == 0 and pi["turnPrefix"] == 0:
                report.deviations["nothing to summarise: skip, pi an empty preparation (dev. 4)"] += 1
                return [] if ours["tokensBefore"] == pi["tokensBefore"] else ["tokensBefore"]
            return ["skip"]
        return [] if pi is None else ["skip"]
    if pi is None:
        return ["skip"]
    if not ours["tailOverBudget"]:
        report.full_plans += 1
    bad = [
        name
        for name, mine, theirs in (
            ("boundaryStart", ours["boundaryStart"], pi["boundaryStart"]),
            ("tokensBefore", ours["tokensBefore"], pi["tokensBefore"]),
            ("previousSummary", ours["previousSummary"], pi["previousSummary"]),
            ("entryTokens", ours["entryTokens"], pi["entryTokens"]),
        )
        if mine != theirs
    ]
    if ours["tailOverBudget"]:
        report.deviations["tail over budget: kompakt cuts earlier (dev. 2, pi #7201)"] += 1
        return bad
    bad += [
        name
        for name, mine, theirs in (
            ("firstKeptEntryId", ours["firstKeptEntryId"], pi["firstKeptEntryId"]),
            ("isSplitTurn", ours["isSplitTurn"], pi["isSplitTurn"]),
            ("summarize", len(ours["summarizeEntryIds"]), pi["summarize"]),
            ("turnPrefix", len(ours["turnPrefixEntryIds"]), pi["turnPrefix"]),
        )
        if mine != theirs
    ]
    return bad


def _compare_context(ours: dict[str, Any], pi: dict[str, Any], report: Report) -> list[str]:
    bad = []
    if [m["role"] for m in ours["entries"]] != pi["roles"]:
        bad.append("contextRoles")
    if [m["role"] for m in ours["messages"]] != pi["llmRoles"]:
        bad.append("llmRoles")
    if [m["tokens"] for m in ours["entries"]] != pi["tokens"]:
        bad.append("contextEstimates")
    if ours["thinkingLevel"] != pi["thinkingLevel"]:
        bad.append("thinkingLevel")
    if ours["model"] != pi["model"]:
        bad.append("model")
    if pi["size"] is None:
        report.deviations["context size unknown in pi after a compaction, kompakt estimates"] += 1
    elif ours["estimate"]["tokens"] != pi["size"]:
        bad.append("contextTokens")
    return bad


def compare(trees: int, first_seed: int, pi_dir: str, workdir: Path) -> Report:
    """Build ``trees`` random trees from ``first_seed`` on and compare kompakt with pi on each."""
    report = Report(trees=trees)
    specs, ours, labels = [], [], []
    for seed in range(first_seed, first_seed + trees):
        rng = random.Random(seed)
        entries = random_tree(rng, rng.randint(2, 90))
        file = workdir / f"tree-{seed}.jsonl"
        write_session(file, entries)
        leaves = {entries[-1]["id"], *(rng.choice(entries)["id"] for _ in range(3))}
        by_id = {e["id"]: e for e in entries}
        for leaf in sorted(leaves):
            on_path, current = 0, by_id.get(leaf)
            while current is not None:
                on_path += current["type"] == "compaction"
                current = by_id.get(current["parentId"]) if current["parentId"] else None
            report.compactions_on_path[min(on_path, 3)] += 1
            keep = rng.choice(KEEPS)
            # Every setting the plan depends on is a flag, so the user's settings files cannot matter.
            argv = [
                "plan",
                str(file),
                "--json",
                "--no-calibrate",
                "--leaf",
                leaf,
                "--strategy",
                "keep-recent",
            ]
            argv += ["--keep-recent-tokens", str(keep), "--reserve-tokens", str(RESERVE)]
            plan = kompakt_json([*argv, "--context-window", "1000000"])
            if plan["pruning"]["entries"]:
                # kompakt prunes old tool outputs before planning (oh-my-pi; pi has no pruning).
                report.deviations["old tool outputs pruned first (omp): compared with --no-prune"] += 1
                plan = kompakt_json([*argv, "--context-window", "1000000", "--no-prune"])
            context = kompakt_json(["context", str(file), "--json", "--leaf", leaf])
            specs.append(
                {"file": str(file), "leafId": leaf, "keepRecentTokens": keep, "reserveTokens": RESERVE}
            )
            ours.append((plan, context))
            labels.append(f"seed {seed} leaf {leaf} keep {keep}")
    spec_file = workdir / "specs.json"
    spec_file.write_text(json.dumps(specs))
    script = Path(__file__).with_name("pi_compaction.mjs")
    result = subprocess.run(
        ["node", str(script), str(spec_file)],
        capture_output=True,
        text=True,
        env={**os.environ, "KOMPAKT_PI_DIR": pi_dir},
    )
    if result.returncode != 0:
        raise RuntimeError(f"pi_compaction.mjs failed:\n{result.stderr}")
    for label, (plan, context), theirs in zip(labels, ours, json.loads(result.stdout), strict=True):
        report.cases += 1
        bad = _compare_plan(plan, theirs["plan"], report) + _compare_context(
            context, theirs["context"], report
        )
        if bad:
            report.differ += 1
            report.fields.update(bad)
            report.examples.append(f"{label}: {', '.join(bad)}")
    return report


def main() -> int:
    trees, first_seed = (int(a) for a in [*sys.argv[1:], "300", "0"][:2])
    pi_dir = os.environ.get("KOMPAKT_PI_DIR")
    problem = pi_dir_problem(pi_dir)
    if problem:
        print(f"needs pi 0.73.1: {problem}")
        return 2
    with tempfile.TemporaryDirectory() as workdir:
        report = compare(trees, first_seed, str(pi_dir), Path(workdir))
    print(report.summary())
    return 1 if report.differ else 0


if __name__ == "__main__":
    sys.exit(main())
