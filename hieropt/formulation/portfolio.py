"""The portfolio LP (min-max regret and its time-target form) compiled to numpy arrays: the
performance LP of :mod:`hieropt.formulation.arrays` with every workload's epigraph on the shared
B and t, a ratio column ``z`` and one regret row per workload. Builds; never solves.

For workloads w with time models T_w and own optima U_w (ns), each workload's epigraph is stated
for T_w x time_unit / U_w (:func:`ratio_models`: every workload's columns of order 1 however far
apart their times, so the LP resolves each ratio to its tolerances), and the rows

    regret[w]:  sum_k w_k tau^w_k + sum_v omega_v y^w_v - z  <=  -C_w / U_w

say T_w(B) / U_w <= z (C_w: the bandwidth-independent part of T_w; the epigraph tau^w, y^w is
exact where the rows bind). Minimising z gives min_B max_w T_w(B) / U_w; fixing z = 1 + x leaves
the designs where every workload is within x of its own optimum. A workload with U_w = 0 takes no
time on any design (no compute, no traffic) and has no row.

Layout (:class:`hieropt.formulation.arrays.LPArrays`): the columns of the performance LP of the
stacked time model (:func:`stack_time_models`: every workload's terms, then every workload's
nodes), with ``z`` inserted just before the epigraph columns (at ``z0 - 1``: a linear column, as
the Lagrangian bound of :mod:`hieropt.solvers.dual_bound` reads every column before ``z0``); the
regret rows follow the time-target row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..model.terms import Piece, TimeModel
from ..spec import Instance
from .arrays import LPArrays, compile_perf_lp
from .scale import Scale

INF = float("inf")

__all__ = ["RegretArrays", "compile_regret_lp", "ratio_models", "stack_time_models"]


def ratio_models(
    tms: Sequence[TimeModel], optima_ns: Sequence[float], time_ns: float
) -> list[TimeModel]:
    """Each time model times ``time_ns`` / U_w (U_w = ``optima_ns[w]``; unchanged where U_w = 0):
    T_w x time_ns / U_w, whose value in units of ``time_ns`` is the ratio T_w / U_w."""
    out = []
    for tm, u in zip(tms, optima_ns, strict=True):
        f = time_ns / u if u > 0 else 1.0
        nodes = tuple(
            tuple(Piece(p.const_ns * f, p.terms, p.nodes) for p in pieces) for pieces in tm.nodes
        )
        out.append(replace(tm, constant_ns=tm.constant_ns * f, terms_bytes=tm.terms_bytes * f,
                           terms_latency_ns=tm.terms_latency_ns * f, nodes=nodes))
    return out


def stack_time_models(tms: Sequence[TimeModel]) -> TimeModel:
    """One time model holding every workload's terms, then every workload's nodes (each workload's
    references shifted to its own), unweighted: its T is sum_w T_w.

    Args:
        tms: one time model per workload, on the same dimensions and dimension mode.
"""
    k_off = np.cumsum([0] + [tm.terms_bytes.shape[0] for tm in tms])
    v_off = np.cumsum([0] + [len(tm.nodes) for tm in tms])
    nodes = tuple(
        tuple(Piece(p.const_ns, tuple((k + int(k_off[w]), a) for k, a in p.terms),
                    tuple((u + int(v_off[w]), b) for u, b in p.nodes)) for p in pieces)
        for w, tm in enumerate(tms) for pieces in tm.nodes)
    return TimeModel(
        constant_ns=float(sum(tm.constant_ns for tm in tms)),
        terms_bytes=np.concatenate([tm.terms_bytes for tm in tms]),
        terms_latency_ns=np.concatenate([tm.terms_latency_ns for tm in tms]),
        term_weights=np.concatenate([tm.term_weights for tm in tms]),
        nodes=nodes,
        node_weights=np.concatenate([tm.node_weights for tm in tms]),
        dimension_mode=tms[0].dimension_mode,
        n_collectives=sum(tm.n_collectives for tm in tms),
    )


@dataclass(frozen=True)
class RegretArrays:
    """The compiled portfolio LP.

    Attributes:
        arr: the LP (the cost objective is ``arr.cost_costs``; the ratio objective is
            :attr:`z_costs`).
        z_col: the column of z.
        regret_rows: (W,) the row of each workload's regret row (-1: none, U_w = 0).
    """

    arr: LPArrays
    z_col: int
    regret_rows: np.ndarray

    @property
    def z_costs(self) -> np.ndarray:
        """The objective min z, one coefficient per column."""
        costs = np.zeros(self.arr.n_cols)
        costs[self.z_col] = 1.0
        return costs


def compile_regret_lp(instance: Instance, tms: Sequence[TimeModel], optima_ns: Sequence[float],
                      scale: Scale, z_bounds: tuple[float, float] = (0.0, INF)) -> RegretArrays:
    """The portfolio LP of the module docstring as arrays, without cuts.

    Args:
        instance: design constraints, bounds and cost model (the budget row is free).
        tms: one unweighted time model per workload.
        optima_ns: (W,) U_w, ns (>= 0).
        scale: the units (e.g. :func:`hieropt.formulation.scale.choose_scale` of the stacked
            model).
        z_bounds: the bounds of z (fixed at 1 + x for the time-target form).
"""
    stacked = stack_time_models(ratio_models(tms, optima_ns, scale.time_ns))
    base = compile_perf_lp(instance, stacked, scale)
    z = base.z0
    index = np.where(base.index >= z, base.index + 1, base.index).astype(np.int32)
    K = stacked.terms_bytes.shape[0]
    lows, highs, starts, idx, val = [], [], [], [], []
    rows = np.full(len(tms), -1, dtype=np.int64)
    k0 = v0 = 0
    end = int(base.start[-1])
    for w, (tm, u) in enumerate(zip(tms, optima_ns, strict=True)):
        k1, v1 = k0 + tm.terms_bytes.shape[0], v0 + len(tm.nodes)
        if u > 0:
            weights = np.concatenate([tm.term_weights, tm.node_weights])
            cols = z + 1 + np.concatenate([np.arange(k0, k1), K + np.arange(v0, v1)])
            keep = weights != 0
            rows[w] = base.n_rows + len(lows)
            lows.append(-INF)
            highs.append(-tm.constant_ns / u)
            idx += [*cols[keep].tolist(), z]
            val += [*weights[keep].tolist(), -1.0]
            starts.append(end + len(idx))
        k0, v0 = k1, v1
    arr = replace(
        base,
        z0=z + 1,
        index=np.concatenate([index, np.array(idx, dtype=np.int32)]),
        value=np.concatenate([base.value, val]),
        start=np.concatenate([base.start, np.array(starts, dtype=np.int32)]),
        row_lower=np.concatenate([base.row_lower, lows]),
        row_upper=np.concatenate([base.row_upper, highs]),
        col_lower=np.insert(base.col_lower, z, z_bounds[0]),
        col_upper=np.insert(base.col_upper, z, z_bounds[1]),
        time_costs=np.insert(base.time_costs, z, 0.0),
        cost_costs=np.insert(base.cost_costs, z, 0.0),
        cache={},
    )
    return RegretArrays(arr=arr, z_col=z, regret_rows=rows)
