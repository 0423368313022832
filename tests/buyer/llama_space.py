"""Llama 3 70B's co-design space with a [cluster] (the buyer tests' sizes and run costs), written
to a file on 256 H100, and the shipped NVL72 / InfiniBand catalog it is provisioned from."""

from __future__ import annotations

from pathlib import Path

from tests.cases import REPO

LLAMA_SPACE = """
name = "llama70b-sizes"
model = "{model}"
set = ["npus=512", "dp=16", "global_batch_size=512"]
npus = [256, 512, 1024]
objective = "min_run_cost"
tokens = 2e12
constraints = ["bw[0] <= 450", "bw[0] >= 50", "sum(bw[1:]) <= 50", "sum(bw[1:]) >= 12.5"]
mapping_rule = "lowest"
nic_gbps = 50
dims = [2, 2]
switch_only_at_top = false
[plans]
tp = [4, 8]
pp = [1, 2, 4, 8]
zero_stage = [1]
recompute = ["selective", "full"]
micro_batch_size = [1]
[[levels]]
name = "nvl"
blocks = ["Switch"]
npus = [8, 8]
cost_class = "NVLink"
min_dims = 1
[[levels]]
name = "spine"
blocks = ["Switch"]
npus = [2, 4096]
cost_class = "ScaleOut"
min_dims = 1
[cost.NVLink]
link_usd_per_gbps = 0.01
switch_usd_per_gbps = 0.01
nic_usd_per_gbps = 0.01
[cost.ScaleOut]
link_usd_per_gbps = 56.0
switch_usd_per_gbps = 93.75
nic_usd_per_gbps = 240.0
[cluster]
accelerator_usd = 33750
accelerator_w = 700
npus_per_server = 8
server_w = 4600
facility_usd_per_mw = 11.7e6
pue = 1.25
electricity_usd_per_kwh = 0.0826
amortisation_years = 5
facility_amortisation_years = 15
"""
"""Llama 3 70B (B = 512, s = 8,192) on 256, 512 or 1,024 H100 at $33,750, 700 W, 8 per 4.6 kW
server, $11.7M per MW over 15 years, PUE 1.25, 8.26 cents per kWh, 5-year amortisation, 2T
tokens: 39 candidates (43 with 2-byte gradients: bf16's FP32 ones leave 4 more plans too big for
80 GiB). The best of 512 and 1,024 NPUs are candidates whose bound is above the
overall best (256 NPUs), so a search pruning against the overall best alone reports others."""


CATALOG = REPO / "catalogs" / "nvl72-infiniband.toml"
"""The shipped catalog of NVL72 racks and InfiniBand parts."""


def llama_space_file(tmp_path: Path, nic_gbps: float | None = None) -> Path:
    """Llama 3 70B on 256 H100 (8 per 4.6 kW server, PUE 1.25, 2T tokens: LLAMA_SPACE's
    [cluster]) with up to 200 GB/s of scale-out in the space; whole parts get at most the H100's
    50 GB/s per NPU beyond its NVLink domain (catalog nic_gbps), one 400G NIC, unless
    ``nic_gbps`` (GB/s per NPU) gives the model file's [params.npu] another host link (a what-if:
    200 lets two 800G NICs, 2 x 100 GB/s, be bought)."""
    model = REPO / "models" / "llama3-70b.toml"
    if nic_gbps is not None:
        line = 'accelerator = "H100-SXM"'
        text = model.read_text()
        assert line in text
        model = tmp_path / "llama3-70b-nic.toml"
        model.write_text(text.replace(line, f"{line}\nnic_gbps = {nic_gbps}"))
    text = LLAMA_SPACE.format(model=model)
    for old, new in (("npus = [256, 512, 1024]", "npus = 256"), ('"npus=512", "dp=16"',
                     '"npus=256", "dp=8"'), ('"sum(bw[1:]) <= 50"', '"sum(bw[1:]) <= 200"')):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "space.toml"
    path.write_text(text)
    return path
