"""kompakt's ``plan`` and ``context`` against pi 0.73.1's ``prepareCompaction`` and ``buildSessionContext``.

Runs :mod:`bench.compaction_vs_pi` on 40 random trees with several compactions. It needs Node and the
npm package ``@mariozechner/pi-coding-agent@0.73.1`` installed in the directory ``KOMPAKT_PI_DIR`` names
(no network: the package must already be there); without them the test is skipped and says why.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.compaction_vs_pi import compare, pi_dir_problem

PI_DIR = os.environ.get("KOMPAKT_PI_DIR")
PROBLEM = pi_dir_problem(PI_DIR)


@pytest.mark.skipif(PROBLEM is not None, reason=f"pi 0.73.1 side-by-side skipped: {PROBLEM}")
def test_plan_and_context_match_pi_0_73_1_on_random_trees(tmp_path: Path) -> None:
    report = compare(40, 7_000, str(PI_DIR), tmp_path)
    assert report.differ == 0, report.summary()
    # The trees exercise what the comparison is for: full plans after one and after several compactions.
    assert report.full_plans >= 20
    assert report.compactions_on_path[2] + report.compactions_on_path[3] >= 20


def test_a_missing_package_is_named_in_the_skip_reason(tmp_path: Path) -> None:
    problem = pi_dir_problem(str(tmp_path))
    assert problem is not None
    assert "pi-coding-agent" in problem or "node" in problem
