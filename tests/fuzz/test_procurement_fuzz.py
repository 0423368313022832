"""Fuzz: the procurement objectives on random valid instances — min_cost, performance_per_cost and
pareto.

Each call runs in the worker process with a wall-clock limit (a call that does not end is a hang)
and must end with a certificate or an honest LIMIT. The checks (tolerances in tests/fuzz/checks.py
and below):

- **min_cost** (target = the fastest time x (1 + a), a from 1e-6 to 1e9, so it is feasible; a ns
  when the fastest time is 0): the design meets the
  target and the constraints, its cost is recomputed from the cost classes; no sampled feasible
  point that meets the target is cheaper than the proven bound; and the budget sweep: the fastest
  design within (1 - 1e-7) x the proven bound must **not** meet the target (if it does, a cheaper
  design than the "proven" cheapest exists);
- **performance_per_cost**: no sampled feasible point and no point of a budget sweep (the fastest
  design within kappa for kappa from 0.2 to 5 times the answer's cost) has a smaller time x cost
  than the proven bound;
- **pareto**: every point is feasible, within its budget and correctly evaluated; its proven time
  bound is not beaten by sampled points within the same budget and not above the time of a point
  with a smaller budget; no front point has a smaller time x cost than the performance-per-cost
  bound;
- every answer of a rescaled copy (bytes and bandwidth limits x s, prices x p: cost and time x cost
  scale by s p, time is invariant) has a certified interval that meets the original's.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.fuzz import checks
from tests.fuzz.certify import PPC_GAP, REL_GAP, bound_holds, intervals_meet, point_ok, status_ok
from tests.fuzz.run import call
from tests.fuzz.strategies import Spec, magnitudes, specs
from tests.fuzz.tally import BUDGET, MODE, TALLY, seeded

SUITE = "procurement"
SWEEP_EPS = 1e-7
"""The budget sweep of min_cost asks for the fastest design within (1 - SWEEP_EPS) x the proven cost
bound: far above the 1e-9 LP tolerances (so a false alarm would need a real cheaper design), far
below any gap worth reporting."""
PPC_TOL = 1e-8
"""A time x cost value below the proven bound by more than this (relative) beats the certificate."""

PROC_SETTINGS = settings(
    max_examples=BUDGET["procurement"], deadline=None, derandomize=MODE == "short", database=None,
    phases=(Phase.explicit, Phase.generate) if MODE == "short" else (Phase.generate,),
    suppress_health_check=list(HealthCheck), print_blob=True)

# small instances: procurement objectives re-solve the LP many times
procurement_specs = specs(max_dims=3, max_layers=3, max_extra_workloads=1, floor=True)


def _repro(spec: Spec, call_text: str, scale: float = 1.0, price: float = 1.0) -> str:
    return (
        f"spec = {spec.describe()}; inst = spec.instance(bw_scale={scale!r}, "
        f"price_scale={price!r}); {call_text}"
    )


def _product(inst, x: np.ndarray) -> float:
    return checks.time_ns(inst, x) * float(checks.unit_costs(inst) @ x)


def _fastest(spec: Spec, inst):
    r = call("tests.fuzz.tasks:solve", inst, objective="performance", suite=SUITE,
             reproducer=_repro(spec, "hieropt.solve(inst, objective='performance')"))
    return r


def check_min_cost(
    spec: Spec, slack: float, scale: float, price: float, rng: np.random.Generator
) -> None:
    """min_cost at target = fastest x (1 + slack); see the module docstring."""
    TALLY.count("min_cost examples")
    inst = spec.instance()
    fast = _fastest(spec, inst)
    if fast is None or fast["status"] != "optimal":
        return
    # a time target must be > 0 (InputError otherwise); an instance without compute or traffic takes
    # 0 ns at any bandwidth, and then any positive target is met by the cheapest network
    target = fast["time_ns"] * (1 + slack) if fast["time_ns"] > 0 else slack
    text = f"hieropt.solve(inst, objective='min_cost', max_iteration_time_ns={target!r})"
    repro = _repro(spec, text)
    r = call(
        "tests.fuzz.tasks:solve",
        inst,
        objective="min_cost",
        max_iteration_time_ns=target,
        suite=SUITE,
        reproducer=repro,
    )
    if r is None:
        return
    poly = checks.Polytope(inst)
    if not point_ok(SUITE, repro, inst, r, poly, "min_cost", target_ns=target):
        return
    u = checks.unit_costs(inst)
    cands = checks.candidate_points(inst, poly, spec.x0_at(), rng, 40, around=np.array(r["bw"]))
    evidence = [(name, float(u @ x)) for name, x in cands if checks.time_ns(inst, x) <= target]
    # budget sweep: the fastest design within (1 - eps) x the proven bound must not meet the target
    budget = r["bound"] * (1 - SWEEP_EPS)
    b = call(
        "tests.fuzz.tasks:solve",
        inst,
        objective="performance",
        max_network_cost_usd=budget,
        suite=SUITE,
        reproducer=_repro(
            spec, f"hieropt.solve(inst, objective='performance', max_network_cost_usd={budget!r})"
        ),
        allow=("infeasible",),
    )
    if isinstance(b, dict):
        xb = np.array(b["bw"])
        tb, cb = checks.time_ns(inst, xb), float(u @ xb)
        if tb <= target and cb <= budget and poly.relative_violation(xb) <= checks.FEAS_TOL:
            evidence.append(
                (f"the fastest design within ${budget!r} (time {tb!r} ns meets the target)", cb)
            )
    if not status_ok(SUITE, repro, r, REL_GAP, "min_cost", [v for _, v in evidence]):
        return
    bound_holds(SUITE, repro, r, evidence, "min_cost")
    if scale == 1.0 and price == 1.0:
        return
    inst_s = spec.instance(bw_scale=scale, price_scale=price)
    repro_s = _repro(spec, text, scale, price)
    rs = call(
        "tests.fuzz.tasks:solve",
        inst_s,
        objective="min_cost",
        max_iteration_time_ns=target,
        suite=SUITE,
        reproducer=repro_s,
    )
    if rs is None:
        return
    if point_ok(
        SUITE, repro_s, inst_s, rs, checks.Polytope(inst_s), "min_cost rescaled", target_ns=target
    ):
        status_ok(SUITE, repro_s, rs, REL_GAP, "min_cost rescaled", [])
        intervals_meet(
            SUITE,
            repro_s,
            r,
            rs,
            scale * price,
            f"min_cost rescaled x{scale:g}, prices x{price:g}",
            tol=1e-8,
        )


def check_ppc(spec: Spec, scale: float, price: float, rng: np.random.Generator) -> None:
    """performance_per_cost; see the module docstring."""
    TALLY.count("performance_per_cost examples")
    inst = spec.instance()
    text = "hieropt.solve(inst, objective='performance_per_cost')"
    repro = _repro(spec, text)
    r = call(
        "tests.fuzz.tasks:solve",
        inst,
        objective="performance_per_cost",
        suite=SUITE,
        reproducer=repro,
    )
    if r is None:
        return
    poly = checks.Polytope(inst)
    if not point_ok(SUITE, repro, inst, r, poly, "performance_per_cost"):
        return
    cands = checks.candidate_points(inst, poly, spec.x0_at(), rng, 40, around=np.array(r["bw"]))
    evidence = [(name, _product(inst, x)) for name, x in cands]
    _, descended = checks.descend(lambda x: _product(inst, x), poly, np.array(r["bw"]), rng)
    evidence.append(("local descent from the returned point", descended))
    for k in (0.2, 0.5, 0.9, 0.99, 1.01, 1.1, 2.0, 5.0):
        kappa = r["cost_usd"] * k
        b = call(
            "tests.fuzz.tasks:solve",
            inst,
            objective="performance",
            max_network_cost_usd=kappa,
            suite=SUITE,
            reproducer=_repro(spec, f"hieropt.solve(inst, max_network_cost_usd={kappa!r})"),
            allow=("infeasible",),
        )
        if isinstance(b, dict) and poly.relative_violation(np.array(b["bw"])) <= checks.FEAS_TOL:
            evidence.append(
                (f"the fastest design within ${kappa!r}", _product(inst, np.array(b["bw"])))
            )
    if not status_ok(SUITE, repro, r, PPC_GAP, "performance_per_cost", [v for _, v in evidence]):
        return
    bound_holds(SUITE, repro, r, evidence, "performance_per_cost", tol=PPC_TOL)
    if scale == 1.0 and price == 1.0:
        return
    inst_s = spec.instance(bw_scale=scale, price_scale=price)
    repro_s = _repro(spec, text, scale, price)
    rs = call(
        "tests.fuzz.tasks:solve",
        inst_s,
        objective="performance_per_cost",
        suite=SUITE,
        reproducer=repro_s,
    )
    if rs is None:
        return
    if point_ok(
        SUITE, repro_s, inst_s, rs, checks.Polytope(inst_s), "performance_per_cost rescaled"
    ):
        status_ok(SUITE, repro_s, rs, PPC_GAP, "performance_per_cost rescaled", [])
        intervals_meet(SUITE, repro_s, r, rs, scale * price,
                       f"performance_per_cost rescaled x{scale:g}, prices x{price:g}", tol=PPC_TOL)


def check_pareto(spec: Spec, rng: np.random.Generator) -> None:
    """pareto with 5 points; see the module docstring."""
    TALLY.count("pareto examples")
    inst = spec.instance()
    repro = _repro(spec, "hieropt.pareto(inst, points=5)")
    r = call("tests.fuzz.tasks:pareto", inst, points=5, suite=SUITE, reproducer=repro)
    if r is None:
        return
    u = checks.unit_costs(inst)
    prev = None
    for i, p in enumerate(r["points"]):
        pr = {
            "bw": p["bw"],
            "time_ns": p["time_ns"],
            "cost_usd": p["cost_usd"],
            "value": p["time_ns"],
            "bound": p["bound_ns"],
            "gap": p["gap"],
            "status": "optimal" if p["gap"] <= REL_GAP else "limit",
        }
        bpoly = checks.Polytope(inst, ((u, p["budget"]),))
        if not point_ok(SUITE, repro, inst, pr, bpoly, f"pareto point {i}", budget_usd=p["budget"]):
            return
        evidence = [(name, checks.time_ns(inst, x)) for name, x in
                    checks.candidate_points(inst, bpoly, np.array(p["bw"]), rng, 15)]
        if prev is not None:
            evidence.append((f"front point {i - 1} (smaller budget)", prev))
        if not status_ok(SUITE, repro, pr, REL_GAP, f"pareto point {i}", [v for _, v in evidence]):
            return
        if not bound_holds(SUITE, repro, pr, evidence, f"pareto point {i}"):
            return
        prev = p["time_ns"]
    best = r["best_per_cost"]
    if best is not None:
        evidence = [
            (f"front point {i}", p["time_ns"] * p["cost_usd"]) for i, p in enumerate(r["points"])
        ]
        evidence.append(("the fastest network", r["fastest"]["time_ns"] * r["fastest"]["cost_usd"]))
        bound_holds(
            SUITE, repro, best, evidence, "pareto's performance-per-cost optimum", tol=PPC_TOL
        )




@seeded
@PROC_SETTINGS
@given(
    spec=procurement_specs,
    slack=st.sampled_from([1e-6, 1e-3, 0.01, 0.1, 1.0, 10.0, 1e3, 1e6, 1e9]),
    scale=magnitudes(),
    price=magnitudes(),
    seed=st.integers(0, 2**32 - 1),
)
def test_min_cost_certificates(spec: Spec, slack: float, scale: float, price: float, seed: int):
    check_min_cost(spec, slack, scale, price, np.random.default_rng(seed))


@seeded
@PROC_SETTINGS
@given(
    spec=procurement_specs, scale=magnitudes(), price=magnitudes(), seed=st.integers(0, 2**32 - 1)
)
def test_performance_per_cost_certificates(spec: Spec, scale: float, price: float, seed: int):
    check_ppc(spec, scale, price, np.random.default_rng(seed))


@seeded
@PROC_SETTINGS
@given(spec=procurement_specs, seed=st.integers(0, 2**32 - 1))
def test_pareto_certificates(spec: Spec, seed: int):
    check_pareto(spec, np.random.default_rng(seed))

