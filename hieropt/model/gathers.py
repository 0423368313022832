"""The all-gathers after the optimizer step under loop ``step``: the weight-gradient all-gathers of
a stage (ZeRO 1/2's all-gather of each NPU's updated parameter shard, :mod:`hieropt.workloads.llm`:
the weight-gradient phase holds the collectives that run once per iteration, and the only
all-gather among them is that one) send what the optimizer step has just computed, so no overlap
of the backward pass can hide them.

- ``overlap_dp`` overlaps the gradient reduction (the other weight-gradient collectives) with the
  last backward pass, as Megatron-LM's ``--overlap-grad-reduce`` does; the all-gathers still run
  after the optimizer step U, exposed: T = ... + X + U + sum_A T_wg (A: the all-gather rows, X the
  last backward pass with the other rows on their own stream,
  :func:`hieropt.model.loops.cross_time`).
- ``overlap_gather`` (Megatron-LM's ``--overlap-param-gather``: "overlap param all-gather with
  forward compute") runs them at the start of the next iteration on their own stream, in forward
  layer order, each layer's first forward waiting for its own gather (Megatron-Core's forward
  pre-hook waits for the bucket's all-gather and launches the next one). The first micro-batch's
  forward f then takes the gathered pass G >= f, the time-reversal of the backward pass with its
  weight-gradient collectives on their own stream: reversed in time, the forward runs from the last
  layer to the first and each layer's gather follows its compute, which is
  :func:`hieropt.model.loops.cross_backward` on the layers' forward compute and collectives with
  the gathers as the weight-gradient column (the same bandwidth sharing on the dimensions both
  streams use). The first layer's gather is exposed whole, the others hide behind the layers
  before them (a gather on a layer's compute-free continuation row gates that layer:
  :func:`gates`). With pipeline stages the iteration starts at stage 0's first forward and every
  operation waits for it, so stage 0's G replaces its f in the schedule (T + G_0 - f_0); a later
  stage's gathers, launched at the same start (Megatron-Core launches each stage's own), are taken
  to end before its first forward, which waits for the previous stage's. Modelled for v = 1 (as
  ``overlap_dp``); with the interleaved schedule the gathers run after the step, exposed.
"""

from __future__ import annotations

import numpy as np

from ..spec import Collective, Instance
from .terms import PhaseRefs


def step_gathers(instance: Instance, collective: np.ndarray) -> np.ndarray | None:
    """(L,) bool, the layers whose weight-gradient collective is an all-gather (``collective``: the
    (L, 3) collectives of a phase table), under loop ``step``; None for another loop or without
    one."""
    if instance.training_loop != "step":
        return None
    mask = np.array([c is Collective.ALL_GATHER for c in collective[:, 2]], dtype=bool)
    return mask if mask.any() else None


def gathered(instance: Instance) -> bool:
    """Whether the all-gathers after the optimizer step hide behind the next iteration's first
    forward (``overlap_gather`` with v = 1, module docstring)."""
    st = instance.step
    return bool(st is not None and st.overlap_gather and st.virtual_stages == 1)


def without(refs: PhaseRefs, rows: np.ndarray | None) -> PhaseRefs:
    """``refs`` with the weight-gradient collective of ``rows`` (bool (L,)) left out."""
    if rows is None:
        return refs
    k = refs.k.copy()
    k[rows, 2] = -1
    return PhaseRefs(k=k, a=refs.a)


def gather_rows(gathers: np.ndarray | None, rows: slice | np.ndarray) -> dict:
    """Loop ``step``'s ``gathers`` argument for the layers ``rows`` of a mask from
    :func:`step_gathers`: ``{"gathers": (n,) bool}`` when any of them is an all-gather, else
    empty."""
    return {"gathers": gathers[rows]} if gathers is not None and gathers[rows].any() else {}


def only(refs: PhaseRefs, rows: np.ndarray) -> PhaseRefs:
    """The weight-gradient collectives of ``rows`` (bool (L,)) of ``refs``, nothing else."""
    k = np.full_like(refs.k, -1)
    k[rows, 2] = refs.k[rows, 2]
    return PhaseRefs(k=k, a=refs.a)


def gates(C: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(source rows, gated rows) of the gathers of ``rows`` (bool (L,)): a gather gates the forward
    of its own layer. A layer's further collectives of a phase sit on compute-free rows after it
    (``"<layer>+1"``, :mod:`hieropt.workloads.llm.lower`: ZeRO 1's all-gather follows the
    reduce-scatter), so a gather on a row without compute gates the nearest earlier row with
    compute (row 0 without one: the embedding), unless that row has a gather of its own."""
    free = C.sum(axis=1) == 0
    src = np.flatnonzero(rows)
    dst = []
    taken = set(src[~free[src]].tolist())
    for i in src.tolist():
        j = i
        while j > 0 and free[j]:
            j -= 1
        if j != i and (rows[j] or j in taken):
            j = i
        taken.add(j)
        dst.append(j)
    return src, np.array(dst, dtype=int)


def reversed_forward(C: np.ndarray, T: np.ndarray, rows: np.ndarray) -> tuple:
    """(C', T') of the gathered forward pass as the backward pass it mirrors (module docstring):
    C'[:, 2] = C_f, T'[:, 1] = T_f, T'[:, 2] = the gathers of ``rows``, each on the row it gates
    (:func:`gates`); the rest 0. ``T`` may be (L, 3) or (L, 3, D) (busy times per dimension)."""
    C2 = np.zeros_like(C)
    C2[:, 2] = C[:, 0]
    T2 = np.zeros_like(T)
    T2[:, 1] = T[:, 0]
    src, dst = gates(C, rows)
    T2[dst, 2] = T[src, 2]
    return C2, T2


def reversed_refs(refs: PhaseRefs, C: np.ndarray, rows: np.ndarray) -> PhaseRefs:
    """The references of :func:`reversed_forward` (``C``: the (L, 3) compute): the forward
    collectives as column 1, the gathers of ``rows`` as column 2 on the rows they gate."""
    k = np.full_like(refs.k, -1)
    a = np.zeros_like(refs.a)
    k[:, 1], a[:, 1] = refs.k[:, 0], refs.a[:, 0]
    src, dst = gates(C, rows)
    k[dst, 2], a[dst, 2] = refs.k[src, 2], refs.a[src, 2]
    return PhaseRefs(k=k, a=a)


__all__ = ["step_gathers", "gathered", "gather_rows", "without", "only", "gates",
           "reversed_forward", "reversed_refs"]
