"""The compiled LPs (numpy arrays for HiGHS) are the Pyomo statements of the same LPs, row by row.

hieropt states every LP as a Pyomo model (the readable, exportable form:
:func:`hieropt.formulation.arrays. build_statement`,
:func:`hieropt.formulation.ratio.build_ratio_lp`) and hands HiGHS arrays built directly with numpy
(:func:`compile_perf_lp`, :func:`compile_ratio_lp`). Each test below reads every Pyomo constraint's
standard representation (Pyomo's own ``generate_standard_repn``), maps its variables to columns by
name, and requires the same coefficients, bounds and objective as the arrays, to 1e-12 relative.
"""

from __future__ import annotations

import numpy as np
import pytest
from pyomo.repn import generate_standard_repn

import hieropt
from hieropt.formulation.arrays import build_statement, compile_perf_lp
from hieropt.formulation.ratio import build_ratio_lp
from hieropt.formulation.ratio_arrays import compile_ratio_lp
from hieropt.formulation.scale import choose_scale, typical_bandwidth
from hieropt.model.timing import build_time_model
from hieropt.spec import (
    Collective,
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Layer,
    LinearConstraint,
    Mapping,
    Network,
    Phase,
    Workload,
)
from tests.cases import REPO

AR, RS = Collective.ALL_REDUCE, Collective.REDUCE_SCATTER


def _overlap(loop: str, mode: str = "concurrent", latency: float = 0.0) -> Instance:
    """Ring 4 x Switch 8, two layers with all three phases, LIBRA-like mapping (nodes under the
    overlap loops)."""
    def layer(i: int, s: float) -> Layer:
        return Layer(
            name=f"l{i}",
            forward=Phase(compute_ns=100.0, collective=AR, size_bytes=4e8 * s),
            input_grad=Phase(compute_ns=200.0, collective=AR, size_bytes=6e8 * s),
            weight_grad=Phase(compute_ns=300.0, collective=RS, size_bytes=8e8 * s),
        )
    return Instance(
        name="overlap",
        objective="performance",
        training_loop=loop,
        dimension_mode=mode,
        network=Network(
            dims=(
                Dimension(block="Ring", npus=4, cost_class="a", latency_ns=latency),
                Dimension(block="Switch", npus=8, cost_class="b", latency_ns=latency),
            )
        ),
        workload=Workload(name="w", layers=(layer(0, 1.0), layer(1, 0.37))),
        mapping=Mapping(forward=(4, 1), input_grad=(4, 2), weight_grad=(2, 8)),
        cost=CostModel(
            classes={
                "a": CostClass(link_usd_per_gbps=2.0),
                "b": CostClass(
                    link_usd_per_gbps=8.0, switch_usd_per_gbps=18.0, nic_usd_per_gbps=30.0
                ),
            }
        ),
        constraints=(
            LinearConstraint(coefficients=(1.0, 1.0), sense="==", rhs=100.0, text="sum(bw) == 100"),
            LinearConstraint(
                coefficients=(1.0, -3.0), sense="<=", rhs=0.0, text="bw[0] <= 3 bw[1]"
            ),
        ),
    )


