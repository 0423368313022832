"""Per-micro-batch collectives on their own stream (loop ``step`` with
:attr:`hieropt.spec.StepSchedule.overlap_groups`): the forward and input-gradient collectives of the named groups
run concurrently with the rest of the pass they belong to, as FSDP and DeepSpeed run ZeRO-2/3's gradient
reduce-scatters and parameter all-gathers (prefetched, on a second stream; Zhao et al. 2023, "PyTorch FSDP",
arXiv 2304.11277, §3.3; Llama Team 2024, arXiv 2407.21783, §3.3.2).

With C the compute, T the collective time and S_d the time a collective keeps dimension d busy (bytes / B_d +
latency), a pass of the layers (forward: phase column f; backward: the input-gradient and weight-gradient compute
with the input-gradient collectives) splits its collectives into the main stream (M, the others: TP, CP, EP,
pipeline sends) and the own stream (O) and takes

    P = max(sum_l C + sum_M T,  sum_O T,  max_d (sum_M S_d + sum_O S_d))

(the compute with the blocking collectives; the own stream's collectives back to back; every dimension carrying
the bytes of both). With ``collectives_in_flight = 1`` the last term is sum_M T + sum_O T (one collective at a
time). The pass never exceeds the sum of the first two (its value without the overlap) and is convex and piecewise
linear in 1/B. The stream's start-up (the first layer's gather before any compute can begin) and its end (the last
layer's reduce-scatter after the last compute) are hidden in this form: for many layers they are a small part.
"""

from __future__ import annotations

import numpy as np

from ..spec import Instance
from .terms import PhaseRefs, TermBuilder

PASSES = ((0, (0,)), (1, (1, 2)))
"""(collective column, compute columns) of the forward and the backward pass."""


def own_stream(instance: Instance, groups: np.ndarray) -> np.ndarray | None:
    """(L, 3) bool: the phases whose collective runs on the own stream (forward and input-gradient collectives of
    a group in ``instance.step.overlap_groups``; ``groups`` the (L, 3) named groups of the phases), or None when no
    phase does (the loop's plain form)."""
    st = instance.step
    if instance.training_loop != "step" or st is None or not st.overlap_groups or groups is None:
        return None
    named = set(st.overlap_groups)
    mask = np.array([[g in named for g in row] for row in groups.tolist()], dtype=bool).reshape(groups.shape)
    mask[:, 2] = False
    return mask if mask.any() else None


def pass_times(C: np.ndarray, T: np.ndarray, per_dim: np.ndarray, own: np.ndarray, serial: bool) -> tuple[float,
                                                                                                        float]:
    """(forward, backward) pass of one micro-batch, ns, by the module docstring's P: C, T (L, 3) compute and
    collective ns, ``per_dim`` (L, 3, D) busy ns, ``own`` (L, 3) the own-stream phases, ``serial`` one collective
    at a time."""
    out = []
    for j, cols in PASSES:
        o = own[:, j]
        main = float(C[:, list(cols)].sum() + T[~o, j].sum())
        side = float(T[o, j].sum())
        if serial:
            both = float(T[:, j].sum())
        else:
            both = float(per_dim[:, j, :].sum(axis=0).max(initial=0.0))
        out.append(max(main, side, both))
    return out[0], out[1]


def add_passes(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, dims, own: np.ndarray, weight: float,
               serial: bool) -> None:
    """Add ``weight`` x (forward + backward pass) of the module docstring to ``b``, one max node per pass; ``dims``
    the per-dimension terms (:class:`hieropt.model.loops.DimRefs`)."""
    for j, cols in PASSES:
        o, has = own[:, j], refs.k[:, j] >= 0
        main, side = _sum(refs, j, has & ~o), _sum(refs, j, has & o)
        pieces = [(float(C[:, list(cols)].sum()), main, []), (0.0, side, [])]
        if serial:
            pieces.append((0.0, _merge(main + side), []))
        else:
            rows = np.flatnonzero(has)
            busy_m = np.any([dims.busy(lay, j) for lay in rows if not o[lay]] or [[False]], axis=0)
            busy_o = np.any([dims.busy(lay, j) for lay in rows if o[lay]] or [[False]], axis=0)
            for d in np.flatnonzero(busy_m & busy_o):
                pieces.append((0.0, _merge([dims(lay, j, d) for lay in rows]), []))
        b.node(pieces, weight)


def _sum(refs: PhaseRefs, j: int, sel: np.ndarray) -> list[tuple[int, float]]:
    """The collectives of column ``j`` of the selected layers, summed per term: (term, coefficient) pairs."""
    if not sel.any():
        return []
    total = np.bincount(refs.k[sel, j], weights=refs.a[sel, j])
    return [(int(k), float(total[k])) for k in np.flatnonzero(total)]


def _merge(refs) -> list[tuple[int, float]]:
    out: dict[int, float] = {}
    for r in refs:
        if r is not None:
            out[r[0]] = out.get(r[0], 0.0) + r[1]
    return list(out.items())


__all__ = ["own_stream", "pass_times", "add_passes", "PASSES"]
