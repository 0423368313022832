"""The NVL72 instance of the committee-page tests, its co-design space and token budget, a sourced
[cluster] of its accelerators, facility and electricity, and a run of ``hieropt report``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cases import REPO
from tests.cli.util import run

NVL = REPO / "instances" / "gpt3-nvl72-2304.toml"
"""The GPT-3 instance on 2,304 NPUs in NVL72 racks."""

SPACE = REPO / "spaces" / "codesign-gpt3-nvl72-2304.toml"
"""The co-design space of that instance."""

TOKENS = 300e9
"""The token budget of the priced report (tokens)."""

CLUSTER = """
[cluster]
accelerator_usd = { value = 43000, source = "rack" }
accelerator_w = { value = 1200, source = "nvidia" }
pue = 1.25
electricity_usd_per_kwh = 0.0826
facility_usd_per_mw = 11.7e6
amortisation_years = 5
[cluster.sources.rack]
ref = "GB200 NVL72 rack about $3.1M (an analyst's estimate), / 72 GPUs"
date = "2026-12-05"
kind = "estimate"
[cluster.sources.nvidia]
ref = "nvidia.com/en-us/data-center/gb200-nvl72: 1,200 W per Blackwell GPU"
date = "2026-12-05"
kind = "spec"
"""
"""A [cluster] of the accelerators, facility and electricity (figures as in
docs/committee-page.md)."""


def with_cluster(path: Path) -> Path:
    """The NVL72 instance with ``tokens = 300e9`` and :data:`CLUSTER`, written to ``path``."""
    text = NVL.read_text().replace('workload = "../models/', f'workload = "{REPO}/models/')
    head, sep, rest = text.partition("\n[network]")
    path.write_text(f"{head}\ntokens = {TOKENS:g}\n{sep}{rest}{CLUSTER}")
    return path


def report(args: list, out: Path) -> dict:
    """Run ``hieropt report ARGS -o OUT --json OUT/committee.json``; the JSON it wrote."""
    r = run("report", *args, "-o", out, "--points", "8", "--json", out / "committee.json")
    assert r.exit_code == 0, r.output
    return json.loads((out / "committee.json").read_text())
