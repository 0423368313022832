"""Parallel groups from an ASTRA-sim 1.0 header when no explicit mapping is given.

Rule (ASTRA-sim 1.0 policies): the model-parallel group occupies the lowest dimensions, the
data-parallel group the rest. Model-parallel size N: ``model_parallel_NPU_group`` when the header
gives it; else all NPUs for MODEL, MICRO, DISTRIBUTED_INFERENCE and the DLRM policies (their
all-to-all and all-reduce span the whole cluster), none for DATA, and the first dimension for
HYBRID_MODEL_DATA. HYBRID_DATA_MODEL without a group size puts the data group on the first dimension
and the model group on the rest. Forward and input-gradient collectives use the model-parallel
group, weight-gradient collectives the data-parallel group; under DATA and the whole-cluster
policies every phase uses the whole cluster. HYBRID_CUSTOMIZED (a policy per layer) needs an
explicit mapping. A workload whose collectives name their groups (the LLM generator's) gets the
plan's groups from its header (tp, pp, ep, all NPUs) placed lowest first in Megatron-LM's order: tp,
ep and expert-DP (or DP), pp.
"""

from __future__ import annotations

import math

from ..errors import InputError
from ..names import PHASES
from ..spec import Mapping, Network, Workload
from .groups import mapping_for, place_lowest

