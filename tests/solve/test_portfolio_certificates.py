"""Portfolio answers are certified by the main loop's bound, and stop honestly when they cannot be.

- A random 3-workload portfolio (seed 253 of :func:`wide_portfolio`) where the portfolio LP's own
  value, taken as the bound, was beaten by a design the evaluator accepts (by 1.2e-8 of the ratio,
  above the 1e-8 target): on two dimensions with bw[0] + bw[1] == c the min-max ratio is a convex
  function of b = bw[0], found to round-off by a ternary search (tests/solve/test_portfolio.py), and
  the proven bound must not exceed it.
- An own optimum that stops at LIMIT, or a portfolio LP that fails on every retry, gives LIMIT
  (or a certified optimum) with a bound below the true optimum, never a SolverError.
- A portfolio with no collective traffic (every group of size 1) solves as ``performance`` does.
- The cheapest network within a tight regret lies inside every bound exactly, though the LP's point
  may lie a solver tolerance outside one.
"""

from __future__ import annotations

import numpy as np
import pytest

from hieropt import SolveOptions, api
from hieropt.model.timing import evaluate, job_time_models
from hieropt.result import Status
from hieropt.solvers import cutting
from hieropt.solvers import portfolio as portfolio_solver
from hieropt.solvers.highs import LPResult
from hieropt.spec import (
    Collective,
    Instance,
    Job,
    Layer,
    LinearConstraint,
    Mapping,
    Phase,
    Workload,
)
from hieropt.verify import verify
from tests.cases import random_jobs
from tests.fuzz.checks import unit_costs
from tests.fuzz.strategies import Spec, WorkloadSpec
from tests.solve.portfolios import COST, random_portfolio, ternary


def wide_portfolio(rng: np.random.Generator, W: int, D: int, total: float) -> Instance:
    """Workloads with compute of 1 ns .. 1 s and collectives of 1 B .. 1 TB (some phases without
    one), random groups, no_overlap or tp_dp_overlap, under sum(bw) == ``total``."""
    kinds = ("ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL", "NONE")
    jobs = random_jobs(rng, W, D, kinds, (0, 9), (0, 12))
    return Instance(
        name="portfolio",
        **jobs,
        cost=COST,
        constraints=(
            LinearConstraint(coefficients=(1.0,) * D, sense="==", rhs=total, text="sum(bw) == c"),
        ),
        objective="performance",
        training_loop=str(rng.choice(["no_overlap", "tp_dp_overlap"])),
    )


def exact_regret(inst: Instance, own_ns) -> float:
    """min over b of max_w T_w(b, c - b) / own_w (two dimensions, sum == c), by ternary search."""
    c = inst.constraints[0].rhs
    tms = job_time_models(inst)

    def ratio(b: float) -> float:
        return max(tm.time_ns(np.array([b, c - b])) / u for tm, u in zip(tms, own_ns, strict=True))

    return ratio(ternary(ratio, 1e-12 * c, c - 1e-12 * c))


def test_regret_bound_is_not_beaten_where_the_lp_value_was():
    rng = np.random.default_rng(253)
    inst = wide_portfolio(rng, 3, 2, float(10 ** rng.uniform(0, 4)))
    sol = api.solve(inst, objective="min_max_regret")
    z = exact_regret(inst, sol.portfolio.own_optima_ns)
    assert z == pytest.approx(1.1402878646635, rel=1e-12)
    # (the LP's own value, 1.14028787868, was above it)
    assert sol.objective_bound <= z * (1 + 1e-13)
    assert sol.status is Status.OPTIMAL and sol.gap <= 1e-8
    assert sol.objective_value == pytest.approx(z, rel=1e-8)


def _limited_min_time(self, *args, **kwargs):
    res = cutting.TimeLP.min_time(self, *args, **kwargs)
    return cutting.OAResult(
        Status.LIMIT,
        res.bw,
        res.upper,
        res.upper * (1 - 7.7e-8),
        res.iterations,
        "stopped after 3 LPs at proven relative gap 7.7e-08 (iteration limit)",
    )


