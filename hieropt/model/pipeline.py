"""The exact composition of a pipelined iteration (loop ``step``) from its stages' micro-batch slots.

With p stages, m micro-batches and v model chunks per stage, stage r's micro-batch slot
t_r = sum_l (C_f + T_f + C_ig + T_ig + C_wg) (one micro-batch's forward and backward on it, its pipeline sends
included) and the per-iteration tail W = sum_l T_wg + U of the first stage (its last backward ends the iteration;
another stage's ends at least one stage's backward earlier), 1F1B with blocking sends takes

    T = (1/v) sum_r t_r + (m - 1/v) max_r t_r + W

(v = 1: sum_r t_r + (m - 1) max_r t_r + W). The micro-batch that enters first passes every stage once on its way
forward and once back (the fill and drain: sum_r t_r, each stage at its own pace; with v chunks a chunk's share
t_r / v), and the other m - 1 micro-batches follow at the pace of the slowest stage; an independent simulator
(ASTRA-sim 2.0 on per-NPU 1F1B traces with blocking sends) gives this sum to 1e-4. With equal stages it is
Narayanan et al.'s (m + (p - 1)/v) t (arXiv 2104.04473, §2.2), which charges the fill and drain at the slowest stage's
pace. With ``overlap_dp`` (v = 1) the first stage's last backward runs with the per-iteration collectives on their
own stream (:func:`hieropt.model.loops.cross_backward`): its slot's backward b_0 is replaced by that pass X_0,
T = sum_(r != 0) t_r + f_0 + X_0 + (m - 1) max_r t_r + U_0; with v > 1 the tail is not overlapped (W above).
T is a non-negative sum of stage terms and a max over stages, each convex and piecewise linear in 1/B.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..spec import Instance, Job
from .stages import add_slowest_stage
from .terms import TermBuilder


def composition(instance: Instance, job: Job) -> tuple[tuple[int, ...], int] | None:
    """For a workload of several stages under loop ``step`` whose
    :attr:`~hieropt.spec.Workload.pipeline_stages` cover the schedule's p stages once each: (how many pipeline
    stages each entry of ``stages`` stands for, the index of the entry holding stage 0); else None (each stage's
    time as if every stage were it, the slowest one's taken)."""
    w = job.workload
    st = instance.step
    if instance.training_loop != "step" or st is None or not w.more_stages:
        return None
    ids = w.pipeline_stages
    if len(ids) != len(w.stages) or sorted(i for m in ids for i in m) != list(range(st.stages)):
        return None
    return tuple(len(m) for m in ids), next(k for k, m in enumerate(ids) if 0 in m)


def overlapped(instance: Instance) -> bool:
    """Whether the first stage's last backward overlaps the per-iteration collectives (``overlap_dp``, v = 1)."""
    return instance.step.overlap_dp and instance.step.virtual_stages == 1


def add_composed(b: TermBuilder, instance: Instance, counts: tuple[int, ...], first: int,
                 slot: Callable[[int, float], None], tail: Callable[[int, float], None],
                 last: Callable[[int, float], None], weight: float) -> None:
    """Add ``weight`` x T of the module docstring to ``b``: ``slot(s, w)`` adds w x t_s of stage entry s, ``tail``
    w x W_s, ``last`` w x (f_s + X_s + U_s) (the overlapped last micro-batch)."""
    m, v = instance.step.microbatches, instance.step.virtual_stages
    over = overlapped(instance)
    for s, n in enumerate(counts):
        n -= 1 if over and s == first else 0
        if n:
            slot(s, weight * n / v)
    if m - 1 / v > 0:
        add_slowest_stage(b, len(counts), lambda s: slot(s, 1.0), weight * (m - 1 / v))
    (last if over else tail)(first, weight)


def composed_time(instance: Instance, counts: tuple[int, ...], first: int, slots: list[float],
                  tails: list[float], lasts: list[float]) -> float:
    """T of the module docstring from every stage entry's slot t_s, tail W_s and overlapped last pass f_s + X_s +
    U_s (ns each)."""
    m, v = instance.step.microbatches, instance.step.virtual_stages
    over = overlapped(instance)
    total = sum((n - (1 if over and s == first else 0)) * t / v for s, (n, t) in enumerate(zip(counts, slots,
                                                                                               strict=True)))
    total += (m - 1 / v) * max(slots)
    return float(total + (lasts[first] if over else tails[first]))


def stage_parts(C: np.ndarray, T: np.ndarray, U: float, cross: Callable[[], float]) -> tuple[float, float, float]:
    """(t, W, f + X + U) of one stage, numerically: C, T (L, 3) compute and collective ns; ``cross()`` the
    backward pass X with the per-iteration collectives on their own stream (:func:`hieropt.model.loops`)."""
    slot = float(C.sum() + T[:, 0].sum() + T[:, 1].sum())
    return slot, float(T[:, 2].sum() + U), float(C[:, 0].sum() + T[:, 0].sum() + cross() + U)


__all__ = ["composition", "overlapped", "add_composed", "composed_time", "stage_parts"]
