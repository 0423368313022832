"""Pipelines solved by hand, shared by the pipeline tests (tests/solve/test_pipeline_stages.py) and
the report tests of its stage lines and time split: two stages, heavy and light, whose bottleneck
changes with the bandwidth (:func:`two_stages`, worked out in test_pipeline_stages.py's docstring);
three stages (:func:`three_stages`), each stage's slot and parts in closed form, and the 1F1B
schedule with blocking sends walked operation by operation (:func:`schedule_graph_ns`)."""

from __future__ import annotations

from hieropt.spec import (
    Collective,
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Layer,
    LinearConstraint,
    Mapping,
    Network,
    Phase,
    StepSchedule,
    Workload,
)


def three_stages(
    m: int = 4, v: int = 1, overlap: bool = False, ids=((0,), (1,), (2,))
) -> Instance:
    """Three stages on Ring 4 x Switch 2 (tp = (4, 1) per-micro-batch all-reduces: 1.5 S on
    dimension 0; dp = (1, 2) per-iteration all-reduces: S on dimension 1), loop step with m
    micro-batches, p = 3, v chunks:

    - stage 0: compute 100 / 200 / 300 ns, all-reduces of 400 MB (forward, input gradient) and 800
      MB (DP);
    - stage 1: compute 150 / 250 / 350 ns, 200 MB, 200 MB and 400 MB (DP);
    - stage 2: compute 50 / 60 / 70 ns, an 800 MB forward all-reduce only."""
    def layer(c, sf, sig, swg) -> Layer:
        def ph(cn, s):
            return Phase(
                compute_ns=cn,
                collective=Collective.ALL_REDUCE if s else Collective.NONE,
                size_bytes=s,
            )

        return Layer(
            name="l", forward=ph(c[0], sf), input_grad=ph(c[1], sig), weight_grad=ph(c[2], swg)
        )

    stages = [Workload(name=f"s{r}", layers=(layer(*x),)) for r, x in enumerate(
        [((100.0, 200.0, 300.0), 4e8, 4e8, 8e8), ((150.0, 250.0, 350.0), 2e8, 2e8, 4e8),
         ((50.0, 60.0, 70.0), 8e8, 0.0, 0.0)])]
    wl = stages[0].model_copy(update={"more_stages": tuple(stages[1:]), "pipeline_stages": ids})
    dims = (Dimension(block="Ring", npus=4, cost_class="C"),
            Dimension(block="Switch", npus=2, cost_class="S"))
    cost = CostModel(
        classes={
            "C": CostClass(link_usd_per_gbps=1.0),
            "S": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0, nic_usd_per_gbps=1.0),
        }
    )
    return Instance(
        name="three",
        objective="performance",
        training_loop="step",
        network=Network(dims=dims),
        workload=wl,
        mapping=Mapping(forward=(4, 1), input_grad=(4, 1), weight_grad=(1, 2)),
        cost=cost,
        step=StepSchedule(microbatches=m, stages=3, virtual_stages=v, overlap_dp=overlap),
        constraints=(LinearConstraint(coefficients=(1.0, 1.0), sense="==", rhs=150.0),),
    )


def slots(b0: float, b1: float) -> tuple[list[float], float]:
    """Each stage's micro-batch slot t_r = C_f + T_f + C_ig + T_ig + C_wg and the first stage's tail
    W_0, ns."""
    t = [600.0 + 2 * 1.5 * 4e8 / b0, 750.0 + 2 * 1.5 * 2e8 / b0, 180.0 + 1.5 * 8e8 / b0]
    return t, 8e8 / b1


def parts(b0: float) -> tuple[list[float], list[float]]:
    """Each stage's forward f_r = C_f + T_f and backward b_r = C_ig + T_ig + C_wg, ns."""
    return ([100.0 + 1.5 * 4e8 / b0, 150.0 + 1.5 * 2e8 / b0, 50.0 + 1.5 * 8e8 / b0],
            [500.0 + 1.5 * 4e8 / b0, 600.0 + 1.5 * 2e8 / b0, 130.0])


