"""Procurement objectives on the convex core: performance per cost (global), and the time-cost Pareto front.

**Performance per cost** (LIBRA's ``PerfPerCostOpt``: min T(B) * cost(B)) is not convex. With
f(kappa) = min{T(B) : B feasible, cost(B) <= kappa}, convex and non-increasing (the value function of a convex program
in a right-hand side), min T * cost = min over kappa of kappa * f(kappa) (design.md §3): any B gives kappa = cost(B),
and the minimiser of f(kappa) costs at most kappa. A best-first branch and bound on kappa proves the global optimum:
on [a, b], f >= h = max(f_LB(b), tangent lines), where every f evaluation contributes the line
LB_i + s_i (kappa - kappa_i) anchored at its final LP value LB_i with the budget row's dual s_i (valid for all
kappa by LP duality, research/solver_probe.md §3d, pitfall P14). kappa * h is concave on each piece of h, so its
minimum over [a, b] lies at a, b or a breakpoint: the bound is exact enumeration. Each f evaluation is a warm
re-solve of one persistent LP whose cuts stay valid for every kappa.

**Pareto front**: the fastest network within each budget, for budgets from the cheapest feasible network to the
cheapest among the fastest; each point is an exact optimum of its budget.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from ..errors import NoSolutionError
from ..result import Status
from .cutting import INF, OAResult, TimeLP

PPC_GAP = 1e-7
"""Default relative gap of the performance-per-cost search."""
SUB_GAP = 1e-8
"""Relative gap of each f(kappa) sub-solve."""
FASTEST_SLACK = 1e-7
"""The front's fastest point is the cheapest network within this relative slack of the minimum time."""


@dataclass
class _Eval:
    kappa: float
    f_lower: float  # proven lower bound of f(kappa), ns (inf when infeasible)
    f_upper: float  # T at the sub-solve's point, an upper bound of f(kappa), ns
    line: tuple[float, float] | None  # (p, q): f(k) >= p + q k for all k
    bw: np.ndarray | None
    product: float  # T(bw) * cost(bw), ns * $


@dataclass
class ProductResult:
    """Outcome of the performance-per-cost search (times ns, cost $, product ns * $)."""

    status: Status
    bw: np.ndarray
    upper: float
    lower: float
    evaluations: int
    nodes: int
    message: str
    kappa_range: tuple[float, float] = (0.0, 0.0)
    extra: dict = field(default_factory=dict)

    @property
    def gap(self) -> float:
        """Relative gap (upper - lower)/upper, clipped at 0."""
        return max(0.0, (self.upper - self.lower) / self.upper) if self.upper > 0 else 0.0


def _bound(lines: list[tuple[float, float]], a: float, b: float, f_lower_b: float) -> float:
    """min over kappa in [a, b] of kappa * max(f_lower_b, lines): enumerate ends and line intersections."""
    L = [(f_lower_b, 0.0)] + lines
    cand = [a, b]
    for i, (p, q) in enumerate(L):
        for r, w in L[i + 1:]:
            if abs(q - w) > 1e-300:
                k = (r - p) / (q - w)
                if a < k < b:
                    cand.append(k)
    ks = np.array(cand)
    h = np.max([p + q * ks for p, q in L], axis=0)
    return float(np.min(ks * h))


def _evaluate(core: TimeLP, kappa: float) -> _Eval:
    try:
        res: OAResult = core.min_time(SUB_GAP, budget_usd=kappa)
    except NoSolutionError:  # the budget leaves a loaded dimension without bandwidth: f = inf
        return _Eval(kappa, INF, INF, None, None, INF)
    if res.status is not Status.OPTIMAL:  # not certified: its LP bound and point are still valid
        return _Eval(kappa, res.lower, res.upper, None, res.bw, res.upper * core.network_cost(res.bw))
    s = res.budget_dual_ns_per_usd
    line = (res.lp_lower_ns - s * kappa, s)
    return _Eval(kappa, res.lower, res.upper, line, res.bw, res.upper * core.network_cost(res.bw))


def _no_floor() -> NoSolutionError:
    return NoSolutionError(
        "unbounded", "no minimiser at positive bandwidth: no constraint keeps bandwidth away from zero, so time x "
        "cost keeps falling as every bandwidth shrinks (the compute share of the product goes to 0); add a floor, "
        "e.g. 'sum(bw) == 500' or 'bw[3] >= 25'")


