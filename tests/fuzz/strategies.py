"""Random valid instances for the fuzz suites (hypothesis), built only from the public spec classes.

A :class:`Spec` holds the raw draws at "magnitude 1" (bytes 1..3e11, bandwidth limits around a
random feasible point of 1..1000 GB/s per NPU (0.1..1e4 in a quarter of the draws), prices
0.01..1000 $ per GB/s) and builds the :class:`hieropt.spec.Instance` at any magnitude:
:meth:`Spec.instance` multiplies every byte count (collective sizes, pipeline transfers) and every
bandwidth limit (right-hand sides of the design rows, bounds) by ``bw_scale`` and every price by
``price_scale``. With B' = s B and m' = s m every m/B is unchanged, so the optimal iteration time
must not change, the optimal bandwidths must scale by s and every cost by s x price_scale (the
rescaling invariance).

Every instance is feasible and bounded by construction: the design rows all hold, with slack on the
inequalities, at the point ``x0`` (> 0 on every dimension), and one row with positive coefficients
on every dimension caps the bandwidth. Mappings use divisors of each dimension's NPU count (a group
must tile its dimension), and the workloads have no ASTRA-sim header, so no mapping can contradict
one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from hypothesis import strategies as st

from hieropt.spec import (
    PHASES,
    TRAINING_LOOPS,
    Bound,
    Collective,
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Job,
    Layer,
    LinearConstraint,
    Mapping,
    Network,
    Phase,
    Pipeline,
    StepSchedule,
    Workload,
)

NPUS = (2, 2, 3, 4, 4, 5, 6, 8, 8, 16, 32, 64, 128)
"""NPU counts per dimension (small ones more often)."""
KINDS = tuple(Collective)
SEQUENTIAL_KINDS = tuple(k for k in Collective if k is not Collective.P2P)
"""A point-to-point send over a group spanning several dimensions has no sequential form (the
instance refuses it)."""
CLASS_NAMES = ("A", "B", "C", "D")


def divisors(n: int) -> list[int]:
    """Divisors of ``n`` in increasing order (group sizes that tile a dimension of ``n`` NPUs)."""
    return [k for k in range(1, n + 1) if n % k == 0]


@dataclass(frozen=True)
class Row:
    """A design row ``sum coef * bw  sense  rhs`` at magnitude 1 (GB/s per NPU)."""

    coef: tuple[float, ...]
    sense: str
    rhs: float
    text: str


@dataclass(frozen=True)
class WorkloadSpec:
    """Layers as ((compute_ns, collective, size_bytes) x 3 phases), a mapping (3 group tuples) and a
    weight."""

    layers: tuple[tuple[tuple[float, str, float], ...], ...]
    groups: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    weight: float = 1.0


@dataclass(frozen=True)
class Spec:
    """The raw draws of one random instance (see the module docstring)."""

    # block, npus, cost class, latency ns, algorithm
    dims: tuple[tuple[str, int, str, float, str | None], ...]
    # class -> (link, switch, nic) $ per GB/s
    prices: dict[str, tuple[float, float | None, float | None]]
    workloads: tuple[WorkloadSpec, ...]
    loop: str
    mode: str
    rows: tuple[Row, ...]
    bounds: tuple[tuple[float, float | None], ...] | None
    x0: tuple[float, ...]
    pipeline: tuple[int, int, float, int] | None = None  # stages, microbatches, p2p bytes, p2p dim
    # microbatches, stages, virtual stages, overlap_dp (loop step)
    step: tuple[int, int, int, bool] | None = None
    objective: str = "performance"
    extra: dict = field(default_factory=dict)

    @property
    def D(self) -> int:
        """Number of dimensions."""
        return len(self.dims)

    def with_objective(self, objective: str) -> Spec:
        """The same draws with another objective."""
        return replace(self, objective=objective)

    def instance(self, bw_scale: float = 1.0, price_scale: float = 1.0, **overrides) -> Instance:
        """The instance at magnitude (``bw_scale``, ``price_scale``); ``overrides`` go to
        :class:`Instance` (e.g. ``max_iteration_time_ns``, ``max_network_cost_usd``)."""
        s = bw_scale
        dims = tuple(Dimension(block=b, npus=p, cost_class=c, latency_ns=lat, algorithm=alg)
                     for b, p, c, lat, alg in self.dims)
        used = {c for _, _, c, _, _ in self.dims}
        classes = {}
        for name, (link, sw, nic) in self.prices.items():
            if name in used:
                classes[name] = CostClass(
                    link_usd_per_gbps=link * price_scale,
                    switch_usd_per_gbps=None if sw is None else sw * price_scale,
                    nic_usd_per_gbps=None if nic is None else nic * price_scale,
                )

        def workload(w: WorkloadSpec, name: str) -> Workload:
            return Workload(
                name=name,
                layers=tuple(
                    Layer(
                        name=f"{name}l{i}",
                        **{
                            ph: Phase(compute_ns=c, collective=Collective(k), size_bytes=b * s)
                            for ph, (c, k, b) in zip(PHASES, phases, strict=True)
                        },
                    )
                    for i, phases in enumerate(w.layers)
                ),
            )

        first, *more = self.workloads
        pipeline = None
        if self.pipeline is not None:
            st_, mb, pb, pd = self.pipeline
            pipeline = Pipeline(stages=st_, microbatches=mb, p2p_bytes=pb * s, p2p_dim=pd)
        step = None
        if self.step is not None:
            mb, stages, v, ovl = self.step
            step = StepSchedule(microbatches=mb, stages=stages, virtual_stages=v, overlap_dp=ovl)
        rows = tuple(
            LinearConstraint(coefficients=r.coef, sense=r.sense, rhs=r.rhs * s, text=r.text)
            for r in self.rows
        )
        bounds = (
            None
            if self.bounds is None
            else tuple(
                Bound(lower_gbps=lo * s, upper_gbps=None if hi is None else hi * s)
                for lo, hi in self.bounds
            )
        )
        parts = dict(
            name="fuzz",
            objective=self.objective,
            training_loop=self.loop,
            dimension_mode=self.mode,
            network=Network(dims=dims),
            workload=workload(first, "w0"),
            mapping=Mapping(**dict(zip(PHASES, first.groups, strict=True))),
            workload_weight=first.weight,
            more_workloads=tuple(
                Job(
                    workload=workload(w, f"w{j + 1}"),
                    mapping=Mapping(**dict(zip(PHASES, w.groups, strict=True))),
                    weight=w.weight,
                )
                for j, w in enumerate(more)
            ),
            cost=CostModel(classes=classes),
            constraints=rows,
            bounds=bounds,
            pipeline=pipeline,
            step=step,
        )
        parts.update(overrides)
        return Instance(**parts)

    def x0_at(self, bw_scale: float = 1.0) -> np.ndarray:
        """The feasible point x0 at magnitude ``bw_scale`` (GB/s)."""
        return np.array(self.x0) * bw_scale

    def describe(self) -> str:
        """A compact, reproducible description (the draws as Python literals)."""
        return repr(self)


def _log_uniform(lo_exp: float, hi_exp: float, steps: int = 400):
    """10**u for u on a grid of ``steps`` points in [lo_exp, hi_exp] (round numbers, no
    subnormals)."""
    return st.integers(0, steps).map(
        lambda i: float(f"{10.0 ** (lo_exp + (hi_exp - lo_exp) * i / steps):.6g}")
    )


def _fraction(n: int = 1000):
    return st.integers(0, n).map(lambda i: i / n)


@st.composite
def specs(
    draw,
    max_dims: int = 4,
    max_layers: int = 4,
    loops=TRAINING_LOOPS,
    modes=("concurrent", "sequential"),
    max_extra_workloads: int = 2,
    latency: bool | None = None,
    floor: bool = False,
    objective: str = "performance",
) -> Spec:
    """A random :class:`Spec`. ``floor=True`` keeps every bandwidth away from zero (a positive lower
    bound or a ``>=`` row on every dimension, as the time x cost objective needs); ``latency``
    forces latency on/off."""
    dims, prices = _network(draw, max_dims, latency)
    D, npus = len(dims), [p for _, p, *_ in dims]
    loop = draw(st.sampled_from(loops))
    mode = draw(st.sampled_from(modes))
    first_weight = 1.0 if draw(st.booleans()) else draw(_log_uniform(-2, 2))
    workloads = [_workload_spec(draw, first_weight, npus, mode, max_layers)]
    for _ in range(draw(st.integers(0, max_extra_workloads))):
        workloads.append(_workload_spec(draw, draw(_log_uniform(-2, 2)), npus, mode, max_layers))
    pipeline, step = _schedule(draw, loop, D)
    x0 = _feasible_point(draw, D)
    rows, bounds = _design_rows(draw, x0, floor)
    return Spec(dims=tuple(dims), prices=prices, workloads=tuple(workloads), loop=loop, mode=mode,
                rows=tuple(rows), bounds=bounds, x0=tuple(x0), pipeline=pipeline, step=step,
                objective=objective)


def _network(draw, max_dims: int, latency: bool | None):
    """``(dims, prices)``: 1..``max_dims`` dimensions (block, NPUs, cost class, latency ns,
    algorithm; latency on some dimensions, or forced on/off by ``latency``) and each class's
    (link, switch, nic) prices, $ per GB/s (switch and NIC prices for a class with a Switch
    dimension only; the NIC price sometimes 0)."""
    D = draw(st.integers(1, max_dims))
    blocks = [draw(st.sampled_from(["Ring", "FullyConnected", "Switch"])) for _ in range(D)]
    npus = [draw(st.sampled_from(NPUS)) for _ in range(D)]
    use_latency = draw(st.booleans()) if latency is None else latency
    classes = [draw(st.sampled_from(CLASS_NAMES[: draw(st.integers(1, 4))])) for _ in range(D)]
    dims = []
    for b, p, c in zip(blocks, npus, classes, strict=True):
        lat = float(draw(_log_uniform(0, 4))) if use_latency and draw(st.booleans()) else 0.0
        alg = draw(st.sampled_from([None, "ring", "direct", "halving_doubling"]))
        dims.append((b, p, c, lat, alg))
    prices = {}
    for name in sorted(set(classes)):
        switch = any(b == "Switch" and c == name for b, c in zip(blocks, classes, strict=True))
        link = draw(_log_uniform(-2, 3))
        sw = draw(_log_uniform(-2, 3)) if switch else None
        # (a NIC price of 0 now and then: a scale-up domain without NICs)
        nic = draw(st.one_of(st.just(0.0), _log_uniform(-2, 3))) if switch else None
        prices[name] = (link, sw, nic)
    return dims, prices


def _size(draw) -> float:
    """A collective's size in bytes: tiny (1..100), huge (tens to hundreds of GB) or in between."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return float(draw(st.integers(1, 100)))  # tiny
    if kind == 1:
        return draw(_log_uniform(10, 11.5))  # huge (tens to hundreds of GB)
    return draw(_log_uniform(3, 10))


