"""A co-design space: one model on N NPUs, the training-plan choices, the network family (one fixed
network or the shapes of a shape space), how the plan's groups map onto a network, the cost model,
the design constraints and the objective. :func:`hieropt.studies.codesign.codesign` searches it
exactly; :func:`hieropt.io.codesign.load_codesign` reads it from TOML.

Mapping rules: ``lowest`` places the groups on the lowest dimensions first in Megatron-LM's rank
order (tp, the data-parallel group(s), pp; :func:`hieropt.model.groups.place_lowest`), one candidate
per (plan, shape); ``all_placements`` tries every placement of the groups on the dimensions
(:func:`hieropt.model.groups.placements`), one candidate each.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool, field_validator, model_validator

from ...names import GROUP_BANDWIDTHS, OBJECTIVES
from ...spec import CostModel, Network
from ...spec.base import Frozen
from ...spec.cluster import Cluster
from ...spec.space import Level, constraints_problem
from .params import LLMParams

CODESIGN_RULES = ("lowest", "all_placements")


class _Frozen(Frozen):
    """Immutable and strict as every input model (:class:`hieropt.spec.base.Frozen`: an unknown key
    is an error, a number given as text or as true / false is an error, never converted)."""


_Degree = Annotated[int, Field(ge=1)]


class PlanChoices(_Frozen):
    """The values each plan field may take (each a non-empty list of distinct values, degrees >= 1;
    ``dp`` follows from N / (tp cp pp), cp the model file's); the model file's plan gives every
    other field (global batch, vocabulary padding, ...). A co-design space file's ``[plans]`` table
    takes a field it omits from the model file's plan (:func:`hieropt.io.codesign.load_codesign`);
    built directly, an omitted field takes the default below. ``schedule`` (``1f1b`` and / or
    ``interleaved``) follows from v (1f1b: v = 1, interleaved: v >= 2); listed, it keeps the
    combinations of those schedules (None: every value of ``virtual_stages``).

    Raises (pydantic.ValidationError): an empty list, a degree < 1, a ZeRO stage outside 0..3, a
    value listed twice (two candidates would share one id and one would hide the other's row)."""

    tp: tuple[_Degree, ...] = Field(default=(1,), min_length=1)
    pp: tuple[_Degree, ...] = Field(default=(1,), min_length=1)
    ep: tuple[_Degree, ...] = Field(default=(1,), min_length=1)
    zero_stage: tuple[Annotated[int, Field(ge=0, le=3)], ...] = Field(default=(0,), min_length=1)
    recompute: tuple[Literal["none", "selective", "full"], ...] = Field(
        default=("none",), min_length=1
    )
    sequence_parallel: tuple[StrictBool, ...] = Field(default=(False,), min_length=1)
    virtual_stages: tuple[_Degree, ...] = Field(default=(1,), min_length=1)
    micro_batch_size: tuple[_Degree, ...] = Field(default=(1,), min_length=1)
    overlap_grad_reduce: tuple[StrictBool, ...] = Field(default=(False,), min_length=1)
    schedule: tuple[Literal["1f1b", "interleaved"], ...] | None = Field(default=None, min_length=1)

    @field_validator("schedule", "recompute", mode="before")
    @classmethod
    def _names_any_case(cls, v: Any) -> Any:
        """Schedule and recompute names in any case (``1F1B``), as a plan's."""
        return [x.lower() if isinstance(x, str) else x for x in v] if isinstance(v, list) else v

    @field_validator("*")
    @classmethod
    def _distinct(cls, v: tuple | None) -> tuple | None:
        twice = next((x for i, x in enumerate(v) if x in v[:i]), None) if v is not None else None
        if twice is not None:
            raise ValueError(f"{twice!r} is listed twice; fix: list each value once")
        return v

    def consistent(self, choice: dict) -> bool:
        """Whether a combination's virtual stages fit the listed schedules: ``1f1b`` takes v = 1,
        ``interleaved`` v >= 2 (the schedule follows from v; None: every v)."""
        return (
            self.schedule is None
            or ("interleaved" if choice["virtual_stages"] > 1 else "1f1b") in self.schedule
        )

    @property
    def combinations(self) -> int:
        """Number of combinations: the product of the list lengths, less those whose virtual stages
        no listed schedule takes (:meth:`consistent`)."""
        n = 1
        for k, v in self.model_dump().items():
            if k not in ("schedule", "virtual_stages"):
                n *= len(v)
        return n * sum(self.consistent({"virtual_stages": v}) for v in self.virtual_stages)


class CodesignSpace(_Frozen):
    """Everything a joint plan-and-network search needs (module docstring).

    Attributes:
        name: the space's name.
        base: the model, NPU (HBM), precision and the plan fields the choices do not vary.
        npus: N, or several cluster sizes (distinct, a list in the file): the cluster size is then a
            dimension of the search, every plan and shape of each size a candidate, and the answer
            says how many NPUs to buy (:attr:`sizes`).
        plans: the plan choices.
        network: one fixed network (its NPUs multiply to N), or None with ``levels``: every shape of
            the shape space (``levels``, ``min_dims``, ``max_dims``, ``switch_only_at_top``, as
            :class:`hieropt.spec.space.ShapeSpace`).
        mapping_rule: ``lowest`` or ``all_placements``.
        cost, constraints (text, ``top`` = last dimension), objective, max_iteration_time_ns,
        max_network_cost_usd,
            dimension_mode: as in instance files.
        group_bandwidth: how a group spanning part of a dimension is priced, as in instance files
            (default ``links``: the links it reaches there).
        prune: skip candidates whose proven lower bound cannot beat the incumbent of their
            cluster size (exact; False solves all).
        custom_layouts: also search plans whose pipeline needs a custom layout
            (:func:`hieropt.studies.codesign.plans.custom_layout_reason`: interleaved chunks of
            unequal layer counts, or middle stages of unequal counts; Megatron-core states them
            with ``--pipeline-model-parallel-layout``); False (default): only plans the standard
            flags state, counted invalid with that reason otherwise.
        nic_gbps: GB/s of one scale-out NIC port; nic_npus: the NPUs whose NICs are bought together
            (1: whole NICs per NPU; a node's NPU count: per node). Each row's ``nics`` =
            :func:`hieropt.spec.space.nic_count` over the scale-out dimensions, those of the last
            level's cost class (of the last dimension's for a fixed network).
        tokens, cluster: the run's token budget and the whole cluster's cost (as in instance files;
            objective ``min_run_cost`` needs ``cluster``).
        max_total_capex_usd: a cap on the whole cluster's capex, $ (needs ``cluster`` with its
            capex): each cluster size's network gets what its accelerators, servers, racks and
            facility leave, a network budget on that size's candidates (with
            ``max_network_cost_usd``, the tighter), and a size whose cluster alone costs it all is
            infeasible (:func:`hieropt.studies.codesign.solve.network_cap`).
    """

    name: str = Field(min_length=1)
    base: LLMParams
    npus: Annotated[int, Field(ge=2)] | tuple[Annotated[int, Field(ge=2)], ...]
    plans: PlanChoices = PlanChoices()
    network: Network | None = None
    levels: tuple[Level, ...] = ()
    min_dims: int = Field(default=2, ge=1)
    max_dims: int = Field(default=4, ge=1, le=8)
    switch_only_at_top: StrictBool = True
    mapping_rule: Literal["lowest", "all_placements"] = "lowest"
    cost: CostModel
    constraints: tuple[str, ...] = ()
    objective: Literal[OBJECTIVES] = "performance"
    max_iteration_time_ns: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_network_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    dimension_mode: Literal["concurrent", "sequential"] = "concurrent"
    group_bandwidth: Literal[GROUP_BANDWIDTHS] = "links"
    prune: StrictBool = True
    custom_layouts: StrictBool = False
    nic_gbps: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    tokens: float | None = Field(default=None, gt=0, le=1e18, allow_inf_nan=False)
    cluster: Cluster | None = None
    nic_npus: int = Field(default=1, ge=1)
    max_total_capex_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)

    @property
    def sizes(self) -> tuple[int, ...]:
        """The cluster sizes searched (NPUs), ascending."""
        return (self.npus,) if isinstance(self.npus, int) else tuple(sorted(self.npus))

    @property
    def tokens_per_iteration(self) -> int:
        """Tokens one iteration consumes: the global batch (fixed by the model file's plan) times
        the sequence length."""
        return self.base.plan.global_batch_size * self.base.model.sequence_length

    def tokens_problem(self, tokens: float | None) -> str | None:
        """Why ``tokens`` cannot be a run's token budget: fewer than one iteration's (a run is
        whole iterations); None when it can (or is None)."""
        if tokens is None or tokens >= self.tokens_per_iteration:
            return None
        return (f"{tokens:,.0f} tokens is fewer than one iteration of {self.base.workload_name} "
                f"({self.tokens_per_iteration:,} tokens per iteration)")

    @property
    def scale_out_class(self) -> str:
        """The cost class of the scale-out dimensions: the last level's (shape space) or the last
        dimension's."""
        return self.levels[-1].cost_class if self.levels else self.network.dims[-1].cost_class

    @model_validator(mode="after")
    def _network_family(self) -> CodesignSpace:
        if (self.network is None) == (not self.levels):
            raise ValueError(
                "network: give either one network ([network] dims) or a shape space "
                "([[levels]]); fix: "
                "keep one of them"
            )
        if not isinstance(self.npus, int) and (
            not self.npus or len(set(self.npus)) != len(self.npus)
        ):
            raise ValueError(
                f"npus: {list(self.npus)} is not a list of distinct NPU counts; fix: list "
                "each cluster "
                "size once, e.g. npus = [8192, 16384]"
            )
        if self.network is not None and (
            not isinstance(self.npus, int) or self.network.npus_total != self.npus
        ):
            raise ValueError(
                f"network: its dimensions hold {self.network.npus_total} NPUs, not npus = "
                f"{self.npus}; "
                "fix: make them multiply to npus (one fixed network has one cluster size: "
                "give several "
                "sizes with a shape space, [[levels]])"
            )
        if self.objective == "min_cost" and self.max_iteration_time_ns is None:
            raise ValueError(
                "max_iteration_time_ns: missing for objective min_cost; fix: give the time "
                "target in ns"
            )
        if self.objective == "min_run_cost" and self.cluster is None:
            raise ValueError(
                "cluster: objective min_run_cost needs the cluster's cost; fix: add [cluster] with "
                "usd_per_npu_hour, or accelerator_usd and amortisation_years"
            )
        if self.max_total_capex_usd is not None and self.cluster is None:
            raise ValueError(
                "max_total_capex_usd: a cap on the whole cluster's capex needs the cluster's cost; "
                "fix: add [cluster] with accelerator_usd and amortisation_years, or give a network "
                "budget (max_network_cost_usd)"
            )
        if self.objective == "min_max_regret":
            raise ValueError(
                "objective: min_max_regret compares several workloads on one fabric and a "
                "co-design "
                "space has one model; fix: use performance, performance_per_cost, min_cost or "
                "min_run_cost"
            )
        if self.min_dims > self.max_dims:
            raise ValueError(
                f"dims: min {self.min_dims} exceeds max {self.max_dims}; fix: give [min, max]"
            )
        if (problem := self.tokens_problem(self.tokens)) is not None:
            raise ValueError(f"tokens: {problem}; fix: give the run's whole token budget, e.g. "
                             "tokens = 15e12")
        # (a size it does not divide is skipped by the search with a note: an error only for all)
        if all(n % self.nic_npus for n in self.sizes):
            sizes = ", ".join(f"{n:,}" for n in self.sizes)
            raise ValueError(
                f"nic_npus: {self.nic_npus} does not divide the {sizes} NPUs; fix: give the NPUs "
                "of one node (whose NICs are bought together), or 1, or cluster sizes it divides"
            )
        classes = [
            (f"levels[{i}]", lv.cost_class, "Switch" in lv.blocks)
            for i, lv in enumerate(self.levels)
        ] + [
            (f"network.dims[{d}]", dim.cost_class, dim.block == "Switch")
            for d, dim in enumerate(self.network.dims if self.network is not None else ())
        ]
        # as the shape space and the instance check (before the search)
        for where, name, switch in classes:
            cc = self.cost.classes.get(name)
            if cc is None:
                raise ValueError(
                    f"{where}.cost_class: unknown cost class {name!r}; fix: use one of "
                    f"{', '.join(sorted(self.cost.classes))} or add it to the cost model"
                )
            if switch and (cc.switch_usd_per_gbps is None or cc.nic_usd_per_gbps is None):
                raise ValueError(
                    f"cost.{name}: {where} has a Switch but its cost class has no switch or "
                    "NIC price; "
                    "fix: add switch_usd_per_gbps and nic_usd_per_gbps"
                )
        return self

    @model_validator(mode="after")
    def _constraints(self) -> CodesignSpace:
        """Refuse a constraint text that does not parse for the fixed network's dimension count,
        or for every count from ``min_dims`` to ``max_dims`` of a shape space
        (:func:`hieropt.spec.space.constraints_problem`)."""
        counts = (
            (self.network.n_dims,)
            if self.network is not None
            else range(self.min_dims, self.max_dims + 1)
        )
        if (problem := constraints_problem(self.constraints, counts)) is not None:
            raise ValueError(problem)
        return self


__all__ = ["PlanChoices", "CodesignSpace", "CODESIGN_RULES"]
