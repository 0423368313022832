"""SCIP as an independent oracle for budgets a hair above the cheapest network (the break-it reproducers of
tests/solve/test_near_cheapest_ties.py: two dimensions tie in price, the cheapest network leaves the others without
bandwidth, slack 3e-7 ... 1e-6 of the cost).

Stated in B-space with the budget row, SCIP would meet that row only to its 1e-9 feasibility tolerance, 3e-3 of a
room of 3e-7 of the cost. So the oracle states the same problem exactly in other variables, from the instance's own
data in rational arithmetic (nothing from hieropt's formulation or solvers): with the one design row sum(bw) == S
that binds and the cheapest price p_min (several dimensions may have it), every design costs p_min S +
sum_d (p_d - p_min) B_d, so the budget is sum_d (p_d - p_min) B_d <= room = budget - p_min S (exact). A dearer
dimension's bandwidth is B_d = w_d room / (p_d - p_min) with w_d >= 0 and sum_d w_d <= 1 (the budget, of order 1),
its reciprocal t_d = v_d (p_d - p_min) / room with w_d v_d == 1; the tied dimensions share S - sum of the others.
The iteration time is the loop's formula of tests/oracle/test_scip_loops.py over these t_d. SCIP's point is moved
onto the budget and the row (w scaled down, the tied dimensions rescaled) and re-evaluated by hieropt.evaluate.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import hieropt
from hieropt.model.cost import cluster_cost_usd_per_gbps

pyscipopt = pytest.importorskip("pyscipopt")

from tests.oracle.test_scip_loops import _rows, loop_time, oracle_time_ns  # noqa: E402
from tests.oracle.test_scip_oracle import _optimize, _scip_model  # noqa: E402
from tests.solve.test_near_cheapest_ties import REPRODUCERS, reproducer  # noqa: E402

EPS = float(np.finfo(float).eps)


def _point(inst: hieropt.Instance, S: float, cheap: list[int], caps: dict[int, float], w: dict[int, float],
           split: dict[int, float]) -> np.ndarray:
    """A design (GB/s) on the row and within the budget: dearer dimensions at caps_d w_d (w scaled to sum <= 1), the
    tied ones sharing the rest in the proportions ``split``."""
    total = sum(w.values())
    scale = 1.0 / total if total > 1 else 1.0
    bw = np.zeros(inst.network.n_dims)
    for d, c in caps.items():
        bw[d] = c * w[d] * scale * (1 - 1e-15)
    rest = S - bw.sum()
    share = sum(split.values())
    for d in cheap:
        bw[d] = rest * split[d] / share
    return bw


def scip_near_cheapest(inst: hieropt.Instance) -> tuple[np.ndarray, float]:
    """(SCIP's design moved onto the budget and the row, SCIP's lower bound on T in ns) for an instance of the
    module docstring's form."""
    eq = [c for c in inst.constraints if c.sense == "=="]
    assert len(eq) == 1 and all(a == 1 for a in eq[0].coefficients)
    S = float(eq[0].rhs)
    p = [Fraction(float(v)) for v in cluster_cost_usd_per_gbps(inst)]
    pmin = min(p)
    cheap = [d for d, v in enumerate(p) if v == pmin]
    dear = [d for d, v in enumerate(p) if v > pmin]
    room = Fraction(float(inst.max_network_cost_usd)) - pmin * Fraction(S)
    assert room > 0 and len(cheap) >= 2
    caps = {d: float(room / (p[d] - pmin)) for d in dear}  # B_d at w_d = 1
    D = inst.network.n_dims
    # a feasible point (each dearer dimension 1 / len of the room, the tied ones even) gives the time unit and bounds
    w0 = {d: 1.0 / len(dear) for d in dear}
    b0 = _point(inst, S, cheap, caps, w0, dict.fromkeys(cheap, 1.0))
    unit = oracle_time_ns(inst, b0)  # ns per model unit: the objective is of order 1
    assert np.isfinite(unit) and unit == pytest.approx(hieropt.evaluate(inst, b0).iteration_time_ns, rel=1e-12)
    m = _scip_model({})
    w = {d: m.addVar(f"w{d}", lb=0.0, ub=1.0) for d in dear}
    B = {d: m.addVar(f"B{d}", lb=0.0, ub=S) for d in cheap}
    m.addCons(pyscipopt.quicksum(w.values()) <= 1.0)
    m.addCons(pyscipopt.quicksum(B.values()) + pyscipopt.quicksum(caps[d] * w[d] for d in dear) == S)
    t = {}
    for d in dear:  # t_d = v_d / caps_d, w_d v_d == 1
        v = m.addVar(f"v{d}", lb=1.0, ub=1e12)
        m.addCons(w[d] * v == 1.0)
        t[d] = (1.0 / caps[d]) * v
    for d in cheap:  # t_d = u_d / b0_d, B_d u_d == b0_d
        u = m.addVar(f"u{d}", lb=0.0, ub=1e12)
        m.addCons(B[d] * u == float(b0[d]))
        t[d] = (1.0 / float(b0[d])) * u
    counter = iter(range(10**9))

    def mx(items):
        if all(isinstance(e, float) for e in items):
            return max(items)
        z = m.addVar(f"z{next(counter)}", lb=0.0, ub=None)
        for e in items:
            m.addCons(z >= e)
        return z

    (weight, traffic, latency, C), = _rows(inst)
    assert not latency.any() and inst.dimension_mode == "concurrent"
    L = traffic.shape[0]
    S_ = [[[float(traffic[lay, j, d] / unit) * t[d] if traffic[lay, j, d] > 0 else 0.0 for d in range(D)]
           for j in range(3)] for lay in range(L)]
    T = [[mx([e for e in S_[lay][j] if not isinstance(e, float)] or [0.0]) for j in range(3)] for lay in range(L)]
    objective = weight * loop_time(inst, C / unit, T, 0.0, mx, S_)
    total = m.addVar("total", lb=0.0, ub=None)
    m.addCons(total >= objective)
    m.setObjective(total, "minimize")
    _optimize(m, "near-cheapest model")
    point = _point(inst, S, cheap, caps, {d: m.getVal(w[d]) for d in dear}, {d: m.getVal(B[d]) for d in cheap})
    return point, m.getDualbound() * unit


@pytest.mark.parametrize("key", sorted(REPRODUCERS))
def test_reproducers_against_scip(tmp_path, key):
    """hieropt's certified optimum is no worse than SCIP's (re-evaluated) design, and its bound is below it (before:
    LIMIT, the design up to 3.5e-4 slower than SCIP's)."""
    inst = reproducer(tmp_path, key)
    sol = hieropt.solve(inst)
    point, scip_lower = scip_near_cheapest(inst)
    t_point = hieropt.evaluate(inst, point).iteration_time_ns
    budget = inst.max_network_cost_usd
    assert float(cluster_cost_usd_per_gbps(inst) @ point) <= budget
    assert hieropt.api.verify(inst, point).ok
    c0 = float(min(cluster_cost_usd_per_gbps(inst)) * inst.constraints[0].rhs)  # the cheapest network, $
    round_off = 4 * EPS * c0 / (budget - c0)  # (the point meets the rows to round-off: that much more room)
    assert sol.objective_bound <= t_point * (1 + round_off)
    assert sol.objective_value <= t_point * (1 + 1e-8)
    assert scip_lower <= sol.objective_value * (1 + 1e-8)  # (SCIP agrees: no design much better exists)
    assert sol.status == "optimal" and 0 < sol.gap <= 1e-8, sol.message
