"""Numbers in YAML inputs written with an exponent and no decimal point (``1e3``, ``78e-1``) are
numbers, as in YAML 1.2 and in the yaml-cpp reader of LIBRA and ASTRA-sim; PyYAML's YAML 1.1 reads
them as text, which was refused with "'1e3' is text, not a number; fix: write 1e3 without quotes"
for a value written without quotes. A quoted number stays text and is still refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.errors import InputError
from hieropt.io.common import load_yaml
from hieropt.io.libra import read_cost_model

from .util import error_line, run


def test_exponent_without_a_point_is_a_number():
    assert load_yaml("a: 1e3\nb: 78e-1\nc: -2E+2\nd: '1e3'\ne: 1.5e3\nf: 7\n", "s") == {
        "a": 1000.0, "b": 7.8, "c": -200.0, "d": "1e3", "e": 1500.0, "f": 7}


def test_an_exponent_without_a_mantissa_digit_stays_text():
    # (read as a float it would crash the reader: float('-e5') has no digits to convert)
    assert load_yaml("a: -e5\nb: .e5\nc: .5e1\nd: 1.e2\n", "s") == {
        "a": "-e5", "b": ".e5", "c": 5.0, "d": 100.0}


def test_libra_cost_model_with_exponent_prices(tmp_path: Path):
    p = tmp_path / "cost.yml"
    p.write_text("InterChiplet:\n  Link: 2e0\nInterPod:\n  Link: 78e-1\n  Switch: 18e0\n"
                 "  Nic: 316e-1\n")
    cost = read_cost_model(p)
    pod = cost.classes["InterPod"]
    assert cost.classes["InterChiplet"].link_usd_per_gbps == 2.0
    assert (pod.link_usd_per_gbps, pod.switch_usd_per_gbps, pod.nic_usd_per_gbps) == (
        7.8, 18.0, 31.6)


def test_quoted_price_is_still_refused(tmp_path: Path):
    p = tmp_path / "cost.yml"
    p.write_text("InterPod:\n  Link: '1e3'\n")
    with pytest.raises(InputError) as e:
        read_cost_model(p)
    assert str(e.value) == f"{p}: InterPod.Link: '1e3' is text, not a number; fix: write 1e3 " \
        "without quotes"


def test_solve_with_exponent_prices_on_the_command_line(tmp_path: Path):
    """One weight-gradient all-reduce of 1e6 bytes on a Ring of 4 (sum(bw) == 100): all the
    bandwidth on the ring, 4 NPUs x $2 x 100 GB/s = $800; the ring all-reduce moves 2 (P - 1) / P
    x 1e6 = 1.5e6 bytes at 100 bytes/ns: 15,000 ns, plus 3 x 1,000 ns of compute."""
    net = tmp_path / "n.yml"
    net.write_text("Topology: [ Ring ]\nNpusCount: [ 4 ]\nCostDimension: [ A ]\n")
    comm = tmp_path / "c.yml"
    comm.write_text("Forward: [ -1 ]\nInputGrad: [ -1 ]\nWeightGrad: [ 4 ]\n")
    cost = tmp_path / "cost.yml"
    cost.write_text("A:\n  Link: 2e0\n")
    work = tmp_path / "w.txt"
    work.write_text("DATA\n1\nl0 -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 1000000 0\n")
    out = tmp_path / "a.json"
    r = run("solve", "--network", net, "--workload", work, "--communicator", comm, "--cost", cost,
            "--constraint", "sum(bw) == 100", "--no-sensitivity", "--json", out)
    assert r.exit_code == 0, r.output
    import json

    answer = json.loads(out.read_text())
    assert answer["network_cost_usd"] == pytest.approx(800.0, rel=1e-9)
    assert answer["iteration_time_ns"] == pytest.approx(18_000.0, rel=1e-6)


def test_text_price_on_the_command_line_is_one_line(tmp_path: Path):
    net = tmp_path / "n.yml"
    net.write_text("Topology: [ Ring ]\nNpusCount: [ 4 ]\nCostDimension: [ A ]\n")
    cost = tmp_path / "cost.yml"
    cost.write_text("A:\n  Link: two\n")
    work = tmp_path / "w.txt"
    work.write_text("DATA\n1\nl0 -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 1000000 0\n")
    r = run("solve", "--network", net, "--workload", work, "--cost", cost,
            "--constraint", "sum(bw) == 100", "--no-sensitivity")
    assert r.exit_code == 2
    assert error_line(r).startswith(f"error: {cost}: A.Link: 'two' is text, not a number")
