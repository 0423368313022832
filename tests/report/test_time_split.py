"""One split of the iteration time everywhere: compute + pipeline bubble + exposed communication =
T, the same in ``evaluate``, ``solve`` and ``codesign`` (and ``workload plan``'s compute and
bubble); the collective time issued per phase shown as issued, not as parts of the exposed figure;
and each dimension's "slowest" time at most its busy time.

By hand:

- the three stages of tests/solve/stages.py (1F1B, m = 4, p = 3; compute per
  micro-batch f = (100, 150, 50), b = (500, 600, 130) ns, no optimizer step): compute m x the
  largest stage compute 4 x 750 = 3,000 ns; with free communication the schedule's graph ends at
  3,630 ns (stage 1 stalls 30 ns for stage 2's first backward at 430 ns, so its backwards end at
  3,130 ns; stage 0's last backward adds 500 ns), bubble 630 ns; at B = (100, 50) GB/s T =
  82,002,070 ns, exposed communication T - 3,630. The breakdown's stage (s0, the slowest alone)
  issues 4 x 6e6 ns in forward and in input_grad and 16e6 ns in weight_grad: 64e6 ns < the
  exposed 81,998,440 ns, whose critical path runs through stage 2's collectives;
- the tiny LLM on 8 NPUs (tp 2, pp 2, dp 2, 4 micro-batches, 0.1 GFLOP/s): stage 0 f = 102,400, b
  = 204,800 ns, stage 1 f = 122,880, b = 245,760 ns; stage 1 never waits after its first forward,
  so T_0 = f_0 + m (f_1 + b_1) + b_0: compute 4 x 368,640 = 1,474,560 ns, bubble f_0 + b_0 = 307,200
  ns;
- an all-reduce of S = 4 MB on Ring 2 x Ring 2 (dimension 0 carries 2 S (2 - 1)/2 = 4 MB, dimension
  1 the half shard's 2 MB) at B = (10, 1) GB/s: busy (0.4, 2.0) ms; run one dimension after the
  other it takes 2.4 ms, of which dimension 1 is the slowest (the only one working) for its own 2.0
  ms, not the whole 2.4 ms; concurrently it takes 2.0 ms, all of it on dimension 1.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

import hieropt
from hieropt.io.instance import load_instance
from hieropt.model.plan import plan_figures
from hieropt.model.timing import evaluate as free_network  # (far above hieropt.evaluate's 1e6)
from hieropt.report.codesign import summary_lines
from hieropt.report.text import dimension_table, time_table
from hieropt.spec import (
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Layer,
    LinearConstraint,
    Mapping,
    Network,
    Phase,
    Workload,
)
from hieropt.spec.layers import Collective
from hieropt.studies.codesign.export import write_instances
from hieropt.studies.codesign.search import codesign
from hieropt.workloads.llm import NPU
from hieropt.workloads.llm.space import CodesignSpace, PlanChoices
from tests.cases import REPO
from tests.solve.stages import schedule_graph_ns, three_stages
from tests.workloads.tiny import params

T_HAND = 82_002_070.0  # tests/solve/test_pipeline_stages.py, B = (100, 50)


def _rows(table) -> list[tuple[str, str, str]]:
    """The table's rows as (part, time, share) texts."""
    cols = [[str(c) for c in col.cells] for col in table.columns]
    return list(zip(*cols, strict=True))


def _split(bd) -> tuple[float, float, float]:
    return bd.compute_ns, bd.bubble_ns, bd.communication_ns


