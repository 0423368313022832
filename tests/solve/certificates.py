"""A catalogue of hand-solved cases and the checks every route's answer must pass on them.

Each case states an instance whose optimum is known in closed form (the calculation is in its
``why``), the iteration time of a design from the same closed form (independent of hieropt), and the
routes of :mod:`hieropt.solvers.routes` / :mod:`hieropt.solvers.procurement` that accept it. The
checks are the parts of a certificate: the design is feasible (:func:`hieropt.verify`) and its time
is the closed form's; the value is the hand optimum within the gap target; the proven bound does not
exceed the optimum; and (where unique) the design is the hand one. ``tests/solve/test_routes.py``
runs them on every route that accepts a case.

The family: a ring of 4 and a switch of 8 (32 NPUs), one all-reduce of S = 8e8 bytes over both per
iteration and compute C = 1e6 ns. Dimension 0 carries m0 = 2 (3/4) S = 1.2e9 bytes, dimension 1 m1 =
2 (7/8) S / 4 = 3.5e8 bytes, and the hierarchical all-reduce takes T = C + max(m0 / b0, m1 / b1) ns
(b in GB/s = bytes/ns). The prices per GB/s per NPU are $2 and $8 + $18 + $30 = $56, so the network
costs p . b with p = 32 x (2, 56) = (64, 1792) $.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

import hieropt
from hieropt.result import Solution, Status
from hieropt.spec import (
    Bound,
    Collective,
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Job,
    Layer,
    LinearConstraint,
    Mapping,
    Network,
    Phase,
    Workload,
)
from hieropt.spec.cluster import Cluster

C_NS = 1e6
"""Compute time per iteration, ns."""
S_BYTES = 8e8
"""Bytes all-reduced per iteration."""
M = np.array([1.5 * S_BYTES, 0.4375 * S_BYTES])
"""Bytes per NPU on each dimension: ring of 4 (2 x 3/4 S), switch of 8 (2 x 7/8 x S/4)."""
PRICE = np.array([64.0, 1792.0])
"""$ per GB/s of each dimension over the 32 NPUs."""
COST = CostModel(
    classes={
        "in": CostClass(link_usd_per_gbps=2.0),
        "out": CostClass(link_usd_per_gbps=8.0, switch_usd_per_gbps=18.0, nic_usd_per_gbps=30.0),
    }
)
NETWORK = Network(
    dims=(
        Dimension(block="Ring", npus=4, cost_class="in"),
        Dimension(block="Switch", npus=8, cost_class="out"),
    )
)


def time_ns(bw: np.ndarray) -> float:
    """T(b) = C + max(m0 / b0, m1 / b1) ns of the family (module docstring), from the closed
    form."""
    with np.errstate(divide="ignore"):
        return C_NS + float(np.max(M / np.asarray(bw, dtype=float)))


def cost_usd(bw: np.ndarray) -> float:
    """The network's cost p . b ($)."""
    return float(PRICE @ np.asarray(bw, dtype=float))


def _workload(name: str = "w", size: float = S_BYTES, compute: float = C_NS) -> Workload:
    none = Phase(compute_ns=compute / 3, collective=Collective.NONE, size_bytes=0)
    wg = Phase(compute_ns=compute / 3, collective=Collective.ALL_REDUCE, size_bytes=size)
    return Workload(
        name=name, layers=(Layer(name="l", forward=none, input_grad=none, weight_grad=wg),)
    )


def _row(coef: tuple[float, float], sense: str, rhs: float) -> LinearConstraint:
    return LinearConstraint(
        coefficients=coef, sense=sense, rhs=rhs, text=f"{list(coef)} {sense} {rhs}"
    )


SUM_100 = (_row((1.0, 1.0), "==", 100.0),)
"""sum(bw) == 100."""


def instance(objective: str = "performance", constraints=(), bounds=None, **kw) -> Instance:
    """An instance of the family (module docstring)."""
    return Instance(
        name="hand",
        objective=objective,
        training_loop="no_overlap",
        network=NETWORK,
        workload=_workload(),
        mapping=Mapping(forward=(1, 1), input_grad=(1, 1), weight_grad=(4, 8)),
        cost=COST,
        constraints=tuple(constraints),
        bounds=bounds,
        **kw,
    )


