""""Unbounded" is decided on the design rows' recession cone, the same at every rescaling.

With only ``sum(bw) >= 10`` no loaded bandwidth has an upper limit, and the iteration time has no
minimum at finite bandwidth (or only an unbounded set of them): every solve must say "unbounded",
whatever the units. Multiplying every collective size and every limit by ``a``
(tests/solve/test_scaling.py) leaves the problem the same; the decision does not rest on the LP's
own optimum, which HiGHS reports as a finite 1e9 .. 1e16 GB/s at some ``a`` (status "optimal") and
as 'Unbounded' at others. Every training loop goes through the same rule, ``step`` included (not 34
LPs stopped at LIMIT with 2.7e8 GB/s without any limit).
"""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.errors import NoSolutionError
from hieropt.spec import LinearConstraint
from hieropt.spec.instance import StepSchedule
from tests.cases import REPO
from tests.solve.portfolios import random_portfolio
from tests.solve.rescale import scaled

SCALES = [1e-6, 1e-3, 1.0, 1e3, 1e6]


def unlimited(seed: int):
    """A random one-workload instance (loop no_overlap, tp_dp_overlap or step) under ``sum(bw) >=
    10`` alone."""
    rng = np.random.default_rng(seed)
    inst = random_portfolio(rng, 1, D=int(rng.integers(2, 4)))
    D = inst.network.n_dims
    loop = str(rng.choice(["no_overlap", "tp_dp_overlap", "step"]))
    step = StepSchedule(microbatches=int(rng.integers(1, 5)), stages=int(rng.integers(1, 4)))
    return inst.model_copy(
        update={
            "constraints": (
                LinearConstraint(
                    coefficients=(1.0,) * D, sense=">=", rhs=10.0, text="sum(bw) >= 10"
                ),
            ),
            "training_loop": loop,
            "step": step if loop == "step" else None,
        }
    )


@pytest.mark.parametrize("seed", [2, 8, 10, 13, 15, 20, 22])  # (each was "optimal" at some scales)
def test_unbounded_at_every_scale(seed):
    inst = unlimited(seed)
    for a in SCALES:
        with pytest.raises(NoSolutionError, match="no upper limit on the bandwidth") as e:
            hieropt.solve(scaled(inst, a, 1.0)).raise_for_status()
        assert e.value.kind == "unbounded"


@pytest.mark.parametrize("seed", [2, 10])
def test_a_limit_makes_it_optimal_at_every_scale(seed):
    inst = unlimited(seed)
    D = inst.network.n_dims
    inst = inst.model_copy(
        update={
            "constraints": inst.constraints
            + (
                LinearConstraint(
                    coefficients=(1.0,) * D, sense="<=", rhs=400.0, text="sum(bw) <= 400"
                ),
            )
        }
    )
    ref = hieropt.solve(inst)
    for a in SCALES:
        sol = hieropt.solve(scaled(inst, a, 1.0))
        assert sol.success and sol.iteration_time_ns == pytest.approx(
            ref.iteration_time_ns, rel=2e-8
        )


def test_step_loop_without_any_limit_is_unbounded():
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-plan-4d.toml")
    assert inst.training_loop == "step"
    inst = inst.model_copy(update={"constraints": (), "bounds": None})
    with pytest.raises(
        NoSolutionError,
        match=r"no upper limit on the bandwidth .*\(bw\[0\], bw\[1\], bw\[2\], "
        r"bw\[3\]\)",
    ) as e:
        hieropt.solve(inst).raise_for_status()
    assert e.value.kind == "unbounded"
