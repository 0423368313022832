"""The algorithms that run a group's collectives (hieropt/model/algorithms.py): each one's bytes per
dimension and latency steps computed by hand for a group of 4 x 2 NPUs, its time on a two-dimension
network by hand, groups of different algorithms in one workload (a sum and a max in one time model),
and the time model's optimum against a dense search."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.model.algorithms import collective_steps, p2p_links, ring_edges, unit_traffic
from hieropt.model.timing import build_time_model
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
    Workload,
)

AR, RS, AG, A2A, P2P = (Collective.ALL_REDUCE, Collective.REDUCE_SCATTER, Collective.ALL_GATHER,
                        Collective.ALL_TO_ALL, Collective.P2P)
G = (4, 2)  # 8 NPUs: 4 on dimension 0, 2 on dimension 1


@pytest.mark.parametrize("kind, algorithm, want", [
    # hierarchical: dimension 0 first (all-gather: last), the chunk shrinking (growing) by each
    # dimension's size
    (AR, "concurrent", [2 * 3 / 4, 2 * (1 / 4) * (1 / 2)]),
    (AR, "sequential", [1.5, 0.25]),
    (RS, "concurrent", [3 / 4, (1 / 4) * (1 / 2)]),
    # dimension 1 first: shard 1 -> 1 byte sent, chunk 2; then 2 x 3 on dim 0
    (AG, "sequential", [2 * 3, 1]),
    (A2A, "concurrent", [3 / 4, 1 / 2]),
    # flat ring over 8 NPUs: the ring's volume on every spanned dimension
    (AR, "flat_ring", [2 * 7 / 8, 2 * 7 / 8]),
    (RS, "flat_ring", [7 / 8, 7 / 8]),
    (AG, "flat_ring", [7, 7]),
    (A2A, "flat_ring", [7 / 8, 7 / 8]),
    # flat tree: 2 S for an all-reduce (up and down the trees); the rest as the ring
    (AR, "flat_tree", [2, 2]),
    (RS, "flat_tree", [7 / 8, 7 / 8]),
    # flat direct: 3 peers differ on dimension 0 only, 4 on dimension 1 (S/8 each per phase)
    (AR, "flat_direct", [2 * 3 / 8, 2 * 4 / 8]),
    (RS, "flat_direct", [3 / 8, 4 / 8]),
    (AG, "flat_direct", [3, 4]),
    (A2A, "flat_direct", [3 / 8, 4 / 8]),
    # NCCL's ring, dimension 0 first: 6 of its 8 edges inside a block of 4, 2 between the blocks
    (AR, "nccl_ring", [2 * 7 / 8 * 6 / 8, 2 * 7 / 8 * 2 / 8]),
    (RS, "nccl_ring", [7 / 8 * 6 / 8, 7 / 8 * 2 / 8]),
    (AG, "nccl_ring", [7 * 6 / 8, 7 * 2 / 8]),
    (A2A, "nccl_ring", [3 / 8, 4 / 8]),  # direct sends, as NCCL runs an all-to-all
    (P2P, "flat_ring", [1, 1]),
])
def test_bytes_per_dimension_by_hand(kind, algorithm, want):
    assert unit_traffic(kind, G, algorithm) == pytest.approx(want, rel=1e-15)


def test_direct_sends_the_volume_of_the_hierarchical_decomposition():
    # (a hierarchical all-to-all sends (p - 1)/p on every dimension: more)
    for kind in (AR, RS, AG):
        assert unit_traffic(kind, G, "flat_direct").sum() == pytest.approx(
            unit_traffic(kind, G, "concurrent").sum()
        )


@pytest.mark.parametrize("kind, algorithm, want", [
    # dimension 0 runs a ring (3 steps per phase), dimension 1 direct (1)
    (AR, "concurrent", [2 * 3, 2 * 1]),
    (RS, "sequential", [3, 1]),
    (AR, "flat_ring", [14, 14]),  # 2 (P - 1) steps, each waiting for the slowest link
    (AG, "flat_ring", [7, 7]),
    (AR, "flat_tree", [6, 6]),  # 2 ceil(log2 8)
    (RS, "flat_tree", [7, 7]),
    (AR, "flat_direct", [2, 2]),
    (A2A, "flat_direct", [1, 1]),
    (AR, "nccl_ring", [14, 14]),
    (AG, "nccl_ring", [7, 7]),
    (A2A, "nccl_ring", [1, 1]),
    (P2P, "concurrent", [1, 1]),
])
def test_steps_per_dimension_by_hand(kind, algorithm, want):
    assert collective_steps(kind, G, ("ring", "direct"), algorithm) == pytest.approx(want)


@pytest.mark.parametrize("group, want", [
    ((8, 2), [14, 2]),  # into each node and out of it once; 7 NVLink hops in each node
    ((4, 2), [6, 2]),
    ((2, 2, 2), [4, 2, 2]),
    ((8, 1, 64), [7 * 64, 0, 64]),  # an unspanned dimension carries none
    ((1, 16), [0, 16]),
    ((8,), [8]),
])
def test_ring_edges_by_hand(group, want):
    assert ring_edges(group) == want
    assert sum(want) == np.prod(group)


def test_a_ring_over_two_nodes_takes_its_whole_volume_off_each_node():
    """TP 16 over two nodes of 8 GPUs (NVLink 300 GB/s, four 200 Gb/s NICs per node: 12.5 GB/s
    per GPU): each of a node's 8 GPUs sends 1/8 of the ring's 2 x 15/16 S through the NICs, 1.875 S
    in all, where the hierarchical forms send S (S / 8 per GPU); the all-reduce of S = 1 GB takes
    1.875 / 100 s, the IB-bound ring, against the sequential form's 1.75 / 300 + 1 / 100 s."""
    ring = unit_traffic(AR, (8, 2), "nccl_ring")
    assert ring == pytest.approx([1.875 * 14 / 16, 1.875 * 2 / 16], rel=1e-15)
    assert 8 * ring[1] == pytest.approx(1.875, rel=1e-15)
    assert 8 * unit_traffic(AR, (8, 2), "sequential")[1] == pytest.approx(1.0, rel=1e-15)
    bw = np.array([300.0, 12.5])  # GB/s = bytes/ns; S = 1e9 bytes
    assert max(1e9 * ring / bw) == pytest.approx(1e9 * 1.875 / 100, rel=1e-15)
    seq = unit_traffic(AR, (8, 2), "sequential")
    assert sum(1e9 * seq / bw) == pytest.approx(1e9 * (1.75 / 300 + 1 / 100), rel=1e-15)


