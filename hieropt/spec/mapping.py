"""The parallel mapping (:class:`Mapping`) and the checks of a job (a workload on its mapping)
against the network: group sizes that tile the dimensions, named groups that exist and match the
workload's header and generator degrees. Used by :class:`hieropt.spec.Instance`'s validator; each
check raises ``ValueError`` with a ``"<field>: <problem>; fix: <fix>"`` message."""

from __future__ import annotations

import math

from pydantic import Field, field_validator

from ..names import PHASES, TRANSFORMER_POLICIES
from .base import Frozen
from .network import Collective, Network
from .tiling import ORDER, mapping_groups, tiling_problem
from .workload import Workload


def _positive_sizes(v: tuple[int, ...]) -> tuple[int, ...]:
    for i, g in enumerate(v):
        if g < 1:
            raise ValueError(
                f"entry [{i}] is {g}: a group spans at least 1 NPU of a dimension; fix: use "
                "1 (or -1 in "
                "LIBRA files) for a dimension the group does not span"
            )
    return v


class Mapping(Frozen):
    """Parallel mapping (LIBRA's 'communicator'): per phase, the group size on each dimension (1 =
    not spanned), and optionally named groups (``groups``) for collectives whose phase names one
    (:attr:`hieropt.spec.Phase.group`).

    Readers turn LIBRA's -1 into 1. Example for TP-16 / DP-256 on 4 x 8 x 4 x 32:
    ``forward = input_grad = (4, 4, 1, 1)``, ``weight_grad = (1, 2, 4, 32)``. A TP 8 x PP 8 x DP 64
    plan there: ``groups = {"tp": (4, 2, 1, 1), "pp": (1, 4, 2, 1), "dp": (1, 1, 2, 32)}``.
    """

    forward: tuple[int, ...]
    input_grad: tuple[int, ...]
    weight_grad: tuple[int, ...]
    groups: dict[str, tuple[int, ...]] = Field(default_factory=dict)

    @field_validator("forward", "input_grad", "weight_grad")
    @classmethod
    def _positive(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        return _positive_sizes(v)

    @field_validator("groups")
    @classmethod
    def _named_positive(cls, v: dict[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
        for name, g in v.items():
            try:
                _positive_sizes(g)
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
        return v

    def group(self, phase: str, name: str | None = None) -> tuple[int, ...]:
        """The group sizes of ``phase`` (one of :data:`PHASES`), or of the named group ``name`` when
        given."""
        return self.groups[name] if name is not None else getattr(self, phase)



def check_mapping(mapping: Mapping, network: Network, label: str) -> None:
    """Every group of ``mapping`` (labelled ``label``) has one size per dimension of ``network``,
    each a divisor of its dimension's NPUs.

    Raises:
        ValueError: ``"<label>.<group>[d]: <problem>; fix: <fix>"``.
    """
    D = network.n_dims
    named = [(f"groups.{k}", g) for k, g in mapping.groups.items()]
    for key, g in [(phase, mapping.group(phase)) for phase in PHASES] + named:
        if len(g) != D:
            raise ValueError(
                f"{label}.{key}: has {len(g)} entries but the network has {D} dimensions; "
                "fix: give one "
                "group size per dimension"
            )
        for d, (p, dim) in enumerate(zip(g, network.dims, strict=True)):
            if p > dim.npus:
                raise ValueError(
                    f"{label}.{key}[{d}]: group of {_count(p)} NPUs exceeds dimension {d}'s "
                    f"{dim.npus} NPUs; "
                    f"fix: use a group size between 1 and {dim.npus}"
                )
            # a group must tile its dimension (100 on a Switch of 128 is a mistake)
            if dim.npus % p:
                divisors = (
                    [k for k in range(1, dim.npus + 1) if dim.npus % k == 0]
                    if dim.npus <= 10**6
                    else []
                )
                raise ValueError(
                    f"{label}.{key}[{d}]: a group of {p} NPUs does not divide dimension "
                    f"{d}'s {dim.npus} NPUs "
                    f"(the groups must tile the dimension); fix: use a divisor of {dim.npus}"
                    + (
                        f" ({', '.join(map(str, divisors[:12]))}"
                        f"{', ...' if len(divisors) > 12 else ''})"
                        if divisors
                        else ""
                    )
                )


def _count(n: int) -> str:
    """An NPU count for a message (an integer of thousands of digits by its length)."""
    return (
        str(n)
        if n.bit_length() <= 200
        else f"an integer of about {int(n.bit_length() * 0.30103) + 1} digits"
    )


_HEADER_GROUPS = (("tp", "model_parallel_npu_group"), ("pp", "pp"), ("ep", "ep"))
"""Named groups whose size a workload header states (``model_parallel_NPU_group``, SimAI's ``pp``
and ``ep``)."""


def check_job(workload: Workload, mapping: Mapping, label: str, mode: str,
              npus: int | None = None) -> None:
    """The named groups the workload uses exist, fit its header, and its point-to-point sends cross
    one dimension in sequential mode; a transformer header's model-parallel size and a generator's
    degrees (``group_npus``, e.g. dp) match the groups they are given; every further stage
    (``more_stages``) likewise. ``npus``: the NPUs the workload's degrees must multiply to (the
    network's, or one pipeline stage's), so that a fix is offered only when it meets that too
    (:meth:`~hieropt.spec.Workload.mapping_mismatch`).

    Raises:
        ValueError: ``"<label>.<group>: <problem>; fix: <fix>"``.
    """
    missing = sorted(workload.named_groups - set(mapping.groups))
    if missing:
        raise ValueError(
            f"{label}.groups: the workload {workload.name} runs collectives on group "
            f"'{missing[0]}', "
            f"which the mapping does not name; fix: add {label}.groups.{missing[0]} (its "
            "size on every "
            "dimension)"
        )
    h = workload.header
    if h is not None:
        for name, key in _HEADER_GROUPS:
            want = getattr(h, key)
            if (
                want is not None
                and name in workload.named_groups
                and math.prod(mapping.groups[name]) != want
            ):
                raise ValueError(
                    f"{label}.groups.{name}: {list(mapping.groups[name])} has "
                    f"{math.prod(mapping.groups[name])} NPUs but the workload's header says "
                    f"{key} = "
                    f"{want}; fix: give the {name} group {want} NPUs"
                )
        mp = h.model_parallel_npu_group
        t = workload.table
        tp_comm = workload.memo(
            "_tp_comm",
            (workload.layers,),
            lambda: any(
                t.collective[i, j] is not Collective.NONE
                and t.group[i, j] is None
                and t.size_bytes[i, j] > 0
                # (per workload: sweeps build many instances)
                for i in range(len(workload.layers))
                for j in (0, 1)
            ),
        )
        if mp is not None and tp_comm and h.policy in TRANSFORMER_POLICIES:
            if (size := math.prod(mapping.forward)) != mp:
                raise ValueError(
                    f"{label}.forward: {list(mapping.forward)} has {size} NPUs but the workload "
                    f"{workload.name}'s header says model_parallel_NPU_group = {mp}; fix: give the "
                    f"forward (and input_grad) group {mp} NPUs"
                )
    if wrong := workload.mapping_mismatch({p: mapping.group(p) for p in PHASES} | mapping.groups,
                                          npus=npus):
        raise ValueError(f"{label}.{wrong[0]}; fix: {wrong[1]}")
    # (a group with an algorithm: the sends' max)
    if mode == "sequential" and not workload.group_algorithms:
        t = workload.table
        for j, phase in enumerate(PHASES):
            for g in {
                t.group[i, j]
                for i in range(len(workload.layers))
                if t.collective[i, j] is Collective.P2P
            }:
                sizes = mapping.group(phase, g)
                if sum(x > 1 for x in sizes) > 1:
                    raise ValueError(
                        f"{label}.{'groups.' + g if g else phase}: a point-to-point send "
                        "over a group "
                        f"spanning several dimensions {list(sizes)} crosses one of them, which "
                        "dimension_mode 'sequential' cannot state; fix: place the group on one "
                        "dimension or use dimension_mode 'concurrent'"
                    )
    # (every stage of a pipelined workload runs on the same mapping)
    for stage in workload.more_stages:
        check_job(stage, mapping, label, mode)


def states_parallelism(workload: Workload, mapping: Mapping) -> bool:
    """Whether the job says which parallelism its groups run: a plan's named groups (tp, cp, ep,
    edp, dp, pp), a generator's degrees (a transformer's tp and dp) or an ASTRA-sim header's
    model-parallel group size (forward and input_grad then run on the model-parallel group,
    weight_grad on the data-parallel one). A workload that states none (a LIBRA layer file, a
    header without a group size, groups of other names) has its groups taken as given."""
    h = workload.header
    return (
        any(name in ORDER for name in mapping.groups)
        or bool(workload.group_npus)
        or (h is not None and h.model_parallel_npu_group is not None)
    )


def check_tiling(
    workload: Workload, mapping: Mapping, network: Network, label: str, exact: bool = True
) -> None:
    """The job's groups can sit on ``network`` together (:mod:`hieropt.spec.tiling`): every group is
    a product of orthogonal factors that fit every dimension, and (``exact``: every loop but
    ``pipeline``, whose mapping is one stage's) multiply to its NPUs. Checked only when the job
    states its parallelism (:func:`states_parallelism`).

    Raises:
        ValueError: ``"<label>.groups.<name>: [2, 8] does not fit beside tp [8, 1], ...; fix: give
            groups that tile every dimension (...)"``.
    """
    if not states_parallelism(workload, mapping):
        return
    sizes = tuple(d.npus for d in network.dims)
    groups = mapping_groups(
        mapping.groups, {p: tuple(mapping.group(p)) for p in PHASES}, sizes
    )
    why = tiling_problem(groups, sizes, exact)
    if why is not None:
        raise ValueError(f"{label}.{why[0]}: {why[1]}; fix: {why[2]}")


def check_npus(workload: Workload, npus: int) -> None:
    """The NPUs the workload is planned for, as it states them (a generator's degrees,
    :attr:`~hieropt.spec.Workload.stated_degrees`, e.g. GPT-3 TP 16 x DP 256 = 4,096; else an
    LLM plan's or SimAI header's ``all_gpus``), are the network's ``npus``: the network's cost and
    power are for every NPU, the tokens/s and MFU for the job's. A workload that states neither
    is not checked (its groups are taken as filling the network). Every loop but ``pipeline``
    (:func:`check_stages`, one stage of the workload per group of NPUs).

    Raises:
        ValueError: ``"network: the workload gpt3-175b is planned for tp 16 x dp 256 = 4,096 NPUs
            but the network has 8,192; fix: ..."``.
    """
    degrees = dict(workload.stated_degrees)
    h = workload.header
    need = math.prod(degrees.values()) if degrees else (h.all_gpus if h is not None else None)
    if need is None or need == npus:
        return
    what = " x ".join(f"{k} {n}" for k, n in degrees.items()) + " = " if degrees else ""
    fix = f"give a network of {need:,} NPUs"
    if "dp" in degrees and (npus * degrees["dp"]) % need == 0:
        fix = f"set dp = {npus * degrees['dp'] // need} in the workload model, or {fix}"
    elif not degrees:
        fix = (f"plan the workload for this network (dp in its model file's [plan], or "
               f"`hieropt workload transformer --set dp=...` for a generated one), or {fix}")
    raise ValueError(
        f"network: the workload {workload.name} is planned for {what}{need:,} NPUs but the "
        f"network has {npus:,} (its cost and power are for every NPU); fix: {fix}"
    )


def check_stages(workload: Workload, stages: int, npus: int) -> None:
    """The ``pipeline`` loop's stage count against a workload that states its degrees
    (:attr:`~hieropt.spec.Workload.stated_degrees`): the workload is one stage for one micro-batch
    and the network holds every stage (its cost is N x the per-NPU price; the stages exchange
    activations over ``p2p_dim``), so one stage's NPUs x ``stages`` must be the network's ``npus``.
    A workload that states no degree is not checked. The fix names the dp that fits and the mapping
    groups that run on it (the mapping is one stage's), so that following it passes
    :func:`check_job` too.

    Raises:
        ValueError: ``"pipeline.stages: <problem>; fix: <fix>"``.
    """
    degrees = workload.stated_degrees
    if not degrees:
        return
    per_stage = math.prod(n for _, n in degrees)
    if per_stage * stages == npus:
        return
    what = " x ".join(f"{k} {n}" for k, n in degrees)
    fix = f"give a network of {per_stage * stages} NPUs"
    if npus % stages == 0:
        want = npus // stages
        names = " x ".join(k for k, _ in degrees)
        size = (f"size the workload for one stage of {npus} / {stages} = {want} NPUs ({names} = "
                f"{want}, not {per_stage})")
        dp = dict(degrees).get("dp")
        if dp is not None and (want * dp) % per_stage == 0:
            new = want * dp // per_stage
            groups = [k for k, p, _ in workload.group_npus if p == "dp"]
            size = (f"set dp = {new} in the workload model ({names} = {want} NPUs, one stage of "
                    f"{npus} / {stages})" + "".join(f" and give the {k} group {new} NPUs"
                                                    for k in groups))
        fix = f"{size}, or {fix}"
    raise ValueError(
        f"pipeline.stages: {stages} stages of the workload {workload.name} ({what} = "
        f"{per_stage} NPUs "
        f"per stage) need {per_stage * stages} NPUs, but the network has {npus} (the "
        "pipeline loop's "
        f"workload is one stage and the network holds every stage); fix: {fix}"
    )

