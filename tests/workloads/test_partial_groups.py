"""A group that spans part of a dimension gets the links it reaches there
(hieropt/model/algorithms.py group_links): factors and times by hand on FullyConnected, Ring and
Switch dimensions, the strides of placed groups, LIBRA's convention (the whole bandwidth) kept for
LIBRA-style inputs, and the instance setting ``group_bandwidth`` read and checked."""

from __future__ import annotations

import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.io.instance import load_instance
from hieropt.model.algorithms import group_links, unit_traffic
from hieropt.model.traffic import bandwidth_rule, job_links
from hieropt.spec import (
    Collective,
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Layer,
    Mapping,
    Network,
    Phase,
    Workload,
)
from hieropt.spec.tiling import group_strides

AR = Collective.ALL_REDUCE
S = 1e9  # bytes of the all-reduce
B = 100.0  # GB/s = bytes per ns on every dimension
COST = CostModel(
    classes={"a": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0, nic_usd_per_gbps=1.0)}
)


def _net(*dims: tuple[str, int]) -> Network:
    return Network(dims=tuple(Dimension(block=b, npus=n, cost_class="a") for b, n in dims))


def _all_reduce(net: Network, forward: tuple[int, ...], weight_grad: tuple[int, ...],
                rule: str | None) -> Instance:
    """One layer whose forward all-reduces S bytes over ``forward`` (no compute, nothing else)."""
    idle = Phase(compute_ns=0.0, collective=Collective.NONE, size_bytes=0.0)
    layer = Layer(name="l", forward=Phase(compute_ns=0.0, collective=AR, size_bytes=S),
                  input_grad=idle, weight_grad=idle)
    return Instance(
        name="partial", objective="performance", training_loop="no_overlap", network=net,
        workload=Workload(name="w", layers=(layer,)),
        mapping=Mapping(forward=forward, input_grad=forward, weight_grad=weight_grad),
        cost=COST, group_bandwidth=rule,
    )


def _time_ns(inst: Instance) -> float:
    return hieropt.evaluate(inst, [B] * inst.network.n_dims).iteration_time_ns


def test_tp4_all_reduce_on_a_fully_connected_dimension_of_8():
    """Each NPU of a FullyConnected 8 has 7 links of B/7; TP 4 reaches its 3 peers': 3/7 of B, so
    its 2 x 3/4 S = 1.5 GB of all-reduce takes 1.5 x 7/3 = 3.5 GB / 100 GB/s = 35 ms (15 ms with
    the whole B, LIBRA's convention); the data-parallel pair (stride 4) reaches 1 peer: 1/7."""
    net = _net(("FullyConnected", 8))
    assert group_links(net, (4,)) == pytest.approx((7 / 3,), rel=1e-15)
    assert group_links(net, (2,), (4,)) == (7.0,)  # (any stride: its one peer's link)
    assert group_links(net, (8,)) == (1.0,)
    assert unit_traffic(AR, (4,), "concurrent", None, (7 / 3,)) == pytest.approx([3.5], rel=1e-15)
    assert _time_ns(_all_reduce(net, (4,), (2,), "links")) == pytest.approx(3.5e7, rel=1e-12)
    assert _time_ns(_all_reduce(net, (4,), (2,), "whole")) == pytest.approx(1.5e7, rel=1e-12)
    assert _time_ns(_all_reduce(net, (4,), (2,), None)) == pytest.approx(1.5e7, rel=1e-12)