def test_a_send_over_a_fully_connected_dimension_gets_one_link():
    net = Network(dims=(Dimension(block="FullyConnected", npus=8, cost_class="a"),
                        Dimension(block="Ring", npus=4, cost_class="a"),
                        Dimension(block="Switch", npus=16, cost_class="a")))
    assert p2p_links(net) == (7.0, 1.0, 1.0)
    assert unit_traffic(P2P, (2, 1, 1), "concurrent", p2p_links(net)) == pytest.approx([7, 0, 0])


def test_unknown_algorithm():
    with pytest.raises(ValueError, match="unknown collective algorithm 'ringg'"):
        unit_traffic(AR, G, "ringg")


# ------------------------------------------------------------------------------------ times by hand
S = 8e8  # bytes of the all-reduce
ALPHA = (500.0, 2000.0)  # ns per step on each dimension
COST = CostModel(
    classes={"a": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0, nic_usd_per_gbps=1.0)}
)


def _inst(algorithms: dict[str, str], groups=("tp",), mode="concurrent", total=100.0) -> Instance:
    """One layer: an all-reduce of S bytes on each named group of ``groups`` (forward, then input
    gradient), all groups 4 x 2 on Ring 4 x Switch 2, 1 us of compute each phase, loop
    no_overlap."""
    g = groups + (groups[-1],) * (2 - len(groups))
    layer = Layer(name="l", forward=Phase(compute_ns=1e3, collective=AR, size_bytes=S, group=g[0]),
                  input_grad=Phase(compute_ns=1e3, collective=AR, size_bytes=S, group=g[1]),
                  weight_grad=Phase(compute_ns=1e3, collective=Collective.NONE, size_bytes=0.0))
    wl = Workload(name="w", layers=(layer,), group_algorithms=tuple(algorithms.items()))
    dims = (Dimension(block="Ring", npus=4, cost_class="a", latency_ns=ALPHA[0]),
            Dimension(block="Switch", npus=2, cost_class="a", latency_ns=ALPHA[1]))
    return Instance(
        name="alg",
        objective="performance",
        training_loop="no_overlap",
        network=Network(dims=dims),
        workload=wl,
        mapping=Mapping(
            forward=G, input_grad=G, weight_grad=(1, 1), groups={n: G for n in set(groups)}
        ),
        cost=COST,
        dimension_mode=mode,
        constraints=(LinearConstraint(coefficients=(1.0, 1.0), sense="==", rhs=total),),
    )


