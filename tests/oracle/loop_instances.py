"""Random instances for the SCIP oracle of the training loops (tests/oracle/scip_loops.py): every
loop, latency, dimension mode and algorithm, several workloads and pipeline stages, groups spanning
part of a dimension, and collectives on their own stream (hypothesis strategies)."""

from __future__ import annotations

from hypothesis import strategies as st

from hieropt.spec import (
    PHASES,
    TRAINING_LOOPS,
    Collective,
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
from tests.fuzz.strategies import divisors as _divisors
from tests.oracle.scip import COST, extra_rows


def _sizes():
    """Collective sizes 1e5 .. 1e9 bytes (two decimals in the exponent: latency-bound to
    bandwidth-bound)."""
    return st.integers(500, 900).map(lambda i: 10.0 ** (i / 100))


def _layers(draw, n: int, prefix: str, mode: str = "concurrent") -> tuple[Layer, ...]:
    # a point-to-point send over a group spanning several dimensions has no sequential form (the
    # instance refuses it)
    kinds = [c for c in Collective if mode == "concurrent" or c is not Collective.P2P]

    def phase() -> Phase:
        return Phase(
            compute_ns=float(draw(st.sampled_from([0, 1000, 100_000]) | st.integers(0, 10**6))),
            collective=draw(st.sampled_from(kinds)),
            size_bytes=draw(_sizes()),
        )

    return tuple(
        Layer(
            name=f"{prefix}{i}",
            forward=phase(),
            input_grad=phase(),
            weight_grad=phase(),
            update_ns=float(draw(st.sampled_from([0, 0, 5000]))),
        )
        for i in range(n)
    )


@st.composite
def loop_instances(draw, loop: str | None = None, stages: bool = False) -> Instance:
    """2-3 dimensions with random latencies (0-5000 ns per step) and algorithms, 1-4 layers, the
    training ``loop`` (default: a random one), a random dimension mode, collectives in flight (any,
    or 1) and chunks (1 or 3), sometimes a second weighted workload; ``sum(bw) == S`` plus up
    to two extra rows that all hold at the equal split (feasible). ``stages``: the first workload
    has one or two further pipeline stages (``more_stages``) of 1-3 random layers each."""
    D = draw(st.integers(2, 3))
    dims = tuple(
        Dimension(
            block=draw(st.sampled_from(["Ring", "FullyConnected", "Switch"])),
            npus=draw(st.integers(2, 8)),
            cost_class="C",
            latency_ns=float(draw(st.sampled_from([0]) | st.integers(0, 5000))),
            algorithm=draw(st.sampled_from([None, "ring", "direct", "halving_doubling"])),
        )
        for _ in range(D)
    )

    def mapping() -> Mapping:
        return Mapping(
            **{ph: tuple(draw(st.sampled_from(_divisors(d.npus))) for d in dims) for ph in PHASES}
        )

    loop = loop or draw(st.sampled_from(TRAINING_LOOPS))
    mode = draw(st.sampled_from(["concurrent", "sequential"]))
    pipeline = step = None
    if loop == "step":
        step = StepSchedule(microbatches=draw(st.integers(1, 8)), stages=draw(st.integers(1, 8)),
                            virtual_stages=draw(st.integers(1, 3)), overlap_dp=draw(st.booleans()))
    if loop == "pipeline":
        pipeline = Pipeline(stages=draw(st.integers(2, 8)), microbatches=draw(st.integers(1, 8)),
                            p2p_bytes=draw(st.sampled_from([0.0]) | _sizes()),
                            p2p_dim=draw(st.integers(0, D - 1)))
    more: tuple[Job, ...] = ()
    weight = 1.0
    if draw(st.booleans()):
        weight = draw(st.integers(1, 20)) / 10
        more = (
            Job(
                workload=Workload(
                    name="w1", layers=_layers(draw, draw(st.integers(1, 3)), "m", mode)
                ),
                mapping=mapping(),
                weight=draw(st.integers(1, 20)) / 10,
            ),
        )

    S = float(draw(st.integers(100, 1000)))
    e = S / D
    rows = [LinearConstraint(coefficients=(1.0,) * D, sense="==", rhs=S, text="sum(bw) == S")]
    rows += extra_rows(draw, D, e, 2)
    inst = Instance(
        name="loops-oracle",
        objective="performance",
        training_loop=loop,
        pipeline=pipeline,
        step=step,
        dimension_mode=mode,
        collectives_in_flight=draw(st.sampled_from([None, 1])),
        chunks=draw(st.sampled_from([1, 1, 3])),
        network=Network(dims=dims),
        workload=Workload(
            name="w0",
            layers=_layers(draw, draw(st.integers(1, 4)), "l", mode),
            more_stages=tuple(
                Workload(
                    name=f"w0-stage{k + 1}",
                    layers=_layers(draw, draw(st.integers(1, 3)), f"s{k}", mode),
                )
                for k in range(draw(st.integers(1, 2)) if stages else 0)
            ),
        ),
        mapping=mapping(),
        cost=COST,
        constraints=tuple(rows),
        workload_weight=weight,
        more_workloads=more,
    )
    # (drawn last: the examples of LIBRA's convention stay those drawn before)
    if draw(st.sampled_from(["whole", "whole", "links"])) == "whole":
        return inst
    return inst.model_copy(update={
        "group_bandwidth": "links",
        "mapping": _tiled(inst.mapping, dims),
        "more_workloads": tuple(j.model_copy(update={"mapping": _tiled(j.mapping, dims)})
                                for j in inst.more_workloads),
    })


def _tiled(mapping: Mapping, dims) -> Mapping:
    """``mapping`` made a model-parallel group (its forward group, input_grad alike) inside the
    data-parallel one that tiles the rest (weight_grad), as the oracle lays out a mapping of phases
    (tests/oracle/algorithms.py link_factors)."""
    f = tuple(mapping.forward)
    return Mapping(forward=f, input_grad=f,
                   weight_grad=tuple(d.npus // x for d, x in zip(dims, f, strict=True)))


@st.composite
def partial_instances(draw, loop: str) -> Instance:
    """:func:`loop_instances` on Ring and FullyConnected dimensions of 4, 6 or 8 NPUs whose groups
    span part of them (a model-parallel group of 2 or 3 inside the data-parallel rest, priced by
    the links each reaches, ``group_bandwidth`` ``links``)."""
    inst = draw(loop_instances(loop))
    dims = tuple(
        d.model_copy(update={"block": draw(st.sampled_from(["Ring", "FullyConnected"])),
                             "npus": draw(st.sampled_from([4, 6, 8]))})
        for d in inst.network.dims
    )

    def mapping() -> Mapping:
        f = tuple(draw(st.sampled_from([x for x in (1, 2, 3) if d.npus % x == 0])) for d in dims)
        return _tiled(Mapping(forward=f, input_grad=f, weight_grad=f), dims)

    return inst.model_copy(update={
        "group_bandwidth": "links", "network": Network(dims=dims), "mapping": mapping(),
        "more_workloads": tuple(j.model_copy(update={"mapping": mapping()})
                                for j in inst.more_workloads),
    })


@st.composite
def own_stream_instances(draw) -> Instance:
    """Loop ``step`` instances of :func:`loop_instances` (one or several pipeline stages) whose
    forward and input-gradient phases (and some weight-gradient ones, which stay per iteration)
    run on a named group ``g`` in ``step.overlap_groups``."""
    base = draw(loop_instances("step", stages=draw(st.booleans())))
    g = tuple(draw(st.sampled_from(_divisors(d.npus))) for d in base.network.dims)

    def regroup(w: Workload) -> Workload:
        layers = []
        for layer in w.layers:
            phases = {}
            for ph in PHASES:
                x = getattr(layer, ph)
                own = x.collective not in (Collective.NONE, Collective.P2P) and draw(st.booleans())
                phases[ph] = x.model_copy(update={"group": "g"}) if own else x
            layers.append(layer.model_copy(update=phases))
        return w.model_copy(update={"layers": tuple(layers)})

    w = base.workload
    more = tuple(regroup(s) for s in w.more_stages)
    workload = regroup(w).model_copy(update={"more_stages": more})
    mapping = Mapping(**{ph: getattr(base.mapping, ph) for ph in PHASES}, groups={"g": g})
    st_ = base.step
    step = StepSchedule(microbatches=st_.microbatches, stages=st_.stages,
                        virtual_stages=st_.virtual_stages, overlap_groups=("g",))
    fields = {k: getattr(base, k) for k in type(base).model_fields}
    # (LIBRA's convention: the own-stream group "g" is placed nowhere the oracle lays out)
    return Instance(**{**fields, "workload": workload, "mapping": mapping, "step": step,
                       "group_bandwidth": None})
