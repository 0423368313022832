"""Helpers shared by test modules: the repository's root, the reference data folder, and inputs
several test modules use.

Test modules import these from here, not from ``conftest.py`` or from other test modules.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
"""The repository's root folder."""


STEP_INSTANCE_TOML = """name = "step"
objective = "performance"
training_loop = "step"
workload = "model.toml"
constraints = ["sum(bw) == 500"]
[network]
dims = [{ block = "FullyConnected", npus = 8, cost_class = "A" },
        { block = "Switch", npus = 8, cost_class = "B" }]
[cost.A]
link_usd_per_gbps = 1.0
[cost.B]
link_usd_per_gbps = 1.0
switch_usd_per_gbps = 1.0
nic_usd_per_gbps = 1.0
"""
"""An instance file of loop ``step`` on 8 x 8 NPUs (FullyConnected, Switch) under sum(bw) == 500,
its workload in ``model.toml`` beside it (the test writes that model)."""


PP2D_MODEL_TOML = """generator = "llm"
[params.model]
name = "gpt-22b"
layers = 8
hidden_size = 6144
heads = 64
ffn_size = 24576
vocab_size = 51200
sequence_length = 2048
norm = "layernorm"
biases = true
dropout = true
position_embedding = "learned"
tied_embeddings = true
[params.plan]
tp = 4
pp = 4
dp = 1
micro_batch_size = 1
global_batch_size = 16
recompute = "none"
schedule = "1f1b"
zero_stage = 0
[params.npu]
accelerator = "A100-SXM-80GB"
hbm_reserve_gib = 4.0
"""
"""GPT 22B's architecture cut to 8 layers, tp 4 x pp 4 x dp 1, 16 micro-batches of 1 sequence of
2048 tokens, tied embeddings, on A100s."""

NVLINK_IB_COST_TOML = """[cost.NVLink]
link_usd_per_gbps = 1.0
switch_usd_per_gbps = 1.0
nic_usd_per_gbps = 0.0
[cost.IB]
link_usd_per_gbps = 1.0
switch_usd_per_gbps = 1.0
nic_usd_per_gbps = 1.0
"""
"""Cost classes NVLink (no NIC) and IB ($1 per GB/s of link, switch and NIC), TOML."""

NVLINK_SCALEOUT_COST_TOML = """[cost.NVLink]
link_usd_per_gbps = 4.0
switch_usd_per_gbps = 13.0
nic_usd_per_gbps = 0.01
[cost.ScaleOut]
link_usd_per_gbps = 50.0
switch_usd_per_gbps = 93.75
nic_usd_per_gbps = 120.0
"""
"""Cost classes NVLink and ScaleOut at the shipped co-design spaces' $ per GB/s per NPU, TOML."""

PP2D_INSTANCE_TOML = """name = "pp2d"
objective = "performance"
training_loop = "step"
workload = "model.toml"
constraints = ["bw[0] <= 300", "bw[1] <= 25"]
[network]
dims = [{ block = "Switch", npus = 8, cost_class = "NVLink" },
        { block = "Switch", npus = 2, cost_class = "IB" }]
""" + NVLINK_IB_COST_TOML
""":data:`PP2D_MODEL_TOML` on two nodes of 8 NPUs (NVLink switch, InfiniBand switch): tp [4, 1],
pp [2, 2] placed lowest first, so stages 0 and 1 sit on node 0, 2 and 3 on node 1, and only the
1 -> 2 boundary crosses InfiniBand."""


LLAMA2_7B_TOML = """generator = "llm"
[params.model]
name = "llama2-7b"
layers = 32
hidden_size = 4096
heads = 32
ffn_size = 11008
gated_ffn = true
vocab_size = 32000
sequence_length = 4096
norm = "rmsnorm"
biases = false
position_embedding = "rotary"
tied_embeddings = false
"""
"""The head of an LLM model file: Llama 2 7B's architecture (Touvron et al. 2023, arXiv
2307.09288, Table 1 and section 2.2; its plan and NPU tables follow in each test)."""