def _by_hand(algorithm: str, b0: float, b1: float) -> float:
    """One all-reduce of S over 4 x 2 (Ring: ring steps, Switch: direct), ns (B in GB/s =
    bytes/ns)."""
    if algorithm == "concurrent":
        return max(1.5 * S / b0 + 6 * ALPHA[0], 0.25 * S / b1 + 2 * ALPHA[1])
    if algorithm == "sequential":
        return 1.5 * S / b0 + 6 * ALPHA[0] + 0.25 * S / b1 + 2 * ALPHA[1]
    if algorithm == "flat_ring":
        return max(1.75 * S / b0 + 14 * ALPHA[0], 1.75 * S / b1 + 14 * ALPHA[1])
    if algorithm == "flat_tree":
        return max(2 * S / b0 + 6 * ALPHA[0], 2 * S / b1 + 6 * ALPHA[1])
    if algorithm == "nccl_ring":
        return max(1.3125 * S / b0 + 14 * ALPHA[0], 0.4375 * S / b1 + 14 * ALPHA[1])
    return max(0.75 * S / b0 + 2 * ALPHA[0], 1.0 * S / b1 + 2 * ALPHA[1])  # flat_direct


ALGOS = ("concurrent", "sequential", "flat_ring", "flat_tree", "flat_direct", "nccl_ring")


@pytest.mark.parametrize("algorithm", ALGOS)
@pytest.mark.parametrize("mode", ["concurrent", "sequential"])
def test_time_by_hand(algorithm, mode):
    """A group's algorithm decides, whatever the instance's dimension_mode; the time model
    agrees."""
    inst = _inst({"tp": algorithm}, mode=mode)
    for b in ([30.0, 70.0], [90.0, 10.0], [5.0, 5.0]):
        want = 3e3 + 2 * _by_hand(algorithm, *b)
        assert hieropt.evaluate(inst, b).iteration_time_ns == pytest.approx(want, rel=1e-12)
        assert build_time_model(inst).time_ns(np.array(b)) == pytest.approx(want, rel=1e-12)


def test_groups_without_an_algorithm_follow_the_dimension_mode():
    for mode in ("concurrent", "sequential"):
        inst = _inst({}, mode=mode)
        assert hieropt.evaluate(inst, [30.0, 70.0]).iteration_time_ns == pytest.approx(
            3e3 + 2 * _by_hand(mode, 30.0, 70.0), rel=1e-12)


@pytest.mark.parametrize("pair", [("sequential", "concurrent"), ("sequential", "flat_ring"),
                                  ("flat_direct", "sequential"), ("nccl_ring", "sequential")])
