"""A group that spans part of a FullyConnected dimension through ASTRA-sim 2.0: TP 4 of a
FullyConnected 8 (under a Switch 8) all-reduces 1 GiB, DP's pair beside it (stride 4) and its 8 on
the switch another. ASTRA-sim's FullyConnected topology gives each NPU one link per peer; the export
makes each group's part of the dimension a simulator dimension whose links carry the dimension's
B / 7 each (hieropt/io/astrasim_network.py), so the simulator runs TP over its 3 peers' links and
DP's pair over its one. hieropt prices the same by the links a group reaches
(hieropt/model/algorithms.py group_links: 7/3 and 7 of the bytes): 375.8096 ms by hand and by
hieropt, 375.8123 ms simulated (measured 2026-12-06, 0.0007 %). The simulator counts the links
(its FullyConnected topology, its direct algorithm); the export states their bandwidth, B / 7, as
the physical dimension has it. Under LIBRA's convention (every group the whole B, and the export
then gives each part the whole B) both say 161.06 ms, 2.3 x less than the links carry."""

from __future__ import annotations

import pytest

from hieropt.model.timing import evaluate
from hieropt.spec import Instance, Layer, Mapping, Phase, Workload
from hieropt.studies.simulate import simulate
from tests.fidelity.instances import make_instance

GIB = 2**30
BW = (40.0, 10.0)  # GB/s per NPU = bytes per ns


def _instance(rule: str):
    layer = Layer(
        name="c",
        forward=Phase(compute_ns=0.0, collective="ALLREDUCE", size_bytes=GIB, group="tp"),
        input_grad=Phase(compute_ns=0.0, collective="NONE", size_bytes=0.0),
        weight_grad=Phase(compute_ns=0.0, collective="ALLREDUCE", size_bytes=GIB, group="dp"),
    )
    none = Phase(compute_ns=0.0, collective="NONE", size_bytes=0.0)
    idle = Layer(name="i", forward=none, input_grad=none, weight_grad=none)
    base = make_instance([("FullyConnected", 8), ("Switch", 8)], [idle], (4, 1), (4, 1), (2, 8),
                         group_bandwidth=rule)
    fields = {k: getattr(base, k) for k in type(base).model_fields}
    groups = {"tp": (4, 1), "dp": (2, 8)}
    return Instance(**{**fields, "workload": Workload(name="w", layers=(layer,)),
                       "mapping": Mapping(forward=(4, 1), input_grad=(4, 1), weight_grad=(2, 8),
                                          groups=groups)})


def test_a_partial_fully_connected_group_runs_on_its_links(astra_sim, tmp_path):
    inst = _instance("links")
    # TP: 2 x 3/4 S over 3 of the 7 links of B/7; DP (one dimension after another): 2 x 1/2 S
    # over its 1 link of B/7, then 2 x 7/8 x S/2 on the switch
    tp = 1.5 * GIB * 7 / 3 / BW[0]
    dp = GIB * 7 / BW[0] + 0.875 * GIB / BW[1]
    predicted = evaluate(inst, list(BW)).iteration_time_ns
    assert predicted == pytest.approx(tp + dp, rel=1e-12)
    r = simulate(inst, BW, astra_sim, folder=tmp_path)
    err = abs(r.simulated_iteration_time_ns - predicted) / predicted
    assert err < 0.01, (predicted, r.simulated_iteration_time_ns)
    whole = evaluate(_instance("whole"), list(BW)).iteration_time_ns
    assert whole == pytest.approx(1.5 * GIB / BW[0] + GIB / BW[0] + 0.875 * GIB / BW[1],
                                  rel=1e-12)
    assert r.simulated_iteration_time_ns > 1.5 * whole