def gpt3_step_instance(folder: Path, replacements: tuple[tuple[str, str], ...]) -> Path:
    """GPT-3's model file (``models/gpt3-175b-llm.toml``) with each (old, new) of ``replacements``
    applied, as ``folder/model.toml``, and :data:`STEP_INSTANCE_TOML` with sequential dimensions
    beside it as ``folder/inst.toml`` (its path returned). Each old text must be in the file."""
    model = (REPO / "models" / "gpt3-175b-llm.toml").read_text()
    for old, new in replacements:
        assert old in model, old
        model = model.replace(old, new)
    (folder / "model.toml").write_text(model)
    (folder / "inst.toml").write_text(
        STEP_INSTANCE_TOML.replace('objective = "performance"',
                                   'objective = "performance"\ndimension_mode = "sequential"'))
    return folder / "inst.toml"


def pp2d_instance(folder: Path) -> Any:
    """The instance of :data:`PP2D_INSTANCE_TOML` (its files written into ``folder``)."""
    import hieropt

    (folder / "model.toml").write_text(PP2D_MODEL_TOML)
    (folder / "inst.toml").write_text(PP2D_INSTANCE_TOML)
    return hieropt.load_instance(folder / "inst.toml")


HOURS_PAIR_TOML = """\
name = "hours-pair"
objective = "performance"
training_loop = "no_overlap"
constraints = ["bw[0] + bw[1] == 100", "bw[0] >= 10", "bw[1] >= 10"]

[[workloads]]
workload = "a.txt"
hours_share = 90
mapping = { forward = [1, 1], input_grad = [1, 1], weight_grad = [2, 1] }

[[workloads]]
workload = "b.txt"
hours_share = 10
mapping = { forward = [1, 1], input_grad = [1, 1], weight_grad = [1, 2] }

[network]
dims = [
  { block = "Ring", npus = 2, cost_class = "A" },
  { block = "Ring", npus = 2, cost_class = "B" },
]

[cost.A]
link_usd_per_gbps = 1.0
[cost.B]
link_usd_per_gbps = 3.0
"""
"""Two workloads weighted by shares of hours (90 and 10) on two 2-NPU rings, bw[0] + bw[1] == 100,
each >= 10 (cost 4 b0 + 12 b1 $): a takes 1,000 + 9e4 / b0 ns (own optimum 2,000 ns at b0 = 90),
b 1e6 + 9e7 / b1 ns (own optimum 2e6 ns at b1 = 90); the hour-weighted ratio is
0.5 + 40.5 / b0 + 4.5 / b1, least at (75, 25) with 1.22 (tests/solve/test_hours_share_objective.py
derives it). :func:`hours_pair` writes it with its workloads."""


def hours_pair(folder: Path, text: str = HOURS_PAIR_TOML) -> Path:
    """Write :data:`HOURS_PAIR_TOML` (or ``text``) as ``folder/pair.toml`` with its workloads
    ``a.txt`` and ``b.txt`` beside it; returns the instance's path."""
    (folder / "a.txt").write_text("a -1 1000 NONE 0 0 NONE 0 0 ALLREDUCE 90000 0\n")
    (folder / "b.txt").write_text("b -1 1000000 NONE 0 0 NONE 0 0 ALLREDUCE 90000000 0\n")
    path = folder / "pair.toml"
    path.write_text(text)
    return path


def shared_data_dir() -> Path | None:
    """The reference data folder (LIBRA files, ASTRA-sim workloads, reference optima), or None.

    ``$HIEROPT_SHARED_DATA`` when set, else ``shared/data`` beside the repository; it counts only
    when it holds a ``libra`` folder.
    """
    env = os.environ.get("HIEROPT_SHARED_DATA")
    cand = Path(env) if env else REPO.parent / "shared" / "data"
    return cand if (cand / "libra").is_dir() else None


