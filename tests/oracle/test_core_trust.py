"""Hard solver-core cases, each against SCIP (tests/oracle/scip_loops.py's independent model).

- ``tp_dp_overlap`` with ``dimension_mode = "sequential"`` on 3 Ring dimensions of 64, 4, 5 NPUs,
  one reduce-scatter of 10,347 bytes in the input gradient (group 64, 2, 1) and one of
  139,196,988,052 bytes in the weight gradient (group 8, 1, 5): at ``sum(bw) <= 30`` hieropt
  reported "infeasible" (it is feasible), at ``<= 300`` LIMIT with a multi-percent gap; the same
  under ``no_overlap`` or concurrent dimensions solved. The optimum puts about 1e-9 of the total
  bandwidth on dimension 1 (the input gradient only has to finish within the weight gradient's
  time): with one bandwidth unit for every dimension the cuts there left HiGHS's matrix range. Fixed
  by the per-dimension units of hieropt/formulation/scale.py and the Lagrangian bound of
  hieropt/solvers/dual_bound.py.
- the same instance under every loop and mode, and scaled by 1e-6 .. 1e6 in bytes and bandwidth
  together: the same time, the bandwidths scaled.
"""

from __future__ import annotations

import pytest

import hieropt
from hieropt.spec import (
    Collective,
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

pytest.importorskip("pyscipopt")

from tests.oracle.scip_loops import check_against_scip  # noqa: E402

RS = Collective.REDUCE_SCATTER
IDLE = Phase(compute_ns=0.0, collective=Collective.NONE, size_bytes=0.0)


def reported(
    rhs: float, loop: str = "tp_dp_overlap", mode: str = "sequential", scale: float = 1.0
) -> Instance:
    """The instance of the module docstring with ``sum(bw) <= rhs``, bytes and the bandwidth cap
    times ``scale``."""
    return Instance(
        name="issue10",
        objective="performance",
        training_loop=loop,
        dimension_mode=mode,
        network=Network(
            dims=(
                Dimension(block="Ring", npus=64, cost_class="C"),
                Dimension(block="Ring", npus=4, cost_class="C"),
                Dimension(block="Ring", npus=5, cost_class="C"),
            )
        ),
        workload=Workload(
            name="w",
            layers=(
                Layer(
                    name="l0",
                    forward=IDLE,
                    input_grad=Phase(compute_ns=0.0, collective=RS, size_bytes=10347.0 * scale),
                    weight_grad=Phase(
                        compute_ns=0.0, collective=RS, size_bytes=139196988052.0 * scale
                    ),
                ),
            ),
        ),
        mapping=Mapping(forward=(1, 1, 1), input_grad=(64, 2, 1), weight_grad=(8, 1, 5)),
        cost=CostModel(classes={"C": CostClass(link_usd_per_gbps=1.0)}),
        constraints=(
            LinearConstraint(
                coefficients=(1.0, 1.0, 1.0),
                sense="<=",
                rhs=rhs * scale,
                text=f"sum(bw) <= {rhs * scale:g}",
            ),
        ),
    )


@pytest.mark.parametrize("rhs", [30.0, 300.0])
@pytest.mark.parametrize(
    "loop,mode",
    [
        ("tp_dp_overlap", "sequential"),
        ("tp_dp_overlap", "concurrent"),
        ("no_overlap", "sequential"),
        ("no_overlap", "concurrent"),
    ],
)
def test_reported_instance_matches_scip(rhs, loop, mode):
    check_against_scip(reported(rhs, loop, mode), print)


@pytest.mark.parametrize("scale", [1e-6, 1e-3, 1e3, 1e6])
def test_reported_instance_is_invariant_under_rescaling(scale):
    """Bytes and bandwidth x scale: the time is the same, every bandwidth x scale (to the gap)."""
    base = hieropt.solve(reported(30.0))
    sol = hieropt.solve(reported(30.0, scale=scale))
    assert base.success and sol.success, sol.message
    assert sol.gap <= 1e-8
    assert sol.iteration_time_ns == pytest.approx(base.iteration_time_ns, rel=2e-8)
    assert sol.lower_bound_ns == pytest.approx(base.lower_bound_ns, rel=2e-8)
    assert sum(sol.bw_gbps) == pytest.approx(30.0 * scale, rel=1e-9)
