"""Where the parallel groups of a training plan (tp, pp, dp, ep, edp) sit on the network's dimensions.

A **placement** gives every group X (``tp``, ``pp``, ``dp``, and ``ep`` / ``edp`` inside ``dp``) its size on each
dimension, g^X_d, as hieropt's mappings do: g^X_d divides p_d, prod_d g^X_d = |X|, and the groups tile every
dimension, prod_X g^X_d = p_d (ep and edp are a split of dp: g^ep_d g^edp_d = g^dp_d). A group spans the dimensions
where g^X_d > 1; a collective over X puts its traffic there (:mod:`hieropt.traffic`), a point-to-point send of the
pipeline crosses one of them (stages ordered so that neighbours differ in one coordinate, e.g. boustrophedon).

- :func:`place_lowest`: the groups in the order given (innermost first; Megatron-LM's rank order is tp, then the
  data-parallel groups, then pp) fill the dimensions from dimension 0 upwards, each taking whole dimensions and
  then a divisor of the next one (:func:`hieropt.mapping.lowest_dims_group` generalised to several groups);
- :func:`placements`: every placement (for searches).

:func:`spec_parts` turns a lowered stage and a placement into what today's :class:`~hieropt.spec.Instance` takes
(a workload, a per-phase :class:`~hieropt.spec.Mapping`, the training loop and its :class:`~hieropt.spec.Pipeline`)
when that is exact, and says why not otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from ..errors import InputError
from ..spec import Mapping, Pipeline, Workload
from ..workloads.llm.lower import LoweredStage, fold_microbatches

Placement = dict[str, tuple[int, ...]]
"""Group name -> size on each dimension."""


def place_lowest(sizes: Sequence[int], groups: Sequence[tuple[str, int]], source: str = "placement") -> Placement:
    """Place ``groups`` ((name, NPUs), innermost first) on dimensions of ``sizes`` NPUs from dimension 0 upwards.

    Each group takes the remaining room of the lowest dimensions: a whole dimension while its size divides what the
    group still needs, then a divisor of the next dimension; the next group starts where it stopped.

    Raises:
        InputError: the group sizes do not multiply to the NPU count, or a group does not fill the remaining
            dimensions that way (e.g. 6 NPUs on 4 x 8).
    """
    room = list(sizes)
    total = math.prod(sizes)
    need = math.prod(n for _, n in groups)
    if need != total:
        raise InputError(source, "groups", f"the groups {' x '.join(f'{k} {n}' for k, n in groups)} = {need} NPUs do "
                         f"not fill the {' x '.join(map(str, sizes))} = {total} NPUs", "choose degrees whose product "
                         "is the NPU count")
    out: Placement = {}
    d = 0
    for name, n in groups:
        g = [1] * len(sizes)
        left = n
        while left > 1:
            while d < len(room) and room[d] == 1:
                d += 1
            if d == len(room):
                break
            if left % room[d] == 0:
                g[d], left, room[d] = room[d], left // room[d], 1
            elif room[d] % left == 0:
                g[d], room[d], left = left, room[d] // left, 1
            else:
                raise InputError(source, name, f"a group of {n} NPUs does not fill the lowest free dimensions of "
                                 f"the {' x '.join(map(str, sizes))} network (room {room[d]} on dimension {d})",
                                 "give the placement explicitly or choose degrees that fit the dimensions")
        out[name] = tuple(g)
    return out


def _vectors(room: tuple[int, ...], n: int) -> Iterator[tuple[int, ...]]:
    """Every g with g_d | room_d and prod g = n, lexicographically."""
    if not room:
        if n == 1:
            yield ()
        return
    for g in range(1, room[0] + 1):
        if room[0] % g == 0 and n % g == 0:
            for rest in _vectors(room[1:], n // g):
                yield (g,) + rest


def placements(sizes: Sequence[int], groups: Sequence[tuple[str, int]]) -> Iterator[Placement]:
    """Every placement of ``groups`` on dimensions of ``sizes`` NPUs (the groups' sizes multiply to the total)."""
    if math.prod(n for _, n in groups) != math.prod(sizes):
        return

    def rec(k: int, room: tuple[int, ...], acc: Placement) -> Iterator[Placement]:
        if k == len(groups):
            yield dict(acc)
            return
        name, n = groups[k]
        for g in _vectors(room, n):
            acc[name] = g
            yield from rec(k + 1, tuple(r // x for r, x in zip(room, g, strict=True)), acc)
        acc.pop(name, None)

    yield from rec(0, tuple(sizes), {})


def spans(group: tuple[int, ...]) -> list[int]:
    """Dimensions a group spans (size > 1 there)."""
    return [d for d, g in enumerate(group) if g > 1]


def spec_parts(lowered: LoweredStage, placement: Placement, pp: int, schedule: str,
               source: str = "plan") -> tuple[Workload, Mapping, str, Pipeline | None]:
    """(workload, mapping, training loop, pipeline) of today's :class:`~hieropt.spec.Instance` for a lowered stage.

    Exact when every forward and input-gradient collective runs on ``tp`` and every weight-gradient one on ``dp``
    (TP with or without sequence parallelism, DP with ZeRO 0 or 1, no EP), with pp = 1 (``no_overlap`` over the
    folded micro-batches) or with the 1F1B schedule and the pipeline group on one dimension (``pipeline``; its
    point-to-point bytes are the larger of the stage's per-direction sends, as the loop charges two per slot).

    Raises:
        InputError: the plan needs a feature today's per-phase mapping cannot express (several groups in one
            phase, an interleaved schedule, a pipeline over several dimensions, per-iteration sends).
    """
    for phase, allowed in (("forward", "tp"), ("input_grad", "tp"), ("weight_grad", "dp")):
        used = lowered.groups_of(phase)
        if used - {allowed}:
            raise InputError(source, phase, f"the {phase} collectives use the groups {sorted(used)}; a per-phase "
                             f"mapping holds one ({allowed})", "use hieropt's named-group mappings (plan without "
                             "EP, ZeRO 2/3 for the per-phase mapping)")
    mapping = Mapping(forward=placement["tp"], input_grad=placement["tp"], weight_grad=placement["dp"])
    if pp == 1:
        return fold_microbatches(lowered), mapping, "no_overlap", None
    if schedule != "1f1b":
        raise InputError(source, "schedule", f"the pipeline loop models 1F1B, not {schedule}",
                         "use schedule 1f1b for the per-phase mapping")
    dims = spans(placement["pp"])
    if len(dims) != 1:
        raise InputError(source, "pp", f"the pipeline group spans dimensions {dims}; the pipeline loop sends over "
                         "one", "place the pipeline group on one dimension")
    if lowered.p2p_iteration_bytes:
        raise InputError(source, "tied_embeddings", "the tied-embedding gradient exchange between the first and "
                         "the last stage is not expressible in the pipeline loop", "untie the embeddings or use "
                         "named-group mappings")
    pipe = Pipeline(stages=pp, microbatches=lowered.microbatches, p2p_bytes=max(lowered.p2p_bytes),
                    p2p_dim=dims[0])
    return lowered.workload, mapping, "pipeline", pipe


__all__ = ["Placement", "place_lowest", "placements", "spans", "spec_parts"]
