"""Where the parallel groups of a training plan (tp, pp, dp, ep, edp) sit on the network's
dimensions.

A **placement** gives every group X (``tp``, ``pp``, ``dp``, and ``ep`` / ``edp`` inside ``dp``) its
size on each dimension, g^X_d, as hieropt's mappings do: g^X_d divides p_d, prod_d g^X_d = |X|, and
the groups tile every dimension, prod_X g^X_d = p_d (ep and edp are a split of dp: g^ep_d g^edp_d =
g^dp_d). A group spans the dimensions where g^X_d > 1; a collective over X puts its traffic there
(:mod:`hieropt.model.traffic`), a point-to-point send of the pipeline crosses those where its two
stages' coordinates differ (the stages in mixed radix over the pp group's dimensions, lowest first:
:mod:`hieropt.model.sends`).

- :func:`place_lowest`: the groups in the order given (innermost first; Megatron-LM's rank order is
  tp, then the data-parallel groups, then pp) fill the dimensions from dimension 0 upwards, each
  taking whole dimensions and then a divisor of the next one
  (:func:`hieropt.model.mapping.lowest_dims_group` generalised to several groups);
- :func:`placements`: every placement (for searches).

:func:`instance_for` builds the :class:`~hieropt.spec.Instance` of a plan on a network: the plan's
workload (every distinct pipeline stage, :func:`hieropt.workloads.llm.lower.lower_plan`, which
loop ``step`` composes by the schedule: :mod:`hieropt.model.pipeline`), a
:class:`~hieropt.spec.Mapping` with the placement's named groups, and loop ``step``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from ..cache import current
from ..errors import InputError
from ..spec import CostModel, Instance, LinearConstraint, Mapping, Network

# the LLM generator is loaded by instance_for only (a shape sweep's mappings do not need it)
if TYPE_CHECKING:
    from ..workloads.llm.params import LLMParams

Placement = dict[str, tuple[int, ...]]
"""Group name -> size on each dimension."""


def place_lowest(
    sizes: Sequence[int], groups: Sequence[tuple[str, int]], source: str = "placement"
) -> Placement:
    """Place ``groups`` ((name, NPUs), innermost first) on dimensions of ``sizes`` NPUs from
    dimension 0 upwards.

    Each group takes the remaining room of the lowest dimensions: a whole dimension while its size
    divides what the group still needs, then a divisor of the next dimension; the next group starts
    where it stopped.

    Raises:
        InputError: the group sizes do not multiply to the NPU count, or a group does not fill the
            remaining dimensions that way (e.g. 6 NPUs on 4 x 8).
    """
    room = list(sizes)
    total = math.prod(sizes)
    need = math.prod(n for _, n in groups)
    if need != total:
        raise InputError(
            source,
            "groups",
            f"the groups {' x '.join(f'{k} {n}' for k, n in groups)} = {need} NPUs do "
            f"not fill the {' x '.join(map(str, sizes))} = {total} NPUs",
            "choose degrees whose product is the NPU count",
        )
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
                raise InputError(
                    source,
                    name,
                    f"a group of {n} NPUs does not fill the lowest free dimensions of "
                    f"the {' x '.join(map(str, sizes))} network (room {room[d]} on dimension {d})",
                    "give the placement explicitly or choose degrees that fit the dimensions",
                )
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
    """Every placement of ``groups`` on dimensions of ``sizes`` NPUs (the groups' sizes multiply to
    the total)."""
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


def plan_groups(p: LLMParams) -> list[tuple[str, int]]:
    """The groups of plan ``p`` to place, innermost first in Megatron-LM's rank order: tp, cp (when
    > 1), the data-parallel group(s) (dp, or ep and edp for an MoE model), pp."""
    pl = p.plan
    dp = [("ep", pl.ep), ("edp", pl.edp)] if p.model.moe is not None else [("dp", pl.dp)]
    cp = [("cp", pl.cp)] if pl.cp > 1 else []
    return [("tp", pl.tp), *cp, *dp, ("pp", pl.pp)]


def complete(placement: Placement) -> Placement:
    """``placement`` with the groups it implies: dp = ep x edp on every dimension (MoE), edp = dp
    (dense), cp of one NPU when not placed, dpc = dp x cp (the gradients' group under context
    parallelism)."""
    out = dict(placement)
    if "dp" not in out and "ep" in out and "edp" in out:
        out["dp"] = tuple(a * b for a, b in zip(out["ep"], out["edp"], strict=True))
    if "edp" not in out and "dp" in out:
        out["edp"] = out["dp"]
    if "ep" not in out and "dp" in out:
        out["ep"] = tuple(1 for _ in out["dp"])
    if "dp" in out:
        out.setdefault("cp", tuple(1 for _ in out["dp"]))
        out.setdefault("dpc", tuple(a * b for a, b in zip(out["dp"], out["cp"], strict=True)))
    return out


def mapping_for(placement: Placement) -> Mapping:
    """A :class:`~hieropt.spec.Mapping` with the placement's named groups (the per-phase defaults:
    tp, tp, dp); one frozen object per placement within a call, shared (a sweep places many plans
    the same way)."""
    items = tuple(placement.items())
    return current().memo("mapping_for", items, lambda: _mapping(items), 4096)


def _mapping(items: tuple[tuple[str, tuple[int, ...]], ...]) -> Mapping:
    full = complete(dict(items))
    return Mapping(forward=full["tp"], input_grad=full["tp"], weight_grad=full["dp"], groups=full)


def instance_for(
    p: LLMParams,
    network: Network,
    cost: CostModel,
    placement: Placement | None = None,
    *,
    objective: str = "performance",
    constraints: tuple[LinearConstraint, ...] = (),
    stage: int | None = None,
    name: str | None = None,
    **extra,
) -> Instance:
    """The :class:`~hieropt.spec.Instance` of plan ``p`` on ``network``: every distinct pipeline
    stage as the workload (the stage with the most compute first; or only ``stage``, the former
    single-stage model), the placement's named groups as the mapping (default: :func:`place_lowest`
    of :func:`plan_groups`), training loop ``step`` with the plan's schedule. ``extra``: further
    Instance fields (``max_iteration_time_ns``, ``dimension_mode``, ...).

    Raises:
        InputError: the groups cannot be placed lowest-first on the network.
        pydantic.ValidationError: the parts disagree (see :class:`~hieropt.spec.Instance`).
    """
    from ..workloads.llm.lower import schedule, stage_workload

    sizes = tuple(d.npus for d in network.dims)
    if placement is None:
        placement = place_lowest(sizes, plan_groups(p), name or p.workload_name)
    workload = stage_workload(p, stage)
    return Instance(
        name=name or workload.name,
        network=network,
        workload=workload,
        mapping=mapping_for(placement),
        cost=cost,
        constraints=constraints,
        objective=objective,
        training_loop="step",
        step=schedule(p),
        **extra,
    )


__all__ = [
    "Placement",
    "place_lowest",
    "placements",
    "spans",
    "plan_groups",
    "complete",
    "mapping_for",
    "instance_for",
]
