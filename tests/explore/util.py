"""Small shape spaces for the explore tests, written as TOML into a temporary folder.

The workload is a tiny GPT-style transformer (2 blocks, h = 1024, s = 512) generated inline, so one
solve takes a few milliseconds. ``SMALL`` is the hand-counted space of the enumeration tests: 16
NPUs, a level ``a`` (Ring or FullyConnected, 2 to 4 NPUs, up to two dimensions, $2 per GB/s) under a
level ``b`` (a Switch of 2 to 16 NPUs, exactly one dimension, $57.4 per GB/s), 2 or 3 dimensions,
"sum(bw) == 500". ``CATALOG`` is a small parts catalog for ``explore --catalog`` and
``codesign --catalog``.
"""

from __future__ import annotations

from pathlib import Path

WORKLOAD = """
[workload]
generator = "transformer"
[workload.params]
name = "tiny"
layers = 2
hidden_size = 1024
sequence_length = 512
micro_batch = 1
bytes_per_element = 2
tp = {tp}
dp = {dp}
npu_peak_tflops = 312.0
efficiency = 0.5
"""

COST = """
[cost.A]
link_usd_per_gbps = 2.0
[cost.B]
link_usd_per_gbps = 7.8
switch_usd_per_gbps = 18.0
nic_usd_per_gbps = 31.6
"""


def space_text(
    npus: int = 16,
    tp: int = 2,
    rule: str = "tp_lowest",
    dims: str = "[2, 3]",
    a_blocks: str = '["Ring", "FullyConnected"]',
    a_npus: str = "[2, 4]",
    a_extra: str = "",
    objective: str = "performance",
    extra: str = "",
) -> str:
    """A space TOML text: levels a (max two dimensions) and b (one Switch on top)."""
    return f"""
name = "small"
npus = {npus}
dims = {dims}
objective = "{objective}"
training_loop = "no_overlap"
constraints = ["sum(bw) == 500"]
nic_gbps = 50
{extra}
[mapping]
rule = "{rule}"
tp = {tp}

[[levels]]
name = "a"
blocks = {a_blocks}
npus = {a_npus}
cost_class = "A"
max_dims = 2
{a_extra}

[[levels]]
name = "b"
blocks = ["Switch"]
npus = [2, {npus}]
cost_class = "B"
min_dims = 1
""" + WORKLOAD.format(tp=tp, dp=npus // tp) + COST


def write_space(folder: Path, name: str = "space.toml", **kw) -> Path:
    """Write :func:`space_text` (keyword arguments passed on) to ``folder / name`` and return the
    path."""
    path = folder / name
    path.write_text(space_text(**kw), encoding="utf-8")
    return path


CATALOG = """
name = "small"
[classes.A]
links = [{ name = "a25", gbps = 25, usd = 40, max_per_npu = 16 }]
[classes.B]
nics = [{ name = "nic50", gbps = 50, usd = 2000, max_per_npu = 4, watts = 20 }]
switches = [{ name = "sw16", radix = 16, usd_per_switch = 10000, watts = 300 }]
"""
"""A small catalog: class A's 25 GB/s links ($40, up to 16 per NPU), class B's 50 GB/s NICs
($2,000, 20 W, up to 4 per NPU) and radix-16 switches ($10,000, 300 W)."""
