"""The max nodes of a :class:`~hieropt.model.terms.TimeModel` as flat arrays by level, for
evaluating T at a batch of designs at once (a line search's points): each level's pieces in a few
numpy operations instead of one Python sum per piece."""

from __future__ import annotations

import numpy as np


def node_levels(nodes: tuple) -> tuple:
    """The max nodes ``nodes`` (:attr:`hieropt.model.terms.TimeModel.nodes`: per node its pieces) as
    flat arrays, grouped by level (a node's level is one above the highest of the nodes its pieces
    reference; level 0 references none), for :func:`node_values_batch`. Within a level the nodes
    go by falling piece count (then node), and the pieces rank by rank: every node's first piece,
    then the second pieces of the nodes that have two or more, ...; so a level's pieces, its nodes
    and each rank's nodes are contiguous slices, and a node's maximum is taken over its pieces in
    their order. Returns per piece its constant (ns) and term references; ``order``: the pieces in
    that order; ``where``: each node's position in that order; and per level its piece and node
    slices, each further rank's (piece start, piece end, node count), and its pieces' node
    references (positions in that order)."""
    level: list[int] = []
    for pieces in nodes:
        top = -1  # (the highest level referenced: plain loops, no generator per node)
        for p in pieces:
            for u, _ in p.nodes:
                if level[u] > top:
                    top = level[u]
        level.append(top + 1)
    const, tp, tk, ta, first = [], [], [], [], []
    by_level: dict[int, list[int]] = {}
    for v, pieces in enumerate(nodes):
        first.append(len(const))
        for p in pieces:
            i = len(const)
            const.append(p.const_ns)
            for k, a in p.terms:
                tp.append(i)
                tk.append(k)
                ta.append(a)
        by_level.setdefault(level[v], []).append(v)
    members = {lv: sorted(vs, key=lambda v: (-len(nodes[v]), v)) for lv, vs in by_level.items()}
    where = [0] * len(nodes)
    seen = 0
    for lv in sorted(members):
        for v in members[lv]:
            where[v], seen = seen, seen + 1
    order, levels, n0 = [], [], 0
    for lv in sorted(members):
        vs = members[lv]
        rows, ranks = [], []
        for r in range(len(nodes[vs[0]])):
            have = [v for v in vs if len(nodes[v]) > r]
            if r:
                ranks.append((len(rows), len(rows) + len(have), len(have)))
            rows += [(v, r) for v in have]
        rp, ru, rb = [], [], []
        for j, (v, r) in enumerate(rows):
            for u, b in nodes[v][r].nodes:
                rp.append(j)
                ru.append(where[u])
                rb.append(b)
        # (each piece references at most one node: a plain indexed add; exactly one each, in
        # order: a plain add; every coefficient 1: no product)
        unique = len(set(rp)) == len(rp)
        each = rp == list(range(len(rows)))
        ones = all(b == 1.0 for b in rb)
        p0 = len(order)
        order += [first[v] + r for v, r in rows]
        levels.append(
            (
                slice(p0, p0 + len(rows)),
                slice(n0, n0 + len(vs)),
                len(vs),
                tuple(ranks),
                np.array(rp, dtype=np.intp),
                np.array(ru, dtype=np.intp),
                None if ones else np.array(rb, dtype=float)[:, None],
                unique,
                each,
            )
        )
        n0 += len(vs)
    return (
        np.array(const),
        np.array(tp, dtype=np.intp),
        np.array(tk, dtype=np.intp),
        np.array(ta, dtype=float),
        np.array(order, dtype=np.intp),
        np.array(where, dtype=np.intp),
        levels,
    )


def node_plan(nodes: tuple) -> tuple:
    """The max nodes ``nodes`` as flat lists for evaluating them at one design
    (:func:`node_values`): (per piece its constant, term references and coefficients as arrays; per
    node one step: ``(ONE_REF, i, u, b)`` for a single piece ``i`` with one node reference ``(u,
    b)``, ``(TWO_REFS, i, u, b, j, w, c)`` for two such pieces, ``(GENERAL, ((i, refs), ...))``
    otherwise, each piece its index and node references ((u, b), ...)) — the first two are the
    pipeline schedule graph's nodes, evaluated without the general loop's per-piece overhead."""
    const, tp, tk, ta, plan = [], [], [], [], []
    for pieces in nodes:
        own = []
        for p in pieces:
            i = len(const)
            const.append(p.const_ns)
            for k, a in p.terms:
                tp.append(i)
                tk.append(k)
                ta.append(a)
            own.append((i, p.nodes))
        plan.append(_step(own))
    return (
        np.array(const),
        np.array(tp, dtype=np.intp),
        np.array(tk, dtype=np.intp),
        np.array(ta, dtype=float),
        plan,
    )


GENERAL, ONE_REF, TWO_REFS = 0, 1, 2
"""The kinds of a node's step in :func:`node_plan`."""


def _step(own: list) -> tuple:
    if all(len(refs) == 1 for _, refs in own) and len(own) in (1, 2):
        flat = [x for i, ((u, b),) in own for x in (i, u, b)]
        return (ONE_REF if len(own) == 1 else TWO_REFS, *flat)
    return (GENERAL, tuple(own))


