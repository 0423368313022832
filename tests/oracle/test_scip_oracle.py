"""SCIP as an independent global oracle for the performance objective (the model:
tests/oracle/scip_traffic.py).

The oracle builds the non-convex model straight from the per-collective traffic (``phase_traffic``,
no aggregation, nothing from hieropt's formulation or solvers) with pyscipopt:

    min  sum_k tau_k   s.t.  tau_k >= m_kd * t_d,  B_d * t_d == 1 (loaded d),  design rows and
    bounds on B,

in MB, GB/s and ms. SCIP solves it to global optimality by spatial branch and bound. Its own
objective can sit slightly below the true optimum because B_d * t_d == 1 and the epigraph rows only
hold to the feasibility tolerance (pitfall P5), so the time of SCIP's point is always re-evaluated
with :func:`hieropt.api.evaluate`.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

from hieropt import api
from hieropt.spec import (
    PHASES,
    Bound,
    Collective,
    Dimension,
    Instance,
    Layer,
    LinearConstraint,
    Mapping,
    Network,
    Phase,
    Workload,
)
from tests.fuzz.strategies import divisors as _divisors
from tests.fuzz.strategies import tiled

pytest.importorskip("pyscipopt")

from tests.oracle.scip import (  # noqa: E402
    COST,
    describe,
    extra_rows,
    unit,
)
from tests.oracle.scip_traffic import scip_min_time  # noqa: E402

REL_MATCH = 1e-6  # hieropt vs SCIP's (re-evaluated) point


# ---------------------------------------------------------------------------------------- hand case


def _instance(dims, layers, mapping, constraints, bounds=None, name="oracle") -> Instance:
    return Instance(
        name=name,
        network=Network(
            dims=tuple(
                Dimension(
                    block=b, npus=tiled(p, *(mapping.group(ph)[d] for ph in PHASES)), cost_class="C"
                )
                for d, (b, p) in enumerate(dims)
            )
        ),
        workload=Workload(name=name, layers=tuple(layers)),
        mapping=mapping,
        cost=COST,
        constraints=tuple(constraints),
        bounds=bounds,
        objective="performance",
        training_loop="no_overlap",
    )


def test_two_dim_all_reduce_closed_form():
    # One all-reduce of S bytes over a 4 x 8 group with B0 + B1 == 100. LIBRA's hierarchical
    # all-reduce sends m0 = 2 S (p0-1)/p0 on dimension 0, then m1 = 2 (S/p0) (p1-1)/p1 on dimension
    # 1; the time max(m0/B0, m1/B1) is minimised where m0/B0 = m1/B1, i.e. B0 = 100 m0/(m0+m1),
    # giving T = compute + (m0+m1)/100 ns (GB/s = B/ns).
    S, p0, p1, compute = 1e9, 4, 8, 12345.0
    m0 = 2 * S * (p0 - 1) / p0
    m1 = 2 * (S / p0) * (p1 - 1) / p1
    none = Phase(compute_ns=0.0, collective=Collective.NONE, size_bytes=0.0)
    layer = Layer(
        name="l0",
        forward=Phase(compute_ns=compute, collective=Collective.ALL_REDUCE, size_bytes=S),
        input_grad=none,
        weight_grad=none,
    )
    inst = _instance(
        [("Ring", p0), ("Switch", p1)],
        [layer],
        Mapping(forward=(p0, p1), input_grad=(1, 1), weight_grad=(1, 1)),
        [
            LinearConstraint(
                coefficients=(1.0, 1.0), sense="==", rhs=100.0, text="bw[0] + bw[1] == 100"
            )
        ],
    )
    sol = api.solve(inst)
    assert sol.success
    b0 = 100 * m0 / (m0 + m1)
    assert sol.bw_gbps == pytest.approx([b0, 100 - b0], rel=1e-4)
    assert sol.iteration_time_ns == pytest.approx(compute + (m0 + m1) / 100, rel=1e-9)
    assert sol.lower_bound_ns <= sol.iteration_time_ns
    # and the oracle agrees on this case too
    bw, _ = scip_min_time(inst)
    assert bw == pytest.approx([b0, 100 - b0], rel=1e-4)
    assert api.evaluate(inst, bw).iteration_time_ns == pytest.approx(
        compute + (m0 + m1) / 100, rel=1e-8
    )


# --------------------------------------------------------------------------------- random instances


@st.composite
def instances(draw) -> Instance:
    """Small random instances whose constraints all hold at the equal split bw[d] = S/D (feasible)
    and that cap the total bandwidth by S (bounded)."""
    D = draw(st.integers(2, 4))
    dims = [
        (draw(st.sampled_from(["Ring", "FullyConnected", "Switch"])), draw(st.integers(2, 8)))
        for _ in range(D)
    ]
    groups = {ph: tuple(draw(st.sampled_from(_divisors(p))) for _, p in dims) for ph in PHASES}

    def phase() -> Phase:
        return Phase(
            compute_ns=draw(st.sampled_from([0.0, 1e3, 1e5]) | st.integers(0, 10**6).map(float)),
            collective=draw(st.sampled_from(list(Collective))),
            size_bytes=10.0 ** draw(st.floats(5.0, 9.0)),
        )

    # 3..21 phases; NONE phases (and groups of 1) carry no collective
    n_layers = draw(st.integers(1, 7))
    layers = [
        Layer(name=f"l{i}", forward=phase(), input_grad=phase(), weight_grad=phase())
        for i in range(n_layers)
    ]

    S = float(draw(st.integers(100, 1000)))
    e = S / D  # the equal split, where every row below holds
    rows = [
        LinearConstraint(
            coefficients=(1.0,) * D,
            sense=draw(st.sampled_from(["==", "<="])),
            rhs=S,
            text="sum(bw) budget",
        )
    ]
    rows += extra_rows(draw, D, e, 3)
    bounds = None
    if draw(st.booleans()):
        bounds = tuple(
            Bound(
                lower_gbps=e * draw(unit()),
                upper_gbps=draw(st.none() | unit().map(lambda f: e * (1 + 2 * f))),
            )
            for _ in range(D)
        )
    return _instance(dims, layers, Mapping(**groups), rows, bounds, name="random")


def _example(dims, layers, groups, rows, bounds) -> Instance:
    """An instance from plain tuples: layers as ((compute_ns, collective, size_bytes) x 3
    phases)."""
    return _instance(
        dims,
        [
            Layer(
                name=f"l{i}",
                **{
                    ph: Phase(compute_ns=c, collective=Collective(k), size_bytes=s)
                    for ph, (c, k, s) in zip(PHASES, phases, strict=True)
                },
            )
            for i, phases in enumerate(layers)
        ],
        Mapping(**dict(zip(PHASES, groups, strict=True))),
        [
            LinearConstraint(coefficients=a, sense=op, rhs=r, text="kept example")
            for a, op, r in rows
        ],
        None if bounds is None else tuple(Bound(lower_gbps=lo, upper_gbps=hi) for lo, hi in bounds),
        name="kept",
    )


# Kept examples, found by this test with an earlier form of its strategy (raw hypothesis floats). An
# earlier solver stopped on both with status LIMIT after 500 LPs: A at gap 1.69e-8 (T 878564.52258
# ns against SCIP's point 878564.51666 ns, 6.7e-9 worse), B at gap 1.05e-8 (T 7816550.00477 ns
# against SCIP's point 7816549.99235 ns, 1.6e-9 worse; SCIP's objective 7816549.98076 ns). hieropt's
# time was within its 1e-8 target; its lower bound stalled (7816549.92249 ns on B). SCIP needs its
# fallback settings on A (LP-solver error with the first two).
STALL_A = _example(
    [("Ring", 2), ("Ring", 4), ("Ring", 7)],
    [
        (
            (0.0, "REDUCESCATTER", 6599656.167550965),
            (0.0, "NONE", 314914.05428032205),
            (0.0, "REDUCESCATTER", 376778557.82798976),
        ),
        (
            (0.0, "NONE", 671916.752462095),
            (0.0, "ALLREDUCE", 14817680.624021571),
            (0.0, "NONE", 1431123.0211570077),
        ),
    ],
    ((2, 2, 4), (1, 3, 5), (1, 2, 3)),
    [
        ((1.0, 1.0, 1.0), "==", 532.0),
        ((3.678226111651453, 0.0, 0.0), ">=", 61.62455346438669),
        ((0.5, 0.0, 0.0), ">=", 0.0),
        ((1.0, 0.0, 1.0), "<=", 354.6666666666667),
    ],
    [(124.8971535652032, None), (0.0, None), (162.8089040410395, None)],
)
STALL_B = _example(
    [("FullyConnected", 3), ("FullyConnected", 7), ("Switch", 4), ("FullyConnected", 3)],
    [
        (
            (1000.0, "ALLTOALL", 113352.70812356853),
            (0.0, "NONE", 1150843.203975986),
            (5.054431900369661, "ALLGATHER", 1189885.554296557),
        ),
        (
            (858989.064924923, "ALLREDUCE", 213143491.20753428),
            (0.0, "ALLTOALL", 428069218.6465997),
            (100000.0, "REDUCESCATTER", 7174560.327511722),
        ),
        (
            (100000.0, "ALLREDUCE", 71058309.00582063),
            (986545.4798512041, "ALLTOALL", 216761.20118001),
            (0.0, "NONE", 192879884.80791494),
        ),
        (
            (135393.27715986408, "ALLGATHER", 856690.0779370811),
            (185413.8212229004, "REDUCESCATTER", 71756292.17979966),
            (2.007315978058588e-08, "ALLREDUCE", 4461794.001808111),
        ),
        (
            (135393.27715986408, "REDUCESCATTER", 2000467.3657992133),
            (0.0, "ALLTOALL", 46394987.87523461),
            (1e-08, "ALLTOALL", 93115832.79645133),
        ),
    ],
    ((2, 5, 2, 3), (2, 7, 2, 2), (2, 3, 1, 2)),
    [((1.0, 1.0, 1.0, 1.0), "<=", 500.0)],
    None,
)


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
@example(STALL_A)
@example(STALL_B)
@given(instances())
def test_hieropt_matches_scip(inst: Instance):
    note(describe(inst))
    sol = api.solve(inst)
    note(
        f"hieropt: {sol.status} gap={sol.gap!r} bw={sol.bw_gbps.tolist()} "
        f"T={sol.iteration_time_ns!r} "
        f"LB={sol.lower_bound_ns!r}"
    )
    scip_bw, scip_obj = scip_min_time(inst)
    scip_true = api.evaluate(inst, scip_bw).iteration_time_ns
    note(f"SCIP: bw={scip_bw.tolist()} T(bw)={scip_true!r} objective={scip_obj!r}")

    assert sol.success, sol.message
    assert sol.gap <= 1e-8
    assert sol.lower_bound_ns <= sol.iteration_time_ns
    # the evaluator (layer by layer, no aggregation) reproduces the solver's reported time
    assert api.evaluate(inst, sol.bw_gbps).iteration_time_ns == pytest.approx(
        sol.iteration_time_ns, rel=1e-12
    )
    assert math.isfinite(scip_true)
    # hieropt must never be worse than SCIP's point
    assert sol.iteration_time_ns <= scip_true * (1 + REL_MATCH)
    if sol.iteration_time_ns < scip_true * (1 - REL_MATCH):
        # hieropt's point is strictly better than SCIP's. hieropt's time is evaluated exactly at a
        # point that meets the constraints, so this is SCIP being inaccurate (B*t == 1 slackened
        # within its tolerances, or a flat optimum resolved loosely), not a counterexample. What
        # must still hold is that SCIP's reported objective (its claimed optimum, within limits/gap
        # of its dual bound) is not below hieropt's proven lower bound: otherwise one of the two
        # bounds would be wrong.
        assert scip_obj >= sol.lower_bound_ns * (1 - REL_MATCH)
    else:
        assert sol.iteration_time_ns == pytest.approx(scip_true, rel=REL_MATCH)
        # SCIP's claimed optimum cannot be far below hieropt's proven lower bound either
        assert scip_obj >= sol.lower_bound_ns * (1 - REL_MATCH)
