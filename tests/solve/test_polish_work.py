"""The Newton polish is bounded: its Newton systems cost at most 40 LU solves of its largest size
(400 unknowns) per call, least-squares steps counted at 20 each, and past that it gives up (the loop
cuts on from the LP's point).

On a 3-dimension, 3-workload, 50-layer instance the LP has about 340 unknowns in the polish and
singular active sets: each polish ran up to 30 Newton attempts with least-squares (SVD) steps, 2-4 s
of CPU per LP of 0.1 s. The work is counted here, not timed: the (unknowns)^3 of every LU and
least-squares solve the polish makes.
"""

from __future__ import annotations

import numpy as np
import pytest

from hieropt import api
from hieropt.solvers import cut_lp, kkt
from hieropt.spec import (
    Instance,
    LinearConstraint,
)
from tests.cases import random_jobs
from tests.solve.portfolios import COST

LIMIT = 40 * 400**3
"""The polish's work budget, (unknowns)^3."""


def layered(seed: int, W: int = 3, D: int = 3, L: int = 50) -> Instance:
    """W workloads of L layers (compute 1 us .. 10 ms, collectives 100 kB .. 1 GB) on D dimensions,
    loop tp_dp_overlap, under sum(bw) <= 500."""
    rng = np.random.default_rng(seed)
    kinds = ("ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL")
    jobs = random_jobs(rng, W, D, kinds, (3, 7), (5, 9), layers=L)
    return Instance(
        name="layered",
        **jobs,
        cost=COST,
        constraints=(
            LinearConstraint(coefficients=(1.0,) * D, sense="<=", rhs=500.0, text="sum(bw) <= 500"),
        ),
        objective="performance",
        training_loop="tp_dp_overlap",
    )


def test_polish_work_is_capped_and_the_optimum_still_certified(monkeypatch):
    calls: list[float] = []
    lu, lstsq, polish = kkt._solve, np.linalg.lstsq, cut_lp.polish

    def counted_lu(J, F):
        calls[-1] += J.shape[0] ** 3
        return lu(J, F)

    def counted_lstsq(J, F, **kw):
        calls[-1] += 20 * J.shape[0] ** 3
        return lstsq(J, F, **kw)

    def counted_polish(*args):
        calls.append(0.0)
        return polish(*args)

    monkeypatch.setattr(kkt, "_solve", counted_lu)
    monkeypatch.setattr(kkt.np.linalg, "lstsq", counted_lstsq)
    monkeypatch.setattr(cut_lp, "polish", counted_polish)
    inst = layered(0)
    sol = api.solve(inst)
    assert sol.success and sol.gap <= 1e-8
    assert calls and max(calls) <= LIMIT * (1 + 1e-12)
    # the same optimum from the cuts alone (no polish at all), by the same Lagrangian bound
    monkeypatch.setattr(cut_lp, "polish", lambda *args: None)
    cuts = api.solve(inst)
    assert cuts.success
    assert sol.iteration_time_ns == pytest.approx(cuts.iteration_time_ns, rel=2e-8)