def test_a_stride_two_pair_and_a_contiguous_four_on_a_ring_of_8():
    """A Ring NPU has 2 links of B/2. tp 2 x dp 2 x pp 2 on a Ring of 8: tp is a contiguous path
    (one logical ring over its bidirectional links: B/2, factor 2), the dp pair has stride 2 and
    spans 4 of the 8 (a path the two dp groups of its 4 NPUs share: B/4, factor 4), pp has stride
    4 with 4 x 2 = 8 (a cycle its 4 copies share: B/4, factor 4). A contiguous 4 (tp 4 x dp 2):
    factor 2; its all-reduce 2 x 3/4 S x 2 = 3 GB takes 30 ms, the pair's 2 x 1/2 S x 4 = 4 GB
    (stride 2, tp 2 x dp 2 x pp 2) 40 ms."""
    net = _net(("Ring", 8))
    strides = group_strides({"tp": (2,), "dp": (2,), "pp": (2,)}, {}, (8,))
    assert strides == {"tp": (1,), "dp": (2,), "pp": (4,)}
    assert [group_links(net, (2,), strides[g]) for g in ("tp", "dp", "pp")] == [(2.0,), (4.0,),
                                                                                (4.0,)]
    assert group_links(net, (4,)) == (2.0,) and group_links(net, (8,)) == (1.0,)
    contiguous = _all_reduce(net, (4,), (2,), "links")  # (forward inside weight_grad: stride 1)
    assert job_links(contiguous, contiguous.jobs[0])["forward"] == (2.0,)
    assert _time_ns(contiguous) == pytest.approx(3e7, rel=1e-12)
    pair = _all_reduce(net, (2,), (4,), "links").model_copy(update={"mapping": Mapping(
        forward=(2,), input_grad=(2,), weight_grad=(4,),
        groups={"tp": (2,), "dp": (2,), "pp": (2,)})})
    # (the named dp pair: stride 2 inside the tp pairs, 4 of the 8 NPUs)
    assert job_links(pair, pair.jobs[0])["dp"] == (4.0,)
    assert unit_traffic(AR, (2,), "concurrent", None, (4.0,)) * S / B == pytest.approx([4e7])


def test_a_switch_and_whole_dimensions_keep_the_whole_bandwidth():
    """A Switch gives every NPU its port: TP 4 of 8 takes 2 x 3/4 S / B = 15 ms, by its links or
    not; a group filling a dimension has factor 1 on every block."""
    net = _net(("Switch", 8))
    assert group_links(net, (4,)) == (1.0,)
    assert _time_ns(_all_reduce(net, (4,), (2,), "links")) == pytest.approx(1.5e7, rel=1e-12)
    for block in ("Ring", "FullyConnected", "Switch"):
        assert group_links(_net((block, 4), ("Ring", 2)), (4, 1)) == (1.0, 1.0)


def test_libra_inputs_keep_libras_convention():
    """LIBRA's GPT-3 instance (TP 16 = 4 x 4 of the Ring 4 x FullyConnected 8, DP 256 the rest):
    its groups span part of the FullyConnected dimension, and keep the whole bandwidth (no
    group_bandwidth given, a workload that is no LLM plan); given ``links``, TP's 4 of 8 there
    takes 7/3 of its bytes, DP's 2 of 8 (stride 4) 7."""
    inst = load_instance("instances/gpt3-4d.toml")
    job = inst.jobs[0]
    assert inst.group_bandwidth is None and bandwidth_rule(inst, job) == "whole"
    assert job_links(inst, job) == {}
    links = inst.model_copy(update={"group_bandwidth": "links"})
    f = job_links(links, job)
    assert f["forward"] == pytest.approx((1.0, 7 / 3, 1.0, 1.0)) and f["weight_grad"] == (
        1.0, 7.0, 1.0, 1.0)
    bw = [125.0] * 4
    assert hieropt.evaluate(links, bw).iteration_time_ns > hieropt.evaluate(
        inst, bw).iteration_time_ns
    plan = load_instance("instances/gpt3-plan-4d.toml")  # (an LLM plan: links by default)
    assert plan.group_bandwidth is None and bandwidth_rule(plan, plan.jobs[0]) == "links"


def test_the_setting_is_read_and_checked(tmp_path):
    text = open("instances/gpt3-4d.toml").read().replace(
        'workload = "../models/gpt3-175b.toml"',
        f'workload = "{__import__("pathlib").Path("models/gpt3-175b.toml").resolve()}"')
    path = tmp_path / "i.toml"
    path.write_text('group_bandwidth = "links"\n' + text)
    assert load_instance(path).group_bandwidth == "links"
    path.write_text('group_bandwidth = "link"\n' + text)
    with pytest.raises(InputError, match=r'group_bandwidth: .*"links" gives a group') as e:
        load_instance(path)
    assert 'set group_bandwidth = "links" or "whole"' in str(e.value)