def _phase(draw, mode: str) -> tuple[float, str, float]:
    """One phase: (compute ns, collective, size bytes); no point-to-point in the sequential
    ``mode``."""
    compute = 0.0 if draw(st.booleans()) else draw(_log_uniform(2, 8))
    kind = draw(st.sampled_from(KINDS if mode == "concurrent" else SEQUENTIAL_KINDS))
    size = 0.0 if kind is Collective.NONE and draw(st.booleans()) else _size(draw)
    return compute, kind.value, size


def _workload_spec(draw, weight: float, npus: list[int], mode: str,
                   max_layers: int) -> WorkloadSpec:
    """1..``max_layers`` layers of ``mode``'s phases and each phase's groups (divisors of
    ``npus``)."""
    n = draw(st.integers(1, max_layers))
    layers = tuple(tuple(_phase(draw, mode) for _ in PHASES) for _ in range(n))
    groups = tuple(tuple(draw(st.sampled_from(divisors(p))) for p in npus) for _ in PHASES)
    return WorkloadSpec(layers, groups, weight)


def _schedule(draw, loop: str, D: int):
    """``(pipeline, step)``: the pipeline (stages, microbatches, p2p bytes, p2p dim) of the pipeline
    ``loop`` and the step schedule (microbatches, stages, virtual stages, overlap_dp) of the step
    loop, None for the other loops."""
    pipeline = None
    if loop == "pipeline":
        pipeline = (
            draw(st.integers(2, 8)),
            draw(st.integers(1, 16)),
            0.0 if draw(st.booleans()) else draw(_log_uniform(3, 9)),
            draw(st.integers(0, D - 1)),
        )
    step = None
    if loop == "step":
        step = (
            draw(st.integers(1, 16)),
            draw(st.integers(1, 8)),
            draw(st.integers(1, 3)),
            draw(st.booleans()),
        )
    return pipeline, step


