"""Per-micro-batch collectives on their own stream (loop ``step`` with
:attr:`hieropt.spec.StepSchedule.overlap_groups`): the forward and input-gradient collectives of
the named groups run concurrently with the rest of the micro-batch, as FSDP and DeepSpeed run
ZeRO-2/3's gradient reduce-scatters and parameter all-gathers (prefetched, on a second stream;
Zhao et al. 2023, "PyTorch FSDP", arXiv 2304.11277, §3.3; Llama Team 2024, arXiv 2407.21783,
§3.3.2).

With C the compute, T the collective time and S_d the time a collective keeps dimension d busy
(bytes / B_d + latency), a micro-batch slot of the stage (its forward and backward: every compute
column, the forward and input-gradient collectives) splits its collectives into the main stream
(M, the others: TP, CP, EP, pipeline sends) and the own stream (O) and takes

    t = max(sum_l C + sum_M T,  sum_O T,  max_d (sum_M S_d + sum_O S_d))

(the compute with the blocking collectives; the own stream's collectives back to back; every
dimension carrying the bytes of both). The own stream runs through the slot, as the frameworks'
queue does: a micro-batch's gradient reduce-scatters go on into the next micro-batch's forward,
the next micro-batch's parameter gathers are fetched during this one's backward. With
``collectives_in_flight = 1`` the last term is sum_M T + sum_O T (one collective at a time). The
slot never exceeds the sum of the first two (its value without the overlap) and is convex and
piecewise linear in 1/B. The stream's start (the first gathers before any compute) and end (the
last reduce-scatters after the last compute) are hidden in this form; over m micro-batches they
are a small part.
"""

from __future__ import annotations

import numpy as np

from ..names import SEND_GROUP_SEPARATOR as SEPARATOR
from ..spec import Instance
from .terms import PhaseRefs, TermBuilder

COLUMNS = (0, 1)
"""The collective columns of a slot: forward and input gradient (the weight-gradient column runs
once per iteration)."""


def own_stream(instance: Instance, groups: np.ndarray) -> np.ndarray | None:
    """(L, 3) bool: the phases whose collective runs on the own stream (forward and input-gradient
    collectives of a group in ``instance.step.overlap_groups``; ``groups`` the (L, 3) named groups
    of the phases), or None when no phase does (the loop's plain form)."""
    st = instance.step
    if instance.training_loop != "step" or st is None or not st.overlap_groups or groups is None:
        return None
    return instance.memo("_own_stream", (st, groups), lambda: _own_mask(st.overlap_groups, groups))


def _own_mask(named, groups: np.ndarray) -> np.ndarray | None:
    """:func:`own_stream`'s mask (read-only) of the groups ``named``, or None when it is empty."""
    mask = np.zeros(groups.shape, dtype=bool)
    for g in set(named):  # (object arrays: one vectorised comparison per name)
        mask |= groups == g
    # (a pipeline send's boundary group, hieropt.model.sends, is its send group's)
    for g in {x for x in groups.ravel().tolist() if x is not None and SEPARATOR in x}:
        if g.split(SEPARATOR, 1)[0] in named:
            mask |= groups == g
    mask[:, 2] = False
    mask.flags.writeable = False
    return mask if mask.any() else None


def slot_time(C: np.ndarray, T: np.ndarray, per_dim: np.ndarray, own: np.ndarray,
              serial: bool) -> float:
    """One micro-batch slot t of the module docstring, ns: C, T (L, 3) compute and collective ns,
    ``per_dim`` (L, 3, D) busy ns, ``own`` (L, 3) the own-stream phases, ``serial`` one
    collective at a time."""
    o, cols = own[:, COLUMNS], list(COLUMNS)
    Tc = T[:, cols]
    main = float(C.sum() + Tc[~o].sum())
    side = float(Tc[o].sum())
    if serial:
        both = float(Tc.sum())
    else:
        both = float(per_dim[:, cols, :].sum(axis=(0, 1)).max(initial=0.0))
    return max(main, side, both)


def add_slot(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, dims, own: np.ndarray,
             weight: float, serial: bool) -> None:
    """Add ``weight`` x the slot t of the module docstring to ``b`` as one max node; ``dims`` the
    per-dimension terms (:class:`hieropt.model.loops.DimRefs`)."""
    has = refs.k >= 0
    has[:, 2] = False
    main, side = _sum(refs, has & ~own), _sum(refs, has & own)
    pieces = [(float(C.sum()), main, []), (0.0, side, [])]
    if serial:
        pieces.append((0.0, _merge(main + side), []))
    else:
        cells = list(zip(*np.nonzero(has), strict=True))
        busy = dims.busy_all()  # (L, 3, D)
        busy_m = busy[has & ~own].any(axis=0)
        busy_o = busy[has & own].any(axis=0)
        for d in np.flatnonzero(busy_m & busy_o):
            pieces.append((0.0, _merge([dims(lay, j, d) for lay, j in cells]), []))
    b.node(pieces, weight)


def _sum(refs: PhaseRefs, sel: np.ndarray) -> list[tuple[int, float]]:
    """The collectives of the selected (L, 3) phases, summed per term: (term, coefficient)
    pairs."""
    if not sel.any():
        return []
    total = np.bincount(refs.k[sel], weights=refs.a[sel])
    return [(int(k), float(total[k])) for k in np.flatnonzero(total)]


def _merge(refs) -> list[tuple[int, float]]:
    out: dict[int, float] = {}
    for r in refs:
        if r is not None:
            out[r[0]] = out.get(r[0], 0.0) + r[1]
    return list(out.items())


__all__ = ["own_stream", "slot_time", "add_slot", "COLUMNS"]
