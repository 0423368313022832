"""The design a sensitivity is of: with the performance objective ``solve`` prints the cheapest of
the designs within the gap of the fastest one found, chosen after the marginals were computed at
that fastest design; the JSON's ``sensitivity.at_bw_gbps_per_dim`` is the design every marginal's
``current`` is of, ``at`` says it is not the one printed, and the printed heading names it. On
GPT-3 175B over four dimensions (``instances/gpt3-4d.toml``) the two designs differ by up to
0.05 GB/s per NPU and are equally fast."""

from __future__ import annotations

import json

import pytest

import hieropt
from hieropt.result import POINT_AT
from tests.cases import REPO
from tests.cli.util import run

GPT3 = REPO / "instances" / "gpt3-4d.toml"


def test_the_sensitivity_names_the_design_it_is_of(tmp_path):
    r = run("solve", GPT3, "--json", tmp_path / "s.json")
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "s.json").read_text())
    sens, printed = data["sensitivity"], data["bw_gbps_per_dim"]
    current = [m["current"] for m in sens["marginals"] if m["kind"] == "bandwidth"]
    assert sens["at_bw_gbps_per_dim"] == current and sens["at"] == POINT_AT
    assert max(abs(a - b) for a, b in zip(current, printed, strict=True)) > 0.01
    assert sum(current) == pytest.approx(500.0, rel=1e-9)  # (sum(bw) == 500 holds at both)
    inst = hieropt.load_instance(GPT3)
    at = hieropt.evaluate(inst, current).iteration_time_ns
    assert at == pytest.approx(data["iteration_time_ns"], rel=2e-8)  # (equally fast)
    heading = ("; at the fastest design found, " + ", ".join(f"{x:,.2f}" for x in current)
               + " GB/s per NPU, not the cheapest equally fast one printed (the same time)):")
    assert heading in r.stdout


def test_a_design_that_is_the_one_printed_says_so(tmp_path):
    r = run("solve", GPT3, "--objective", "min_cost", "--max-time", "1.2e9",
            "--json", tmp_path / "s.json")
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "s.json").read_text())
    sens = data["sensitivity"]
    assert sens["at"] == "the design printed (bw_gbps_per_dim)"
    assert sens["at_bw_gbps_per_dim"] == data["bw_gbps_per_dim"]
    current = [m["current"] for m in sens["marginals"] if m["kind"] == "bandwidth"]
    assert current == pytest.approx(data["bw_gbps_per_dim"], rel=1e-9)
    assert "fastest design found" not in r.stdout