def test_three_stage_pipeline_split_by_hand():
    inst = three_stages()
    assert schedule_graph_ns([100.0, 150.0, 50.0], [500.0, 600.0, 130.0], 4) == 3630.0
    bd = hieropt.evaluate(inst, [100.0, 50.0])
    assert bd.iteration_time_ns == pytest.approx(T_HAND, rel=1e-14)
    assert _split(bd) == pytest.approx((3000.0, 630.0, T_HAND - 3630.0), rel=1e-14)
    free = free_network(inst, [1e15, 1e15])  # T_0: compute + bubble
    assert free.iteration_time_ns == pytest.approx(3630.0, rel=1e-8)
    assert _split(free)[:2] == pytest.approx((3000.0, 630.0), rel=1e-14)
    assert bd.slowest_stage == "s0"
    issued = bd.communication_by_phase_ns
    assert issued == pytest.approx({"forward": 24e6, "input_grad": 24e6, "weight_grad": 16e6},
                                   rel=1e-14)
    assert sum(issued.values()) < bd.communication_ns
    assert bd.to_dict()["bubble_ns"] == bd.bubble_ns
    # solve at the same bandwidths: the same split
    fixed = inst.model_copy(update={"constraints": (
        LinearConstraint(coefficients=(1.0, 0.0), sense="==", rhs=100.0, text="bw[0] == 100"),
        LinearConstraint(coefficients=(0.0, 1.0), sense="==", rhs=50.0, text="bw[1] == 50"),
    )})
    sol = hieropt.solve(fixed)
    assert sol.bw_gbps == pytest.approx([100.0, 50.0], rel=1e-9)
    assert _split(sol.breakdown) == pytest.approx(_split(bd), rel=1e-9)


def test_the_time_table_adds_up_and_sets_the_issued_rows_apart():
    bd = hieropt.evaluate(three_stages(), [100.0, 50.0])
    rows = _rows(time_table(bd, "step"))
    assert [r[0] for r in rows] == [
        "compute", "pipeline bubble (fill and drain)", "exposed communication", "iteration",
        "issued in forward", "issued in input_grad", "issued in weight_grad",
    ]
    assert rows[1][1] == "0.0006" and rows[2][1] == "81.9984" and rows[3][1] == "82.0021"
    assert [r[2] for r in rows[4:]] == ["-"] * 3  # issued: not shares of the iteration
    caption = str(time_table(bd, "step").caption)
    assert "collective time by s0 per iteration, not parts of the sum" in caption


def test_without_a_pipeline_the_phases_are_the_parts():
    """No overlap, no pipeline: the issued collectives are the exposed communication; no bubble
    row."""
    bd = hieropt.evaluate(_sequential_all_reduce("sequential"), [10.0, 1.0])
    assert bd.bubble_ns == 0.0 and bd.compute_ns == 100.0
    assert [r[0] for r in _rows(time_table(bd))] == [
        "compute", "communication: forward", "communication: input_grad",
        "communication: weight_grad", "iteration",
    ]


def _sequential_all_reduce(mode: str) -> Instance:
    ar = Phase(compute_ns=100.0, collective=Collective.ALL_REDUCE, size_bytes=4e6)
    idle = Phase(compute_ns=0.0, collective=Collective.NONE, size_bytes=0.0)
    return Instance(
        name="seq",
        objective="performance",
        training_loop="no_overlap",
        dimension_mode=mode,
        network=Network(dims=(Dimension(block="Ring", npus=2, cost_class="C"),) * 2),
        workload=Workload(
            name="w", layers=(Layer(name="l", forward=ar, input_grad=idle, weight_grad=idle),)
        ),
        mapping=Mapping(forward=(2, 2), input_grad=(1, 1), weight_grad=(1, 1)),
        cost=CostModel(classes={"C": CostClass(link_usd_per_gbps=1.0)}),
    )


@pytest.mark.parametrize("mode, T, slowest", [
    ("sequential", 2.4e6, [0.4e6, 2.0e6]),
    ("concurrent", 2.0e6, [0.0, 2.0e6]),
])
def test_slowest_is_at_most_busy_by_hand(mode, T, slowest):
    bd = hieropt.evaluate(_sequential_all_reduce(mode), [10.0, 1.0])
    assert bd.communication_ns == pytest.approx(T, rel=1e-14)
    assert bd.busy_ns_per_dim.tolist() == pytest.approx([0.4e6, 2.0e6], rel=1e-14)
    assert bd.bottleneck_ns_per_dim.tolist() == pytest.approx(slowest, rel=1e-14, abs=1e-9)
    assert bd.bottleneck_ns_per_dim.sum() == pytest.approx(T, rel=1e-14)