def test_an_own_optimum_at_limit_gives_limit_with_its_gap(monkeypatch):
    inst = random_portfolio(np.random.default_rng(0), 2)
    exact = api.solve(inst, objective="min_max_regret")
    monkeypatch.setattr(
        portfolio_solver,
        "TimeLP",
        type("LimitedLP", (cutting.TimeLP,), {"min_time": _limited_min_time}),
    )
    sol = api.solve(inst, objective="min_max_regret")
    assert sol.status is Status.LIMIT and "own optimum" in sol.message
    assert sol.objective_value == pytest.approx(exact.objective_value, rel=1e-8)
    assert 7.7e-8 * 0.99 <= sol.gap <= 2e-7  # the own optimum's gap, carried into the ratio's bound
    assert sol.objective_bound <= exact.objective_value
    x = exact.objective_value - 1 + 0.01
    cheap = api.solve(inst, objective="min_cost", options=SolveOptions(max_regret=x))
    assert cheap.status is Status.LIMIT and cheap.network_cost_usd > 0


def _failing(self, costs, maximize=False):
    self.lps += 1
    return LPResult(Status.ERROR, "Unknown", float("nan"), np.zeros(0))


@pytest.mark.parametrize("seed", [0, 1])
def test_a_portfolio_lp_failing_on_every_retry_stops_honestly(monkeypatch, seed):
    inst = random_portfolio(np.random.default_rng(seed), 2 + seed)
    exact = api.solve(inst, objective="min_max_regret")
    # (above the regret of the best own optimum's design, the answer without an LP)
    x = exact.objective_value - 1 + 0.05
    cheap_exact = api.solve(inst, objective="min_cost", options=SolveOptions(max_regret=x))
    monkeypatch.setattr(portfolio_solver.RegretLP, "_solve", _failing)
    sol = api.solve(inst, objective="min_max_regret")  # (no SolverError: the best own optimum)
    assert sol.status is Status.LIMIT
    assert sol.objective_bound <= exact.objective_value * (1 + 1e-12)
    assert sol.objective_value >= exact.objective_value * (1 - 1e-8)
    cheap = api.solve(inst, objective="min_cost", options=SolveOptions(max_regret=x))
    assert cheap.status is Status.LIMIT
    assert cheap.objective_bound <= cheap_exact.network_cost_usd * (1 + 1e-12)
    assert max(cheap.portfolio.slowdowns) <= x * (1 + 1e-9)


def test_a_portfolio_without_collective_traffic_solves_like_performance():
    inst = random_portfolio(np.random.default_rng(3), 3)
    ones = (1,) * inst.network.n_dims
    local = Mapping(forward=ones, input_grad=ones, weight_grad=ones)
    inst = inst.model_copy(
        update={
            "mapping": local,
            "more_workloads": tuple(
                j.model_copy(update={"mapping": local}) for j in inst.more_workloads
            ),
        }
    )
    fastest = api.solve(inst, objective="performance")
    sol = api.solve(inst, objective="min_max_regret")
    assert sol.status is Status.OPTIMAL and sol.objective_value == 1.0 and sol.gap == 0.0
    assert sol.network_cost_usd == pytest.approx(fastest.network_cost_usd, rel=1e-9)
    cheap = api.solve(inst, objective="min_cost", options=SolveOptions(max_regret=0.05))
    assert cheap.status is Status.OPTIMAL
    assert cheap.network_cost_usd == pytest.approx(fastest.network_cost_usd, rel=1e-9)


