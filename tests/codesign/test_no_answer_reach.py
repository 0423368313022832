"""A co-design search whose time target (``--max-time``, or the target of ``--deadline`` for the
run's tokens) no candidate meets says what the space reaches: the least proven time bound over
its candidates (no design is faster) and the fastest possible design (the space searched without
the target), with the days they take and the target or deadline that is met. Reference values:
the same space searched without a target, and its results file's bounds."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.cli.util import error_line, run

SPACE = Path(__file__).resolve().parents[2] / "spaces" / "codesign-gpt3-nvl72-2304.toml"
TOKENS_PER_ITERATION = 2304 * 2048  # the space's global batch 2,304 x GPT-3's 2,048 tokens


@pytest.fixture(scope="module")
def unbounded(tmp_path_factory) -> tuple[dict, list[dict]]:
    """(the JSON, the results file's rows) of the space searched without a target: every
    candidate's row, solved or pruned, with its proven time bound (objective performance: its
    ``lower_bound``)."""
    tmp = tmp_path_factory.mktemp("unbounded")
    r = run("codesign", SPACE, "--workers", "1", "--json", tmp / "r.json",
            "--out", tmp / "rows.csv")
    assert r.exit_code == 0, r.output
    with open(tmp / "rows.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return json.loads((tmp / "r.json").read_text()), rows


@pytest.mark.heavy
def test_a_time_target_below_the_fastest_says_the_fastest(tmp_path, unbounded):
    result, rows = unbounded
    fastest = result["best"]["iteration_time_ns"]
    # 12,160.0358 ms: TP 8 x PP 2 x DP 144, ZeRO 1, with bf16's FP32 gradients and the ZeRO-1
    # all-gather after the optimizer step (12,127.2241 ms with it on the overlapped gradient
    # stream; 11,917.4483 ms, TP 8 x DP 288 and ZeRO 2, with 2-byte gradients)
    assert fastest == pytest.approx(12_160_035_807, rel=1e-9)
    bound = min(float(r["lower_bound"]) for r in rows)
    r = run("codesign", SPACE, "--workers", "1", "--max-time", "10ms",
            "--json", tmp_path / "x.json")
    assert r.exit_code == 3
    line = error_line(r)
    data = json.loads((tmp_path / "x.json").read_text())
    assert data["no_answer"] == line.removeprefix("error: ")
    reach = data["reach"]
    assert reach["bound_ns"] == bound and bound <= fastest
    assert reach["fastest"]["iteration_time_ns"] == fastest
    assert reach["fastest"]["id"] == result["best"]["id"]
    assert line.startswith(f"error: no candidate has a certified answer: {len(rows)} infeasible")
    assert "the iteration-time target is 10.0 ms; no candidate is faster than 11,988.2 ms" in line
    assert (f"the fastest possible is 12,160.0358 ms ({result['best']['id']}, the space searched "
            "without the target): give a time target of at least 12,161 ms") in line
    # the target it names is met
    ok = run("codesign", SPACE, "--workers", "1", "--max-time", "12161ms")
    assert ok.exit_code == 0, ok.output


@pytest.mark.heavy
def test_a_deadline_says_its_target_and_the_best_days(tmp_path, unbounded):
    """--deadline 1d for 300B tokens: 300e9 / 4,718,592 = 63,578 iterations, a target of 1,359.0
    ms; the fastest possible takes 12,160.0358 ms x 63,578.3 iterations = 8.9481 days."""
    result, _ = unbounded
    fastest = result["best"]["iteration_time_ns"]
    iterations = 300e9 / TOKENS_PER_ITERATION
    assert round(iterations) == 63_578
    days = fastest * iterations / 86400e9
    assert days == pytest.approx(8.9481, abs=5e-5)
    r = run("codesign", SPACE, "--workers", "1", "--deadline", "1d", "--tokens", "300B")
    assert r.exit_code == 3
    line = error_line(r)
    target_ms = 86400e3 / iterations
    assert f"is an iteration-time target of {target_ms:,.1f} ms" in line
    assert target_ms == pytest.approx(1359.0, abs=0.05)
    assert ("the deadline of 1 day for 300B tokens (63,578 iterations of 4,718,592 tokens)"
            in line)
    assert f"the fastest possible is 12,160.0358 ms = {days:,.4g} days for 300B tokens" in line
    assert line.endswith("give a deadline of at least 8.9481 days")  # (rounded up: met)
    ok = run("codesign", SPACE, "--workers", "1", "--deadline", "8.9481d", "--tokens", "300B")
    assert ok.exit_code == 0, ok.output


LIBRA_PLAN = SPACE.parent / "codesign-gpt3-4096-libra-plan.toml"


@pytest.mark.heavy
def test_a_time_target_without_its_unit_is_told_in_ns_with_the_unit_meant():
    # --max-time 7 is 7 ns: the message said "the iteration-time target is 0.0 ms" and no more;
    # the fastest design of the space is 6,050.3393 ms (its ranking's best), 8.64e+08 x 7 ns
    line = error_line(run("codesign", LIBRA_PLAN, "--objective", "min_cost", "--max-time", "7"))
    assert "the iteration-time target is 7 ns; no candidate is faster than" in line
    assert line.endswith(
        "give a time target of at least 6,050.4 ms — the target is 8.64e+08x below the fastest: "
        "a plain number is ns; did you mean 7s? (write --max-time 7s, or max_iteration_time_ns = "
        "7e+09)"), line


CALCULON = SPACE.parent / "codesign-gpt3-calculon-a100.toml"


def test_a_max_time_tighter_than_the_deadline_is_named_as_the_target():
    """--deadline 30d with --max-time 5s for 300B tokens: the deadline's target is 30 d / (300e9 /
    3,145,728 = 95,367.4 iterations) = 27,179.1 ms, so 5 s is the target no plan meets (the
    fastest, TP 8 x PP 16 x DP 32, takes 5,488.7031 ms = 6.058 days). The message called 5,000.0
    ms the deadline's target and asked for a deadline of at least 6.0584 days, which 30 days is."""
    iterations = 300e9 / 3_145_728
    assert 30 * 86400e3 / iterations == pytest.approx(27_179.09, abs=0.005)
    r = run("codesign", CALCULON, "--workers", "1", "--deadline", "30d", "--tokens", "300B",
            "--max-time", "5s")
    assert r.exit_code == 3
    line = error_line(r)
    assert ("; the iteration-time target is 5,000.0 ms (--max-time: the deadline of 30 days for "
            "300B tokens, 95,367 iterations of 3,145,728 tokens, allows 27,179.1 ms); no "
            "candidate is faster than 4,874.7 ms = 5.381 days for 300B tokens") in line, line
    assert line.endswith("the space searched without the target): give a time target of at "
                         "least 5,488.8 ms"), line
    assert "deadline of at least" not in line
