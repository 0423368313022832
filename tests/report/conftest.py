"""Fixtures of the committee-page tests: an instance with a sourced [cluster] and a token budget,
the same instance without them, a co-design result, and their reports (each written once per
session)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cases import REPO
from tests.cli.util import run

NVL = REPO / "instances" / "gpt3-nvl72-2304.toml"
SPACE = REPO / "spaces" / "codesign-gpt3-nvl72-2304.toml"
TOKENS = 300e9

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


@pytest.fixture(scope="session")
def priced(tmp_path_factory) -> tuple[Path, dict]:
    """(folder, committee JSON) of the report on the NVL72 instance with a [cluster] and a token
    budget."""
    tmp = tmp_path_factory.mktemp("priced")
    out = tmp / "out"
    return out, report([with_cluster(tmp / "inst.toml")], out)


@pytest.fixture(scope="session")
def unpriced(tmp_path_factory) -> tuple[Path, dict]:
    """(folder, committee JSON) of the report on the NVL72 instance as shipped (no [cluster], no
    tokens)."""
    out = tmp_path_factory.mktemp("unpriced") / "out"
    return out, report([NVL], out)


@pytest.fixture(scope="session")
def codesign_json(tmp_path_factory) -> Path:
    """The JSON of ``hieropt codesign`` on the NVL72 space with the token budget (36 candidates
    solved)."""
    path = tmp_path_factory.mktemp("codesign") / "codesign.json"
    r = run("codesign", SPACE, "--tokens", f"{TOKENS:g}", "--workers", "1", "--json", path)
    assert r.exit_code == 0, r.output
    return path


@pytest.fixture(scope="session")
def codesigned(tmp_path_factory, codesign_json) -> tuple[Path, dict]:
    """(folder, committee JSON) of the report on the co-design result, with its space and token
    budget."""
    out = tmp_path_factory.mktemp("codesigned") / "out"
    return out, report([codesign_json, "--space", SPACE, "--tokens", f"{TOKENS:g}"], out)