def _feasible_point(draw, D: int) -> list[float]:
    """The feasible point x0 (GB/s per NPU): the equal split, bandwidths four to five decades apart,
    or independent draws."""
    spread = draw(st.integers(0, 3))
    if spread == 0:
        return [draw(_log_uniform(0, 3))] * D  # the equal split
    if spread == 1:  # bandwidths four to five decades apart (one dimension far below the others)
        return [draw(_log_uniform(-1, 4)) for _ in range(D)]
    return [draw(_log_uniform(0, 3)) for _ in range(D)]


def _design_rows(draw, x0: list[float], floor: bool):
    """``(rows, bounds)``: design rows and bounds that hold at ``x0`` (inequalities with slack): one
    cap on every dimension, then up to three more rows or bounds; with ``floor`` a positive lower
    bound on every dimension. ``bounds`` is None when no bound is set."""
    D = len(x0)
    total = float(sum(x0))
    ones = (1.0,) * D
    rows, upper = _cap(draw, x0)
    lower = [0.0] * D
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["order", "subset", "floor", "ratio", "upper", "lower"]))
        i = draw(st.integers(0, D - 1))
        j = draw(st.integers(0, D - 1))
        if kind == "floor":
            rows.append(Row(ones, ">=", total * draw(_fraction()) * 0.99, "sum(bw) >= f"))
        elif kind == "upper":
            upper[i] = x0[i] * (1 + draw(_fraction())) if upper[i] is None else upper[i]
        elif kind == "lower":
            lower[i] = x0[i] * draw(_fraction()) * 0.99
        else:
            rows.extend(_pair_row(draw, kind, i, j, x0))
    if floor:
        for d in range(D):
            if lower[d] <= 0:
                lower[d] = x0[d] * (0.01 + 0.98 * draw(_fraction()))
    bounds = None
    if any(lo > 0 for lo in lower) or any(u is not None for u in upper):
        bounds = tuple((lo, u) for lo, u in zip(lower, upper, strict=True))
    return rows, bounds


