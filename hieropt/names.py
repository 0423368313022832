"""The vocabulary: names of building blocks, phases, objectives, training loops, collective
algorithms, constraint senses and ASTRA-sim policies, as plain tuples, and the one "did you mean"
suggestion for a misspelled name (:func:`close_name`). Imports nothing, so the
command line builds its help from here without loading pydantic or numpy; :mod:`hieropt.spec`
re-exports every name."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

BLOCKS = ("Ring", "FullyConnected", "Switch")


PHASES = ("forward", "input_grad", "weight_grad")


OBJECTIVES = ("performance", "performance_per_cost", "min_cost", "min_max_regret", "min_run_cost")
CODESIGN_OBJECTIVES = tuple(o for o in OBJECTIVES if o != "min_max_regret")
"""The objectives of a co-design space (``hieropt codesign``): min_max_regret compares several
workloads on one fabric, and a co-design space has one model."""


TRAINING_LOOPS = (
    "no_overlap",
    "tp_dp_overlap",
    "tp_dp_overlap_cross",
    "recompute",
    "pipeline",
    "step",
)


ALGORITHMS = ("ring", "direct", "halving_doubling")


DEFAULT_ALGORITHM = {"Ring": "ring", "FullyConnected": "direct", "Switch": "direct"}
"""Collective algorithm of each building block unless a dimension names another (latency step
counts)."""


GROUP_ALGORITHMS = ("concurrent", "sequential", "flat_ring", "flat_tree", "flat_direct",
                    "nccl_ring")
"""How a group's collective runs over the dimensions it spans
(:func:`hieropt.model.traffic.unit_traffic`): ``concurrent`` hierarchical, every dimension at once
(LIBRA; ASTRA-sim with many chunks); ``sequential`` hierarchical, one dimension after another
(ASTRA-sim with one chunk); ``flat_ring`` / ``flat_tree`` one NCCL-style ring / double binary tree
over the whole group, paced by its slowest link; ``flat_direct`` every NPU to every other at once
(switch-style one-shot); ``nccl_ring`` one ring over the whole group as NCCL lays it out on nodes of
several NPUs (dimension 0 first, channels spread over every NPU's links: only the ring's edges that
cross a dimension load it)."""

GROUP_BANDWIDTHS = ("links", "whole")
"""How a collective over a group that spans part of a dimension is priced (an instance's
``group_bandwidth``, :func:`hieropt.model.algorithms.group_links`): ``links``, the links of the NPU
the group reaches there (ASTRA-sim's topologies); ``whole``, the NPU's whole bandwidth (LIBRA's
convention)."""


LLM_DEFAULT_ALGORITHM = "sequential"
"""The algorithm of an LLM plan's groups unless the plan names another (docs/llm-training.md: it
predicts measured Megatron-LM iterations best of the hierarchical forms)."""


SENSES = ("<=", ">=", "==")


POLICIES = (
    "DATA",
    "MODEL",
    "HYBRID_DATA_MODEL",
    "HYBRID_MODEL_DATA",
    "HYBRID_TRANSFORMER",
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
    "HYBRID_DLRM",
    "HYBRID_DLRM_ENHANCED",
    "HYBRID_CUSTOMIZED",
    "MICRO",
    "DISTRIBUTED_INFERENCE",
)
"""ASTRA-sim 1.0 header parallelism policies (line 1 of a workload file)."""


FWD_IN_BCKWD = "HYBRID_TRANSFORMER_FWD_IN_BCKWD"
"""The policy whose forward pass is recomputed in the backward pass (full activation
recomputation: training loop ``recompute``)."""
TRANSFORMER_POLICIES = ("HYBRID_TRANSFORMER", FWD_IN_BCKWD)
"""Policies whose header gives ``model_parallel_NPU_group: N`` (and, in SimAI's dialect,
ep/pp/vpp/ga/all_gpus)."""


DLRM_POLICIES = ("HYBRID_DLRM", "HYBRID_DLRM_ENHANCED")
"""Policies whose header gives the number of the last bottom-MLP layer."""


LAYER_POLICIES = tuple(p for p in POLICIES if p != "HYBRID_CUSTOMIZED")
"""Per-layer policies of a ``HYBRID_CUSTOMIZED`` workload (the 13th token of each layer line)."""


COLLECTIVE_SCOPES = ("EP", "DP_EP")
"""Collective scopes of SimAI's dialect, written as a suffix of the collective name
(``ALLTOALL_EP``, ``ALLGATHER_DP_EP``): the expert-parallel group, and the data-parallel x
expert-parallel group."""
PROVISION_OBJECTIVES = ("performance", "min_cost", "performance_per_cost", "min_power")
"""Objectives of ``hieropt provision`` (:func:`hieropt.solvers.provision.provision`), in its help
order."""
FLAGS = {
    "bw_gbps": "--bw",
    "points": "--points",
    "objective": "--objective",
    "rel_gap": "--gap",
    "max_iteration_time_ns": "--max-time",
    "max_network_cost_usd": "--budget",
    "budget_usd": "--budget",
    "max_cost_usd": "--budget",
    "max_power_w": "--max-power-w",
    "max_regret": "--max-regret",
    "workers": "--workers",
    "dask": "--dask",
    "levels": "--tradeoff",
    "out": "--out",
    "spacing": "--spacing",
    "fields": "--fit",
    "loss": "--loss",
    "binary": "--astra-sim",
    "constraints": "--constraint",
    "tolerance": "--tolerance",
    "tokens": "--tokens",
    "calibrate_on": "--calibrate-on",
    "calibrations": "--npu",
    "deadline_ns": "--deadline",
    "total_usd": "--total-budget",
    "max_total_capex_usd": "--total-budget",
}
"""Library argument -> the command-line flag that sets it: library errors name the argument, the
command line names its flag (:func:`hieropt.cli.common.fail` swaps an error's source for it), and
a message that names one in its text names both (:func:`with_flag`)."""


def with_flag(name: str, flag: str | None = None) -> str:
    """The library argument ``name`` with the flag that sets it on the command line,
    ``"max_iteration_time_ns (--max-time)"``: how a message names an input in its text or its
    source, true whether the library or the command line raised it (``flag``, for an argument
    whose name several commands' flags set, e.g. ``top``; else :data:`FLAGS`; ``name`` alone
    without a flag)."""
    flag = flag or FLAGS.get(name)
    return f"{name} ({flag})" if flag else name


SEND_GROUP_SEPARATOR = "@"
"""Between a pipeline send group's name and the dimensions one stage boundary crosses, in the named
group a send across that boundary runs on (``pp@0+1``: :mod:`hieropt.model.sends`)."""


def close_name(key: object, known: Iterable[object]) -> str | None:
    """The name in ``known`` (an iterable of names) a misspelled ``key`` most likely stands for, or
    None: the one suggestion every "did you mean" of hieropt makes.

    A name one edit away (a letter dropped, inserted, changed, or two neighbours swapped; case
    ignored; names of two letters or more) wins, which catches slips in short names that a
    similarity ratio misses (``tpp`` -> ``tp``, ``ffn_szie`` -> ``ffn_size``); else the most similar
    name with :func:`difflib.get_close_matches`' ratio >= 0.6 (``sequence_paralel`` ->
    ``sequence_parallel``). Ties go to the most similar (ratio), then to the longest shared
    head (``tpp`` -> ``tp``, not ``pp``), then to the first in ``known``. ``key`` itself is never
    suggested.
    """
    import difflib

    text = str(key)
    names = [n for n in dict.fromkeys(str(k) for k in known) if n != text]
    near = [n for n in names if _one_edit(text.lower(), n.lower())]
    if near:
        return max(near, key=lambda n: (difflib.SequenceMatcher(None, text, n).ratio(),
                                        _common_head(text.lower(), n.lower())))
    match = difflib.get_close_matches(text, names, n=1)
    return match[0] if match else None


def _common_head(a: str, b: str) -> int:
    """The number of leading letters ``a`` and ``b`` share."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are at most one edit apart: equal, or one letter dropped, inserted
    or changed, or two neighbouring letters swapped."""
    if a == b:
        return True
    if min(len(a), len(b)) < 2:  # (any one-letter name is one edit from any other)
        return False
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((i for i, (x, y) in enumerate(zip(short, long_[:len(short)], strict=True))
              if x != y), len(short))
    return short[i:] == long_[i + 1:]
