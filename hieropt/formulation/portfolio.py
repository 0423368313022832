"""Pyomo rows of a portfolio of workloads on one fabric (min-max regret and its time-target form). Builds only.

Added to the performance LP of :mod:`hieropt.formulation.lp` (its ``B`` and ``t`` are shared by every workload):
for each workload w a block ``wl[w]`` with the epigraph of T_w (``tau``, ``y``, ``epi``, ``node``, as
:func:`hieropt.formulation.lp.add_time_epigraph` builds them on the shared t), a variable ``z >= 0`` and the rows

    regret[w]:  C_w / 1e6 + (sum_k w_k tau^w_k + sum_v omega_v y^w_v) / s  <=  z * T_w* / 1e6      (ms)

so that min z is min_B max_w T_w(B) / T_w* (each epigraph is tight where the objective pushes z down), and fixing
z = 1 + x leaves the region where every workload is within x of its own optimum (design note §2).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyomo.environ as pyo

from ..model.terms import TimeModel
from .lp import MS_NS, PerfLP, add_time_epigraph

__all__ = ["add_regret_rows"]


def add_regret_rows(lp: PerfLP, tms: Sequence[TimeModel], optima_ns: Sequence[float]) -> None:
    """Add the portfolio blocks, ``z`` and the ``regret`` rows to ``lp.model`` (module docstring).

    Args:
        lp: a performance LP whose ``t`` covers every dimension any of ``tms`` loads (e.g. built from the weighted
            mix of the same workloads).
        tms: one time model per workload (unweighted).
        optima_ns: T_w* of each workload, ns (> 0).
    """
    m, s = lp.model, lp.bw_scale
    m.wl = pyo.Block(range(len(tms)))
    exprs = []
    for w, tm in enumerate(tms):
        block = m.wl[w]
        block.t = pyo.Reference(m.t)
        exprs.append(add_time_epigraph(block, tm, s))
    m.z = pyo.Var(domain=pyo.NonNegativeReals)
    m.regret = pyo.Constraint(range(len(tms)), rule=lambda _m, w: tms[w].compute_ns / MS_NS + exprs[w] / s
                              <= _m.z * (float(optima_ns[w]) / MS_NS))
