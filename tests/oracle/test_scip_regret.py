"""SCIP as an independent global oracle for min-max regret portfolios (the model:
tests/oracle/scip_traffic.py).

SCIP gets the non-convex model straight from the per-collective traffic (``phase_traffic``; nothing
from hieropt's formulation or solvers): each workload's own optimum T_w* = min C_w + sum_k tau^w_k
s.t. tau^w_k >= m^w_kd t_d, B_d t_d == 1, the design rows (via :func:`scip_min_time`), then

    min z   s.t.  C_w + sum_k tau^w_k <= z T_w*  (every w),  tau^w_k >= m^w_kd t_d,  B_d t_d == 1,
    design rows,

solved to global optimality by spatial branch and bound. SCIP's point is re-evaluated with the
evaluator.
"""

from __future__ import annotations

import numpy as np
import pytest

from hieropt import api
from hieropt.solvers.portfolio import single_job
from tests.cases import seeds
from tests.solve.portfolios import random_portfolio

pytest.importorskip("pyscipopt")

from tests.oracle.scip import ScipFailed  # noqa: E402
from tests.oracle.scip_traffic import scip_min_max_regret, scip_min_time  # noqa: E402


@pytest.mark.parametrize("seed", seeds(4, 10))
def test_min_max_regret_matches_scip(seed):
    """Seeds 0-3: 2 dimensions, 2 or 3 workloads (seconds); seeds 4-9 (marked slow) also 3
    dimensions (minutes)."""
    rng = np.random.default_rng(1000 + seed)
    inst = random_portfolio(
        rng, W=2 + seed % 2, D=2 if seed < 4 else 3, total=float(rng.integers(100, 1000))
    )
    sol = api.solve(inst, objective="min_max_regret")
    try:
        own = [
            api.evaluate(
                single_job(inst, w), scip_min_time(single_job(inst, w))[0]
            ).iteration_time_ns
            for w in range(len(inst.jobs))
        ]
        bw = scip_min_max_regret(inst, own, sol.objective_value * 1.01)
    except ScipFailed as e:
        pytest.skip(f"SCIP proved no optimum: {e}")
    # the own optima agree, and so does the regret (SCIP's point re-evaluated, with SCIP's own
    # optima)
    assert sol.portfolio.own_optima_ns == pytest.approx(own, rel=1e-6)
    z_scip = max(
        api.evaluate(single_job(inst, w), bw).iteration_time_ns / own[w] for w in range(len(own))
    )
    assert sol.objective_value == pytest.approx(z_scip, rel=1e-6)
    assert sol.objective_value <= z_scip * (1 + 1e-8)  # never beaten