@dataclass(frozen=True)
class HandCase:
    """A case with a hand-computed optimum.

    Attributes:
        id: a short name (the test id).
        instance: the problem (its objective, constraints, bounds, budget, target).
        value: the optimum, in the objective's unit (ns, $, ns x $, ratio).
        routes: the names of the routes that accept it, in table order (objective routes, then
            budget routes for the performance objective).
        why: the hand calculation.
        bw_gbps: the optimal design when it is unique (GB/s), else None.
        family: True when the design's time and cost are the family's closed forms (:func:`time_ns`,
            :func:`cost_usd`); the portfolio's time is a weighted sum of its workloads'.
    """

    id: str
    instance: Instance
    value: float
    routes: tuple[str, ...]
    why: str
    bw_gbps: tuple[float, ...] | None = None
    family: bool = True


@dataclass(frozen=True)
class NoDesignCase:
    """A case without a design: the status and the reason (a regular expression on the message)
    expected."""

    id: str
    instance: Instance
    status: Status
    match: str


def _balanced(total_rate_ns: float) -> tuple[float, ...]:
    """The design with m_d / b_d = ``total_rate_ns`` on both dimensions."""
    return tuple(float(x) for x in M / total_rate_ns)


_NEAR = 1e-6
"""The near-cheapest case's budget: the cheapest network's $6,400 times 1 + this."""


def _portfolio() -> Instance:
    """Two workloads, each all-reducing S over one dimension only (no compute), under sum(bw) ==
    100."""
    zero = 0.0
    return Instance(
        name="pair",
        objective="min_max_regret",
        training_loop="no_overlap",
        network=NETWORK,
        workload=_workload("ring", compute=zero),
        mapping=Mapping(forward=(1, 1), input_grad=(1, 1), weight_grad=(4, 1)),
        more_workloads=(
            Job(
                workload=_workload("switch", compute=zero),
                mapping=Mapping(forward=(1, 1), input_grad=(1, 1), weight_grad=(1, 8)),
                weight=1.0,
            ),
        ),
        cost=COST,
        constraints=SUM_100,
    )


CAP = tuple(Bound(upper_gbps=1e7) for _ in range(2))
"""An upper limit of 1e7 GB/s on each dimension: far above what a budget of $100 buys."""

