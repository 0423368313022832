"""Fuzz: random portfolios (two or three workloads on one fabric), min-max regret and its
time-target form.

The instances are those of tests/fuzz/strategies.py (feasible and bounded by construction) with at
least two workloads. For each:

- ``min_max_regret`` ends (no hang) OPTIMAL within its gap target or an honest LIMIT, never
  SolverError or a false "infeasible" / "unbounded"; its point is feasible and its value is max_w
  T_w(B) / U_w by the independent evaluator (U_w: the own optima it reports);
- no feasible design beats its proven bound: sampled points, the equal and traffic-proportional
  splits, a local descent of the ratio from the returned point, and (no_overlap, no latency, small)
  SCIP's global min-max-regret design against the same U_w;
- a rescaled copy (bytes and limits x a, prices x c) has the same ratio (certified intervals
  overlap);
- the time-target form (``min_cost`` with ``max_regret`` at or above the optimum's regret): its
  point meets every workload's target and the rows, and its proven cost bound is below the cost of
  every sampled design that meets every target and of the min-max-regret design.

``HIEROPT_FUZZ=medium`` / ``long`` run 100 / 1,000 portfolios (``HIEROPT_FUZZ_PORTFOLIOS``); the
short run 3.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from hieropt.result import slowdown_ratio
from hieropt.solvers.portfolio import single_job
from tests.fuzz import checks
from tests.fuzz.certify import REL_GAP, bound_holds, intervals_meet, point_ok, status_ok
from tests.fuzz.run import call
from tests.fuzz.strategies import Spec, magnitudes, small, specs
from tests.fuzz.tally import BUDGET, MODE, TALLY, TIMEOUT_S, seeded
from tests.fuzz.worker import Crash, Hang, Raised, worker

SUITE = "random portfolios"

FUZZ_SETTINGS = settings(
    max_examples=BUDGET["portfolios"],
    deadline=None,
    derandomize=MODE == "short",
    database=None,
    phases=(Phase.explicit, Phase.generate) if MODE == "short" else (Phase.generate,),
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)


def _repro(spec: Spec, scale: float = 1.0, price: float = 1.0, **kwargs) -> str:
    extra = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    return (
        f"spec = {spec.describe()}; "
        f"inst = spec.instance(bw_scale={scale!r}, price_scale={price!r}); "
        f"hieropt.solve(inst{extra})"
    )


def _times(inst, x: np.ndarray) -> np.ndarray:
    """Each workload's iteration time at ``x`` (independent evaluator), ns."""
    return np.array([checks.time_ns(single_job(inst, w), x) for w in range(len(inst.jobs))])


def _scip_design(inst, own: list[float], z0: float) -> np.ndarray | None:
    try:
        r = worker().call("tests.fuzz.tasks:scip_min_max_regret", inst, own, z0, timeout=TIMEOUT_S)
    except (Hang, Crash):
        TALLY.count("SCIP timed out")
        return None
    if isinstance(r, Raised) or "failed" in r:
        TALLY.count("SCIP failed")
        return None
    TALLY.count("SCIP solved")
    return np.array(r["bw"])


def _scip_fits(spec: Spec) -> bool:
    """SCIP's regret model (tests/oracle/scip_traffic.py) states loop no_overlap, concurrent
    dimensions, no latency."""
    return (
        small(spec)
        and spec.loop == "no_overlap"
        and spec.mode == "concurrent"
        and all(lat == 0 for _, _, _, lat, _ in spec.dims)
    )


