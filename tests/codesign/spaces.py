"""The tiny co-design space of the co-design tests: as objects (:func:`space` on :data:`SLOW`
NPUs) and as files for ``hieropt codesign`` (:data:`MODEL`, :data:`SPACE`,
:func:`write_space_files`)."""

from __future__ import annotations

from pathlib import Path

from hieropt.spec import CostClass, CostModel
from hieropt.spec.space import Level
from hieropt.workloads.llm import NPU
from hieropt.workloads.llm.space import CodesignSpace, PlanChoices
from tests.workloads.tiny import params

# a slow NPU (0.1 GFLOP/s) makes compute dominate, as in real plans, so the bound prunes
FP16 = {"number_format": "fp16"}
"""The co-design tests' NPUs train in fp16: 2-byte gradients, the figures below were found with them
(bf16's default FP32 reduction is tested in test_gradient_bytes.py)."""


SLOW = params().model_copy(update={
    "npu": NPU(peak_tflops=1e-4, efficiency=1.0, hbm_gib=1.0, **FP16)})
"""The tiny LLM (tests/workloads/tiny.py) on a slow NPU (0.1 GFLOP/s, fp16, 1 GiB)."""


LEVELS = (
    Level(name="a", blocks=("Ring", "FullyConnected"), npus=(2, 8), cost_class="A", max_dims=2),
    Level(name="b", blocks=("Switch",), npus=(2, 8), cost_class="B"),
)


COST = CostModel(
    classes={
        "A": CostClass(link_usd_per_gbps=1.0),
        "B": CostClass(link_usd_per_gbps=2.0, switch_usd_per_gbps=1.0, nic_usd_per_gbps=1.0),
    }
)


def space(**kw) -> CodesignSpace:
    """The tiny co-design space on 8 :data:`SLOW` NPUs (levels :data:`LEVELS`, prices
    :data:`COST`, ``sum(bw) == 3``, tp 1/2/4, pp 1/2, ZeRO 0/3, recompute none/full), with the
    fields ``kw`` replaced."""
    base = dict(
        name="tiny",
        base=SLOW,
        npus=8,
        levels=LEVELS,
        min_dims=1,
        max_dims=2,
        cost=COST,
        constraints=("sum(bw) == 3",),
        plans=PlanChoices(tp=(1, 2, 4), pp=(1, 2), zero_stage=(0, 3), recompute=("none", "full")),
    )
    return CodesignSpace(**{**base, **kw})



MODEL = """generator = "llm"
[params.model]
name = "tiny"
layers = 4
hidden_size = 8
heads = 4
kv_heads = 2
ffn_size = 16
gated_ffn = true
vocab_size = 32
sequence_length = 4
norm = "rmsnorm"
biases = false
dropout = false
position_embedding = "rotary"
tied_embeddings = false
[params.plan]
micro_batch_size = 2
global_batch_size = 16
vocab_pad_multiple = 1
[params.npu]
peak_tflops = 0.0001
efficiency = 1.0
hbm_gib = 1.0
"""


SPACE = """name = "tiny-codesign"
model = "model.toml"
npus = 8
constraints = ["sum(bw) == 3"]
nic_gbps = 1
dims = [1, 2]
[plans]
tp = [1, 2, 4]
pp = [1, 2]
recompute = ["none", "full"]
[[levels]]
name = "a"
blocks = ["Ring", "FullyConnected"]
npus = [2, 8]
cost_class = "A"
max_dims = 2
[[levels]]
name = "b"
blocks = ["Switch"]
npus = [2, 8]
cost_class = "B"
[cost.A]
link_usd_per_gbps = 1.0
[cost.B]
link_usd_per_gbps = 2.0
switch_usd_per_gbps = 1.0
nic_usd_per_gbps = 1.0
"""


def write_space_files(tmp_path: Path, space: str = SPACE, model: str = MODEL) -> Path:
    """``model`` as model.toml and ``space`` as space.toml in ``tmp_path``; returns the space's
    path."""
    (tmp_path / "model.toml").write_text(model, encoding="utf-8")
    path = tmp_path / "space.toml"
    path.write_text(space, encoding="utf-8")
    return path


def codesign(tmp_path: Path, space: str, *args: str):
    """``hieropt codesign`` (serial, ``--workers 1``) of ``space`` (a space file's text, written
    with its model by :func:`write_space_files` under ``tmp_path``) with more arguments ``args``:
    the click result."""
    from hieropt.cli import app
    from tests.cli.util import runner

    path = write_space_files(tmp_path, space)
    return runner.invoke(app, ["codesign", str(path), "--workers", "1", *args])
