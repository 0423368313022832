"""SCIP as an independent oracle for budgets a hair above the cheapest network (the reproducers of
tests/solve/test_near_cheapest_ties.py: two dimensions tie in price, the cheapest network leaves the
others without bandwidth, slack 3e-7 ... 1e-6 of the cost).

Stated in B-space with the budget row, SCIP would meet that row only to its 1e-9 feasibility
tolerance, 3e-3 of a room of 3e-7 of the cost. So the oracle states the same problem exactly in
other variables, from the instance's own data in rational arithmetic (nothing from hieropt's
formulation or solvers), for one binding row sum(bw) == S or sum(bw) >= S and lower bounds: with the
cheapest price p_min (several dimensions may have it) the cheapest network puts every dearer
dimension at its lower bound lo_d and the rest of S on the cheap ones, and every design costs c0 +
sum_d (p_d - p_min) (B_d - lo_d) + p_min s (s = sum(bw) - S >= 0, 0 for an equality), so the budget
is sum_d (p_d - p_min) (B_d - lo_d)
+ p_min s <= room = budget - c0 (exact). A dearer dimension is B_d = lo_d + w_d room / (p_d -
  p_min), the floor's
excess s = w_s room / p_min, with w >= 0 and sum w <= 1 (the budget, of order 1); the cheap
dimensions share S + s
- the others. The iteration time is the loop's formula of tests/oracle/loops.py over t_d =
  1 / B_d (B_d t_d
== 1, scaled by a feasible point). SCIP's point is moved onto the budget and the row (w clipped and
scaled down, the cheap dimensions rescaled, a floor met exactly) and re-evaluated by
hieropt.evaluate.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest

import hieropt
from hieropt.model.cost import cluster_cost_usd_per_gbps
from hieropt.spec import Bound

pyscipopt = pytest.importorskip("pyscipopt")

from hieropt.solvers.near_cheapest import vertex_of  # noqa: E402
from tests.oracle.loops import loop_time, oracle_time_ns, stage_parts  # noqa: E402
from tests.oracle.scip import optimize, scip_model  # noqa: E402
from tests.solve.near_cheapest import REPRODUCERS, reproducer  # noqa: E402

EPS = float(np.finfo(float).eps)


@dataclass(frozen=True)
class Exact:
    """The exact budget of the module docstring: the row sum(bw) ``sense`` S, the bounds lo, the
    cheapest price p_min (its dimensions ``cheap``), and each dearer dimension's room share cap_d =
    room / (p_d - p_min) (GB/s at w_d = 1), the floor's cap_s = room / p_min (how far sum(bw) may
    exceed S)."""

    S: float
    floor: bool
    lo: np.ndarray
    cheap: list[int]
    caps: dict[int, float]
    cap_s: float
    room: float
    c0: float


def exact_budget(inst: hieropt.Instance, budget: float | None = None) -> Exact:
    """:class:`Exact` of an instance with one binding row sum(bw) == S or >= S (all coefficients 1)
    and lower bounds (every other row slack near the cheapest network: the designs are verified),
    within ``budget`` (default: the instance's; its room may then be <= 0)."""
    rows = [c for c in inst.constraints if c.sense in ("==", ">=")]
    assert len(rows) == 1 and all(a == 1 for a in rows[0].coefficients)
    S = Fraction(float(rows[0].rhs))
    p = [Fraction(float(v)) for v in cluster_cost_usd_per_gbps(inst)]
    lo = [Fraction(float(b.lower_gbps)) for b in inst.bounds_or_default]
    pmin = min(p)
    cheap = [d for d, v in enumerate(p) if v == pmin]
    dear = [d for d, v in enumerate(p) if v > pmin]
    # dearer ones at their bounds
    c0 = pmin * (S - sum(lo[d] for d in dear)) + sum(p[d] * lo[d] for d in dear)
    assert S - sum(lo[d] for d in dear) >= sum(lo[d] for d in cheap)
    room = Fraction(float(inst.max_network_cost_usd if budget is None else budget)) - c0
    return Exact(
        float(S),
        rows[0].sense == ">=",
        np.array([float(v) for v in lo]),
        cheap,
        {d: float(room / (p[d] - pmin)) for d in dear},
        float(room / pmin),
        float(room),
        float(c0),
    )


def _point(
    inst: hieropt.Instance, ex: Exact, w: dict[int, float], ws: float, split: dict[int, float]
) -> np.ndarray:
    """A design (GB/s) on the row and within the budget: dearer dimensions at lo_d + caps_d w_d (w
    and the floor's ws clipped at 0, scaled to sum <= 1 - 8 EPS c0 / room: room for the rounding of
    the others), the tied ones sharing the rest in the proportions ``split``; a floor then met
    exactly (the first tied dimension a few last bits up)."""
    w = {d: max(v, 0.0) for d, v in w.items()}
    ws = max(ws, 0.0)
    total = sum(w.values()) + ws
    scale = (1.0 / total if total > 1 else 1.0) * (1 - 8 * EPS * ex.c0 / ex.room)
    bw = ex.lo.copy()
    for d, c in ex.caps.items():
        bw[d] = ex.lo[d] + c * w[d] * scale
    rest = ex.S + ex.cap_s * ws * scale - sum(bw[d] for d in ex.caps)
    share = sum(split.values())
    for d in ex.cheap:
        bw[d] = rest * split[d] / share
    while ex.floor and sum(Fraction(float(b)) for b in bw) < Fraction(ex.S):
        bw[ex.cheap[0]] = np.nextafter(bw[ex.cheap[0]], np.inf)
    return bw


def scip_near_cheapest(inst: hieropt.Instance) -> tuple[np.ndarray, float]:
    """(SCIP's design moved onto the budget and the row, SCIP's lower bound on T in ns) for an
    instance of :func:`exact_budget`'s form."""
    ex = exact_budget(inst)
    assert ex.room > 0
    dear, cheap = list(ex.caps), ex.cheap
    D = inst.network.n_dims
    # a feasible point (a share of the room on every dearer dimension and the floor, at most a
    # quarter of S in all, the tied dimensions even) gives the time unit and scales
    share = 1.0 / (len(dear) + ex.floor + 1)
    w0 = {d: min(share, 0.25 * ex.S / (len(dear) * ex.caps[d])) for d in dear}
    b0 = _point(inst, ex, w0, share if ex.floor else 0.0, dict.fromkeys(cheap, 1.0))
    unit = oracle_time_ns(inst, b0)  # ns per model unit: the objective is of order 1
    assert np.isfinite(unit) and unit == pytest.approx(
        hieropt.evaluate(inst, b0).iteration_time_ns, rel=1e-12
    )
    m = scip_model({})
    w = {d: m.addVar(f"w{d}", lb=0.0, ub=1.0) for d in dear}
    ws = m.addVar("ws", lb=0.0, ub=1.0 if ex.floor else 0.0)
    B = {d: m.addVar(f"B{d}", lb=float(ex.lo[d]), ub=ex.S + ex.cap_s) for d in cheap}
    m.addCons(pyscipopt.quicksum(w.values()) + ws <= 1.0)  # the budget, exactly
    m.addCons(pyscipopt.quicksum(B.values()) + pyscipopt.quicksum(ex.caps[d] * w[d] for d in dear)
              == ex.S - float(sum(ex.lo[d] for d in dear)) + ex.cap_s * ws)
    t = {}
    # B_d = lo_d + caps_d w_d; t_d = u_d / b0_d with (B_d / b0_d) u_d == 1 (coefficients near 1)
    for d in dear:
        u = m.addVar(f"u{d}", lb=0.0, ub=1e12)
        m.addCons((float(ex.lo[d] / b0[d]) + float(ex.caps[d] / b0[d]) * w[d]) * u == 1.0)
        t[d] = (1.0 / float(b0[d])) * u
    for d in cheap:
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

    (weight, ((traffic, latency, C, _),)), = stage_parts(inst)  # (one workload of one stage)
    assert not latency.any() and inst.dimension_mode == "concurrent"
    L = traffic.shape[0]
    S_ = [
        [
            [
                float(traffic[lay, j, d] / unit) * t[d] if traffic[lay, j, d] > 0 else 0.0
                for d in range(D)
            ]
            for j in range(3)
        ]
        for lay in range(L)
    ]
    T = [
        [mx([e for e in S_[lay][j] if not isinstance(e, float)] or [0.0]) for j in range(3)]
        for lay in range(L)
    ]
    objective = weight * loop_time(inst, C / unit, T, 0.0, mx, S_)
    total = m.addVar("total", lb=0.0, ub=None)
    m.addCons(total >= objective)
    m.setObjective(total, "minimize")
    optimize(m, "near-cheapest model")
    point = _point(
        inst,
        ex,
        {d: m.getVal(w[d]) for d in dear},
        m.getVal(ws),
        {d: m.getVal(B[d]) for d in cheap},
    )
    return point, m.getDualbound() * unit


def check_against_scip(inst: hieropt.Instance, sol: hieropt.Solution) -> None:
    """hieropt's certified optimum is no worse than SCIP's re-evaluated design, its bound not above
    it, and SCIP's own bound not above hieropt's value."""
    point, scip_lower = scip_near_cheapest(inst)
    ex = exact_budget(inst)
    t_point = hieropt.evaluate(inst, point).iteration_time_ns
    assert float(cluster_cost_usd_per_gbps(inst) @ point) <= inst.max_network_cost_usd
    assert hieropt.api.verify(inst, point).ok
    # (the point meets the rows to round-off: that much more room)
    round_off = 4 * EPS * ex.c0 / ex.room
    assert sol.objective_bound <= t_point * (1 + round_off)
    assert sol.objective_value <= t_point * (1 + 1e-8)
    # (SCIP agrees: no design much better exists)
    assert scip_lower <= sol.objective_value * (1 + 1e-8)


@pytest.mark.parametrize("key", sorted(REPRODUCERS))
def test_reproducers_against_scip(tmp_path, key):
    """The reproducers (without the exact budget row: LIMIT, the design up to 3.5e-4 slower than
    SCIP's)."""
    inst = reproducer(tmp_path, key)
    sol = hieropt.solve(inst)
    check_against_scip(inst, sol)
    assert sol.status == "optimal" and 0 < sol.gap <= 1e-8, sol.message


TIE_FLOOR_BOUND = (
    "no_overlap",
    [("Ring", 4, "C0"), ("Ring", 4, "C0"), ("Ring", 4, "C2"), ("Switch", 16, "C3")],
    ([4, 4, 1, 1], [4, 2, 1, 1], [4, 4, 4, 16]),
    {
        "C0": (0.0014838079655311598,),
        "C2": (0.001062576634246183,),
        "C3": (0.0013155225640560664, 883.3431411404313, 0.004598319010265123),
    },
    ["sum(bw) >= 0.13883530061804958", "sum(bw) <= 1388.3530061804959"],
    None,
)
"""A random instance: two tied dimensions both starved, a cheaper one filling a floor, a dear Switch
held at its lower bound (bounds = [dim 3 >= 0.014696467622742742]). Feasible at slack 1e-5 and 1e-3
of the cost, not "infeasible: the budget ... leaves a dimension that carries traffic (almost)
without bandwidth"."""


@pytest.mark.parametrize("eps", [1e-6, 1e-5, 1e-3])
def test_tie_floor_and_bound_against_scip(tmp_path, eps):
    base = reproducer(tmp_path, "tie-floor-bound", TIE_FLOOR_BOUND)
    bounds = tuple(Bound(lower_gbps=0.014696467622742742) if d == 3 else b
                   for d, b in enumerate(base.bounds_or_default))
    base = base.model_copy(update={"bounds": bounds})
    c0 = exact_budget(base, budget=0.0).c0
    inst = base.model_copy(update={"max_network_cost_usd": c0 * (1 + eps)})
    sol = hieropt.solve(inst)
    assert sol.status == "optimal" and 0 < sol.gap <= 1e-8, sol.message
    check_against_scip(inst, sol)


SPREAD = (
    "tp_dp_overlap",
    [("Ring", 4, "C0"), ("FullyConnected", 8, "C1"), ("Ring", 4, "C2"), ("Switch", 16, "C3")],
    ([4, 8, 1, 1], [4, 2, 1, 1], [4, 8, 4, 16]),
    {
        "C0": (0.00038013748368599426,),
        "C1": (0.0003386681502932037,),
        "C2": (0.00033444894465674914,),
        "C3": (0.00034178669729824113, 265.2902747536341, 5153.398059204397),
    },
    ["sum(bw) == 0.4199393343215355"],
    None,
)
"""A random instance: three links 1.3 % apart in price next to a Switch 1.6e7 x dearer. The
cost-range LP (costs as shares of their sum) returned the vertex on dimension 1, 1.3 % dearer than
the cheapest (dimension 2): HiGHS's dual tolerance, 1e-9 of the largest cost, is 1e-9 x 1.1e7 = 1e-2
$ per GB/s here. Then a budget 1e-9 above the true cheapest was "below the cheapest network", and
1e-7 above it LIMIT at gap 0.99."""


@pytest.mark.parametrize("eps", [1e-7, 1e-6])
def test_prices_far_apart_against_scip(tmp_path, eps):
    base = reproducer(tmp_path, "spread", SPREAD)
    p = cluster_cost_usd_per_gbps(base)
    exact = Fraction(float(min(p))) * Fraction(float(base.constraints[0].rhs))
    assert Fraction(vertex_of(base).cost_usd) == pytest.approx(exact, rel=1e-15)
    inst = base.model_copy(update={"max_network_cost_usd": float(exact) * (1 + eps)})
    sol = hieropt.solve(inst)
    assert sol.status == "optimal" and 0 < sol.gap <= 1e-8, sol.message
    check_against_scip(inst, sol)
