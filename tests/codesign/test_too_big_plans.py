"""The plans of a co-design space that do not fit in memory are named, with their need: the console
shows the nearest misses and the JSON all of them (``plans.too_big_plans``), its ``plans.too_big``
still their count.

The shipped ``codesign-gpt3-4096-run-cost`` space (GPT-3 175B on 4,096 H100 of 80 GiB, 4 GiB
reserved): of its 12 plans only tp 4 x pp 4 with selective recompute is too big, its first stage
needing 87.41 GB per NPU against 80 x 2^30 - 4 x 2^30 = 81,604,378,624 bytes = 81.60 GB, 5.80 GB
over (hieropt workload plan of the same plan prints the same need)."""

from __future__ import annotations

import json

import pytest

from tests.cases import REPO
from tests.cli.util import run


@pytest.mark.heavy
def test_the_too_big_plan_is_named_with_its_need(tmp_path):
    out = tmp_path / "r.json"
    r = run("codesign", REPO / "spaces" / "codesign-gpt3-4096-run-cost.toml", "--workers", "1",
            "--json", out)
    assert r.exit_code == 0, r.output
    plans = json.loads(out.read_text())["plans"]
    assert (plans["too_big"], plans["fitting"]) == (1, 11)
    [big] = plans["too_big_plans"]
    assert big["plan"] == "tp4 cp1 pp4 dp256 ep1 z1 sel sp v1 mb1" and big["stage"] == 0
    assert big["available_gb"] == 76 * 2**30 / 1e9
    assert big["memory_gb"] == pytest.approx(87.41, abs=0.005)
    assert big["over_gb"] == pytest.approx(big["memory_gb"] - 76 * 2**30 / 1e9, rel=1e-12)
    assert ("  too big: tp4 cp1 pp4 dp256 ep1 z1 sel sp v1 mb1: stage 0 needs 87.41 GB per NPU, "
            "81.60 GB available (5.80 GB over)") in r.output


def test_the_nearest_misses_first_and_the_rest_counted():
    from hieropt.report.codesign import too_big_lines

    plans = [{"plan": f"p{i}", "stage": i % 2, "memory_gb": 82.0 + i, "available_gb": 81.6,
              "over_gb": 0.4 + i} for i in range(7)]
    lines = too_big_lines(plans, shown=2)
    assert lines == [
        "  too big: p0: stage 0 needs 82.00 GB per NPU, 81.60 GB available (0.40 GB over)",
        "  too big: p1: stage 1 needs 83.00 GB per NPU, 81.60 GB available (1.40 GB over)",
        "  ... 5 more plans too big (all in --json plans.too_big_plans)",
    ]
