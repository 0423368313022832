"""Frozen, validated statement of a problem instance (pydantic v2 models).

Units are in the field names: ``*_ns`` nanoseconds, ``*_bytes`` bytes, ``*_gbps`` GB/s per NPU per
dimension with 1 GB = 1e9 bytes (so 1 GB/s = 1 byte/ns), ``*_usd_per_gbps`` dollars per GB/s of
per-NPU bandwidth.

Every model forbids unknown keys (a typo is an error, never a silent default) and is immutable.
Cross-field rules (group sizes fit the dimensions, cost classes exist, constraint widths match) live
on :class:`Instance`; their messages start with the field path and end with the fix, so readers can
turn them into one-line :class:`hieropt.errors.InputError` messages.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..cache import Same, current
from ..names import GROUP_BANDWIDTHS, OBJECTIVES, TRAINING_LOOPS, close_name
from .base import Frozen, NonNegFloat, check_max_regret
from .cluster import Cluster
from .design import DesignMatrix
from .mapping import (
    Mapping,
    check_job,
    check_mapping,
    check_npus,
    check_stages,
    check_tiling,
)
from .network import Network
from .ranges import PRICE_RANGE, WEIGHT_RANGE, check_bound, check_design, check_row
from .training import tokens_problem
from .workload import StepSchedule, Workload


class CostClass(Frozen):
    """Prices of one cost class in $ per GB/s of per-NPU bandwidth (LIBRA cost model), each in
    :data:`PRICE_RANGE`, except the switch and NIC prices, which may also be 0 (a switch bundled
    with the servers, as ``[cluster]`` and a catalog take it; a scale-up domain such as NVLink has
    no NIC). Switch dimensions also pay for the switch and the NIC. The model sees only each
    dimension's sum of prices (:func:`hieropt.model.cost.unit_costs`), which the link price
    (>= 1e-12) keeps positive, so a switch or NIC price of 0 leaves every cost column priced and
    the LP bounded as before."""

    link_usd_per_gbps: float = Field(ge=PRICE_RANGE[0], le=PRICE_RANGE[1])
    switch_usd_per_gbps: float | None = Field(default=None, ge=0.0, le=PRICE_RANGE[1])
    nic_usd_per_gbps: float | None = Field(default=None, ge=0.0, le=PRICE_RANGE[1])


class CostModel(Frozen):
    """Cost classes by name (e.g. ``InterChiplet``, ``InterPod``)."""

    classes: dict[str, CostClass] = Field(min_length=1)


class LinearConstraint(Frozen):
    """``coefficients . bw  sense  rhs`` (bw: GB/s per NPU; :func:`.ranges.check_row`); ``text``: as
    written."""

    coefficients: tuple[float, ...]
    sense: Literal["<=", ">=", "=="]
    rhs: float = Field(allow_inf_nan=False)
    text: str = ""

    @field_validator("coefficients")
    @classmethod
    def _finite(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if not all(math.isfinite(c) for c in v):
            raise ValueError("coefficients must be finite numbers")
        if not any(c != 0 for c in v):
            raise ValueError("the constraint has no bandwidth term; fix: name at least one bw[d]")
        return v

    _representable = model_validator(mode="after")(check_row)


class Bound(Frozen):
    """Per-dimension bandwidth bounds, GB/s per NPU (``upper_gbps = None``: none;
    :func:`.ranges.check_bound`)."""

    lower_gbps: NonNegFloat = 0.0
    upper_gbps: float | None = Field(default=None, gt=0, allow_inf_nan=False)

    _representable = field_validator("lower_gbps", "upper_gbps")(check_bound)

    @model_validator(mode="after")
    def _ordered(self) -> Bound:
        if self.upper_gbps is not None and self.upper_gbps < self.lower_gbps:
            raise ValueError(
                f"lower_gbps {self.lower_gbps} exceeds upper_gbps {self.upper_gbps}; fix: swap or "
                "widen the bounds"
            )
        return self


class Pipeline(Frozen):
    """Pipeline parallelism for the ``pipeline`` training loop: the workload is ONE stage's layers
    for one micro-batch; ``p2p_bytes`` of activations go to the next stage (and as many gradient
    bytes come back) per micro-batch over dimension ``p2p_dim``. The network holds every stage: a
    workload that states its degrees (:attr:`hieropt.spec.Workload.stated_degrees`) has them
    multiply to N / ``stages`` (checked by the instance)."""

    stages: int = Field(ge=2)
    microbatches: int = Field(ge=1)
    p2p_bytes: NonNegFloat
    p2p_dim: int = Field(ge=0)


class Job(Frozen):
    """A further workload sharing the fabric: its mapping and its weight in the objective (e.g.
    share of hours)."""

    workload: Workload
    mapping: Mapping
    weight: float = Field(ge=WEIGHT_RANGE[0], le=WEIGHT_RANGE[1], allow_inf_nan=False)


def ratios_problem(ratios: Any, n_dims: int) -> str | None:
    """What is wrong with one named vector of an instance's ``heuristic_ratios`` (bandwidth ratios,
    one per dimension, unitless) for a network of ``n_dims`` dimensions, in words, or None when it
    is valid: ``3 ratios for 4 dimensions``, a negative or non-finite ratio, every ratio 0. The one
    check of both the instance file's reader and ``hieropt compare``."""
    r = list(ratios)
    if len(r) != n_dims:
        return f"{len(r)} ratios for {n_dims} dimensions"
    if not all(math.isfinite(x) and x >= 0 for x in r):
        return f"ratios {r} must be finite numbers >= 0"
    if not any(x > 0 for x in r):
        return "every ratio is 0"
    return None