def test_two_algorithms_in_one_model(pair):
    """A sequential group beside a max-taking one: the model holds the sum as one-dimension terms
    (exact); its optimum under sum(bw) == 100 is the dense search's."""
    inst = _inst({"tp": pair[0], "dp": pair[1]}, groups=("tp", "dp"))
    tm = build_time_model(inst)
    assert tm.dimension_mode == "concurrent"

    def f(b0: float) -> float:
        return 3e3 + _by_hand(pair[0], b0, 100.0 - b0) + _by_hand(pair[1], b0, 100.0 - b0)

    for b0 in (1.0, 37.5, 80.0):
        assert tm.time_ns(np.array([b0, 100.0 - b0])) == pytest.approx(f(b0), rel=1e-12)
        assert hieropt.evaluate(inst, [b0, 100.0 - b0]).iteration_time_ns == pytest.approx(
            f(b0), rel=1e-12
        )
    # f is convex along the line: ternary search (independent of hieropt's solver)
    lo, hi = 1e-6, 100.0 - 1e-6
    for _ in range(200):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        lo, hi = (lo, b) if f(a) <= f(b) else (a, hi)
    best = f((lo + hi) / 2)
    sol = hieropt.solve(inst)
    assert sol.success and sol.iteration_time_ns <= best * (1 + 1e-9)
    assert sol.iteration_time_ns == pytest.approx(best, rel=1e-6)


def test_all_sequential_groups_give_a_sequential_model():
    inst = _inst({"tp": "sequential", "dp": "sequential"}, groups=("tp", "dp"))
    assert build_time_model(inst).dimension_mode == "sequential"


def test_a_plan_names_its_groups_algorithms():
    from pathlib import Path

    from hieropt.errors import InputError
    from hieropt.io.llm import read_llm

    model = Path(__file__).resolve().parents[2] / "models/gpt3-175b-llm.toml"
    p = read_llm(model, ['collective_algorithms={tp="flat_ring"}'])
    assert (p.plan.algorithm("tp"), p.plan.algorithm("dp")) == ("flat_ring", "sequential")
    with pytest.raises(
        InputError,
        match=r"params.plan.collective_algorithms: tp: unknown algorithm 'ringg'; fix: "
        "use one of concurrent, sequential, flat_ring, flat_tree, flat_direct, nccl_ring",
    ):
        read_llm(model, ['collective_algorithms={tp="ringg"}'])
    with pytest.raises(InputError, match="xx: no such group"):
        read_llm(model, ['collective_algorithms={xx="flat_ring"}'])


def test_the_simulator_cannot_run_a_flat_group_over_several_dimensions():
    """ASTRA-sim runs every collective hierarchically: a group that spans both dimensions with a
    ring or a direct algorithm is named as the reason its run cannot match; hierarchical groups
    and a flat group within one dimension are not."""
    from hieropt.studies.simulate import mode_mismatch, unsimulated_group

    for algorithm in ("nccl_ring", "flat_ring", "flat_tree", "flat_direct"):
        inst = _inst({"tp": algorithm}, mode="sequential")
        assert unsimulated_group(inst) == f"tp ({algorithm})"
        assert mode_mismatch(inst, 1) == (
            f"group tp ({algorithm}) spans several dimensions, and the simulator runs its "
            "collectives hierarchically (name it 'sequential' in the plan's collective_algorithms "
            "to compare)"
        )
    for algorithm in ("sequential", "concurrent"):
        assert unsimulated_group(_inst({"tp": algorithm})) is None
    one_dim = _inst({"tp": "nccl_ring"}, mode="sequential")
    one_dim = one_dim.model_copy(
        update={"mapping": one_dim.mapping.model_copy(update={"groups": {"tp": (4, 1)}})}
    )
    assert unsimulated_group(one_dim) is None
    assert mode_mismatch(one_dim, 1) is None
