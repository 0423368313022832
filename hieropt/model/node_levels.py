"""The max nodes of a :class:`~hieropt.model.terms.TimeModel` as flat arrays by level, for evaluating T at a batch
of designs at once (a line search's points): each level's pieces in a few numpy operations instead of one Python
sum per piece."""

from __future__ import annotations

import numpy as np


def node_levels(nodes: tuple) -> tuple:
    """The max nodes ``nodes`` (:attr:`hieropt.model.terms.TimeModel.nodes`: per node its pieces) as flat arrays,
    grouped by level (a node's level is one above the highest of the nodes its pieces reference; level 0 references
    none): per piece its constant (ns) and term references, and per level its pieces (sorted by node), their node
    references, and where each node's pieces start."""
    level: list[int] = []
    for pieces in nodes:
        level.append(1 + max((level[u] for p in pieces for u, _ in p.nodes), default=-1))
    const, tp, tk, ta = [], [], [], []
    by_level: dict[int, list[int]] = {}
    for v, pieces in enumerate(nodes):
        for p in pieces:
            i = len(const)
            const.append(p.const_ns)
            for k, a in p.terms:
                tp.append(i)
                tk.append(k)
                ta.append(a)
            by_level.setdefault(level[v], []).append(i)
    owner = [v for v, pieces in enumerate(nodes) for _ in pieces]
    flat = [p for pieces in nodes for p in pieces]
    levels = []
    for lv in sorted(by_level):
        rows = by_level[lv]  # (in node order already: nodes are visited in order)
        members = sorted({owner[i] for i in rows})
        starts = np.searchsorted(np.array([owner[i] for i in rows]), members)
        rp, ru, rb = [], [], []
        for j, i in enumerate(rows):
            for u, b in flat[i].nodes:
                rp.append(j)
                ru.append(u)
                rb.append(b)
        levels.append((np.array(rows, dtype=np.intp), np.array(members, dtype=np.intp), starts,
                       np.array(rp, dtype=np.intp), np.array(ru, dtype=np.intp), np.array(rb, dtype=float)))
    return (np.array(const), np.array(tp, dtype=np.intp), np.array(tk, dtype=np.intp), np.array(ta, dtype=float),
            levels)


def node_values_batch(levels_of: tuple, n_nodes: int, tau: np.ndarray) -> np.ndarray:
    """y_v for a batch of term times ``tau`` (S, K) ns: shape (V, S), from ``levels_of`` (:func:`node_levels`),
    level by level, each level's pieces at once: piece = const + sum a tau_k + sum b y_u, y_v = the max of its
    pieces."""
    const, tp, tk, ta, levels = levels_of
    S = tau.shape[0]
    base = np.repeat(const[:, None], S, axis=1)  # (pieces, S)
    np.add.at(base, tp, (tau[:, tk] * ta).T)
    y = np.zeros((n_nodes, S))
    for rows, nodes, starts, rp, ru, rb in levels:
        val = base[rows]
        if rp.size:
            np.add.at(val, rp, y[ru] * rb[:, None])
        y[nodes] = np.maximum.reduceat(val, starts, axis=0)
    return y


__all__ = ["node_levels", "node_values_batch"]
