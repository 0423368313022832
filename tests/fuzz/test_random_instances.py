"""Fuzz: random valid instances, objective performance (the fastest network, optionally within a
budget).

Every training loop, both dimension modes, every building block, latency on and off, one to three
workloads, and magnitudes from 1e-6 to 1e6 (every byte count and every bandwidth limit multiplied by
the same factor, prices by another). For each instance (see tests/fuzz/strategies.py: feasible and
bounded by construction):

- ``hieropt.solve`` ends (no hang) with OPTIMAL within its gap target or an honest LIMIT, never
  SolverError, a false "infeasible" or "unbounded";
- the returned point is feasible, and its time and cost are what the answer says (checked here,
  independently);
- no feasible point does better than the proven lower bound: sampled points, the equal and
  traffic-proportional splits, a local descent from the returned point, and SCIP's global optimum on
  small instances;
- the rescaled copy has the same optimal time (certified intervals overlap).

Counts are printed at the end of the session (tests/fuzz/tally.py); ``HIEROPT_FUZZ=long`` runs
10,000 instances.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.fuzz import checks
from tests.fuzz.certify import REL_GAP, bound_holds, intervals_meet, point_ok, status_ok
from tests.fuzz.run import call
from tests.fuzz.strategies import Spec, magnitudes, small, specs
from tests.fuzz.tally import BUDGET, MODE, TALLY, TIMEOUT_S, seeded
from tests.fuzz.worker import Crash, Hang, Raised, worker

SUITE = "random instances"
SCIP_SHARE = 0.25 if MODE == "short" else 0.1
"""Share of small instances also solved by SCIP (the global oracle of tests/oracle)."""

FUZZ_SETTINGS = settings(
    max_examples=BUDGET["instances"], deadline=None, derandomize=MODE == "short", database=None,
    phases=(Phase.explicit, Phase.generate) if MODE == "short" else (Phase.generate,),
    suppress_health_check=list(HealthCheck), print_blob=True)


def _repro(spec: Spec, scale: float, price: float, budget: float | None) -> str:
    return (
        f"spec = {spec.describe()}; inst = spec.instance(bw_scale={scale!r}, price_scale={price!r}"
        + (f", max_network_cost_usd={budget!r}" if budget is not None else "")
        + ")"
    )


def _scip_point(inst) -> np.ndarray | None:
    """SCIP's global optimum (in the worker, with the fuzz timeout), or None when SCIP fails or runs
    out of time (counted: the oracle's limits are not hieropt's problem)."""
    pytest.importorskip("pyscipopt")
    try:
        r = worker().call("tests.fuzz.tasks:scip_min_time", inst, timeout=TIMEOUT_S)
    except (Hang, Crash):
        TALLY.count("SCIP timed out")
        return None
    if isinstance(r, Raised) or "failed" in r:
        TALLY.count("SCIP failed")
        return None
    TALLY.count("SCIP solved")
    return np.array(r["bw"])


FEASIBLE = 0.0
"""Relative row violation up to which a point counts as feasible evidence: none. SCIP's feasibility
tolerance lets its point break a row by ~1e-9, and even a 1e-13 excess of a budget a hair above the
cheapest network buys 1e-9 of time (the starved dimension's bandwidth is the budget's slack: a SCIP
point repaired to 1e-13 moved 1.3e-10 GB/s onto a dimension of 0.109 GB/s), so such a point may lie
below a true lower bound."""


def _feasible_toward(poly: checks.Polytope, inside: np.ndarray, x: np.ndarray) -> np.ndarray | None:
    """``x`` if it is feasible (:data:`FEASIBLE`), else the point nearest ``x`` on the segment from
    the feasible point ``inside`` (the rows are linear, so the feasible part of the segment is an
    interval from ``inside``); None when ``inside`` itself is not feasible to that tolerance."""
    if poly.violation(x) <= FEASIBLE:
        return x
    # (hieropt's own point, as a pivot: its time is its answer's value)
    if poly.violation(inside) > 1e-13:
        TALLY.count("SCIP point not repaired")
        return None
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if poly.violation(inside + mid * (x - inside)) <= FEASIBLE:
            lo = mid
        else:
            hi = mid
    TALLY.count("SCIP point repaired")
    return inside + lo * (x - inside)


def check_performance(
    spec: Spec,
    scale: float,
    price: float,
    budget_share: float | None,
    rng: np.random.Generator,
    use_scip: bool,
) -> None:
    """All checks of the module docstring for one instance (at magnitude 1 and rescaled)."""
    TALLY.count("examples")
    base = spec.instance()
    x0 = spec.x0_at(1.0)
    budget = None
    # a budget at or above the cost of a known feasible point: feasible
    if budget_share is not None:
        budget = float(checks.unit_costs(base) @ x0) * budget_share
        base = spec.instance(max_network_cost_usd=budget)
    extra = () if budget is None else ((checks.unit_costs(base), budget),)
    poly = checks.Polytope(base, extra)
    repro = _repro(spec, 1.0, 1.0, budget)
    r = call("tests.fuzz.tasks:solve", base, suite=SUITE, reproducer=repro)
    if r is None:
        return
    if not point_ok(SUITE, repro, base, r, poly, "performance", budget_usd=budget):
        return
    n = 60 if MODE == "short" else 30
    cands = checks.candidate_points(base, poly, x0, rng, n, around=np.array(r["bw"]))
    evidence = [(name, checks.time_ns(base, x)) for name, x in cands]
    _, descended = checks.descend(lambda x: checks.time_ns(base, x), poly, np.array(r["bw"]), rng)
    evidence.append(("local descent from the returned point", descended))
    if use_scip:
        bw = _scip_point(base)
        if bw is not None:
            bw = _feasible_toward(poly, np.array(r["bw"]), bw)
        if bw is not None:
            evidence.append(("SCIP's global optimum", checks.time_ns(base, bw)))
    if not status_ok(SUITE, repro, r, REL_GAP, "performance", [v for _, v in evidence]):
        return
    bound_holds(SUITE, repro, r, evidence, "performance")

    if scale == 1.0 and price == 1.0:
        return
    TALLY.count("rescaled copies")
    scaled_budget = None if budget is None else budget * scale * price
    inst_s = spec.instance(bw_scale=scale, price_scale=price, max_network_cost_usd=scaled_budget)
    repro_s = _repro(spec, scale, price, scaled_budget)
    rs = call("tests.fuzz.tasks:solve", inst_s, suite=SUITE, reproducer=repro_s)
    if rs is None:
        return
    extra_s = () if scaled_budget is None else ((checks.unit_costs(inst_s), scaled_budget),)
    poly_s = checks.Polytope(inst_s, extra_s)
    if not point_ok(SUITE, repro_s, inst_s, rs, poly_s, f"performance, rescaled x{scale:g}",
                    budget_usd=scaled_budget):
        return
    # the original's points, rescaled, are feasible points of the copy with the same time
    evidence_s = [
        (f"{name} (rescaled)", checks.time_ns(inst_s, x * scale)) for name, x in cands[:20]
    ]
    if not status_ok(
        SUITE, repro_s, rs, REL_GAP, f"performance, rescaled x{scale:g}", [v for _, v in evidence_s]
    ):
        return
    bound_holds(SUITE, repro_s, rs, evidence_s, f"performance, rescaled x{scale:g}")
    intervals_meet(
        SUITE, repro_s, r, rs, 1.0, f"performance, rescaled x{scale:g} (time is invariant)"
    )


@seeded
@FUZZ_SETTINGS
@given(
    spec=specs(),
    scale=magnitudes(),
    price=magnitudes(),
    budget=st.none() | st.sampled_from([1.0, 1.05, 1.5]),
    seed=st.integers(0, 2**32 - 1),
    scip=st.floats(0, 1),
)
def test_performance_certificates(
    spec: Spec, scale: float, price: float, budget, seed: int, scip: float
):
    check_performance(spec, scale, price, budget, np.random.default_rng(seed),
                      use_scip=small(spec) and scip < SCIP_SHARE)