def test_a_mix_of_one_workload_is_weighted_as_its_own_optimum():
    """(found by the portfolio fuzz) Only workload 0's regret row binds (its own optimum is 2.7e7
    times faster than workload 1's): the certificate's mix is workload 0 alone. Weighted 2.7e7
    (lam_w / U_w in ns of the slowest optimum) the main loop stopped at a gap of 0.99 and the answer
    at 0.058; weighted 1 it certifies."""
    spec = Spec(
        dims=(("Switch", 32, "A", 0.0, "halving_doubling"), ("Ring", 8, "B", 0.0, None)),
        prices={"A": (473.151, 15.8489, 230.409), "B": (0.0141254, None, None)},
        workloads=(
            WorkloadSpec(
                layers=(
                    (
                        (0.0, "ALLREDUCE", 34673.7),
                        (312.608, "ALLTOALL", 260016.0),
                        (118.85, "ALLTOALL", 2851.02),
                    ),
                ),
                groups=((8, 1), (32, 1), (4, 2)),
                weight=4.67735,
            ),
            WorkloadSpec(
                layers=(
                    (
                        (691.831, "ALLTOALL", 30199500.0),
                        (96605100.0, "P2P", 27227.0),
                        (4786.3, "ALLREDUCE", 16125.0),
                    ),
                    (
                        (0.0, "NONE", 9605060000.0),
                        (0.0, "ALLTOALL", 82937300000.0),
                        (0.0, "ALLREDUCE", 22258.7),
                    ),
                ),
                groups=((2, 8), (32, 8), (4, 1)),
                weight=100.0,
            ),
        ),
        loop="tp_dp_overlap",
        mode="concurrent",
        rows=(),
        bounds=((0.0, 1000.0), (0.0, 2.6029074)),
        x0=(1000.0, 2.25165),
    )
    sol = api.solve(spec.instance(), objective="min_max_regret")
    assert sol.status is Status.OPTIMAL and sol.objective_value == 1.0
    assert 1 - 1e-8 <= sol.objective_bound <= 1.0


def test_a_workload_that_takes_no_time_is_at_ratio_one():
    """(found by the portfolio fuzz) A workload without compute or traffic has T_w = 0 on every
    fabric: its ratio is 1, not 0 / 0 (neither a ZeroDivisionError nor an IndexError in the
    mix)."""
    inst = random_portfolio(np.random.default_rng(1), 2)
    nothing = Phase(compute_ns=0.0, collective=Collective.NONE, size_bytes=0.0)
    idle = Workload(name="idle", layers=(Layer(name="i", forward=nothing, input_grad=nothing,
                                               weight_grad=nothing),))
    inst = inst.model_copy(update={"more_workloads": inst.more_workloads + (
        Job(workload=idle, mapping=inst.mapping, weight=1.0),)})
    alone = api.solve(inst.model_copy(update={"more_workloads": inst.more_workloads[:-1]}),
                      objective="min_max_regret")
    sol = api.solve(inst, objective="min_max_regret")
    assert sol.status is Status.OPTIMAL
    assert sol.portfolio.own_optima_ns[-1] == 0.0 and sol.portfolio.slowdowns[-1] == 0.0
    assert sol.objective_value == pytest.approx(alone.objective_value, rel=1e-8)
    cheap = api.solve(
        inst,
        objective="min_cost",
        options=SolveOptions(max_regret=alone.objective_value - 1 + 0.01),
    )
    assert cheap.success


