"""SCIP as an independent global oracle for performance per cost, plus budget / time-target / front
consistency

The oracle states min T(B) * cost(B) directly as a bilinear program with pyscipopt, from the
per-collective traffic (``phase_traffic``, no aggregation) and the cost classes of the instance
(nothing from hieropt's formulation, cost module or solvers):

    min z  s.t.  z >= T * C,  T = compute + sum_k tau_k,  C = sum_d c_d B_d,
                 tau_k >= m_kd t_d,  B_d t_d >= 1 (loaded d),  design rows and bounds on B,

with B in GB/s and time and cost scaled to ~1 (see :func:`scip_min_time_cost`). SCIP solves it
globally by spatial branch and bound on the bilinear product T * C.

``B_d t_d >= 1`` instead of ``== 1``: the model's T is then >= T(B), with equality at t_d = 1/B_d,
so both forms have the same optimum and any SCIP point's true product T(B) C(B) is at most SCIP's
objective (up to tolerances). ``B t >= 1`` with B, t >= 0 is convex (SCIP handles it without
branching); with the equality, SCIP 10 without GMP hit "error in LP solver" on every fallback
setting after 15-40 s on simple 2-dimension instances (sum(bw) == 1000, 7 collectives) that the
inequality form solves in 0.1 s. SCIP's objective can still undercut the truth because the rows only
hold to the feasibility tolerance (pitfall P5), so SCIP's point is always re-evaluated with
:func:`hieropt.evaluate`.

The hypothesis test also checks, on the same instances, that the fastest network within a budget X
and the cheapest network reaching its time T_X give X back, and that a 6-point Pareto front is
monotone. The ``KEPT_*`` examples reproduce hieropt failures this test found (see their comments).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

import hieropt
from hieropt import SolveOptions
from hieropt.model.traffic import phase_traffic
from hieropt.spec import (
    Instance,
)
from tests.cases import kept

pyscipopt = pytest.importorskip("pyscipopt")

from tests.oracle.priced_instances import instances, unit_costs_usd_per_gbps  # noqa: E402
from tests.oracle.scip import (  # noqa: E402
    SCIP_ATTEMPTS,
    ScipFailed,
    add_design,
    describe,
    feasible_point,
    scip_model,
)

SCIP_TIME_LIMIT_S = 20.0  # CPU seconds per attempt (the imported model uses SCIP's CPU clock)
# enough for the 1e-6 comparison; 1e-8 cost SCIP up to 100k nodes on 2-dimension instances
SCIP_GAP = 1e-7
REL_MATCH = 1e-6  # hieropt's optimum vs SCIP's (re-evaluated) point


@dataclass(frozen=True)
class ScipProduct:
    """SCIP's answer: its bandwidths (GB/s), status, and its primal / dual bounds converted to ns *
    $."""

    bw: np.ndarray
    status: str
    # SCIP's own objective at its point (may undercut T(bw) * cost(bw), pitfall P5)
    objective: float
    # SCIP's proven lower bound on the optimum (same caveat, to the feasibility tolerance)
    dual_bound: float
    gap: float
    nodes: int
    seconds: float
    attempt: int  # index into SCIP_ATTEMPTS


def _scip_product_once(instance: Instance, extra: dict, time_factor: float, time_limit_s: float,
                       gap: float) -> ScipProduct:
    D = instance.network.n_dims
    traffic_bytes = phase_traffic(instance).reshape(-1, D)
    traffic_bytes = traffic_bytes[(traffic_bytes > 0).any(axis=1)]  # (collectives, D)
    loaded = [d for d in range(D) if (traffic_bytes[:, d] > 0).any()]
    assert loaded, "the oracle needs at least one collective with traffic"
    compute_ns = float(instance.workload.table.compute_ns.sum())
    c_usd = unit_costs_usd_per_gbps(instance)

    # units: B in GB/s; time in units of T(B0) * time_factor, cost in units of C(B0), so that T, C
    # and z are ~1
    b0 = feasible_point(instance, loaded, extra)
    t0_ns = compute_ns + float(
        sum(max(row[d] / b0[d] for d in np.flatnonzero(row > 0)) for row in traffic_bytes)
    )
    time_unit, cost_unit = t0_ns * time_factor, float(c_usd @ b0)
    traffic, compute, c = traffic_bytes / time_unit, compute_ns / time_unit, c_usd / cost_unit

    def cost_lp(sense: str) -> float:
        lp = scip_model(extra)
        Bv = add_design(lp, instance)
        lp.setObjective(pyscipopt.quicksum(float(c[d]) * Bv[d] for d in range(D)), sense)
        try:
            lp.optimize()
        except Exception as e:  # pyscipopt raises a bare Exception for SCIP error codes
            raise ScipFailed(f"cost LP ({sense}): {e}") from e
        if lp.getStatus() != "optimal":
            raise ScipFailed(f"cost LP ({sense}): status {lp.getStatus()!r}")
        return lp.getObjVal()

    c_min, c_max = cost_lp("minimize"), cost_lp("maximize")
    assert c_min > 0, "no floor on bandwidth: the product has no minimiser at positive bandwidth"
    # T(B0) C(B0) in model units, >= the optimum (with a margin)
    p0 = (t0_ns / time_unit) * 1.0 * (1 + 1e-4)
    t_max = p0 / c_min
    if compute > 0:
        c_max = min(c_max, p0 / compute)

    m = scip_model({**extra, "limits/time": time_limit_s, "limits/gap": gap})
    B = add_design(m, instance)
    t = {d: m.addVar(f"t{d}", lb=0.0, ub=(t_max - compute) / traffic[:, d].max()) for d in loaded}
    for d in loaded:
        # t_d >= 1/B_d: convex, exact at the optimum (see above)
        m.addCons(B[d] * t[d] >= 1.0, name=f"inv{d}")
    tau = [m.addVar(f"tau{k}", lb=0.0, ub=t_max - compute) for k in range(traffic.shape[0])]
    for k, row in enumerate(traffic):
        for d in np.flatnonzero(row > 0):
            m.addCons(tau[k] >= float(row[d]) * t[int(d)], name=f"epi{k}_{d}")
    T = m.addVar("T", lb=compute, ub=t_max)
    C = m.addVar("C", lb=c_min, ub=c_max)
    z = m.addVar("z", lb=0.0, ub=None)
    m.addCons(T == compute + pyscipopt.quicksum(tau), name="time")
    m.addCons(C == pyscipopt.quicksum(float(c[d]) * B[d] for d in range(D)), name="cost")
    m.addCons(z >= T * C, name="product")  # bilinear, non-convex: spatial branch and bound
    m.setObjective(z, "minimize")
    try:
        m.optimize()
    except Exception as e:
        raise ScipFailed(f"product model: {e}") from e
    status = m.getStatus()
    if m.getNSols() == 0 or status not in ("optimal", "gaplimit", "timelimit"):
        raise ScipFailed(f"product model: status {status!r} with {m.getNSols()} solutions")
    scale = time_unit * cost_unit  # model objective -> ns * $
    return ScipProduct(
        bw=np.array([max(0.0, m.getVal(v)) for v in B]),
        status=status,
        objective=m.getObjVal() * scale,
        dual_bound=m.getDualbound() * scale,
        gap=m.getGap(),
        nodes=m.getNNodes(),
        seconds=m.getSolvingTime(),
        attempt=-1,
    )


def scip_min_time_cost(instance: Instance, time_limit_s: float = SCIP_TIME_LIMIT_S,
                       gap: float = SCIP_GAP) -> ScipProduct:
    """Globally minimise iteration time x network cost of ``instance`` with SCIP, independently of
    hieropt.

    Model: see the module docstring. Units: B in GB/s; time and cost in units of T(B0) and C(B0),
    where B0 is a feasible point from one LP (the one that maximises the smallest loaded bandwidth),
    so T, C and z are all ~1. (Fixed units, ms and M$ as in hieropt's LP, put z near 1e-6 on small
    random instances, at SCIP's tolerances: SCIP then declared a feasible instance infeasible.)
    Valid bounds keep SCIP's relaxations finite and cut off no point at least as good as B0, whose
    product P0 = T(B0) C(B0) bounds the optimum: the cost C lies in [C_min, C_max] (two LPs), so T
    <= P0 / C_min, and C <= P0 / compute when compute > 0; then tau_k <= T_max - compute and t_d <=
    (T_max - compute) / max_k m_kd. When SCIP fails (an LP-solver error), the settings of
    :data:`tests.oracle.scip.SCIP_ATTEMPTS` are tried in order (their KB unit becomes a
    1000x smaller time unit); a time limit is not a failure.

    Returns:
        :class:`ScipProduct` (products in ns * $). Requires C_min > 0 (a floor on bandwidth) and a
        finite C_max.

    Raises:
        ScipFailed: every attempt ended in an error.
    """
    errors = []
    for i, (extra, unit_bytes) in enumerate(SCIP_ATTEMPTS):
        try:
            out = _scip_product_once(instance, extra, unit_bytes / 1e6, time_limit_s, gap)
        except ScipFailed as e:
            errors.append(f"{extra or 'default'} @ {unit_bytes:g} B/unit: {e}")
            continue
        return ScipProduct(**{**out.__dict__, "attempt": i})
    raise ScipFailed("SCIP failed on every attempt: " + "; ".join(errors))


# ------------------------------------------------------------------------------------ kept examples


def _kept(dims, prices, layers, groups, rows, bounds=None) -> Instance:
    """A performance-per-cost instance from plain tuples (:func:`tests.cases.kept`)."""
    return kept(dims, prices, layers, groups, rows, bounds, objective="performance_per_cost")


# Kept examples, found by the test below (its strategy, round numbers aside); each made an earlier
# solver fail as described.
# A: the cheapest network (all bandwidth on dim 0) leaves loaded dim 1 at zero.
# solve(performance_per_cost) raised
#    ValueError "Geometric sequence cannot include zero" from TimeLP._seed (reach = 0 at the first
# kappa).
KEPT_ZERO_REACH = _kept(
    [("Ring", 2), ("Ring", 2)], [(0.5,), (1.0,)],
    [((10.0, "REDUCESCATTER", 1e5), (0.0, "NONE", 0.0), (0.0, "NONE", 0.0))],
    ((1, 2), (1, 1), (2, 1)), [((1.0, 1.0), "==", 100.0)])
# B: solve(performance_per_cost) raised SolverError "HiGHS stopped on cutting-plane LP 1 with 'Not
# Set'": a warm-
#    started dual simplex failed ("excessive dual values", seed-cut coefficients span 4e-6..4e6); a
# cold re-solve
#    (Highs.clearSolver(), then run) succeeds.
KEPT_HIGHS_ERROR = _kept(
    [("FullyConnected", 4), ("Switch", 2)],
    [(15.5,), (3.5, 9.5, 1.0)],
    [
        (
            (1e6, "REDUCESCATTER", 595506.1361414735),
            (225.0, "ALLREDUCE", 147558827.94460452),
            (398.0, "ALLTOALL", 147558827.94460452),
        ),
        (
            (1e6, "REDUCESCATTER", 1e8),
            (1e6, "ALLTOALL", 2605884.2258857572),
            (225.0, "ALLGATHER", 192697.8373313814),
        ),
    ],
    ((4, 2), (4, 1), (3, 2)),
    [((1.0, 1.0), ">=", 157.0), ((1.0, 1.0), "<=", 372.247)],
)
# C: pareto(points=6) raised SolverError "HiGHS stopped on cutting-plane LP 12 with 'Infeasible'"
# (also fixed by a
#    cold re-solve).
KEPT_FRONT_INFEASIBLE = _kept(
    [("FullyConnected", 3), ("Ring", 2), ("FullyConnected", 8)],
    [(1.5,), (19.5,), (16.5,)],
    [
        (
            (1e4, "ALLGATHER", 1e8),
            (70.0, "REDUCESCATTER", 688238.4290338191),
            (300.0, "ALLTOALL", 131665.12323240822),
        ),
        ((6350895.0, "ALLREDUCE", 85393858.65076041), (0.0, "NONE", 0.0), (0.0, "NONE", 0.0)),
    ],
    ((2, 2, 2), (1, 2, 7), (1, 2, 4)),
    [
        ((1.0, 1.0, 1.0), "==", 212.0),
        ((3.5, 0.0, 0.0), ">=", 43.28333333333333),
        ((0.0, -1.0, 1.0), ">=", 0.0),
    ],
)
# D: an invalid lower bound. hieropt reported 2985990807095.28 ns*$ with bound 2985990789507.95 (gap
# 5.9e-9), but
#    SCIP's feasible point [289.0407, 49.9369, 69.0224] (rows hold to 1e-11) evaluates to
# 2985989626393.14, 3.9e-7
#    below hieropt's bound (and 3.95e-7 below its value: inside REL_MATCH, so only the bound check
# catches it). The
#    kappa search's tangent line from kappa = 203541.72 (one LP, budget dual -67.43 ns/$) lies
# 3.3e-6 above f at
#    kappa = 203534.65: that LP's duals leave a stationarity residual |c - A'y - z| of 1.8e-7
# (1.9e-11 on its
#    neighbours), so the line is not a valid under-estimator.
KEPT_BAD_BOUND = _kept(
    [("FullyConnected", 7), ("Ring", 3), ("Ring", 4)],
    [(6.0,), (5.5,), (6.0,)],
    [
        (
            (1055.0, "ALLTOALL", 1e8),
            (1e4, "ALLGATHER", 91530153.02258015),
            (64.0, "REDUCESCATTER", 13772273.639981484),
        ),
        (
            (1055.0, "ALLREDUCE", 100000.0000000002),
            (0.0, "ALLREDUCE", 3748282.0795397717),
            (0.0, "ALLTOALL", 283572473.7478945),
        ),
        (
            (1e4, "REDUCESCATTER", 179957187.59856093),
            (2657010.0, "ALLGATHER", 101741314.63055769),
            (0.0, "NONE", 0.0),
        ),
    ],
    ((6, 3, 1), (5, 1, 3), (5, 1, 2)),
    [((1.0, 1.0, 1.0), ">=", 408.0), ((1.0, 1.0, 1.0), "<=", 736.032)],
)


# E: a random procurement sweep: a kappa branch and bound stopped at "10000 nodes" without a
#    certificate (gap 1.4e-5) after 1.5 s; the cost-share LP proves it in ~11 LPs.
KEPT_NODE_LIMIT = _kept(
    [("FullyConnected", 4), ("FullyConnected", 7), ("Switch", 4)],
    [
        (25.571069153635882,),
        (51.824033484702056,),
        (37.845182347381105, 8.182742129163483, 18.411169790617837),
    ],
    [
        (
            (1e6, "ALLREDUCE", 288872302.83993435),
            (1000.0, "ALLTOALL", 1943480394.1532714),
            (0.0, "ALLTOALL", 164217757.97527638),
        )
    ],
    ((2, 3, 1), (3, 1, 1), (1, 7, 2)),
    [((1.0, 1.0, 1.0), ">=", 0.2930441431833629), ((1.0, 1.0, 1.0), "<=", 0.5106670874861501)],
)


def violation(instance: Instance, bw: np.ndarray) -> float:
    """Largest violation of the design rows and bounds at ``bw``, relative to max(1, |rhs|, sum |a_d
    bw_d|)."""
    worst = 0.0
    for c in instance.constraints:
        a = np.asarray(c.coefficients, dtype=float)
        lhs, scale = float(a @ bw), max(1.0, abs(c.rhs), float(np.abs(a * bw).sum()))
        over = {"<=": lhs - c.rhs, ">=": c.rhs - lhs, "==": abs(lhs - c.rhs)}[c.sense]
        worst = max(worst, over / scale)
    for b, x in zip(instance.bounds_or_default, bw, strict=True):
        worst = max(worst, (b.lower_gbps - x) / max(1.0, abs(x)))
        if b.upper_gbps is not None:
            worst = max(worst, (x - b.upper_gbps) / max(1.0, abs(x)))
    return worst


def _check_against_scip(inst: Instance, sol: hieropt.Solution) -> None:
    sc = scip_min_time_cost(inst)
    bd = hieropt.evaluate(inst, sc.bw)
    scip_true = bd.iteration_time_ns * bd.network_cost_usd
    viol = violation(inst, sc.bw)
    note(
        f"SCIP {sc.status} (attempt {sc.attempt}) bw={sc.bw.tolist()} T*C(bw)={scip_true!r} "
        f"objective={sc.objective!r} dual bound={sc.dual_bound!r} gap={sc.gap:.2e} "
        f"nodes={sc.nodes} "
        f"{sc.seconds:.2f}s row violation={viol:.1e}"
    )
    assert math.isfinite(scip_true)
    value = sol.objective_value
    # SCIP's proven lower bound cannot exceed a value hieropt evaluated exactly at a point meeting
    # every constraint (SCIP's bound holds only to its feasibility tolerance, rows within 1e-9: 1e-6
    # relative covers it)
    assert sc.dual_bound <= value * (1 + REL_MATCH), (
        f"SCIP's dual bound {sc.dual_bound!r} is above hieropt's value"
    )
    if viol > 1e-9:
        # SCIP's point breaks a design row by more than its tolerance (seen: bw[0] >= bw[1] off by
        # 9e-6 GB/s at a vertex); its product is then no upper bound on the optimum, so only the
        # dual-bound check above applies
        note("SCIP's point is not feasible to 1e-9: no comparison of values")
        return
    if scip_true < value * (1 - REL_MATCH):
        pytest.fail(
            f"hieropt bug: SCIP's point {sc.bw.tolist()} has time x cost {scip_true!r} ns*$, below "
            f"hieropt's proven optimum {value!r} (bound {sol.objective_bound!r})"
        )
    if scip_true > value * (1 + REL_MATCH):
        # hieropt's point is strictly better than SCIP's. hieropt's value is evaluated exactly at a
        # point that meets every constraint, so this is SCIP stopping early (time limit) or
        # resolving a flat optimum loosely, not a counterexample; the dual-bound check above is what
        # must still hold (a lower bound above a feasible value would mean one of the two solvers is
        # wrong).
        note("hieropt's point is better than SCIP's")
    # hieropt's proven lower bound must not exceed a feasible point's value either: its reported gap
    # (<= 1e-7) would be false. 1e-8 leaves room for SCIP's 1e-9 row tolerance.
    assert sol.objective_bound <= scip_true * (1 + 1e-8), (
        f"hieropt bug: its proven lower bound {sol.objective_bound!r} is above the time x "
        f"cost {scip_true!r} of "
        f"SCIP's feasible point (relative {sol.objective_bound / scip_true - 1:.2e}); its "
        "reported gap "
        f"{sol.gap:.1e} is not a valid certificate"
    )


def _check_budget_target_front(inst: Instance, sol: hieropt.Solution, u: float) -> None:
    """Fastest-within-budget and cheapest-for-a-time-target are inverse to each other, and a small
    front is monotone.

    A budget X between the cheapest network and the cheapest fastest one binds (f(kappa), the
    fastest time within kappa, is strictly decreasing there), so the cheapest network reaching T_X =
    f(X) costs X again.
    """
    front = hieropt.pareto(inst, points=6)
    pts = front.points
    note(f"front budgets={[p.budget_usd for p in pts]} times={[p.iteration_time_ns for p in pts]}")
    assert len(pts) == 6
    budgets = [p.budget_usd for p in pts]
    times = [p.iteration_time_ns for p in pts]
    assert budgets == sorted(budgets)
    # time never rises with budget
    assert all(b <= a * (1 + 1e-9) for a, b in zip(times, times[1:], strict=False))
    fastest = front.fastest.iteration_time_ns
    for p in pts:
        assert p.network_cost_usd <= p.budget_usd * (1 + 1e-9)
        assert p.iteration_time_ns >= fastest * (1 - 1e-8)
        # every front point is a feasible network, so its product cannot beat the proven
        # perf-per-cost optimum
        assert p.iteration_time_ns * p.network_cost_usd >= sol.objective_bound * (1 - 1e-9)

    lo, hi = budgets[0], budgets[-1]
    X = lo + u * (hi - lo)
    fast = hieropt.solve(inst, objective="performance", options=SolveOptions(budget_usd=X))
    # gap, not success: near the LP tolerance floor a cutting-plane loop may stop at e.g. 1.06e-8
    # against its 1e-8 target (status LIMIT, seen on min_cost); the consistency checked here needs
    # far less
    assert fast.gap <= 1e-7 and fast.network_cost_usd <= X * (1 + 1e-9)
    target = fast.iteration_time_ns * (1 + 1e-9)
    cheap = hieropt.solve(
        inst, objective="min_cost", options=SolveOptions(max_iteration_time_ns=target)
    )
    note(
        f"budget X={X!r}: fastest T_X={fast.iteration_time_ns!r} costs "
        f"{fast.network_cost_usd!r}; cheapest for "
        f"T_X costs {cheap.network_cost_usd!r}"
    )
    assert cheap.gap <= 1e-7, cheap.message
    # the API's own tolerance on a time target
    assert cheap.iteration_time_ns <= target * (1 + 1e-9)
    assert cheap.network_cost_usd <= X * (1 + 1e-6)
    # the budget binds: the inverse gives the budget back
    if fast.network_cost_usd >= X * (1 - 1e-6):
        assert cheap.network_cost_usd == pytest.approx(X, rel=1e-6)


@settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
@example(KEPT_ZERO_REACH, 0.02)
@example(KEPT_HIGHS_ERROR, 0.02)
@example(KEPT_FRONT_INFEASIBLE, 0.72)
@example(KEPT_BAD_BOUND, 0.64)
@example(KEPT_NODE_LIMIT, 0.5)
@given(instances(), st.integers(2, 90).map(lambda i: i / 100))
def test_performance_per_cost_matches_scip(inst: Instance, u: float):
    """hieropt's perf-per-cost optimum (gap <= 1e-7) equals SCIP's re-evaluated point to 1e-6 and
    neither solver's bound crosses the other's feasible value; fastest-for-budget and
    min-cost-for-target agree; the front is monotone. ``u`` places the budget between the cheapest
    and the fastest network."""
    note(describe(inst) + f" prices={unit_costs_usd_per_gbps(inst).tolist()}")
    sol = hieropt.solve(inst, objective="performance_per_cost")
    note(
        f"hieropt bw={sol.bw_gbps.tolist()} T*C={sol.objective_value!r} "
        f"bound={sol.objective_bound!r} "
        f"gap={sol.gap:.2e} kappa evaluations={sol.extra['kappa_evaluations']}"
    )
    assert sol.success, sol.message
    assert sol.gap <= 1e-7
    assert sol.objective_bound <= sol.objective_value
    bd = hieropt.evaluate(inst, sol.bw_gbps)
    assert bd.iteration_time_ns * bd.network_cost_usd == pytest.approx(
        sol.objective_value, rel=1e-12
    )
    assert bd.network_cost_usd == pytest.approx(
        float(unit_costs_usd_per_gbps(inst) @ sol.bw_gbps), rel=1e-12
    )
    _check_against_scip(inst, sol)
    _check_budget_target_front(inst, sol, u)