def _cases() -> list[tuple[str, Instance]]:
    out = [("gpt3-4d", hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml"))]
    out += [(f"{loop}-{mode}-lat{lat:g}", _overlap(loop, mode, lat))
            for loop in ("no_overlap", "tp_dp_overlap", "tp_dp_overlap_cross")
            for mode in ("concurrent", "sequential") for lat in (0.0, 500.0)]
    return out


def _rows(model, col_of) -> list[tuple[float, float, dict[int, float]]]:
    """(lower, upper, {column: coefficient}) of every active constraint of ``model`` in declaration
    order."""
    import pyomo.environ as pyo

    out = []
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        repn = generate_standard_repn(con.body)
        coef: dict[int, float] = {}
        for v, a in zip(repn.linear_vars, repn.linear_coefs, strict=True):
            coef[col_of(v)] = coef.get(col_of(v), 0.0) + float(a)
        const = float(repn.constant)
        lo = -np.inf if con.lower is None else float(pyo.value(con.lower)) - const
        hi = np.inf if con.upper is None else float(pyo.value(con.upper)) - const
        out.append((lo, hi, coef))
    return out


def _assert_row(arr_row: tuple[float, float, np.ndarray, np.ndarray], pyo_row) -> None:
    """The same row, up to the sign Pyomo picks when it normalises ``a >= b`` (to ``b - a <= 0`` or
    ``a - b >= 0``)."""
    lo, hi, idx, val = arr_row
    plo, phi, coef = pyo_row
    ours = {int(c): float(v) for c, v in zip(idx, val, strict=True) if v != 0}
    theirs = {c: v for c, v in coef.items() if v != 0}
    assert ours.keys() == theirs.keys()
    first = next(iter(ours))
    if np.sign(ours[first]) != np.sign(theirs[first]):
        theirs = {c: -v for c, v in theirs.items()}
        plo, phi = -phi, -plo
    # (a row divided by its largest
    factor = max(map(abs, ours.values())) / max(map(abs, theirs.values()))
    if plo == 0 and phi in (0, np.inf) or phi == 0 and plo == -np.inf:  # coefficient: the same row)
        theirs = {c: v * factor for c, v in theirs.items()}
    for c in ours:
        assert ours[c] == pytest.approx(theirs[c], rel=1e-12, abs=1e-300)
    assert lo == pytest.approx(plo, rel=1e-12) and hi == pytest.approx(phi, rel=1e-12)


@pytest.mark.parametrize("name,inst", _cases(), ids=[c[0] for c in _cases()])
def test_performance_lp_statement_equals_arrays(name, inst):
    tm = build_time_model(inst)
    scale = choose_scale(inst, tm)
    budget, target = 7.5e6, tm.time_ns(np.full(tm.n_dims, 200.0))
    arr = compile_perf_lp(inst, tm, scale, budget, target)
    st = build_statement(inst, tm, scale, budget, target)
    m = st.model
    K = tm.terms_bytes.shape[0]

    def col_of(v) -> int:
        name, i = v.parent_component().local_name, v.index()
        return {"B": lambda: i, "t": lambda: int(arr.t_col[i]), "tau": lambda: arr.z0 + i,
                "y": lambda: arr.z0 + K + i}[name]()

    rows = _rows(m, col_of)
    assert len(rows) == arr.n_rows
    for r, prow in enumerate(rows):
        idx, val = arr.row(r)
        _assert_row((arr.row_lower[r], arr.row_upper[r], idx, val), prow)
    for v in m.component_data_objects(__import__("pyomo.environ").environ.Var):
        c = col_of(v)
        assert (v.lb or 0.0) == pytest.approx(arr.col_lower[c], rel=1e-12)
        assert (np.inf if v.ub is None else v.ub) == pytest.approx(arr.col_upper[c], rel=1e-12)
    obj = generate_standard_repn(m.time.expr)
    costs = np.zeros(arr.n_cols)
    for v, a in zip(obj.linear_vars, obj.linear_coefs, strict=True):
        costs[col_of(v)] += a
    np.testing.assert_allclose(costs, arr.time_costs, rtol=1e-12)


@pytest.mark.parametrize("name,inst", _cases(), ids=[c[0] for c in _cases()])
def test_procurement_lp_statement_equals_arrays(name, inst):
    tm = build_time_model(inst)
    s = typical_bandwidth(inst, tm)
    ra = compile_ratio_lp(inst, tm, s)
    m = build_ratio_lp(inst, tm, s).model
    arr = ra.arr
    K = tm.terms_bytes.shape[0]

    def col_of(v) -> int:
        name, i = v.parent_component().local_name, v.index()
        return {
            "x": lambda: i,
            "u": lambda: ra.u_col,
            "kap": lambda: ra.kap_col,
            "r": lambda: int(ra.r_col[i]),
            "tau": lambda: arr.z0 + i,
            "y": lambda: arr.z0 + K + i,
        }[name]()

    import pyomo.environ as pyo

    floor = [
        c
        for c in m.component_data_objects(pyo.Constraint, active=True)
        if c.parent_component().local_name == "r_floor"
    ]
    for c in floor:
        c.deactivate()
    rows = _rows(m, col_of)
    assert len(rows) == arr.n_rows
    for r, prow in enumerate(rows):
        idx, val = arr.row(r)
        _assert_row((arr.row_lower[r], arr.row_upper[r], idx, val), prow)
    lo, hi, start, index, value = ra.floor_rows
    for c in floor:
        c.activate()
    frows = _rows(m.r_floor, col_of) if floor else []
    assert len(frows) == lo.size
    for r, prow in enumerate(frows):
        _assert_row(
            (lo[r], hi[r], index[start[r] : start[r + 1]], value[start[r] : start[r + 1]]), prow
        )
    obj = generate_standard_repn(m.product.expr)
    costs = np.zeros(arr.n_cols)
    for v, a in zip(obj.linear_vars, obj.linear_coefs, strict=True):
        costs[col_of(v)] += a
    np.testing.assert_allclose(costs, arr.time_costs, rtol=1e-12)


def _single_term(budget: float | None) -> Instance:
    """The Ring 4 x Switch 8 instance with every phase an all-reduce over all 32 NPUs (one
    collective term), its two design rows, and a budget row when ``budget`` is given."""
    inst = _overlap("no_overlap")
    return inst.model_copy(
        update={
            "mapping": Mapping(forward=(4, 8), input_grad=(4, 8), weight_grad=(4, 8)),
            "max_network_cost_usd": budget,
            "workload": Workload(
                name="w",
                layers=tuple(
                    layer.model_copy(
                        update={
                            "weight_grad": Phase(
                                compute_ns=300.0,
                                collective=AR,
                                size_bytes=layer.weight_grad.size_bytes,
                            )
                        }
                    )
                    for layer in inst.workload.layers
                ),
            ),
        }
    )


@pytest.mark.parametrize("budget", [None, 7.5e6])
def test_single_term_lp_statement_equals_arrays(budget):
    from hieropt.formulation.rate import build_rate_statement, compile_rate_lp, single_term

    inst = _single_term(budget)
    tm = build_time_model(inst)
    m, _ = single_term(tm)
    scale = choose_scale(inst, tm, budget)
    arr = compile_rate_lp(inst, m, scale, budget)
    model = build_rate_statement(inst, m, scale, budget)

    def col_of(v) -> int:
        return {"B": lambda: v.index(), "u": lambda: arr.u_col}[v.parent_component().local_name]()

    rows = _rows(model, col_of)
    assert len(rows) == arr.n_rows == 2 + 2 + 1  # design, one rate row per loaded dimension, budget
    for r, prow in enumerate(rows):
        s, e = arr.start[r], arr.start[r + 1]
        _assert_row((arr.row_lower[r], arr.row_upper[r], arr.index[s:e], arr.value[s:e]), prow)
        np.testing.assert_allclose(arr.dense[r, arr.index[s:e]], arr.value[s:e], rtol=0)
    obj = generate_standard_repn(model.rate_objective.expr)
    costs = np.zeros(arr.n_cols)
    for v, a in zip(obj.linear_vars, obj.linear_coefs, strict=True):
        costs[col_of(v)] += a
    np.testing.assert_allclose(costs, arr.time_costs, rtol=0)


def _with_rows(*rows: tuple[tuple[float, float], str, float]) -> Instance:
    """The Ring 4 x Switch 8 instance with only ``rows`` ((a0, a1), sense, rhs) as design
    constraints."""
    return _overlap("no_overlap").model_copy(
        update={
            "constraints": tuple(
                LinearConstraint(coefficients=a, sense=op, rhs=r, text=f"{a} {op} {r}")
                for a, op, r in rows
            )
        }
    )


def test_redundant_rows_by_interval_arithmetic():
    """Cluster prices (32 NPUs): dimension 0 costs 32 x 2 = 64 $ per GB/s (link 2 $), dimension 1
    costs 32 x (8 + 18 + 30) = 1,792 $ per GB/s; within a cap of 71,680 $ each B_d <= cap / p_d =
    1,120 and 40 GB/s."""
    from hieropt.formulation.ratio_arrays import redundant_rows
    from hieropt.model.cost import cluster_cost_usd_per_gbps

    inst = _with_rows(
        ((1.0, 1.0), ">=", 10.0),
        ((1.0, 1.0), "<=", 1160.0),
        ((1.0, 1.0), "<=", 1159.0),
        ((1.0, -3.0), ">=", -120.0),
        ((1.0, -3.0), ">=", -119.0),
        ((1.0, 1.0), "==", 100.0),
    )
    assert cluster_cost_usd_per_gbps(inst).tolist() == [64.0, 1792.0]
    rows, bounds = redundant_rows(inst, 71680.0)
    # sum <= 1160 reaches 1,120 + 40 at most: redundant; <= 1159 is not. B0 - 3 B1 >= -120 holds at
    # B1 = 40, B0 = 0; >= -119 does not. A floor (>= 10) and an equality never count.
    assert rows.tolist() == [False, True, False, True, False, False]
    assert bounds.tolist() == [False, False]  # no upper bounds given
    assert redundant_rows(inst)[0].tolist() == [False] * 6  # no cap: nothing is redundant


def test_cost_range_lp_is_exact_across_fourteen_orders_of_magnitude():
    """min / max of 64 B0 + 1,792 B1 over 1e-3 <= B0 + B1 <= 1e11: 0.064 $ and 1.792e14 $ (B on the
    cheaper and the dearer dimension), however far apart; the ceiling row is then left out of the
    cost-share LP (its coefficient on u, 1e11 / 1e-4, is one HiGHS rejects)."""
    from hieropt.solvers.ratio import RatioCore

    inst = _with_rows(((1.0, 1.0), ">=", 1e-3), ((1.0, 1.0), "<=", 1e11))
    core = RatioCore(inst, build_time_model(inst), 1e-4, prune=True)
    try:
        cheapest, dearest = core.cost_range()
    finally:
        core.close()
    assert cheapest == pytest.approx(0.064, rel=1e-9)
    assert dearest == pytest.approx(1.792e14, rel=1e-9)


def test_performance_lp_is_compiled_once_per_instance_and_shared_read_only():
    """A repeated solve (or a copy with another objective) re-uses the compiled LP, read-only;
    another budget gets another scale, hence its own LP; and the shared LP gives the same certified
    optimum every time."""
    from hieropt.solvers.cutting import TimeLP

    inst = _overlap("no_overlap")
    first, again = TimeLP(inst, build_time_model(inst)), TimeLP(inst, build_time_model(inst))
    assert again.arr is first.arr and again.scale is first.scale
    with pytest.raises(ValueError, match="read-only"):
        first.arr.value[0] = 1.0
    fresh = compile_perf_lp(inst, build_time_model(inst), first.scale)
    np.testing.assert_array_equal(fresh.value, first.arr.value)
    np.testing.assert_array_equal(fresh.row_upper, first.arr.row_upper)
    budget = inst.model_copy(update={"max_network_cost_usd": 1e6})
    other = TimeLP(budget, build_time_model(budget))
    assert other.arr is not first.arr
    for lp in (first, again, other):
        lp.close()
    values = {hieropt.solve(inst).objective_value for _ in range(3)}
    assert len(values) == 1 and hieropt.solve(inst).gap <= 1e-8


def test_a_copy_with_other_prices_gets_its_own_lp():
    """A price sweep by model_copy: the copy shares the time model and the rows, not the budget
    row's prices. Its budgeted optimum equals that of the same instance built afresh (no memo
    shared), and differs from the original's (the dearer dimension gets less of the same budget)."""
    from hieropt.spec import CostClass, CostModel

    def with_prices(inst, b_link):
        return inst.model_copy(
            update={
                "cost": CostModel(
                    classes={
                        "a": CostClass(link_usd_per_gbps=2.0),
                        "b": CostClass(
                            link_usd_per_gbps=b_link,
                            switch_usd_per_gbps=18.0,
                            nic_usd_per_gbps=30.0,
                        ),
                    }
                )
            }
        )

    from hieropt.solvers.cutting import TimeLP

    base = _overlap("no_overlap").model_copy(
        update={"constraints": (), "max_network_cost_usd": 20_000.0}
    )
    copy = with_prices(base, 80.0)
    lps = [TimeLP(i, build_time_model(i)) for i in (base, copy)]
    assert lps[1].arr is not lps[0].arr
    want = compile_perf_lp(copy, build_time_model(copy), lps[1].scale)
    # the budget row's prices are the copy's
    np.testing.assert_array_equal(lps[1].arr.cost_costs, want.cost_costs)
    assert not np.array_equal(lps[1].arr.cost_costs * lps[1].scale.cost_usd,
                              lps[0].arr.cost_costs * lps[0].scale.cost_usd)
    for lp in lps:
        lp.close()
    first = hieropt.solve(base)
    dearer = hieropt.solve(with_prices(base, 80.0))
    fresh = hieropt.solve(with_prices(_overlap("no_overlap").model_copy(
        update={"constraints": (), "max_network_cost_usd": 20_000.0}), 80.0))
    assert dearer.objective_value == pytest.approx(fresh.objective_value, rel=1e-10)
    assert dearer.network_cost_usd <= 20_000.0 * (1 + 1e-9)
    assert dearer.objective_value > first.objective_value * 1.01 and dearer.gap <= 1e-8