def test_the_shipped_4d_plan_busy_bounds_slowest():
    """instances/gpt3-plan-4d.toml at its optimum (sequential groups spanning dimensions): every
    dimension's slowest time is at most its busy time, and they add up to the issued time."""
    inst = load_instance(REPO / "instances" / "gpt3-plan-4d.toml")
    bd = hieropt.evaluate(inst, [298.168, 141.675, 36.255, 23.901])
    assert np.all(bd.bottleneck_ns_per_dim <= bd.busy_ns_per_dim * (1 + 1e-12))
    assert bd.bottleneck_ns_per_dim.sum() == pytest.approx(
        sum(bd.communication_by_phase_ns.values()), rel=1e-12
    )
    text = " ".join(_render(dimension_table(inst, bd, "dims")).split())  # (the caption wraps)
    assert "at most busy" in text
    free = free_network(inst, [1e12] * 4)
    assert bd.compute_ns + bd.bubble_ns == pytest.approx(free.iteration_time_ns, rel=1e-9)


def _render(table) -> str:
    console = Console(width=400, record=True)
    console.print(table)
    return console.export_text()


def _tiny_space() -> CodesignSpace:
    slow = params().model_copy(update={"npu": NPU(peak_tflops=1e-4, efficiency=1.0, hbm_gib=1.0)})
    return CodesignSpace(
        name="tiny-split",
        base=slow,
        npus=8,
        plans=PlanChoices(tp=(2,), pp=(2,), micro_batch_size=(2,)),
        network=Network(dims=(Dimension(block="Switch", npus=2, cost_class="A"),
                              Dimension(block="Switch", npus=4, cost_class="A"))),
        cost=CostModel(classes={"A": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0,
                                               nic_usd_per_gbps=1.0)}),
        constraints=("bw[0] == 2", "bw[1] == 1"),
    )


def test_codesign_splits_as_solve_and_workload_plan_by_hand(tmp_path):
    sp = _tiny_space()
    result = codesign(sp, workers=1)
    best = result.best
    assert best.compute_ns == pytest.approx(1_474_560.0, rel=1e-12)
    assert best.bubble_ns == pytest.approx(307_200.0, rel=1e-12)
    assert best.communication_ns == pytest.approx(
        best.iteration_time_ns - 1_781_760.0, rel=1e-12
    ) and best.communication_ns > 0
    c = plan_figures(sp.base).compute()  # hieropt workload plan's figures
    assert (c["iteration_compute_ns"], c["bubble_ns"]) == pytest.approx(
        (1_474_560.0, 307_200.0), rel=1e-12
    )
    # hieropt solve on the instance codesign writes: the same split
    (path,) = write_instances(result, tmp_path)
    sol = hieropt.solve(load_instance(path))
    assert sol.iteration_time_ns == pytest.approx(best.iteration_time_ns, rel=1e-9)
    assert _split(sol.breakdown) == pytest.approx(
        (best.compute_ns, best.bubble_ns, best.communication_ns), rel=1e-9
    )
    # the issued communication per group is labelled as such, apart from the sum
    line = next(x for x in summary_lines(result) if "= compute" in x)
    assert "= compute 1.4746 + bubble 0.3072 + exposed communication " in line
    assert "issued per iteration by the slowest stage (not parts of the sum): " in line


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    m=st.integers(1, 6),
    v=st.sampled_from([1, 2]),
    overlap=st.booleans(),
    ids=st.sampled_from([((0,), (1,), (2,)), ((0, 1), (2,)), ((0,), (1, 2)), ()]),
    bw=st.tuples(st.floats(0.5, 1e4), st.floats(0.5, 1e4)),
)
def test_the_split_holds_on_every_schedule(m, v, overlap, ids, bw):
    """Graph, interleaved composition, overlapped last backward, stages not composed: compute,
    bubble and exposed communication are non-negative and add up to T; compute + bubble is T with
    free communication; every dimension's slowest time is at most its busy time."""
    inst = three_stages(m=m, v=v, overlap=overlap, ids=ids)
    if ids == ():
        inst = inst.model_copy(update={"workload": inst.workload.model_copy(
            update={"pipeline_stages": ()})})
    bd = hieropt.evaluate(inst, list(bw))
    T = bd.iteration_time_ns
    assert bd.compute_ns > 0 and bd.bubble_ns >= 0 and bd.communication_ns > 0
    assert bd.compute_ns + bd.bubble_ns + bd.communication_ns == pytest.approx(T, rel=1e-12)
    free = free_network(inst, [1e18, 1e18]).iteration_time_ns
    assert bd.compute_ns + bd.bubble_ns == pytest.approx(free, rel=1e-9)
    assert np.all(bd.bottleneck_ns_per_dim <= bd.busy_ns_per_dim * (1 + 1e-12))