def seeds(quick: int, slow: int) -> list:
    """Seeds ``0 .. slow - 1`` for ``pytest.mark.parametrize``; those from ``quick`` on are marked
    ``slow`` (they run with ``--slow`` or ``-m slow``)."""
    import pytest

    return [pytest.param(s, marks=pytest.mark.slow) if s >= quick else s for s in range(slow)]


def kept(dims, prices, layers, groups, rows, bounds=None, objective="performance") -> Any:
    """A :class:`hieropt.spec.Instance` from plain tuples (the form kept random instances take).

    Args:
        dims: (block, npus) per dimension; each count is raised to the lcm with its group sizes.
        prices: per dimension, (link[, switch[, nic]]) in $ per GB/s.
        layers: per layer, ((compute_ns, collective, size_bytes) x 3 phases).
        groups: per phase, the group size on each dimension.
        rows: design constraints as (coefficients, sense, rhs), bandwidths in GB/s per NPU.
        bounds: per dimension, (lower_gbps, upper_gbps) or None.
        objective: the instance's objective.
    """
    from hieropt.spec import (
        PHASES,
        Bound,
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
    from tests.fuzz.strategies import tiled

    return Instance(
        name="kept",
        objective=objective,
        training_loop="no_overlap",
        network=Network(
            dims=tuple(
                Dimension(block=b, npus=tiled(p, *(g[d] for g in groups)), cost_class=f"c{d}")
                for d, (b, p) in enumerate(dims)
            )
        ),
        workload=Workload(
            name="kept",
            layers=tuple(
                Layer(
                    name=f"l{i}",
                    **{
                        ph: Phase(compute_ns=c, collective=Collective(k), size_bytes=sz)
                        for ph, (c, k, sz) in zip(PHASES, phases, strict=True)
                    },
                )
                for i, phases in enumerate(layers)
            ),
        ),
        mapping=Mapping(**dict(zip(PHASES, groups, strict=True))),
        cost=CostModel(
            classes={
                f"c{d}": CostClass(
                    **dict(
                        zip(
                            ("link_usd_per_gbps", "switch_usd_per_gbps", "nic_usd_per_gbps"),
                            pr,
                            strict=False,
                        )
                    )
                )
                for d, pr in enumerate(prices)
            }
        ),
        constraints=tuple(
            LinearConstraint(coefficients=a, sense=op, rhs=r, text=f"{a} {op} {r}")
            for a, op, r in rows
        ),
        bounds=None
        if bounds is None
        else tuple(Bound(lower_gbps=lo, upper_gbps=hi) for lo, hi in bounds),
    )


def random_jobs(rng, W: int, D: int, kinds: tuple[str, ...], compute_exp: tuple[float, float],
                size_exp: tuple[float, float], layers: int | None = None) -> dict[str, Any]:
    """The network and the W weighted workloads of a random portfolio, as
    :class:`hieropt.spec.Instance` keyword arguments (``network``, ``workload``, ``mapping``,
    ``more_workloads``).

    Args:
        rng: a ``numpy.random.Generator``; draws, in order: D (block, npus in 2..8) dimensions, per
            workload its layers (phases' collective, compute, size) and groups, then the weights
            (0.5 .. 2) of workloads 2..W.
        kinds: the collectives a phase draws from; a ``NONE`` phase has 0 bytes (no size drawn).
        compute_exp: compute per phase is 10**uniform(lo, hi) ns.
        size_exp: a collective's size is 10**uniform(lo, hi) bytes.
        layers: layers per workload, or None to draw 1..4 per workload.
    """
    from hieropt.spec import (
        PHASES,
        Collective,
        Dimension,
        Job,
        Layer,
        Mapping,
        Network,
        Phase,
        Workload,
    )
    from tests.fuzz.strategies import divisors

    dims = [
        (str(rng.choice(["Ring", "FullyConnected", "Switch"])), int(rng.integers(2, 9)))
        for _ in range(D)
    ]
    network = Network(dims=tuple(Dimension(block=b, npus=p, cost_class="C") for b, p in dims))

    def workload(w: int) -> tuple[Workload, Mapping]:
        def phase() -> Phase:
            kind = Collective(str(rng.choice(kinds)))
            return Phase(
                compute_ns=float(10 ** rng.uniform(*compute_exp)),
                collective=kind,
                size_bytes=0.0 if kind.value == "NONE" else float(10 ** rng.uniform(*size_exp)),
            )

        count = int(rng.integers(1, 5)) if layers is None else layers
        table = tuple(
            Layer(name=f"w{w}l{i}", forward=phase(), input_grad=phase(), weight_grad=phase())
            for i in range(count)
        )
        groups = {ph: tuple(int(rng.choice(divisors(p))) for _, p in dims) for ph in PHASES}
        return Workload(name=f"w{w}", layers=table), Mapping(**groups)

    jobs = [workload(w) for w in range(W)]
    return dict(
        network=network,
        workload=jobs[0][0],
        mapping=jobs[0][1],
        more_workloads=tuple(
            Job(workload=wl, mapping=mp, weight=float(rng.uniform(0.5, 2))) for wl, mp in jobs[1:]
        ),
    )


TINY_PLANS = (("1", 2, 4, 1), ("2", 2, 8, 2), ("0.5", 4, 16, 1), ("4", 4, 32, 4))
"""Four plans of the tiny LLM of ``tests/validate/tiny.py`` (bandwidth GB/s, dp, global batch,
micro-batch), each on its own NPU count (dp): the rows of :func:`tiny_runs`."""
TINY_HEADER = "model,network,bw_gbps,dp,global_batch_size,micro_batch_size,measured_ms,group"


def tiny_runs(
    folder: Path, efficiency: float, scale: float = 1.0, model: str | None = None
) -> Path:
    """A runs file ``runs.csv`` (with ``tiny.toml`` and ``net.toml``) in ``folder`` whose measured
    times are the tiny model's own predictions at flat ``efficiency`` times ``scale`` (0.85: every
    run 15 % faster than the model can time it), one row per plan of :data:`TINY_PLANS`."""
    from hieropt.io.runs import read_runs
    from hieropt.studies.validate.predict import predict_ms
    from tests.validate.tiny import MODEL, write_case

    model = MODEL if model is None else model
    rows = [f"tiny.toml,net.toml,{bw},{dp},{gbs},{mb},1,g" for bw, dp, gbs, mb in TINY_PLANS]
    path = write_case(folder, rows, TINY_HEADER, model)
    times = [predict_ms(r, (f"npu.efficiency={efficiency!r}",)) * scale for r in read_runs(path)]
    rows = [f"tiny.toml,net.toml,{bw},{dp},{gbs},{mb},{t!r},g"
            for (bw, dp, gbs, mb), t in zip(TINY_PLANS, times, strict=True)]
    return write_case(folder, rows, TINY_HEADER, model)


def three_layer_instance(prices, rows, bounds=None, **update) -> Any:
    """An Instance: the three-layer workload of tests/solve/test_procurement_trust.py's CHEAP_DIM on
    Ring 4 x FullyConnected 8 x Switch 16 with the given prices, rows and bounds (``update``: fields
    set on the validated instance, e.g. the objective with its time target)."""
    inst = kept(
        [("Ring", 4), ("FullyConnected", 8), ("Switch", 16)],
        prices,
        [
            ((1000.0, "ALLREDUCE", 1e6), (1000.0, "ALLGATHER", 5e5), (2000.0, "ALLREDUCE", 2e6)),
            ((2000.0, "NONE", 0.0), (1000.0, "REDUCESCATTER", 8e5), (1000.0, "ALLREDUCE", 3e6)),
            ((500.0, "ALLTOALL", 4e5), (500.0, "NONE", 0.0), (800.0, "ALLREDUCE", 1e6)),
        ],
        ((4, 8, 1), (4, 2, 1), (4, 8, 16)),
        rows,
        bounds,
    )
    return inst.model_copy(update=update) if update else inst