def ratios_fix(n_dims: int) -> str:
    """The fix for a :func:`ratios_problem` of a network of ``n_dims`` dimensions."""
    return f"give {n_dims} finite ratios >= 0, at least one positive, one per dimension"


class Instance(Frozen):
    """A complete problem: network, workload, mapping, cost model, design constraints, objective,
    training loop.

    ``bounds`` has one entry per dimension (default: ``0 <= bw[d]``, no upper bound). Objectives:
    ``performance`` (min iteration time), ``performance_per_cost`` (min iteration time x network
    cost, LIBRA's PerfPerCostOpt), ``min_cost`` (cheapest network with iteration time <=
    ``max_iteration_time_ns``, or, with ``max_regret``, the cheapest on which every workload is
    within ``max_regret`` (0.05 = 5 %) of its own optimum), ``min_max_regret`` (several workloads:
    minimise the largest T_w(B) / T_w*, T_w* each workload's own optimum), ``min_run_cost`` (the $
    of one training run: run time x the cluster's cost rate, which needs ``cluster``;
    :mod:`hieropt.solvers.routes`). ``tokens``: the token budget of one run; ``cluster``: the
    whole cluster's cost and power (:class:`hieropt.spec.cluster.Cluster`). ``max_network_cost_usd``
    caps the network cost ($) under any objective; ``max_iteration_time_ns`` caps the iteration time
    (ns). Raises pydantic's ``ValidationError`` (turned into :class:`hieropt.errors.InputError` by
    the readers) when the parts disagree.

    Training loops (formulas in :mod:`hieropt.model.timing`): ``no_overlap`` (LIBRA),
    ``tp_dp_overlap``, ``tp_dp_overlap_cross``, ``recompute``, ``pipeline`` (needs ``pipeline``),
    ``step`` (needs ``step``). ``dimension_mode``: dimensions of a collective work ``concurrent`` ly
    (max over dimensions, LIBRA) or ``sequential`` ly (sum). ``collectives_in_flight``: None
    (default) lets collectives of the overlap loops (and of ``step`` with ``overlap_dp``) run at the
    same time, sharing each dimension's bandwidth; 1 runs one collective at a time (ASTRA-sim's
    behaviour). ``chunks``: collectives are split into this many chunks, each paying the per-step
    latency (latency x chunks; bandwidth terms unchanged). Several workloads:
    ``workload``/``mapping`` with ``workload_weight`` plus ``more_workloads``; the time objective is
    the weighted sum of their iteration times.
    """

    name: str
    network: Network
    workload: Workload
    mapping: Mapping
    cost: CostModel
    constraints: tuple[LinearConstraint, ...] = ()
    bounds: tuple[Bound, ...] | None = None
    objective: Literal[OBJECTIVES]
    training_loop: Literal[TRAINING_LOOPS]
    pipeline: Pipeline | None = None
    step: StepSchedule | None = None
    dimension_mode: Literal["concurrent", "sequential"] = "concurrent"
    group_bandwidth: Literal[GROUP_BANDWIDTHS] | None = None
    """How a collective over a group that spans part of a dimension is priced: ``links`` (the links
    of the NPU the group reaches there: a FullyConnected dimension of n NPUs gives a group of p
    (p - 1) / (n - 1) of the NPU's bandwidth, a Ring 1/2 for a contiguous path and 1/s or 1/(2 s)
    for a group of stride s, a Switch all of it; :func:`hieropt.model.algorithms.group_links`) or
    ``whole`` (the NPU's whole bandwidth, LIBRA's convention). None: ``links`` for an LLM plan's
    workload, ``whole`` for the others (:func:`hieropt.model.traffic.bandwidth_rule`)."""
    collectives_in_flight: Literal[1] | None = None
    chunks: int = Field(default=1, ge=1)
    workload_weight: float = Field(
        default=1.0, ge=WEIGHT_RANGE[0], le=WEIGHT_RANGE[1], allow_inf_nan=False
    )
    more_workloads: tuple[Job, ...] = ()
    mapping_note: str | None = None
    max_iteration_time_ns: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_network_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_regret: float | None = None
    heuristic_ratios: dict[str, tuple[float, ...]] | None = None
    """Named vendor-style bandwidth ratios, one per dimension, for ``hieropt compare``
    (hieropt.studies.heuristics)."""
    tokens: float | None = Field(default=None, gt=0, le=1e18, allow_inf_nan=False)
    """Token budget of one training run (tokens), for the time, energy and $ of a run
    (hieropt.model.run)."""
    cluster: Cluster | None = None
    """The whole cluster's cost and power beyond the network
    (:class:`hieropt.spec.cluster.Cluster`)."""
    weights: Literal["plain", "hours", "relative"] = "plain"
    """``hours``: the workloads' weights are their shares of the cluster's hours (summing to 1);
    every command turns each into h_w / T_w*, T_w* the workload's own optimum
    (:func:`hieropt.solvers.portfolio.hours_weighted`), so that the objective is the hour-weighted
    relative iteration time sum_w h_w T_w(B) / T_w* (dimensionless, 1 when every workload runs at
    its own optimum). ``relative``: those weights h_w / T_w* (1/ns), already computed. The time
    model refuses ``hours`` (:attr:`relative_time`)."""

    @field_validator("max_regret")
    @classmethod
    def _regret_fraction(cls, v: float | None) -> float | None:
        if v is not None and (why := check_max_regret(v)) is not None:
            raise ValueError(why)
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Instance:
        D = self.network.n_dims
        passed = current().table("instance checked", 4096)  # (frozen: they pass again)
        if passed.get(key := (Same(self.mapping), Same(self.network))) is None:
            check_mapping(self.mapping, self.network, "mapping")
            passed.put(key, True)
        mode = self.dimension_mode
        exact = self.training_loop != "pipeline"  # (its mapping is one stage's)
        if exact:
            check_npus(self.workload, self.network.npus_total)
        npus = self._job_npus(exact)
        if passed.get(key := (Same(self.mapping), Same(self.workload), mode, npus)) is None:
            check_job(self.workload, self.mapping, "mapping", mode, npus)  # (not the network's)
            passed.put(key, True)
        if passed.get(
            key := (Same(self.mapping), Same(self.workload), Same(self.network), exact)
        ) is None:
            check_tiling(self.workload, self.mapping, self.network, "mapping", exact)
            passed.put(key, True)
        for j, job in enumerate(self.more_workloads):
            label = f"more_workloads[{j}].mapping"
            check_mapping(job.mapping, self.network, label)
            if exact:
                check_npus(job.workload, self.network.npus_total)
            check_job(job.workload, job.mapping, label, self.dimension_mode, npus)
            check_tiling(job.workload, job.mapping, self.network, label, exact)
        self._check_schedule(D)
        self._check_prices()
        self._check_constraint_sizes(D)
        self._check_portfolio_settings()
        training = None if self.more_workloads else self.workload.training  # (a run's facts)
        if (why := tokens_problem(self.tokens, training)) is not None:
            raise ValueError(
                f"tokens: {why}; fix: give the run's token budget, at least one iteration's"
            )
        if self.bounds is not None and len(self.bounds) != D:
            raise ValueError(
                f"bounds: {len(self.bounds)} entries for {D} dimensions; fix: give one per "
                "dimension"
            )
        check_design(self.constraints, self.bounds)
        return self

    def _job_npus(self, exact: bool) -> int | None:
        """The NPUs a job's degrees must multiply to: the network's, or under the pipeline loop
        one stage's (None when the stage count does not divide the network: refused by
        :meth:`_check_schedule`)."""
        N = self.network.npus_total
        if exact:
            return N
        stages = self.pipeline.stages if self.pipeline is not None else 0
        return N // stages if stages and N % stages == 0 else None

    def _check_schedule(self, D: int) -> None:
        """The pipeline and step loops come with their sections ([pipeline], [step]) and only they
        do; a workload with a step schedule (an LLM plan) runs on loop ``step`` only; the
        pipeline's p2p dimension exists (0 .. ``D`` - 1) and its stages fit every job.
        Raises ValueError naming the field and the fix."""
        if (self.training_loop == "pipeline") != (self.pipeline is not None):
            raise ValueError(
                "pipeline: the pipeline loop needs [pipeline] (stages, microbatches, p2p_bytes, "
                "p2p_dim) and only it uses them; fix: set both or neither"
            )
        if (self.training_loop == "step") != (self.step is not None):
            raise ValueError(
                "step: the step loop needs [step] (microbatches, stages, virtual_stages, "
                "overlap_dp) "
                "and only it uses them; fix: set both or neither"
            )
        plans = [w.name for w in (self.workload, *(j.workload for j in self.more_workloads))
                 if w.schedule is not None]
        if plans and self.training_loop != "step":  # (LIBRA's loops: one micro-batch, one stage)
            raise ValueError(
                f"training_loop: {self.training_loop!r} times one pass of the layers of LLM plan "
                f"{plans[0]!r} (one micro-batch of one stage), not its iteration; fix: use "
                'training_loop = "step"'
            )
        if self.pipeline is not None and self.pipeline.p2p_dim >= D:
            raise ValueError(
                f"pipeline.p2p_dim: dimension {self.pipeline.p2p_dim} does not exist; fix: use 0.."
                f"{D - 1}"
            )
        if self.pipeline is not None:
            for job in self.jobs:
                check_stages(job.workload, self.pipeline.stages, self.network.npus_total)

    def _unknown_class(self, d: int, name: str) -> str:
        """The message for dimension ``d``'s cost class ``name`` that the cost model lacks: a
        priced class no dimension uses whose name is close to it (:func:`hieropt.names.close_name`)
        is named as the likely misspelling, else the classes there are."""
        used = {dim.cost_class for dim in self.network.dims}
        unused = [c for c in self.cost.classes if c not in used]
        close = close_name(name, unused)
        head = f"network.dims[{d}].cost_class: unknown cost class '{name}'; fix: "
        if close:
            return (head + f"use '{close}' (priced, and used by no dimension) or rename the "
                    f"cost model's '{close}' to '{name}'")
        return head + (f"use one of {', '.join(sorted(self.cost.classes))} or add it to the cost "
                       "model")

    def _check_prices(self) -> None:
        """Every dimension's cost class exists, and a Switch dimension's class has switch and NIC
        prices. Raises ValueError naming the field and the fix."""
        for d, dim in enumerate(self.network.dims):
            cc = self.cost.classes.get(dim.cost_class)
            if cc is None:
                raise ValueError(self._unknown_class(d, dim.cost_class))
            if dim.block == "Switch" and (
                cc.switch_usd_per_gbps is None or cc.nic_usd_per_gbps is None
            ):
                prices = (("Switch", "switch_usd_per_gbps", cc.switch_usd_per_gbps),
                          ("Nic", "nic_usd_per_gbps", cc.nic_usd_per_gbps))
                missing = [(n, key) for n, key, v in prices if v is None]
                keys = " and ".join(f"{key} ({n} in a LIBRA cost YAML)" for n, key in missing)
                lacks = "neither" if len(missing) == 2 else f"no {missing[0][0]} price"
                raise ValueError(
                    f"cost.{dim.cost_class}: dimension {d} is a Switch, which needs both a Switch "
                    f"and a Nic price, and its cost class has {lacks}; fix: add {keys}, $ per "
                    f"GB/s, to cost class '{dim.cost_class}' (a Nic price of 0 for a domain "
                    "without NICs, e.g. NVLink)"
                )

    def _check_constraint_sizes(self, D: int) -> None:
        """Every design constraint has one coefficient per dimension (``D``). Raises ValueError
        naming the constraint and the fix."""
        for i, c in enumerate(self.constraints):
            if len(c.coefficients) != D:
                raise ValueError(
                    f"constraints[{i}] '{c.text}': has {len(c.coefficients)} coefficients for {D} "
                    f"dimensions; fix: name only bw[0] .. bw[{D - 1}]"
                )

    def _check_portfolio_settings(self) -> None:
        """The time target, ``max_regret`` and the objective agree: min_cost needs a target or
        max_regret, a portfolio objective takes no time target, max_regret only min_cost. Raises
        ValueError naming the field and the fix."""
        if (
            self.objective == "min_cost"
            and self.max_iteration_time_ns is None
            and self.max_regret is None
        ):
            raise ValueError(
                "max_iteration_time_ns: missing for objective min_cost (the cheapest "
                "network that trains "
                "an iteration within the target); fix: give the time target in ns, or max_regret"
            )
        if self.max_iteration_time_ns is not None and (self.max_regret is not None
                                                       or self.objective == "min_max_regret"):
            raise ValueError(
                "max_iteration_time_ns: a portfolio objective (min_max_regret, or min_cost with "
                "max_regret) bounds each workload against its own optimum, not the weighted "
                "time; fix: "
                "remove max_iteration_time_ns or the portfolio setting"
            )
        if self.max_regret is not None and self.objective != "min_cost":
            raise ValueError(
                "max_regret: only the min_cost objective takes it (the cheapest network with every "
                'workload within max_regret of its own optimum); fix: set objective = "min_cost" '
                "or remove max_regret"
            )

    def summary_dict(self) -> dict[str, Any]:
        """The instance echoed into JSON output (the ``instance`` of ``--json``; workloads
        summarised by name and layer count)."""
        return {
            "name": self.name,
            "objective": self.objective,
            "training_loop": self.training_loop,
            "network": [d.model_dump(mode="json") for d in self.network.dims],
            "npus": self.network.npus_total,
            "workload": {
                "name": self.workload.name,
                "layers": len(self.workload.layers),
                "policy": self.workload.policy,
                "stages": [w.name for w in self.workload.stages],
            },
            "mapping": self.mapping.model_dump(mode="json"),
            "cost": {k: v.model_dump(mode="json") for k, v in self.cost.classes.items()},
            "mapping_note": self.mapping_note,
            "more_workloads": [
                {
                    "name": j.workload.name,
                    "layers": len(j.workload.layers),
                    "weight": j.weight,
                    "mapping": j.mapping.model_dump(mode="json"),
                }
                for j in self.more_workloads
            ],
            "workload_weight": self.workload_weight,
            "dimension_mode": self.dimension_mode,
            "group_bandwidth": self.group_bandwidth,
            "collectives_in_flight": self.collectives_in_flight,
            "chunks": self.chunks,
            "pipeline": self.pipeline.model_dump(mode="json") if self.pipeline else None,
            "constraints": [c.text for c in self.constraints],
            "max_iteration_time_ns": self.max_iteration_time_ns,
            "max_network_cost_usd": self.max_network_cost_usd,
            "bounds": [b.model_dump(mode="json") for b in self.bounds_or_default],
            "tokens": self.tokens,
            "cluster": None if self.cluster is None else self.cluster.given(),
        }

    @property
    def relative_time(self) -> bool:
        """True when the time objective is the hour-weighted relative iteration time
        sum_w h_w T_w(B) / T_w* (weights ``hours`` or ``relative``): a dimensionless ratio,
        :data:`hieropt.units.RELATIVE_UNIT`, not ns."""
        return self.weights != "plain"

    def require_resolved_weights(self) -> None:
        """Refuse weights that are still shares of hours (``weights == "hours"``): a weighted time
        needs them turned into h_w / T_w* first (:func:`hieropt.solvers.portfolio.hours_weighted`,
        which every command calls); the raw shares would weight ns of workloads whose iterations
        differ by orders of magnitude, another objective than the one documented.

        Raises:
            InputError: the weights are shares of hours.
        """
        if self.weights == "hours":
            from ..errors import InputError

            raise InputError(
                "weights", None,
                "the workloads' weights are shares of hours (hours_share), not yet turned into "
                "share / own optimum",
                "pass the instance through hieropt.hours_weighted(instance) first (hieropt.solve, "
                "evaluate, pareto and compare do)")

    @property
    def jobs(self) -> tuple[Job, ...]:
        """Every workload on the fabric with its mapping and weight, the primary one first."""
        def build() -> tuple[Job, ...]:
            first = Job.model_construct(
                workload=self.workload, mapping=self.mapping, weight=self.workload_weight
            )
            return (first,) + self.more_workloads  # (fields validated on the instance already)

        return self.memo(
            "_jobs", (self.workload, self.mapping, self.workload_weight, self.more_workloads), build
        )

    @property
    def design_matrix(self) -> DesignMatrix:
        """The design constraints and bounds as arrays (:class:`DesignMatrix`), computed once per
        instance."""
        # (first by the fields themselves, a few identity tests: a solve reads the matrix about
        # ten times; then by the constraints, not their tuple, which validation copies)
        return self.memo("_design_fields", (self.constraints, self.bounds, self.network),
                         self._design_matrix_of_rows)

    def _design_matrix_of_rows(self) -> DesignMatrix:
        """:attr:`design_matrix` by the constraints and the bounds (the memo copies of an instance
        with the same rows share)."""
        bounds = self.bounds_or_default
        return self.memo("_design_matrix", (*self.constraints, bounds),
                         lambda: DesignMatrix.of(self.constraints, bounds))

    @property
    def bounds_or_default(self) -> tuple[Bound, ...]:
        """Per-dimension bounds, defaulting to ``0 <= bw[d]`` with no upper bound."""
        if self.bounds is not None:
            return self.bounds
        n = self.network.n_dims  # (one tuple per instance and its copies: the design matrix's key)
        # (one default bound, immutable, shared by the dimensions; its defaults need no validation)
        return self.memo("_default_bounds", (self.network,),
                         lambda: (Bound.model_construct(),) * n)