HAND_CASES: tuple[HandCase, ...] = (
    HandCase(
        "fastest-sum",
        instance(constraints=SUM_100),
        C_NS + M.sum() / 100,
        ("single_term_rate", "fastest_cutting_planes", "time_lp"),
        "sum(bw) == 100: the fastest network balances m_d / b_d, b = 100 m / (m0 + m1), "
        "T = C + (m0 + m1) / 100 = 1.65e7 ns",
        tuple(float(x) for x in 100 * M / M.sum()),
    ),
    HandCase(
        "fastest-budget",
        instance(max_network_cost_usd=1e6),
        C_NS + float(PRICE @ M) / 1e6,
        ("single_term_rate", "fastest_cutting_planes", "time_lp"),
        "budget $1e6, no rows: balanced b = m / r with p . m / r = budget, so "
        "T = C + p . m / budget = C + 7.04e11 / 1e6 = 1.704e6 ns",
        _balanced(float(PRICE @ M) / 1e6),
    ),
    HandCase(
        "fastest-budget-far-below-cap",
        instance(bounds=CAP, max_network_cost_usd=100.0),
        C_NS + float(PRICE @ M) / 100.0,
        ("single_term_rate", "fastest_cutting_planes", "budget_far_below_scale", "time_lp"),
        "budget $100 under caps of 1e7 GB/s: as fastest-budget, T = C + 7.04e11 / 100 = 7.041e9 ns",
        _balanced(float(PRICE @ M) / 100.0),
    ),
    HandCase(
        "fastest-near-cheapest",
        instance(constraints=SUM_100, max_network_cost_usd=6400.0 * (1 + _NEAR)),
        C_NS + M[1] * 1728.0 / (6400.0 * _NEAR),
        ("single_term_rate", "fastest_cutting_planes", "near_cheapest_budget", "time_lp"),
        "sum(bw) == 100: the cheapest network is b = (100, 0) at $6,400 and starves dimension 1; "
        "the budget 6400 (1 + 1e-6) with b0 = 100 - b1 gives 1728 b1 <= 6400e-6, so "
        "T = C + m1 1728 / 6.4e-3 = C + 9.45e13 ns",
        (100.0 - 6400.0 * _NEAR / 1728.0, 6400.0 * _NEAR / 1728.0),
    ),
    HandCase(
        "min-cost-uncapped",
        instance("min_cost", max_iteration_time_ns=1.704e6),
        1e6,
        ("cheapest_meeting_target",),
        "target 1.704e6 ns, no rows, no caps: the cheapest network meeting it is balanced, b = m / "
        "(T - C), cost p . m / (T - C) = 7.04e11 / 7.04e5 = $1e6",
        _balanced(7.04e5),
    ),
    HandCase(
        "min-cost-capped",
        instance(
            "min_cost",
            bounds=tuple(Bound(upper_gbps=1e4) for _ in range(2)),
            max_iteration_time_ns=1.704e6,
        ),
        1e6,
        ("cheapest_meeting_target",),
        "as min-cost-uncapped, the caps of 1e4 GB/s above the balanced design (1704.5, 497.2)",
        _balanced(7.04e5),
    ),
    HandCase(
        "time-cost-product",
        instance("performance_per_cost", constraints=SUM_100),
        (C_NS + M.sum() / 100) * 1408000.0 / 31.0,
        ("time_cost_product",),
        "sum(bw) == 100, b1 = x: for x below the balance 700/31, T x cost = "
        "(C + m1 / x)(6400 + 1728 x) falls (its derivative 1728 C - 6400 m1 / x^2 < 0 for x < 36); "
        "above it (C + m0 / (100 - x))(6400 + 1728 x) rises; so the optimum is the balanced "
        "design: 1.65e7 ns x $1,408,000/31",
        tuple(float(x) for x in 100 * M / M.sum()),
    ),
    HandCase(
        "run-cost",
        instance(
            "min_run_cost",
            constraints=SUM_100,
            cluster=Cluster(accelerator_usd=1000.0, amortisation_years=4.0),
        ),
        (C_NS + M.sum() / 100) * (32_000.0 + 1408000.0 / 31.0) / (4 * 8760 * 3.6e12),
        ("run_cost",),
        "32 accelerators at $1,000: the fixed term A = $32,000, amortised over 4 years of 8760 h; "
        "as time-cost-product with A added, (C + m1 / x)(A + 6400 + 1728 x) falls up to the "
        "balance "
        "(its derivative 1728 C - m1 (A + 6400) / x^2 < 0 there), so the balanced design again: "
        "$ per iteration = 1.65e7 ns x (A + $1,408,000/31) / (4 x 8760 x 3.6e12 ns)",
        tuple(float(x) for x in 100 * M / M.sum()),
    ),
    HandCase(
        "rented-run-cost",
        instance("min_run_cost", constraints=SUM_100, cluster=Cluster(usd_per_npu_hour=2.5)),
        (C_NS + M.sum() / 100) * 32 * 2.5 / 3.6e12,
        ("rented_run_cost",),
        "32 NPUs rented at $2.50 per NPU-hour: a run costs T x 32 x 2.5 / 3.6e12 $ per ns whatever "
        "the network costs, so the answer is fastest-sum's design: $ per iteration = 1.65e7 ns x "
        "$80 / 3.6e12 ns = $3.6667e-4",
        tuple(float(x) for x in 100 * M / M.sum()),
    ),
    HandCase(
        "min-max-regret",
        _portfolio(),
        2.0,
        ("portfolio",),
        "each workload loads one dimension; alone it takes all 100 GB/s, T_w* = m_w / 100; on "
        "(b0, b1) its slowdown is 100 / b_w, so the worst is least at b = (50, 50): 2",
        (50.0, 50.0),
        family=False,
    ),
    HandCase(
        "min-cost-within-regret",
        _portfolio().model_copy(update={"objective": "min_cost", "max_regret": 1.5}),
        64.0 * 60.0 + 1792.0 * 40.0,
        ("portfolio",),
        "as min-max-regret, each slowdown 100 / b_w <= 1 + 1.5 needs b_w >= 40; under "
        "sum(bw) == 100 the cheapest such network puts the least on the dear switch: b = (60, 40), "
        "64 x 60 + 1792 x 40 = $75,520",
        (60.0, 40.0),
        family=False,
    ),
)
"""The hand-solved cases, one or more per route."""

