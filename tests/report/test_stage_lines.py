"""The pipeline-stage line of ``solve`` / ``evaluate``: each stage's figure is the iteration time if
every stage were that one, and under a schedule that composes the stages (interleaved 1F1B here)
the iteration time is below the largest of them, so the line must not call it the slowest's.

Hand-computed on the three stages of tests/solve/stages.py (m = 4 micro-batches, p = 3 stages, v = 2
chunks, B = (100, 50) GB/s): slots t = (600 + 2.4e7, 750 + 6e6, 180 + 1.2e7) ns, DP tails W = (8e8 /
50, 4e8 / 50, 0) ns. Each stage alone: (m + (p - 1)/v) t_r + W_r = 5 t_r + W_r; the composition: sum
t / v + (m - 1/v) max t + W_0.
"""

from __future__ import annotations

import pytest

import hieropt
from hieropt.report.text import evaluation_lines
from tests.solve.stages import slots, three_stages, two_stages


def _stage_line(lines: list[str]) -> str:
    (line,) = [x for x in lines if x.startswith("pipeline stages")]
    return line


def test_composed_stages_are_labelled_as_each_stage_alone():
    inst = three_stages(m=4, v=2)
    bd = hieropt.evaluate(inst, [100.0, 50.0])
    t, w0 = slots(100.0, 50.0)
    tails = (8e8 / 50.0, 4e8 / 50.0, 0.0)
    assert list(bd.stage_times_ns.values()) == pytest.approx(
        [5 * x + w for x, w in zip(t, tails, strict=True)], rel=1e-14
    )
    composed = sum(t) / 2 + (4 - 0.5) * max(t) + w0
    assert bd.iteration_time_ns == pytest.approx(composed, rel=1e-14)
    assert bd.iteration_time_ns < max(bd.stage_times_ns.values())  # 73.0 ms < 76.0 ms
    line = _stage_line(evaluation_lines(inst, bd))
    assert line.startswith(
        "pipeline stages (each: the iteration time if every stage were this one; the iteration "
        "time composes the stages by the schedule, the fill and drain at each stage's own pace, so "
        "it can be below the largest of these; the issued and per-dimension figures below are "
        "s0's): s0 76.0030 ms"
    )
    assert "is the slowest's" not in line


def test_stages_not_composed_take_the_slowest():
    inst = two_stages(10.0)
    bd = hieropt.evaluate(inst, [1.0, 0.25])
    assert bd.iteration_time_ns == max(bd.stage_times_ns.values())
    line = _stage_line(evaluation_lines(inst, bd))
    assert line.startswith(
        "pipeline stages (each: the iteration time if every stage were this one; the iteration "
        "time is the slowest's; the issued and per-dimension figures below are L's): H "
        "480.0000 ms, L 560.0000 ms"
    )


def test_the_shipped_405b_instance_says_why_its_stage_is_above_the_iteration_time():
    from tests.cases import REPO
    from tests.cli.util import run

    r = run("solve", REPO / "instances" / "llama3-405b-16k-cluster.toml")
    assert r.exit_code == 0, r.output
    assert "pipeline stages (each: the iteration time if every stage were this one; the " \
        "iteration time composes the stages" in r.stdout


def test_workload_show_says_the_schedule_composes_the_stages():
    """``workload show`` of a plan whose stages' pipeline positions are known (the LLM generator's:
    Llama 3 405B, 16 stages as 3 distinct ones) says loop step composes them, not that the
    iteration time is the slowest stage's; a workload of several stages without positions (the
    two stages above) says the slowest's."""
    from hieropt.report.workload import header_lines
    from tests.cases import REPO
    from tests.cli.util import run

    r = run("workload", "show", REPO / "models" / "llama3-405b.toml", "--summary")
    assert r.exit_code == 0, r.output
    printed = " ".join(r.stdout.split())
    assert (
        "pipeline stages: 3 distinct, this one (the most compute; shown below) and "
        "llama3-405b-stage0 (65 layers), llama3-405b-stage15 (67 layers); loop step composes them "
        "by the schedule (each stage's forwards and backwards at its own pace, the steady state at "
        "the slowest stage's), so the iteration time can be below the slowest stage's time as if "
        "every stage were it" in printed
    )
    assert "the iteration time is the slowest stage's" not in printed
    (line,) = [x for x in header_lines(two_stages(10.0).workload) if x.startswith("pipeline")]
    assert line.endswith(
        "; the iteration time is the slowest stage's at the bandwidths in question"
    )