_WHOLE = ("MODEL", "MICRO", "DISTRIBUTED_INFERENCE", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED")


def lowest_dims_group(network: Network, size: int, source: str) -> tuple[int, ...]:
    """A group of ``size`` NPUs filling dimensions from dimension 0 upwards (whole dimensions, then
    a divisor of the next one).

    Raises:
        InputError: ``size`` does not divide the network that way (e.g. 6 NPUs on 4 x 8).
    """
    out, left = [], size
    for dim in network.dims:
        if left >= dim.npus and left % dim.npus == 0:
            out.append(dim.npus)
            left //= dim.npus
        elif left > 1 and dim.npus % left == 0:
            out.append(left)
            left = 1
        elif left == 1:
            out.append(1)
        else:
            break
    if left != 1 or len(out) != network.n_dims:
        shape = " x ".join(str(d.npus) for d in network.dims)
        raise InputError(
            source,
            "model_parallel_NPU_group",
            f"a group of {size} NPUs does not fill the lowest dimensions of the {shape} network",
            "give an explicit mapping",
        )
    return tuple(out)


def _plan_mapping(workload: Workload, network: Network, source: str) -> tuple[Mapping, str]:
    """Named groups from a plan header (tp, SimAI's pp and ep) and the generator's cp, placed lowest
    first: tp, cp, ep, edp (or dp), pp."""
    h = workload.header
    N = network.npus_total
    tp = h.model_parallel_npu_group or 1
    pp = h.pp or 1
    ep = h.ep or 1
    # (the generator states cp, not the header)
    cp = dict((k, n) for k, _, n in workload.group_npus).get("cp", 1)
    if N % (tp * pp * cp):
        raise InputError(
            source,
            "mapping",
            f"the plan's tp {tp} x pp {pp}{f' x cp {cp}' if cp > 1 else ''} does "
            f"not divide the network's {N} NPUs",
            "give a network of tp x pp x dp NPUs or an explicit mapping",
        )
    # (a plan of all_gpus NPUs on another network: refused by the instance, check_npus)
    dp = N // (tp * pp * cp)
    uses = workload.named_groups
    order = [("tp", tp)] + ([("cp", cp)] if cp > 1 else []) + (
        [("ep", ep), ("edp", dp // ep)] if {"ep", "edp"} & uses else [("dp", dp)]) + [("pp", pp)]
    placement = place_lowest(tuple(d.npus for d in network.dims), order, source)
    text = ", ".join(f"{k} {list(v)}" for k, v in placement.items())
    return mapping_for(
        placement
    ), f"the plan's groups placed on the lowest dimensions first: {text}"


def stage_network(network: Network, stages: int, source: str) -> Network:
    """The part of ``network`` one of ``stages`` pipeline stages holds: its lowest dimensions with
    N / ``stages`` NPUs (whole dimensions, then a divisor of the next; a dimension the stage does
    not reach keeps 1 NPU), the stages taking the rest (the pipeline loop's workload and mapping
    are one stage's). ``stages`` = 1: ``network`` itself.

    Raises:
        InputError: ``pipeline.stages`` does not split the network that way (e.g. 3 stages of 4,096
            NPUs), naming the fix.
    """
    if stages == 1:
        return network
    N = network.npus_total
    shape = " x ".join(str(d.npus) for d in network.dims)
    why = InputError(source, "pipeline.stages",
                     f"{stages} stages do not split the {shape} network's {N:,} NPUs into equal "
                     "stages on its outermost dimensions (the mapping is derived for one stage)",
                     "give a stage count that does, or the mapping (one stage's groups)")
    if N % stages:
        raise why
    try:
        sizes = lowest_dims_group(network, N // stages, source)
    except InputError:
        raise why from None
    return network.model_copy(update={"dims": tuple(
        d.model_copy(update={"npus": n}) for d, n in zip(network.dims, sizes, strict=True))})


def derive_mapping(workload: Workload, network: Network, source: str,
                   stages: int = 1) -> tuple[Mapping, str]:
    """The mapping implied by the workload's header policy, and a one-line explanation of it.
    ``stages``: the pipeline loop's stage count, whose workload is one stage: the mapping is then
    derived on one stage's NPUs (:func:`stage_network`), not the whole network's.

    Raises:
        InputError: no header, HYBRID_CUSTOMIZED, a group size that does not fit the network, a
            SimAI header's pp or ep (the rule has no place for them), stages that do not split the
            network, or a mapping the workload cannot run on (``Workload.mapping_mismatch``: a
            GPT-3 model generated for dp = 256 on a network of 32 NPUs).
    """
    h = workload.header
    if h is not None and not workload.named_groups and ((h.pp or 1) > 1 or (h.ep or 1) > 1):
        stated = " and ".join(f"{k} = {v}" for k, v in (("pp", h.pp), ("ep", h.ep)) if (v or 1) > 1)
        raise InputError(
            source,
            "mapping",
            f"none given, and the header's {stated} (SimAI's plan) cannot be "
            "derived: the header rule places the model-parallel group on the lowest dimensions and "
            "data parallelism on all the rest",
            "give the mapping (each phase's group on every dimension)",
        )
    stage = stage_network(network, stages, source)
    m, why = _derived(workload, stage, source)
    wrong = workload.mapping_mismatch(
        {p: m.group(p) for p in PHASES}, " (a mapping, or a network of another size)",
        npus=stage.npus_total,
    )
    where = (f"this network of {network.npus_total} NPUs" if stages == 1 else
             f"one of the {stages} pipeline stages of this network ({stage.npus_total} of its "
             f"{network.npus_total} NPUs)")
    if wrong:
        raise InputError(source, "mapping", f"none given; derived from the header on {where}, "
                         f"{wrong[0]}", wrong[1])
    if stages > 1:
        why = f"one pipeline stage's {stage.npus_total} NPUs: {why}"
    return m, why


def _derived(workload: Workload, network: Network, source: str) -> tuple[Mapping, str]:
    """:func:`derive_mapping` before its check against the generator's degrees."""
    header = getattr(workload, "header", None)
    policy = header.policy if header is not None else None
    if policy is None:
        raise InputError(
            source,
            "mapping",
            "missing, and the workload has no header to derive it from",
            "give the mapping (per phase, group size on each dimension) or a LIBRA communicator",
        )
    full = tuple(d.npus for d in network.dims)
    group = getattr(header, "model_parallel_npu_group", None)
    if workload.named_groups:
        return _plan_mapping(workload, network, source)
    if policy == "HYBRID_CUSTOMIZED":
        raise InputError(
            source,
            "mapping",
            "HYBRID_CUSTOMIZED gives a policy per layer, which a per-phase mapping cannot express",
            "give the mapping explicitly",
        )
    if group is None and policy in _WHOLE:
        m = Mapping(forward=full, input_grad=full, weight_grad=full)
        return m, f"every phase spans all {math.prod(full)} NPUs (policy {policy})"
    if group is None and policy == "DATA":
        m = Mapping(forward=full, input_grad=full, weight_grad=full)
        return m, "data parallel over all NPUs (policy DATA)"
    if group is None and policy == "HYBRID_DATA_MODEL":
        dp = lowest_dims_group(network, network.dims[0].npus, source)
        mp = tuple(p // g for p, g in zip(full, dp, strict=True))
        m = Mapping(forward=mp, input_grad=mp, weight_grad=dp)
        return (
            m,
            f"data parallel on dimension 0, model parallel {list(mp)} on the rest (policy "
            f"{policy})",
        )
    size = group if group is not None else network.dims[0].npus
    mp = lowest_dims_group(network, size, source)
    dp = tuple(p // g for p, g in zip(full, mp, strict=True))
    m = Mapping(forward=mp, input_grad=mp, weight_grad=dp)
    return m, (
        f"model parallel group of {size} NPUs {list(mp)} on the lowest dimensions, data "
        f"parallel {list(dp)} "
        f"on the rest (policy {policy})"
    )
