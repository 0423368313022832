"""SCIP models stated straight from the per-collective traffic (``phase_traffic``, no aggregation,
nothing from hieropt's formulation or solvers), with pyscipopt in MB, GB/s and ms: the minimum
iteration time of the performance objective (no_overlap loop, concurrent dimensions)

    min  sum_k tau_k   s.t.  tau_k >= m_kd * t_d,  B_d * t_d == 1 (loaded d),  design rows and
    bounds on B,

and the min-max-regret design of a portfolio against each workload's own optimum T_w*

    min z   s.t.  C_w + sum_k tau^w_k <= z T_w*  (every w),  tau^w_k >= m^w_kd t_d,  B_d t_d == 1,
    design rows,

both solved to global optimality by spatial branch and bound. SCIP's own objective can sit slightly
below the true optimum because B_d * t_d == 1 and the epigraph rows only hold to the feasibility
tolerance (pitfall P5), so the tests re-evaluate SCIP's point with :func:`hieropt.api.evaluate`.
Importing it skips the importing test module without pyscipopt.
"""

from __future__ import annotations

import numpy as np
import pytest

from hieropt.model.traffic import phase_traffic
from hieropt.spec import Instance

pyscipopt = pytest.importorskip("pyscipopt")

from tests.oracle.scip import (  # noqa: E402
    MB,
    SCIP_ATTEMPTS,
    ScipFailed,
    add_design,
    feasible_point,
    optimize,
    scip_model,
)


def _scip_once(instance: Instance, extra: dict, unit_bytes: float) -> tuple[np.ndarray, float]:
    D = instance.network.n_dims
    # (collectives, D), in units of unit_bytes
    traffic = phase_traffic(instance).reshape(-1, D) / unit_bytes
    traffic = traffic[(traffic > 0).any(axis=1)]
    loaded = [d for d in range(D) if (traffic[:, d] > 0).any()]
    compute_ns = float(instance.workload.table.compute_ns.sum())

    m = scip_model(extra)
    B = add_design(m, instance)
    t, tau = {}, []
    if loaded:
        # valid bounds from a feasible point b0 (communication time t0 >= optimum): keeps SCIP's
        # relaxations bounded
        b0 = feasible_point(instance, loaded, extra)
        t0 = float(sum(max(row[d] / b0[d] for d in np.flatnonzero(row > 0)) for row in traffic)) * (
            1 + 1e-6
        )
        peak = traffic.max(axis=0)
        t = {d: m.addVar(f"t{d}", lb=0.0, ub=t0 / peak[d]) for d in loaded}
        tau = [m.addVar(f"tau{k}", lb=0.0, ub=t0) for k in range(traffic.shape[0])]
    for d in loaded:
        # non-convex equality, handled globally by SCIP
        m.addCons(B[d] * t[d] == 1.0, name=f"inv{d}")
    for k, row in enumerate(traffic):
        for d in np.flatnonzero(row > 0):
            m.addCons(tau[k] >= float(row[d]) * t[int(d)], name=f"epi{k}_{d}")
    m.setObjective(pyscipopt.quicksum(tau), "minimize")
    optimize(m, "time model")
    # clip round-off negatives on dimensions without traffic (the evaluator rejects bw < 0)
    bw = np.array([max(0.0, m.getVal(v)) for v in B])
    # time unit = unit_bytes ns (GB/s = bytes/ns)
    return bw, compute_ns + m.getObjVal() * unit_bytes


def scip_min_time(instance: Instance) -> tuple[np.ndarray, float]:
    """Globally minimise the iteration time of ``instance`` with SCIP, independently of hieropt's
    solver.

    Model (MB, GB/s, ms): ``min sum_k tau_k`` s.t. ``tau_k >= m_kd t_d``, ``B_d t_d == 1`` for every
    loaded d (a non-convex equality, solved globally by spatial branch and bound), the design rows
    and bounds on B. A feasible point b0 from one LP gives a communication time t0 >= the optimum,
    hence the valid bounds ``t_d <= t0 / max_k m_kd`` and ``tau_k <= t0``, which cut off no point at
    least as good as b0 (without them SCIP timed out or hit LP errors when some B_d could approach
    0). See :data:`SCIP_ATTEMPTS` for the fallbacks.

    Returns:
        (bw, objective): SCIP's bandwidths (GB/s, shape (D,)) and SCIP's own objective converted to
            an iteration
        time in ns (compute time included). The objective may be below T(bw) by about the
        feasibility tolerance.

    Raises:
        ScipFailed: no attempt proved an optimum.
    """
    errors = []
    for extra, unit_bytes in SCIP_ATTEMPTS:
        try:
            return _scip_once(instance, extra, unit_bytes)
        except ScipFailed as e:
            errors.append(f"{extra or 'default'} @ {unit_bytes:g} B/unit: {e}")
    raise ScipFailed("SCIP proved no optimum: " + "; ".join(errors))


def scip_min_max_regret(inst, own_ns: list[float], z0: float) -> np.ndarray:
    """SCIP's min-max-regret design (bandwidths, GB/s); ``z0`` >= the optimum gives valid variable
    bounds."""
    D = inst.network.n_dims
    m = pyscipopt.Model("regret")
    m.hideOutput()
    m.setParam("numerics/feastol", 1e-9)
    m.setParam("limits/gap", 1e-9)
    m.setParam("limits/time", 30.0)
    B = [
        m.addVar(f"B{d}", lb=b.lower_gbps, ub=b.upper_gbps)
        for d, b in enumerate(inst.bounds_or_default)
    ]
    for c in inst.constraints:
        lhs = pyscipopt.quicksum(float(a) * B[d] for d, a in enumerate(c.coefficients) if a != 0)
        m.addCons(
            lhs == c.rhs if c.sense == "==" else (lhs <= c.rhs if c.sense == "<=" else lhs >= c.rhs)
        )
    z = m.addVar("z", lb=0.0, ub=z0)
    traffic = []
    for job in inst.jobs:
        tr = phase_traffic(inst, job).reshape(-1, D) / MB
        traffic.append(tr[(tr > 0).any(axis=1)])
    # (a workload may have no traffic)
    peak = np.max([t.max(axis=0, initial=0.0) for t in traffic], axis=0)
    budget_ms = max(z0 * u / MB for u in own_ns)
    t = [
        m.addVar(f"t{d}", lb=0.0, ub=budget_ms / peak[d] if peak[d] > 0 else None) for d in range(D)
    ]
    for d in range(D):
        m.addCons(B[d] * t[d] == 1.0)
    for w, (tr, job) in enumerate(zip(traffic, inst.jobs, strict=True)):
        tau = [m.addVar(f"tau{w}_{k}", lb=0.0, ub=budget_ms) for k in range(tr.shape[0])]
        for k, row in enumerate(tr):
            for d in np.flatnonzero(row > 0):
                m.addCons(tau[k] >= float(row[d]) * t[int(d)])
        compute_ms = float(job.workload.table.compute_ns.sum()) / MB
        m.addCons(compute_ms + pyscipopt.quicksum(tau) <= z * (own_ns[w] / MB))
    m.setObjective(z, "minimize")
    m.optimize()
    if m.getStatus() != "optimal":
        raise ScipFailed(m.getStatus())
    return np.array([max(0.0, m.getVal(v)) for v in B])
