"""The time rows of the procurement LP of :mod:`hieropt.formulation.ratio_arrays`: the ``epi`` and
``node`` rows of the time model (:class:`hieropt.model.timing.TimeModel`) in cost-share variables,
each epigraph column divided by its scale, and the row list every row of that LP is collected in.
Builds rows; never solves.

Shared arguments: ``A`` (K, D) the coefficient of each term's reciprocal column r_d (its bytes over
the bandwidth, in the LP's product unit), ``lat`` (K, D) its latency coefficient on ``kap``, ``sig``
(K,) and ``sig_y`` (V,) the scales of the term and node epigraph columns, ``z0`` the first term
column (the nodes' columns follow the K term columns), ``r_col`` (D,) the reciprocal columns,
``kap_col`` the column of kap.
"""

from __future__ import annotations

import numpy as np

from ..model.timing import TimeModel

INF = float("inf")

__all__ = ["Rows", "concurrent_epigraphs", "node_rows", "node_scales", "sequential_epigraphs"]


class Rows:
    """Rows collected one by one, returned row-wise (lower, upper, start, index, value)."""

    def __init__(self) -> None:
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.start: list[int] = []
        self.index: list[int] = []
        self.value: list[float] = []

    @property
    def count(self) -> int:
        """Number of rows added so far (the next row's number)."""
        return len(self.lo)

    def add(self, lo: float, hi: float, cols, vals) -> None:
        """Add the row ``lo`` <= sum_j ``vals``_j x_``cols``_j <= ``hi``."""
        self.lo.append(lo)
        self.hi.append(hi)
        self.start.append(len(self.index))
        self.index.extend(map(int, cols))
        self.value.extend(map(float, vals))

    def arrays(self):
        """``(lower, upper, start, index, value)``: the rows as float and int32 arrays in
        compressed-row form (``start`` has one entry more than there are rows)."""
        return (np.array(self.lo, dtype=float), np.array(self.hi, dtype=float),
                np.array(self.start + [len(self.index)], dtype=np.int32),
                np.array(self.index, dtype=np.int32),
                np.array(self.value, dtype=float))


def node_scales(tm: TimeModel, sig: np.ndarray, node_scale: float) -> np.ndarray:
    """(V,) the scale of each node's epigraph column: the largest of its pieces' constants
    (ns x ``node_scale``, the product unit per ns), term parts (x ``sig``) and earlier-node parts
    (x their scale); 1 where none is positive."""
    sig_y = np.ones(len(tm.nodes))
    for v, node in enumerate(tm.nodes):  # nodes refer to earlier nodes only
        top = max([pc.const_ns * node_scale for pc in node]
                  + [a * sig[k] for pc in node for k, a in pc.terms]
                  + [b * sig_y[w] for pc in node for w, b in pc.nodes])
        sig_y[v] = top if top > 0 else 1.0
    return sig_y


def sequential_epigraphs(rows: Rows, A: np.ndarray, lat: np.ndarray, sig: np.ndarray,
                         r_col: np.ndarray, z0: int, kap_col: int) -> list[int]:
    """Add one ``epi`` row per term to ``rows`` (dimensions one after another: the term's time
    is the sum over them; its latencies merged into one ``kap`` coefficient). Returns each row's
    term."""
    epi_term = []
    for k in range(A.shape[0]):
        cols, vals = [z0 + k], [1.0]
        for d in range(A.shape[1]):
            if A[k, d] > 0:
                cols.append(r_col[d])
                vals.append(-A[k, d] / sig[k])
        if lat[k].sum() > 0:  # the Pyomo model sums one kap term per dimension: merged here
            cols.append(kap_col)
            vals.append(-float(lat[k].sum()) / sig[k])
        rows.add(0.0, INF, cols, vals)
        epi_term.append(k)
    return epi_term


def concurrent_epigraphs(rows: Rows, A: np.ndarray, lat: np.ndarray, sig: np.ndarray,
                         r_col: np.ndarray, z0: int, kap_col: int) -> list[int]:
    """Add one ``epi`` row per term and dimension it loads to ``rows`` (dimensions at once: the
    term's time is its slowest dimension's). Returns each row's term. Python floats: the same
    arithmetic as numpy's, without its per-element overhead."""
    A_, lat_, sig_, r_ = A.tolist(), lat.tolist(), sig.tolist(), r_col.tolist()
    epi_term = []
    for k in range(A.shape[0]):
        for d in range(A.shape[1]):
            a, la = A_[k][d], lat_[k][d]
            if not (a > 0 or la > 0):
                continue
            cols, vals = [z0 + k], [1.0]
            if a > 0:
                cols.append(r_[d])
                vals.append(-a / sig_[k])
            if la > 0:
                cols.append(kap_col)
                vals.append(-la / sig_[k])
            rows.add(0.0, INF, cols, vals)
            epi_term.append(k)
    return epi_term


def node_rows(tm: TimeModel, rows: Rows, sig: np.ndarray, sig_y: np.ndarray, node_scale: float,
              z0: int, kap_col: int) -> list[int]:
    """Add one ``node`` row per piece of each node of ``tm`` to ``rows``: the node's column at
    least the piece's constant (ns x ``node_scale``, on ``kap``), terms and earlier nodes, each
    column divided by its scale. Returns each row's node."""
    K_terms = sig.size
    node_of_row = []
    for v, node in enumerate(tm.nodes):
        for pc in node:
            coef: dict[int, float] = {z0 + K_terms + v: 1.0}
            c = pc.const_ns * node_scale / sig_y[v]
            if c > 0:
                coef[kap_col] = coef.get(kap_col, 0.0) - c
            for k, a in pc.terms:
                coef[z0 + k] = coef.get(z0 + k, 0.0) - a * sig[k] / sig_y[v]
            for w, b in pc.nodes:
                coef[z0 + K_terms + w] = coef.get(z0 + K_terms + w, 0.0) - b * sig_y[w] / sig_y[v]
            rows.add(0.0, INF, list(coef), list(coef.values()))
            node_of_row.append(v)
    return node_of_row