def min_time_cost_product(core: TimeLP, rel_gap: float = PPC_GAP, budget_usd: float | None = None,
                          kappa_floor: float | None = None, max_nodes: int = 10_000) -> ProductResult:
    """Globally minimise T(B) * cost(B) (ns * $) by branch and bound on the cost level kappa.

    Args:
        core: the persistent time LP.
        rel_gap: target relative gap on the product.
        budget_usd: optional cap on the network cost.
        kappa_floor: optional lower end of the kappa range (e.g. the cheapest network meeting a time target).

    Raises:
        NoSolutionError: infeasible constraints or budget; or no constraint keeps bandwidth away from zero
            (then the product has no minimiser at positive bandwidth).
    """
    k_min, k_max = core.cost_range()
    if budget_usd is not None:
        if budget_usd < k_min:
            raise NoSolutionError("infeasible", f"the budget ${budget_usd:,.0f} is below the cheapest network the "
                                  f"design constraints allow, ${k_min:,.0f}")
        k_max = min(k_max, budget_usd)
    if k_min <= 1e-12 * max(1.0, k_max if np.isfinite(k_max) else 1.0) and kappa_floor is None:
        raise _no_floor()
    lo = max(k_min, kappa_floor or 0.0)
    evals: list[_Eval] = []
    if np.isfinite(k_max):
        hi = k_max
    else:  # kappa* f(kappa*) <= P0 and f >= compute time, so kappa* <= P0 / compute
        if core.tm.compute_ns <= 0:
            raise NoSolutionError("unbounded", "no compute time and no upper limit on bandwidth: time x cost is the "
                                  "same at every scale; add a bandwidth budget")
        probe = _evaluate(core, 2.0 * lo)
        evals.append(probe)
        hi = max(probe.product / core.tm.compute_ns, 2.0 * lo)
    first = [_evaluate(core, lo), _evaluate(core, hi)] if hi > lo else [_evaluate(core, lo)]
    evals += first
    best = min(evals, key=lambda e: e.product)
    if best.bw is None:
        raise NoSolutionError("infeasible", "no network within the cost range gives every loaded dimension bandwidth")
    if hi <= lo:
        return ProductResult(Status.OPTIMAL, best.bw, best.product, best.product, len(evals), 0,
                             "the constraints fix the network cost", (lo, hi))

    def lines() -> list[tuple[float, float]]:
        """Tangent lines that no evaluation contradicts: a line above f's upper bound at any evaluated kappa comes
        from inaccurate LP duals (seen with HiGHS on badly scaled cut rows) and would give a false bound."""
        return [e.line for e in evals if e.line is not None
                and all(e.line[0] + e.line[1] * o.kappa <= o.f_upper * (1 + 1e-9) + 1e-9 for o in evals)]

    f_hi = first[-1].f_lower
    heap = [(_bound(lines(), lo, hi, f_hi), lo, hi, f_hi)]
    pruned = INF
    nodes = 0
    while heap and nodes < max_nodes:
        bound, a, b, fb = heapq.heappop(heap)
        bound = max(bound, _bound(lines(), a, b, fb))  # lines found since the push tighten it
        if best.product - bound <= rel_gap * best.product:
            heapq.heappush(heap, (bound, a, b, fb))
            break
        nodes += 1
        mid = 0.5 * (a + b)
        e = _evaluate(core, mid)
        evals.append(e)
        if e.product < best.product:
            best = e
        for x, y, fy in ((a, mid, e.f_lower), (mid, b, fb)):
            bd = _bound(lines(), x, y, fy)
            if bd < best.product * (1 - rel_gap):
                heapq.heappush(heap, (bd, x, y, fy))
            else:
                pruned = min(pruned, bd)
    lower = min(heap[0][0] if heap else INF, pruned, best.product)
    status = Status.OPTIMAL if best.product - lower <= rel_gap * best.product else Status.LIMIT
    msg = "optimal within the gap target" if status is Status.OPTIMAL else f"stopped after {max_nodes} nodes"
    return ProductResult(status, best.bw, best.product, lower, len(evals), nodes, msg, (lo, hi))


@dataclass(frozen=True)
class FrontPoint:
    """One point of the time-cost Pareto front: the fastest network within ``budget_usd``."""

    budget_usd: float
    bw: np.ndarray
    iteration_time_ns: float
    network_cost_usd: float
    lower_bound_ns: float
    gap: float
    usd_per_ms: float | None = None  # the budget row's dual as $ per ms: the front's slope there (None: not binding)


def pareto_front(core: TimeLP, points: int, rel_gap: float = SUB_GAP) -> tuple[list[FrontPoint], list[str]]:
    """Exact points (budget, time, cost, bandwidths) from the cheapest feasible network to the fastest.

    The right end is the cheapest network within :data:`FASTEST_SLACK` of the minimum time; the left end the
    cheapest feasible network, or, when that leaves a loaded dimension without bandwidth (infinite time), 1 % of the
    way to the right end. Returns the points (budget ascending) and notes on how the range was chosen.

    Raises:
        NoSolutionError: infeasible or unbounded constraints.
    """
    notes: list[str] = []
    fastest = core.min_time(rel_gap)
    target = fastest.upper * (1 + FASTEST_SLACK)
    right = core.min_cost(target, fastest.bw, rel_gap)
    k_min, _ = core.cost_range()
    k_hi = right.upper
    first = _evaluate(core, k_min) if k_min > 0 else _Eval(k_min, INF, INF, None, None, INF)
    k_lo = k_min
    if first.bw is None:
        k_lo = k_min + 0.01 * (k_hi - k_min)
        notes.append(f"the cheapest feasible network (${k_min:,.0f}) leaves a dimension that carries traffic without "
                     f"bandwidth; the front starts at 1% of the way to the fastest network (${k_lo:,.0f})")
    notes.append(f"the fastest point is the cheapest network within {FASTEST_SLACK:g} of the minimum time "
                 f"{fastest.upper:,.1f} ns")
    budgets = np.linspace(k_lo, k_hi, points) if points > 1 else np.array([k_hi])
    out = []
    for kappa in budgets:
        res = core.min_time(rel_gap, budget_usd=float(kappa))
        dual = res.budget_dual_ns_per_usd
        out.append(FrontPoint(budget_usd=float(kappa), bw=res.bw, iteration_time_ns=res.upper,
                              network_cost_usd=core.network_cost(res.bw), lower_bound_ns=res.lower, gap=res.gap,
                              usd_per_ms=1e6 / abs(dual) if dual < 0 else None))
    return out, notes