def _tiny_bound_portfolio() -> Instance:
    """(found by the portfolio fuzz) Three workloads on three dimensions, dimension 0 bounded by
    1.7924344 GB/s."""
    spec = Spec(
        dims=(
            ("Switch", 8, "A", 0.0, "halving_doubling"),
            ("Ring", 2, "A", 79.4328, None),
            ("FullyConnected", 16, "B", 0.0, None),
        ),
        prices={"A": (2.11349, 1.37246, 14.5378), "B": (1.33352, None, None)},
        workloads=(
            WorkloadSpec(
                layers=(((0.0, "ALLGATHER", 48977900.0), (0.0, "ALLREDUCE", 125893.0),
                         (0.0, "ALLTOALL", 836566.0)),),
                groups=((8, 1, 1), (4, 1, 1), (8, 1, 16)),
                weight=0.0199526,
            ),
            WorkloadSpec(
                layers=(((0.0, "ALLREDUCE", 2065.38), (0.0, "REDUCESCATTER", 9172.76),
                         (346737.0, "ALLGATHER", 42413.1)),),
                groups=((8, 2, 16), (2, 1, 4), (8, 1, 8)),
                weight=97.7237,
            ),
            WorkloadSpec(
                layers=(((0.0, "REDUCESCATTER", 1000.0), (151.356, "P2P", 27.0),
                         (562341.0, "P2P", 17885500.0)),),
                groups=((4, 1, 4), (2, 2, 2), (2, 1, 8)),
                weight=1.90546,
            ),
        ),
        loop="recompute",
        mode="concurrent",
        rows=(),
        bounds=((0.0, 1.7924343999999999), (0.0, 461.685382), (0.0, 247.144916)),
        x0=(1.2517, 251.189, 180.926),
    )
    return spec.instance()


def test_cheapest_within_a_tight_regret_stays_inside_a_tiny_bound():
    """(found by the portfolio fuzz) min_cost with max_regret 1e-7 under an upper bound of 1.79
    GB/s on dimension 0, which workload 0's time hinges on: an LP point 5.7e-9 (relative) above
    that bound, within the LP solver's tolerance, let the other dimensions drop so far that the
    answer cost 29970.99 $, 2 % below the loop's own proven bound for designs inside the bounds
    (30578.334 $). The answer lies inside every bound exactly, meets every workload's regret cap
    by the evaluator, and its bound is below its value."""
    inst = _tiny_bound_portfolio()
    cap = 1e-7
    sol = api.solve(inst, objective="min_cost", options=SolveOptions(max_regret=cap))
    dm = inst.design_matrix
    bw = sol.bw_gbps
    assert np.all(bw >= dm.bw_lower) and np.all(bw <= dm.bw_upper), bw.tolist()
    assert verify(inst, bw).max_violation == 0.0
    own = sol.portfolio.own_optima_ns
    # (the time model the solver bisects on meets the cap exactly; the evaluator, which sums in
    # another order, to round-off: its ratio here is 1 ulp above)
    for w, tm in enumerate(job_time_models(inst)):
        assert tm.time_ns(bw) / own[w] <= 1 + cap
        t = evaluate(portfolio_solver.single_job(inst, w), bw).iteration_time_ns
        assert t / own[w] <= (1 + cap) * (1 + 1e-14)
    assert sol.network_cost_usd == pytest.approx(
        float(unit_costs(inst) @ bw), rel=1e-12)
    assert sol.objective_value == sol.network_cost_usd
    # (the loop's proven bound, 30578.334 $, held the out-of-bounds answer off by 2 %)
    assert sol.objective_value >= 30578.33
    assert sol.objective_bound <= sol.objective_value
    # (LIMIT at 1.4e-7: the regret row's multiplier, 4e6 times the cost, floors the bound)
    assert sol.status in (Status.OPTIMAL, Status.LIMIT) and sol.gap <= 2e-7
    if sol.status is Status.OPTIMAL:
        assert sol.gap <= 1e-8


def test_the_regret_loops_bound_is_not_above_its_answer():
    """The same instance through :func:`hieropt.solvers.portfolio.min_cost_within_regret`: the
    loop's Lagrangian bound on the cost is at most the cost of the design it returns (it was
    30578.334 $ above an answer of 29970.99 $ outside the bounds)."""
    inst = _tiny_bound_portfolio()
    optima = portfolio_solver.own_optima(inst)
    regret = portfolio_solver.min_max_regret(inst, optima)
    res = portfolio_solver.min_cost_within_regret(inst, optima, 1e-7, regret)
    dm = inst.design_matrix
    assert np.all(res.bw >= dm.bw_lower) and np.all(res.bw <= dm.bw_upper)
    assert res.lower <= res.upper