def schedule_graph_ns(f: list[float], b: list[float], m: int) -> float:
    """The 1F1B schedule with blocking sends, operation by operation (PipeDream-Flush order: p - r -
    1 warm-up forwards, then a forward and a backward in turn): each ends at max(the stage's
    previous end, the neighbour's send) + its duration; the end of stage 0's last backward."""
    p = len(f)
    order = []
    for r in range(p):
        ops, nf, nb = [], min(p - r - 1, m), 0
        ops = [("F", i) for i in range(nf)]
        while nb < m:
            if nf < m:
                ops.append(("F", nf))
                nf += 1
            ops.append(("B", nb))
            nb += 1
        order.append(ops)
    end, at, clock = {}, [0] * p, [0.0] * p
    while any(at[r] < 2 * m for r in range(p)):
        for r in range(p):
            while at[r] < 2 * m:
                kind, i = order[r][at[r]]
                src = r - 1 if kind == "F" else r + 1
                if 0 <= src < p and (src, kind, i) not in end:
                    break
                ready = max(clock[r], end.get((src, kind, i), 0.0))
                clock[r] = end[(r, kind, i)] = ready + (f[r] if kind == "F" else b[r])
                at[r] += 1
    return end[(0, "B", m - 1)]


MB, MS = 1e6, 1e6
"""Bytes per MB and ns per ms."""
IDLE = Phase(compute_ns=0.0, collective=Collective.NONE, size_bytes=0.0)
"""A phase without compute or collective."""
COST = CostModel(classes={"C": CostClass(link_usd_per_gbps=1.0)})
"""One cost class C at $1 per GB/s of link."""


def stage_layer(name: str, compute_ns: float, fwd: Phase, ig: Phase = IDLE) -> Layer:
    """A layer whose forward is ``fwd`` with ``compute_ns`` of compute, its input gradient ``ig``
    and no weight-gradient work."""
    return Layer(
        name=name,
        forward=fwd.model_copy(update={"compute_ns": compute_ns}),
        input_grad=ig,
        weight_grad=IDLE,
    )


AR = Phase(compute_ns=0.0, collective=Collective.ALL_REDUCE, size_bytes=20 * MB, group="tp")
"""The tensor-parallel all-reduce of 20 MB."""
SEND = Phase(compute_ns=0.0, collective=Collective.P2P, size_bytes=10 * MB, group="pp")
"""One pipeline send of 10 MB."""
HEAVY = Workload(name="H", layers=(stage_layer("h0", 60 * MS, AR, SEND),))
"""Stage H: 60 ms of forward compute, the all-reduce and one send."""
LIGHT = Workload(name="L", layers=(stage_layer("l0", 40 * MS, AR, SEND),
                                   stage_layer("l1", 0.0, SEND)))
"""Stage L (a middle stage): 40 ms of forward compute, the all-reduce and two sends."""


def two_stages(S: float, stages: tuple[Workload, ...] = (LIGHT,), sense: str = "==") -> Instance:
    """The two stages of tests/solve/test_pipeline_stages.py's docstring with ``sum(bw) == S``
    GB/s (or ``sense``); ``stages=()``: H alone (the stage with the most compute only)."""
    return Instance(
        name="two-stages",
        objective="performance",
        training_loop="step",
        step=StepSchedule(microbatches=3, stages=2),
        network=Network(dims=(Dimension(block="FullyConnected", npus=2, cost_class="C"),) * 2),
        workload=HEAVY.model_copy(update={"more_stages": stages}),
        mapping=Mapping(
            forward=(2, 1),
            input_grad=(2, 1),
            weight_grad=(1, 1),
            groups={"tp": (2, 1), "pp": (1, 2)},
        ),
        cost=COST,
        constraints=(
            LinearConstraint(
                coefficients=(1.0, 1.0), sense=sense, rhs=S, text=f"sum(bw) {sense} {S}"
            ),
        ),
    )