def check_regret(
    spec: Spec, scale: float, price: float, rng: np.random.Generator, use_scip: bool
) -> dict | None:
    """The min-max-regret checks of the module docstring; the answer (None after a problem)."""
    TALLY.count("portfolios")
    inst = spec.instance()
    poly = checks.Polytope(inst)
    repro = _repro(spec, objective="min_max_regret")
    r = call(
        "tests.fuzz.tasks:solve", inst, objective="min_max_regret", suite=SUITE, reproducer=repro
    )
    if r is None or not point_ok(SUITE, repro, inst, r, poly, "min_max_regret"):
        return None
    own = np.array(r["own_optima_ns"])

    def ratio(x: np.ndarray) -> float:  # (a workload without time anywhere is at ratio 1)
        return max(slowdown_ratio(t, u) for t, u in zip(_times(inst, x), own, strict=True))

    x = np.array(r["bw"])
    if not math.isclose(ratio(x), r["value"], rel_tol=1e-9):
        TALLY.problem(
            "returned point invalid",
            SUITE,
            f"min_max_regret: reports {r['value']!r}, the evaluator's "
            f"largest T_w / U_w is {ratio(x)!r}",
            repro,
        )
        return None
    cands = checks.candidate_points(
        inst, poly, spec.x0_at(1.0), rng, 20 if MODE == "short" else 12, around=x
    )
    evidence = [(name, ratio(p)) for name, p in cands]
    _, descended = checks.descend(ratio, poly, x, rng, rounds=6, evals=16)
    evidence.append(("local descent of the ratio from the returned point", descended))
    if use_scip:
        bw = _scip_design(inst, own.tolist(), r["value"] * 1.01)
        if bw is not None and poly.violation(bw) <= 1e-13:
            evidence.append(("SCIP's global min-max-regret design", ratio(bw)))
    if not status_ok(SUITE, repro, r, REL_GAP, "min_max_regret", [v for _, v in evidence]):
        return None
    bound_holds(SUITE, repro, r, evidence, "min_max_regret")
    if scale != 1.0 or price != 1.0:
        TALLY.count("rescaled portfolios")
        inst_s = spec.instance(bw_scale=scale, price_scale=price)
        repro_s = _repro(spec, scale, price, objective="min_max_regret")
        rs = call(
            "tests.fuzz.tasks:solve",
            inst_s,
            objective="min_max_regret",
            suite=SUITE,
            reproducer=repro_s,
        )
        if rs is not None and point_ok(
            SUITE,
            repro_s,
            inst_s,
            rs,
            checks.Polytope(inst_s),
            f"min_max_regret, rescaled x{scale:g}",
        ):
            intervals_meet(
                SUITE,
                repro_s,
                r,
                rs,
                1.0,
                f"min_max_regret, rescaled x{scale:g} (the ratio is invariant)",
                tol=2e-8,
            )
    r["evidence_points"] = [p for _, p in cands] + [x]
    return r


def check_target_form(spec: Spec, regret: dict, margin: float) -> None:
    """The time-target form's checks (module docstring) at max_regret = the optimum's regret +
    ``margin``."""
    inst = spec.instance()
    x_reg = max(regret["value"] - 1.0, 0.0) + margin
    if x_reg >= 1:  # (max_regret is a fraction below 1: a 100 % slowdown is no target form)
        TALLY.count("time-target skipped (regret >= 1)")
        return
    repro = _repro(spec, objective="min_cost", max_regret=x_reg)
    r = call(
        "tests.fuzz.tasks:solve",
        inst,
        objective="min_cost",
        max_regret=x_reg,
        suite=SUITE,
        reproducer=repro,
    )
    if r is None:
        return
    TALLY.count("time-target portfolios")
    poly = checks.Polytope(inst)
    if not point_ok(SUITE, repro, inst, r, poly, "min_cost with max_regret"):
        return
    own = np.array(r["own_optima_ns"])
    cap = (1.0 + x_reg) * own
    x = np.array(r["bw"])
    slow = np.array([slowdown_ratio(t, c) - 1.0 for t, c in zip(_times(inst, x), cap, strict=True)])
    if slow.max() > 1e-9:
        TALLY.problem(
            "returned point invalid",
            SUITE,
            f"min_cost with max_regret: a workload is {slow.max():.3g} above its target",
            repro,
        )
        return
    price = checks.unit_costs(inst)
    evidence = [
        ("sampled design within every target", float(price @ p))
        for p in regret["evidence_points"]
        if (_times(inst, p) <= cap).all()
    ]
    if not status_ok(
        SUITE, repro, r, REL_GAP, "min_cost with max_regret", [v for _, v in evidence]
    ):
        return
    bound_holds(SUITE, repro, r, evidence, "min_cost with max_regret")


@seeded
@FUZZ_SETTINGS
@given(
    spec=specs(max_dims=3, max_layers=3, max_extra_workloads=2).filter(
        lambda s: len(s.workloads) >= 2
    ),
    scale=magnitudes(),
    price=magnitudes(),
    margin=st.sampled_from([1e-7, 1e-4, 0.02, 0.3]),
    seed=st.integers(0, 2**32 - 1),
    scip=st.floats(0, 1),
)
def test_portfolio_certificates(
    spec: Spec, scale: float, price: float, margin: float, seed: int, scip: float
):
    regret = check_regret(
        spec,
        scale,
        price,
        np.random.default_rng(seed),
        use_scip=_scip_fits(spec) and scip < (0.5 if MODE == "short" else 0.2),
    )
    if regret is not None:
        check_target_form(spec, regret, margin)
