"""LIBRA's own Gurobi model, for the side-by-side column of scripts/bench.py (gurobipy from PyPI;
its size-limited licence fits these models once the phases without traffic are left out).

The model restates LIBRA's ``src/model/model.py`` and ``inputs/training_loop/no_overlap.py``
(github.com/astra-sim/ libra): variables ``bw[d] >= 0`` and ``bw_inv[d] >= 0`` with the bilinear
equality ``bw[d] * bw_inv[d] == 1`` on every dimension; per layer and phase a variable ``dim_time[d]
== bytes_d * bw_inv[d]`` for every dimension and ``coll_time == max_(dim_time)`` (Gurobi's general
max constraint); ``network_cost == sum_d N u_d bw[d]``; the objective ``compute + sum coll_time``
(PerfOpt) or ``(compute + sum coll_time) * network_cost / 1e10`` (PerfPerCostOpt); the design rows
on ``bw``. Settings as LIBRA's: ``NonConvex = 2``, ``ScaleFlag = 2``, Gurobi's default tolerances
and gaps, output off. Units as LIBRA's: bytes, GB/s, ns. Timed: model build + solve (the environment
is created once, outside the timing, as LIBRA's class-level model is).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hieropt.model.traffic import phase_traffic
from hieropt.spec import Instance

try:
    import gurobipy as gp
    from gurobipy import GRB
except ImportError:  # pragma: no cover - optional
    gp = None
    GRB = None


def available() -> str | None:
    """None when gurobipy can solve here, else why not (one line)."""
    if gp is None:
        return "gurobipy is not installed (pip install gurobipy)"
    try:
        env = gp.Env(empty=True)
        env.setParam("OutputFlag", 0)
        env.start()
        env.dispose()
    except gp.GurobiError as e:
        return f"Gurobi cannot start: {e}"
    return None


def environment():
    """A started Gurobi environment with output off (create once per benchmark)."""
    env = gp.Env(empty=True)
    env.setParam("OutputFlag", 0)
    env.start()
    return env


def unit_costs(instance: Instance) -> np.ndarray:
    """N * u_d, $ per GB/s of per-NPU bandwidth for the whole cluster, straight from the cost
    classes (LIBRA)."""
    out = []
    for dim in instance.network.dims:
        cc = instance.cost.classes[dim.cost_class]
        price = cc.link_usd_per_gbps
        if dim.block == "Switch":
            price += (cc.switch_usd_per_gbps or 0.0) + (cc.nic_usd_per_gbps or 0.0)
        out.append(price * instance.network.npus_total)
    return np.array(out)


def solve_libra(instance: Instance, objective: str, env) -> dict[str, Any]:
    """Build and solve LIBRA's model of ``instance`` (no_overlap) for ``objective`` (``performance``
    or ``performance_per_cost``); returns status, Gurobi's gap, the bandwidths (GB/s) and the model
    size."""
    D = instance.network.n_dims
    traffic = phase_traffic(instance)  # (L, 3, D) bytes
    compute = float(instance.workload.table.compute_ns.sum())
    m = gp.Model("LibraSolver", env=env)
    m.setParam("NonConvex", 2)
    m.setParam("ScaleFlag", 2)
    bw = m.addVars(D, lb=0.0)
    inv = m.addVars(D, lb=0.0)
    for d in range(D):
        m.addConstr(bw[d] * inv[d] == 1)
    cost = m.addVar(lb=0.0)
    price = unit_costs(instance)
    m.addLConstr(cost == gp.quicksum(float(price[d]) * bw[d] for d in range(D)))
    for c in instance.constraints:
        lhs = gp.quicksum(float(a) * bw[d] for d, a in enumerate(c.coefficients) if a != 0)
        m.addLConstr(
            lhs <= c.rhs if c.sense == "<=" else lhs >= c.rhs if c.sense == ">=" else lhs == c.rhs
        )
    e2e = gp.LinExpr(compute)
    for row in traffic.reshape(-1, D):
        # a phase without traffic: coll_time = 0 (left out to fit the size-limited licence)
        if not (row > 0).any():
            continue
        dim_time = m.addVars(D, lb=0.0)
        coll = m.addVar(lb=0.0)
        for d in range(D):
            m.addLConstr(dim_time[d] == float(row[d]) * inv[d])
        m.addConstr(coll == gp.max_([dim_time[d] for d in range(D)]))
        e2e += coll
    if objective == "performance":
        m.setObjective(e2e, GRB.MINIMIZE)
    else:
        m.setObjective(e2e * cost / 1e10, GRB.MINIMIZE)
    m.optimize()
    out = {"status": m.Status, "gap": m.MIPGap if m.SolCount else float("nan"), "vars": m.NumVars,
           "constrs": m.NumConstrs + m.NumQConstrs + m.NumGenConstrs, "bw": None}
    if m.SolCount:
        out["bw"] = np.array([max(0.0, bw[d].X) for d in range(D)])
    m.dispose()
    return out