def node_rows(nodes: tuple, n_terms: int) -> tuple:
    """The max nodes ``nodes`` as the epigraph LP's node rows ``y_v - sum a tau_k - sum b y_u >=
    const`` (:mod:`hieropt.formulation.arrays`), one per piece, without the column offset: (per row
    its node (int64), constant (ns), entry count; per entry its column relative to the first
    epigraph column (term k: k, node u: ``n_terms`` + u) and coefficient), read-only. Repeated
    references within a piece are merged (summed in order of appearance)."""
    node, const, lengths, idx, val = [], [], [], [], []
    # (a piece's merged term references, by their values: a graph's pieces share a few, and the
    # merge is a function of the values, 0.0 + a making -0.0 0.0 either way)
    merged: dict[tuple, tuple[list[int], list[float]]] = {}
    for v, pieces in enumerate(nodes):
        for p in pieces:
            mt = merged.get(p.terms)
            if mt is None:
                t: dict[int, float] = {}
                for k, a in p.terms:
                    t[k] = t.get(k, 0.0) + a
                mt = merged[p.terms] = (list(t), [-a for a in t.values()])
            u: dict[int, float] = {}
            for j, bb in p.nodes:
                u[j] = u.get(j, 0.0) + bb
            node.append(v)
            const.append(p.const_ns)
            lengths.append(1 + len(mt[0]) + len(u))
            idx.append(n_terms + v)
            idx += mt[0]
            idx += [n_terms + j for j in u]
            val.append(1.0)
            val += mt[1]
            val += [-bb for bb in u.values()]
    out = (np.array(node, dtype=np.int64), np.array(const, dtype=float),
           np.array(lengths, dtype=np.int64), np.array(idx, dtype=np.int64),
           np.array(val, dtype=float))
    for a in out:
        a.flags.writeable = False
    return out


def node_values(plan_of: tuple, tau: np.ndarray) -> np.ndarray:
    """y_v at one design's term times ``tau`` (K,) ns, shape (V,), from ``plan_of``
    (:func:`node_plan`): every piece's constant and term part at once (one weighted count), then the
    nodes in order in Python floats, each the max of its pieces plus their earlier nodes' parts (few
    per piece: the max-plus recurrences of the loops). The same operations in the same order for
    every kind of step (a NaN propagates, as numpy's max)."""
    const, tp, tk, ta, plan = plan_of
    base = (
        (const + np.bincount(tp, weights=tau[tk] * ta, minlength=const.size)).tolist()
        if const.size
        else []
    )
    y: list[float] = []
    put = y.append
    for step in plan:
        kind = step[0]
        if kind == TWO_REFS:
            _, i, u, b, j, w, c = step
            best = base[i] + b * y[u]
            v = base[j] + c * y[w]
            if v > best or v != v:
                best = v
            put(best)
        elif kind == ONE_REF:
            put(base[step[1]] + step[3] * y[step[2]])
        else:
            put(_general(step[1], base, y))
    return np.array(y)


def _general(own: tuple, base: list, y: list) -> float:
    """One node's value: the max of its pieces ``own`` ((index, node references), ...)."""
    best = -np.inf
    for i, refs in own:
        v = base[i]
        for u, b in refs:
            v += b * y[u]
        if v > best or v != v:  # (a NaN propagates, as numpy's max)
            best = v
    return best


def node_values_batch(levels_of: tuple, n_nodes: int, tau: np.ndarray) -> np.ndarray:
    """y_v for a batch of term times ``tau`` (S, K) ns: shape (V, S), from ``levels_of``
    (:func:`node_levels`), level by level, each level's pieces at once: piece = const + sum a tau_k
    + sum b y_u, y_v = the max of its pieces in their order (the same operations on every element
    as :func:`node_values`; a level's pieces and nodes are contiguous, so most levels take a
    gather, an add and a max per rank of pieces)."""
    const, tp, tk, ta, order, where, levels = levels_of
    S = tau.shape[0]
    # (pieces, S): const + each piece's weighted term times, summed as node_values sums them (a
    # weighted count over piece x design: far faster than an unbuffered np.add.at)
    flat = (tp[:, None] * S + np.arange(S)).ravel()
    parts = np.bincount(flat, weights=(tau[:, tk] * ta).T.ravel(), minlength=const.size * S)
    base = (const[:, None] + parts.reshape(const.size, S))[order]  # (pieces in level order)
    y = np.empty((n_nodes, S))  # (every node is written by its level before it is read)
    take, top, add = np.take, np.maximum, np.add
    for pieces, nodes, n, ranks, rp, ru, rb, unique, each in levels:
        if each:  # (one node reference per piece: base + b y_u)
            refs = take(y, ru, axis=0)
            if rb is not None:
                refs *= rb
            val = add(base[pieces], refs, out=refs)
        else:
            val = base[pieces]
            if rp.size:
                refs = take(y, ru, axis=0)
                if rb is not None:
                    refs *= rb
                if unique:
                    val[rp] += refs
                else:
                    np.add.at(val, rp, refs)
        if len(ranks) == 1 and ranks[0][2] == n:  # (two pieces each: their max, written at once)
            a, b, _ = ranks[0]
            top(val[:n], val[a:b], out=y[nodes])
            continue
        out = y[nodes]
        out[...] = val[:n]
        for a, b, k in ranks:  # (a node's further pieces, in order)
            top(out[:k], val[a:b], out=out[:k])
    return y[where]


__all__ = ["node_levels", "node_values_batch", "node_plan", "node_rows", "node_values"]
