"""Every collective x every building block, 2 and 3 dimensions, 1 MiB and 1 GiB: hieropt within 1 %
of ASTRA-sim.

One chunk per collective: the simulator runs a collective's dimensions one after another, hieropt's
``sequential`` mode. Many chunks: the simulator pipelines the dimensions and approaches hieropt's
``concurrent`` mode (max over dimensions) from above; its excess is about (sequential - concurrent)
/ chunks, so those cases use enough chunks.
"""

from __future__ import annotations

import pytest

from hieropt.model.timing import evaluate
from hieropt.spec import Layer
from hieropt.studies.simulate import simulate
from tests.fidelity.instances import make_instance, ph

MIB, GIB = 2**20, 2**30
BLOCKS = ("Ring", "FullyConnected", "Switch")
KINDS = ("ALLREDUCE", "REDUCESCATTER", "ALLGATHER", "ALLTOALL")
BW = (40.0, 25.0, 10.0)


def _dims(block: str, n: int, algorithm: str | None = None, latency: float = 0.0) -> list[tuple]:
    """Dimension 0 is ``block``; the others rotate through the blocks: 4 x 8 or 4 x 2 x 4 NPUs."""
    sizes = (4, 8) if n == 2 else (4, 2, 4)
    i = BLOCKS.index(block)
    return [
        (BLOCKS[(i + d) % 3], p, algorithm if d == 0 else None, latency)
        for d, p in enumerate(sizes)
    ]


def _one(kind: str, size: float, dims: list[tuple], mode: str = "sequential"):
    full = [d[1] for d in dims]
    layer = Layer(name="c", forward=ph(0, kind, size), input_grad=ph(), weight_grad=ph())
    return make_instance(dims, [layer], full, [1] * len(dims), [1] * len(dims), dimension_mode=mode)


def _check(inst, astra_sim, tmp_path, chunks=1, tol=0.01):
    bw = BW[: inst.network.n_dims]
    r = simulate(inst, bw, astra_sim, chunks=chunks, folder=tmp_path)
    predicted = evaluate(inst, list(bw)).iteration_time_ns
    assert (
        r.predicted_iteration_time_ns == pytest.approx(predicted)
        or inst.dimension_mode == "concurrent"
    )
    err = abs(r.simulated_iteration_time_ns - predicted) / predicted
    assert err < tol, (predicted, r.simulated_iteration_time_ns)
    return err


@pytest.mark.parametrize("size", [MIB, GIB], ids=["1MiB", "1GiB"])
@pytest.mark.parametrize("n_dims", [2, 3])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("block", BLOCKS)
def test_sequential_one_chunk(block, kind, n_dims, size, astra_sim, tmp_path):
    _check(_one(kind, size, _dims(block, n_dims)), astra_sim, tmp_path)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "block,algorithm",
    [
        ("Ring", "direct"),
        ("FullyConnected", "ring"),
        ("Switch", "ring"),
        ("Switch", "halving_doubling"),
        ("FullyConnected", "halving_doubling"),
    ],
)
def test_other_algorithms(block, algorithm, kind, astra_sim, tmp_path):
    _check(_one(kind, 64 * MIB, _dims(block, 3, algorithm)), astra_sim, tmp_path)


LATENCY_EXACT = [
    (b, a, k)
    for b, a in [
        ("Ring", None),
        ("FullyConnected", None),
        ("Switch", None),
        ("Ring", "direct"),
        ("Switch", "ring"),
        ("Switch", "halving_doubling"),
        ("FullyConnected", "ring"),
    ]
    for k in KINDS
    if not (k == "ALLTOALL" and (a == "halving_doubling" or (b == "Ring" and a in (None, "ring"))))
]


def _no_latency(inst):
    dims = tuple(d.model_copy(update={"latency_ns": 0.0}) for d in inst.network.dims)
    return inst.model_copy(update={"network": inst.network.model_copy(update={"dims": dims})})


@pytest.mark.parametrize("block,algorithm,kind", LATENCY_EXACT)
def test_latency_steps(block, algorithm, kind, astra_sim, tmp_path):
    """64 KiB with 2 us per step on both dimensions (block x block, 4 x 8): latency is a large share
    of the time, and the step counts agree."""
    inst = _one(kind, 64 * 1024, [(block, 4, algorithm, 2000.0), (block, 8, algorithm, 2000.0)])
    bw = list(BW[:2])
    share = (
        1 - evaluate(_no_latency(inst), bw).iteration_time_ns / evaluate(inst, bw).iteration_time_ns
    )
    assert share > 0.05
    _check(inst, astra_sim, tmp_path)


@pytest.mark.parametrize("p", [4, 8])
def test_ring_all_to_all_latency_differs_by_design(p, astra_sim, tmp_path):
    """All-to-all on a Ring (ring algorithm): ASTRA-sim sends to the j-th neighbour over min(j, p -
    j) hops, hieropt counts p - 1 steps; the simulator's excess is exactly the extra hops x latency
       (+ 1 ns endpoint
    delay each)."""
    alpha = 5000.0
    inst = _one("ALLTOALL", 64 * 1024, [("Ring", p, None, alpha)])
    r = simulate(inst, BW[:1], astra_sim, folder=tmp_path)
    hops = sum(min(j, p - j) for j in range(1, p))
    extra = (hops - (p - 1)) * alpha
    assert extra > 0
    assert r.simulated_iteration_time_ns - r.predicted_iteration_time_ns == pytest.approx(
        extra, abs=p * 2 + 2
    )


@pytest.mark.parametrize("n_dims", [2, 3])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("block", BLOCKS)
def test_concurrent_many_chunks(block, kind, n_dims, astra_sim, tmp_path):
    inst = _one(kind, GIB, _dims(block, n_dims), mode="concurrent")
    _check(inst, astra_sim, tmp_path, chunks=256)
