"""Procurement objectives on the convex core: performance per cost (time x cost in the cost-share
variables of :mod:`hieropt.formulation.ratio`, decision record 0005), the fastest design within a
budget (the routes :data:`BUDGET_ROUTES`, decision record 0009) and the cheapest design meeting a
time target (decision record 0006)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from ..cache import current
from ..errors import HieroptError, NoSolutionError, SolverError
from ..formulation.scale import (
    cost_bounds_usd,
    product_bandwidth,
    share_units_gbps,
    typical_bandwidth,
)
from ..model.cost import cluster_cost_usd_per_gbps
from ..model.cutmodel import CutModel
from ..model.timing import TimeModel
from ..result import Status
from ..spec import Instance
from ..spec.overrides import with_targets
from ..units import time_unit_hint, usd_cents
from .cost_range import below_cheapest
from .cutting import INF, REL_GAP, OAResult, TimeLP
from .near_cheapest import ReducedBudget, fastest_near_cheapest, near_cheapest, sharpened
from .ratio import BOUND_SLACK, RatioCore
from .routing import Route, first_route

PPC_GAP = 1e-7
"""Default relative gap of the performance-per-cost search."""
SUB_GAP = 1e-8
"""Relative gap of each fastest-within-a-budget solve."""
FASTEST_SLACK = REL_GAP
"""Designs whose times are within this relative slack of the fastest found are equally fast (the
performance solve's gap target, below which the certificate tells no two designs apart). The
cheapest of them is the tie-break of :func:`hieropt.solvers.objectives.solve_fastest_cheapest`, the
knee's reference (:mod:`hieropt.studies.knee`) and the Pareto front's fastest point: one constant
for the three, so they name the same design."""


def equally_fast(of: str) -> str:
    """How "equally fast" (:data:`FASTEST_SLACK`) reads after "the designs": "within 1e-08 of
    ``of``"."""
    return f"within {FASTEST_SLACK:g} of {of}"


def tie_break_target_ns(fastest_ns: float, lower_ns: float, rel_gap: float,
                        cap_ns: float | None = None) -> float:
    """The time target of the tie-break among equally fast designs: ``fastest_ns`` x (1 +
    :data:`FASTEST_SLACK`), at most ``lower_ns`` / (1 - ``rel_gap``) (so every design meeting it is
    certified within ``rel_gap`` of the proven bound ``lower_ns``) and at most the instance's target
    ``cap_ns`` (None: none); never below ``fastest_ns``. Units of ``fastest_ns`` (ns, or the
    relative time of shares of hours)."""
    target = min(fastest_ns * (1 + FASTEST_SLACK), lower_ns / (1 - rel_gap))
    if cap_ns is not None:
        target = min(target, cap_ns)
    return max(fastest_ns, target)


def min_time_cost_product(instance: Instance, tm: TimeModel, rel_gap: float = PPC_GAP,
                          budget_usd: float | None = None, cost_floor_usd: float | None = None,
                          target_ns: float | None = None, meets: np.ndarray | None = None,
                          time_limit_s: float = 60.0, fixed_usd: float = 0.0) -> OAResult:
    """Globally minimise T(B) x (``fixed_usd`` + cost(B)) (ns x $) by one convex cutting-plane solve
    in cost-share variables (:class:`hieropt.solvers.ratio.RatioCore`; ``fixed_usd`` = 0:
    performance per cost; > 0, $ (:attr:`hieropt.model.run.CostRate.fixed_usd`): ``min_run_cost``
    up to a factor). ``budget_usd``: an optional cap ($); ``cost_floor_usd``: a proven lower
    bound ($) on the cheapest design meeting ``target_ns`` (ns), which ``meets`` ((D,) GB/s)
    meets; ``time_limit_s``: of each LP and of the search, s. Returns the
    :class:`hieropt.solvers.outcome.OAResult` (ns x $; ``kappa_range``: the network costs
    searched), LIMIT with the proven gap short of ``rel_gap``.

    Raises:
        NoSolutionError: infeasible constraints or budget; "unbounded" when no constraint
            keeps bandwidth away from zero or the product is the same at every scale."""
    bounds = cost_bounds_usd(instance)
    unit = product_bandwidth(instance, tm, target_ns, bounds)
    core = RatioCore(instance, tm, unit, time_limit_s, budget_usd, prune=True, cost_bounds=bounds,
                     share_units_gbps=share_units_gbps(instance, tm, unit), fixed_usd=fixed_usd)
    with closing(core):  # (the HiGHS object goes back to this thread's pool)
        k_min, k_max = core.search_range(budget_usd)
        if budget_usd is not None:
            if budget_usd < k_min * (1 - 1e-9):
                raise below_cheapest(budget_usd, k_min)
            k_max = min(k_max, budget_usd)
        lo, fixed = max(k_min, cost_floor_usd or 0.0), core.fixed_usd
        if lo <= 0 and fixed <= 0:
            raise NoSolutionError("unbounded", (
                "no minimiser at positive bandwidth: no constraint keeps bandwidth away from zero, "
                "so time x cost keeps falling as every bandwidth shrinks (the compute share of the "
                "product goes to 0); add a floor, e.g. 'sum(bw) == 500' or "
                f"'bw[{_floor_dim(tm)}] >= 25'"))
        # (scale-free: no compute, latency or constant time, so T x cost is the same at every scale)
        if not np.isfinite(k_max) and tm.compute_ns <= 0 and not tm.terms_latency_ns.any() and not (
                any(p.const_ns > 0 for node in tm.nodes for p in node)):
            raise NoSolutionError("unbounded", "no compute time and no upper limit on bandwidth: "
                                  "time x cost is the same at every scale; add a bandwidth budget")
        hi = max(k_max, lo)
        out = core.min_product(rel_gap, fixed + lo, fixed + hi, target_ns, meets)
    if out.bw is None:
        raise NoSolutionError("infeasible", "no network within the cost range gives every loaded "
                              f"dimension bandwidth ({out.message})")
    msg = out.message if hi > lo else "the constraints fix the network cost; " + out.message
    return replace(out, iterations=core.lps, message=msg, kappa_range=(lo, hi), cuts=core.cuts)


def _ns_pair(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` (ns) with the fewest decimals (at least 1) that tell them apart, a non-zero
    value those decimals show as 0 in 6 significant digits."""
    for k in range(1, 7):
        sa, sb = f"{a:,.{k}f}", f"{b:,.{k}f}"
        if sa != sb:
            break
    return tuple(f"{x:.6g}" if x != 0 and not float(t.replace(",", "")) else t
                 for x, t in ((a, sa), (b, sb)))


@dataclass
class BudgetCase:
    """One fastest-within-a-budget solve: the performance LP ``core`` (its cuts kept across a
    sweep), the budget ``budget_usd`` ($, None: none) and the gap ``rel_gap``."""

    core: TimeLP = field(repr=False)
    budget_usd: float | None
    rel_gap: float

    @cached_property
    def near(self) -> ReducedBudget | None:
        """:func:`hieropt.solvers.near_cheapest.near_cheapest` of the case (None without budget)."""
        if self.budget_usd is None:
            return None
        return near_cheapest(self.core.instance, self.core.tm, self.budget_usd)

    @property
    def uniform_gbps(self) -> float:
        """The bandwidth (GB/s) on every dimension that the budget buys."""
        return self.budget_usd / float(np.sum(self.core.unit_cost / 1e6) * 1e6)


def near_cheapest_budget(case: BudgetCase) -> OAResult:
    """Route ``near_cheapest_budget`` (decision record 0007): a budget within
    :data:`~hieropt.solvers.near_cheapest.NEAR_SLACK` above a cheapest network that starves a loaded
    dimension, held by the exact reduced budget row
    (:func:`hieropt.solvers.near_cheapest.fastest_near_cheapest`). The fastest design within it
    (ns)."""
    return fastest_near_cheapest(case.core, case.near, case.rel_gap)


def time_lp_within_budget(case: BudgetCase) -> OAResult:
    """Route ``time_lp`` (decision record 0001): :meth:`hieropt.solvers.cutting.TimeLP.min_time`,
    with or without a budget row; on a failure with a budget (but unbounded),
    :func:`fastest_by_shares`.

    Raises:
        NoSolutionError: infeasible or unbounded."""
    try:
        return sharpened(case.core.min_time(case.rel_gap, budget_usd=case.budget_usd), case)
    except (SolverError, NoSolutionError) as e:
        if case.budget_usd is None or isinstance(e, NoSolutionError) and e.kind == "unbounded":
            raise
        return fastest_by_shares(case)


def fastest_by_shares(case: BudgetCase) -> OAResult:
    """Route ``budget_far_below_scale``: the fastest design within the case's budget (ns) on the
    cost-share LP, whose units follow the budget.

    Raises:
        NoSolutionError: infeasible constraints, or a budget below the cheapest network."""
    core, budget_usd = case.core, case.budget_usd
    rc = RatioCore(core.instance, core.tm, case.uniform_gbps, core.solver.time_limit_s, budget_usd,
                   prune=True)
    try:
        k_min, _ = rc.cost_range()  # (infeasible constraints are reported as such)
        if budget_usd < k_min * (1 - 1e-9):
            raise below_cheapest(budget_usd, k_min)
        return rc.fastest_within(budget_usd, case.rel_gap)
    finally:
        rc.close()
        core.lps += rc.lps


BUDGET_ROUTES: tuple[Route, ...] = (
    Route("near_cheapest_budget", lambda c: c.near is not None, near_cheapest_budget),
    Route("budget_far_below_scale", lambda c: c.budget_usd is not None
          and c.uniform_gbps < 1e-2 * c.core.s, fastest_by_shares),
    Route("time_lp", lambda c: True, time_lp_within_budget))
"""The routes of the fastest design within a budget, walked in order (the last accepts every case);
conditions and reasons: decision record 0009."""


TIE_BREAK_LPS = 3
"""LPs the tie-break of :func:`hieropt.solvers.objectives.solve_fastest_cheapest` (and of
``min_run_cost`` on a rented cluster) makes at most; its design is then the cheapest found, LIMIT
with its proven gap (most close the gap in one or two LPs)."""


def fastest_design(core: TimeLP, rel_gap: float, budget_usd: float | None = None,
                   target_ns: float | None = None) -> OAResult:
    """The performance optimum within ``budget_usd`` ($; value in ns) by the first of
    :data:`BUDGET_ROUTES` that accepts the case, checked against ``target_ns`` (re-solved to
    :data:`TARGET_GAP` when the target lies within the gap).

    Raises:
        NoSolutionError: infeasible or unbounded, a budget <= $0 with a priced loaded dimension,
            or the target below (infeasible) or within the gap of (undecided) the fastest time.
        SolverError: the LP failed."""
    if budget_usd is not None and budget_usd <= 0 and any(core.unit_cost[d] > 0
                                                          for d in core.loaded):
        raise NoSolutionError("infeasible", f"a budget of ${usd_cents(budget_usd, up=False)} buys "
                              "no bandwidth for the priced dimensions that carry traffic: no "
                              "finite iteration time")
    res = first_route(BUDGET_ROUTES, BudgetCase(core, budget_usd, rel_gap))[1]
    if target_ns is not None and res.lower <= target_ns < res.upper and rel_gap > TARGET_GAP:
        # the target lies in the gap: close it
        return fastest_design(core, TARGET_GAP, budget_usd, target_ns)
    return against_target(res, target_ns, budget_usd)


TARGET_GAP = 1e-12
"""The gap of the re-solve when a time target lies within the first solve's gap."""


FASTEST_KEPT = 32
"""Certified performance optima :func:`fastest_once` keeps per bucket of the active cache."""
FASTEST_BUCKETS = 8
"""Buckets of :data:`FASTEST_KEPT` optima the active cache keeps (least recently used first out)."""


@dataclass
class _Kept:
    """Outcomes kept by :func:`keep_outcome`: their inputs (:func:`_inputs`) and the outcome."""

    inputs: tuple
    outcome: tuple

    @cached_property
    def full_key(self) -> tuple:
        """:func:`_inputs_key` of the kept inputs (made on the first look-up that needs it)."""
        return _inputs_key(*self.inputs)


def _inputs(instance: Instance, tm: TimeModel) -> tuple:
    """(``tm``, the design matrix, the cluster's $ per GB/s): what the loop reads beyond the
    bucket."""
    return tm, instance.design_matrix, cluster_cost_usd_per_gbps(instance)


def _inputs_key(tm: TimeModel, dm, unit_cost: np.ndarray) -> tuple:
    """The inputs by value: the time model's fingerprint, the rows' and the prices' bytes."""
    rows = tuple(a.tobytes() for a in (dm.A, dm.lower, dm.upper, dm.rhs, dm.sense, dm.bw_lower,
                                       dm.bw_upper))
    return tm.fingerprint, rows, unit_cost.tobytes()


def _copied(outcome: tuple) -> tuple:
    """``outcome`` with a private copy of every :class:`OAResult`'s ``bw``."""
    return tuple(replace(x, bw=x.bw.copy()) if isinstance(x, OAResult) and x.bw is not None
                 else x for x in outcome)


def _bucket_key(instance: Instance, tm: TimeModel, extra: tuple) -> tuple:
    """The plain values that file an outcome: shapes, budget, time target and ``extra``."""
    return (instance.design_matrix.A.shape, tm.terms_bytes.shape, instance.max_network_cost_usd,
            instance.max_iteration_time_ns, *extra)


def recall_outcome(name: str, instance: Instance, tm: TimeModel, extra: tuple) -> tuple | None:
    """A copy of the outcome :func:`keep_outcome` kept in the active cache's table ``name`` for the
    same inputs as ``instance`` and ``tm`` (rows, bounds, prices, budget, time target, the time
    model's fingerprint) and ``extra`` (gap, time limit, ...), or None. Never for a
    :class:`~hieropt.model.cutmodel.CutModel` (it gains pieces)."""
    if isinstance(tm, CutModel):
        return None
    bucket = current().table(name, FASTEST_BUCKETS).get(_bucket_key(instance, tm, extra))
    if not bucket:
        return None
    key = _inputs_key(*_inputs(instance, tm))
    hit = next((e for e in bucket if e.full_key == key), None)
    return None if hit is None else _copied(hit.outcome)


def keep_outcome(name: str, instance: Instance, tm: TimeModel, extra: tuple,
                 outcome: tuple) -> None:
    """Keep ``outcome`` (certified, for these inputs: :func:`recall_outcome`) in the active cache's
    table ``name``, at most :data:`FASTEST_KEPT` per bucket."""
    if isinstance(tm, CutModel):
        return
    table = current().table(name, FASTEST_BUCKETS)
    near = _bucket_key(instance, tm, extra)
    bucket = table.get(near) or table.put(near, [])
    bucket.insert(0, _Kept(_inputs(instance, tm), _copied(outcome)))
    del bucket[FASTEST_KEPT:]


def fastest_once(instance: Instance, tm: TimeModel, rel_gap: float, time_limit_s: float,
                 counts: Counts) -> tuple[OAResult, TimeModel]:
    """:func:`fastest_design` on a fresh :class:`TimeLP` within the instance's budget and time
    target, LPs and cuts added to ``counts``: (the outcome, the core's time model at the end). An
    OPTIMAL outcome is kept (:func:`keep_outcome`) and recalled for the same inputs without a
    solve. Raises what :func:`fastest_design` raises."""
    extra = (rel_gap, time_limit_s)
    if (hit := recall_outcome("fastest design", instance, tm, extra)) is not None:
        res, counts_hit = hit
        counts.add(counts_hit)
        return res, tm
    with closing(TimeLP(instance, tm, time_limit_s)) as core:
        res = fastest_design(core, rel_gap, instance.max_network_cost_usd,
                             instance.max_iteration_time_ns)
    counts.add(core)
    if res.status is Status.OPTIMAL and res.bw is not None:
        keep_outcome("fastest design", instance, tm, extra, (res, Counts(core.lps, core.cuts)))
    return res, core.tm


def against_target(res: OAResult, target_ns: float | None,
                   budget_usd: float | None = None) -> OAResult:
    """``res`` (a performance optimum within ``budget_usd``, $) when it meets ``target_ns`` (ns;
    None: none).

    Raises:
        NoSolutionError: the target below the fastest possible time ("fastest possible is ...
            ns", infeasible) or within its gap (undecided)."""
    within = (f" within the budget ${usd_cents(budget_usd, up=False)}" if budget_usd is not None
              else "")
    if target_ns is not None and res.lower > target_ns:
        t, fast = _ns_pair(target_ns, res.lower)
        found = (f" (proven; the fastest design found takes {res.upper:,.1f} ns)"
                 if res.upper > res.lower * (1 + 1e-9) else "")
        raise NoSolutionError("infeasible", f"time target {t} ns: fastest possible is {fast} ns"
                              f"{within}{found}" + time_unit_hint(target_ns, res.lower))
    if target_ns is not None and res.upper > target_ns * (1 + MEETS_ROUNDOFF):
        t, fast = _ns_pair(target_ns, res.upper)
        raise NoSolutionError("undecided", (
            f"time target {t} ns lies within the optimality gap of the fastest possible time"
            f"{within}: the fastest design found takes {fast} ns and none is proven faster than "
            f"{_ns_pair(target_ns, res.lower)[1]} ns; a target of at least {fast} ns is met"))
    return res


MEETS_ROUNDOFF = 1e-12
"""A design meets a time target when its T exceeds it by at most this (relative): a target copied
from an evaluation differs in the last bits. The verifier allows 1e-9."""


@dataclass
class Counts:
    """LPs solved and cuts added over the cores of one call."""

    lps: int = 0
    cuts: int = 0

    def add(self, core) -> None:
        """Add ``core``'s ``lps`` and ``cuts`` (a :class:`TimeLP`, :class:`RatioCore` or Counts)."""
        self.lps += core.lps
        self.cuts += core.cuts


def cheapest_meeting(instance: Instance, tm: TimeModel, target_ns: float, rel_gap: float = REL_GAP,
                     budget_usd: float | None = None, time_limit_s: float = 60.0,
                     counts: Counts | None = None,
                     fastest: tuple[TimeLP, np.ndarray] | None = None) -> OAResult:
    """The cheapest network ($) with T <= ``target_ns`` (ns) within ``budget_usd`` ($, None: none),
    as an :class:`OAResult` in $ (LIMIT with the proven gap short of ``rel_gap``); decision
    record 0006. A design that meets the target (the fastest, or without an upper limit on
    bandwidth one found within growing budgets) caps the min-cost LP, built in its own bandwidth
    unit when needed. ``fastest``: (core, design) of a performance optimum already solved on a
    :class:`TimeLP` of this instance (a tie-break), continued on with its cuts. LPs and cuts are
    added to ``counts``.

    Raises:
        NoSolutionError: infeasible constraints, budget or target."""
    counts = counts if counts is not None else Counts()
    cap = budget_usd
    if fastest is not None:
        core, meets = fastest
    else:
        core = TimeLP(instance, tm, time_limit_s)
        core.cut_first = False  # (the min-cost loop goes on from these cuts: see Loop.cut_first)
        try:
            meets = fastest_design(core, min(rel_gap, REL_GAP), budget_usd, target_ns).bw
        except NoSolutionError as e:
            if e.kind != "unbounded":
                raise
            meets = _meets_without_cap(instance, tm, target_ns, budget_usd, time_limit_s, counts)
            cost = core.network_cost(meets)
            cap = cost if budget_usd is None else min(budget_usd, cost)
        finally:
            counts.add(core)
    t_meets = float(tm.time_ns(meets))
    if t_meets <= target_ns * (1 + MEETS_ROUNDOFF):  # (met to round-off, as in against_target)
        target_ns = max(target_ns, t_meets)
    # (a given fastest core is already in the units of the design that meets the target)
    scale = None if fastest is not None else _target_scale(instance, tm, target_ns, core.s)
    cheap = core if scale is None else TimeLP(instance, tm, time_limit_s, bw_scale=scale)
    lps0, cuts0 = (core.lps, core.cuts) if cheap is core else (0, 0)
    # the loop's gap g leaves room for the bound's slack: (1 - g)(1 - slack) >= 1 - rel_gap
    loop_gap = max((rel_gap - BOUND_SLACK) / (1 - BOUND_SLACK) * (1 - 1e-6), 0.5 * rel_gap)
    try:
        res = cheap.min_cost(target_ns, meets, loop_gap, cap)
    except SolverError as e:
        # the target-meeting design is still an answer, with the weakest bound: the cheapest network
        floor = core.cost_range()[0]
        res = OAResult(Status.LIMIT, meets, core.network_cost(meets), floor, cheap.lps,
                       f"{e}; proven bound only the cheapest feasible network")
    counts.lps += cheap.lps - lps0
    counts.cuts += cheap.cuts - cuts0
    # an LP value is exact only to HiGHS's tolerances
    return replace(res, lower=min(res.lower, res.upper) * (1 - BOUND_SLACK)).settled(rel_gap)


def _target_scale(instance: Instance, tm: TimeModel, target_ns: float, s: float) -> float | None:
    """A bandwidth unit (GB/s) for the min-cost LP when the bandwidth meeting ``target_ns`` (at
    least the rows' cost floor's) lies outside 1 .. 1e4 units of ``s``; None to keep ``s``."""
    beta = typical_bandwidth(instance, tm, target_ns)
    floor, _ = cost_bounds_usd(instance)
    price = float(np.sum(cluster_cost_usd_per_gbps(instance)))
    if floor > 0 and price > 0:
        beta = max(beta, floor / price)
    if 1.0 <= beta / s <= 1e4:
        return None
    return float(10.0 ** (np.floor(np.log10(beta)) - 2))


def _meets_without_cap(instance: Instance, tm: TimeModel, target_ns: float,
                       budget_usd: float | None, time_limit_s: float, counts: Counts) -> np.ndarray:
    """A design with T < ``target_ns`` when bandwidth has no upper limit: the fastest within budgets
    growing 4 x."""
    rc = RatioCore(instance, tm, typical_bandwidth(instance, tm, target_ns), time_limit_s)
    k_min, _ = rc.cost_range()
    kappa = max(rc.network_cost(np.full(tm.n_dims, typical_bandwidth(instance, tm, target_ns))),
                2.0 * k_min)
    best = INF
    try:
        for _ in range(60):
            if budget_usd is not None:
                kappa = min(kappa, budget_usd)
            try:
                out = rc.fastest_within(kappa, 1e-6)
            except NoSolutionError:  # (a loaded dimension without bandwidth: spend more)
                out = None
            if out is not None and out.bw is not None:
                if out.upper < target_ns:
                    return out.bw
                best = min(best, out.upper)
            if budget_usd is not None and kappa >= budget_usd:
                raise NoSolutionError("infeasible", f"time target {target_ns:,.1f} ns: fastest "
                                      f"possible is {best:,.1f} ns within the budget "
                                      f"${usd_cents(budget_usd, up=False)}")
            kappa *= 4.0
    finally:
        rc.close()
        counts.add(rc)
    raise NoSolutionError("infeasible", f"time target {target_ns:,.1f} ns: no network up to "
                          f"${usd_cents(kappa / 4, up=False)} meets it (the fastest found takes "
                          f"{best:,.1f} ns)")


def fastest_then_cheapest(instance: Instance, tm: TimeModel, time_limit_s: float, gap: float,
                          target_of: Callable[[OAResult], float | None]) -> tuple:
    """The fastest design within the instance's budget and target (gap ``gap``), then on the same LP
    the cheapest design with T <= ``target_of(fastest)`` ns (at most :data:`TIE_BREAK_LPS` LPs; None
    skips it): the tie-break among equally fast designs.

    Returns:
        (the fastest OAResult in ns, its :class:`Counts`, the cheapest OAResult in $, its
            error's message or None when skipped, its Counts).

    Raises:
        NoSolutionError, SolverError: as :func:`fastest_design`; and what ``target_of`` raises."""
    counts, cost_counts = Counts(), Counts()
    with closing(TimeLP(instance, tm, time_limit_s)) as core:
        core.cut_first = False  # (the min-cost loop goes on from these cuts: Loop.cut_first)
        res = fastest_design(core, gap, instance.max_network_cost_usd,
                             instance.max_iteration_time_ns)
        counts.add(core)
        target = target_of(res)
        if target is None:
            return res, counts, None, cost_counts
        core.max_lps = TIE_BREAK_LPS
        try:
            cheap: OAResult | str = cheapest_meeting(
                with_targets(instance, "min_cost", target, None), tm, target, REL_GAP,
                instance.max_network_cost_usd, time_limit_s, cost_counts, fastest=(core, res.bw))
        except HieroptError as e:
            cheap = str(e)
    return res, counts, cheap, cost_counts


def _floor_dim(tm: TimeModel) -> int:
    """The dimension an example floor names: the last that carries traffic (the last of the
    instance when none does)."""
    loaded = np.flatnonzero(tm.carries_traffic)
    return int(loaded[-1]) if loaded.size else len(tm.carries_traffic) - 1