def _cap(draw, x0: list[float]) -> tuple[list[Row], list[float | None]]:
    """``(rows, upper)``: the cap on every dimension that holds at ``x0``: sum(bw) == S,
    sum(bw) <= S, a.bw <= S, or an upper bound on each dimension (``upper``; None: no bound)."""
    D = len(x0)
    total = float(sum(x0))
    ones = (1.0,) * D
    cap = draw(st.sampled_from(["sum_eq", "sum_le", "weighted_le", "bounds"]))
    if cap == "sum_eq":
        return [Row(ones, "==", total, "sum(bw) == S")], [None] * D
    if cap == "sum_le":
        return [Row(ones, "<=", total * (1 + draw(_fraction())), "sum(bw) <= S")], [None] * D
    if cap == "weighted_le":
        a = tuple(float(draw(st.integers(1, 8))) / 2 for _ in range(D))
        rhs = float(np.dot(a, x0)) * (1 + draw(_fraction()))
        return [Row(a, "<=", rhs, "a.bw <= S")], [None] * D
    return [], [x * (1 + draw(_fraction())) for x in x0]


def _pair_row(draw, kind: str, i: int, j: int, x0: list[float]) -> list[Row]:
    """The row of ``kind`` on dimensions ``i`` and ``j`` that holds at ``x0``, none when it does not
    apply: order (bw_i >= bw_j, where x0 has it), subset (the sum over i..j capped) or ratio
    (bw_i <= c bw_j)."""
    coef = [0.0] * len(x0)
    if kind == "order" and i != j and x0[i] > x0[j]:
        coef[i], coef[j] = 1.0, -1.0
        return [Row(tuple(coef), ">=", 0.0, f"bw[{i}] >= bw[{j}]")]
    if kind == "subset":
        a, b = sorted((i, j))
        for d in range(a, b + 1):
            coef[d] = 1.0
        return [Row(tuple(coef), "<=", float(sum(x0[a:b + 1])) * (1 + draw(_fraction())),
                    f"sum(bw[{a}:{b + 1}]) <= c")]
    if kind == "ratio" and i != j:
        c = x0[i] / x0[j] * (1 + draw(_fraction()))
        coef[i], coef[j] = 1.0, -c
        return [Row(tuple(coef), "<=", 0.0, f"bw[{i}] <= c bw[{j}]")]
    return []


MAGNITUDES = tuple(10.0**k for k in range(-6, 7))
"""Rescaling factors for bytes and bandwidth limits (and prices): 1e-6 .. 1e6."""


def magnitudes():
    """A rescaling factor from :data:`MAGNITUDES`."""
    return st.sampled_from(MAGNITUDES)


def small(spec: Spec) -> bool:
    """Whether SCIP can be asked for the global optimum in a few seconds (few dimensions and
    collectives)."""
    phases = sum(len(w.layers) for w in spec.workloads) * 3
    return (
        spec.D <= 3
        and phases <= 9
        and max(p for _, p, *_ in spec.dims) <= 64
        and math.isfinite(sum(spec.x0))
    )


def tiled(npus: int, *groups: int) -> int:
    """The smallest multiple of ``npus`` that every group size in ``groups`` divides (lcm): kept
    test instances from before groups had to tile their dimension keep their traffic (which depends
    only on the group sizes) and only change the cluster size (a uniform factor on every cost)."""
    return math.lcm(npus, *groups)