NO_DESIGN_CASES: tuple[NoDesignCase, ...] = (
    NoDesignCase(
        "target-below-fastest",
        instance(constraints=SUM_100, max_iteration_time_ns=1.6e7),
        Status.INFEASIBLE,
        r"time target 16,000,000.0 ns: fastest possible is 16,500,000.0 ns",
    ),
    NoDesignCase(
        "rows-contradict",
        instance(constraints=SUM_100 + (_row((1.0, 0.0), ">=", 120.0),)),
        Status.INFEASIBLE,
        r"infeasible|cannot all hold",
    ),
    NoDesignCase(
        "no-upper-limit", instance(), Status.UNBOUNDED, r"no upper limit on the bandwidth"
    ),
    NoDesignCase(
        "product-without-floor",
        instance("performance_per_cost", constraints=(_row((1.0, 1.0), "<=", 100.0),)),
        Status.UNBOUNDED,
        r"no minimiser at positive bandwidth",
    ),
    NoDesignCase(
        "budget-below-cheapest",
        instance(constraints=SUM_100, max_network_cost_usd=5000.0),
        Status.INFEASIBLE,
        r"below the cheapest network .* \$6,400",
    ),
)
"""Cases without a design, each with the status :func:`hieropt.solve` returns and its reason."""


def check_design(case: HandCase, bw: np.ndarray, upper: float) -> None:
    """The design ``bw`` (GB/s) is feasible for the case (:func:`hieropt.verify`), its closed-form
    time is the value the solver reports (``upper``, performance), and it is the hand design where
    that is unique."""
    inst = case.instance
    cert = hieropt.verify(
        inst, bw, target_ns=inst.max_iteration_time_ns, budget_usd=inst.max_network_cost_usd
    )
    assert cert.ok, cert.problems
    if case.family and inst.objective == "performance":
        assert time_ns(bw) == _approx(upper, 1e-12)
    if case.bw_gbps is not None:
        np.testing.assert_allclose(bw, case.bw_gbps, rtol=1e-4)


def check_value(case: HandCase, value: float, bound: float, rel_gap: float) -> None:
    """The value is the hand optimum within ``rel_gap`` (no design is better than the optimum, to
    round-off) and the proven bound is at most the optimum."""
    assert value >= case.value * (1 - 1e-9), (value, case.value)
    assert value <= case.value * (1 + rel_gap + 1e-12), (value, case.value)
    assert bound <= case.value * (1 + 1e-9), (bound, case.value)


def check_solution(case: HandCase, sol: Solution, rel_gap: float) -> None:
    """Every part of the certificate on a route's :class:`Solution`."""
    assert sol.status is Status.OPTIMAL, sol.message
    assert sol.objective == case.instance.objective
    check_value(case, sol.objective_value, sol.objective_bound, rel_gap)
    check_design(case, sol.bw_gbps, sol.iteration_time_ns)
    if case.family:
        assert time_ns(sol.bw_gbps) == _approx(sol.iteration_time_ns, 1e-12)
        assert cost_usd(sol.bw_gbps) == _approx(sol.network_cost_usd, 1e-12)


def check_no_design(case: NoDesignCase, sol: Solution) -> None:
    """A solve without a design: the case's status and reason, no bandwidths, and the
    NoSolutionError of the same one-line message from :meth:`Solution.raise_for_status`."""
    assert sol.status is case.status and not sol.has_design and not sol.success
    assert re.search(case.match, sol.message), sol.message
    assert sol.bw_gbps.size == 0 and sol.breakdown is None and sol.run is None
    try:
        sol.raise_for_status()
    except hieropt.NoSolutionError as e:
        assert e.kind == case.status.value and str(e) == f"{case.status.value}: {sol.message}"
    else:
        raise AssertionError("raise_for_status did not raise")


def _approx(x: float, rel: float):
    import pytest

    return pytest.approx(x, rel=rel)
