"""The networks a runs file names: a LIBRA network and an instance file serve as networks, an
instance file's groups are checked against the row's plan and its network sized to the run, and
a network file's top-level keys and dimension_mode are refused with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.io.runs import read_runs
from hieropt.studies.validate import predict_ms

from .tiny import HEADER, refused, write_case

INSTANCE = """objective = "performance"
training_loop = "step"
workload = "tiny.toml"
dimension_mode = "sequential"
[network]
dims = [{ block = "Switch", npus = 2, cost_class = "x" }]
[mapping.groups]
tp = [1]
dp = [2]
pp = [1]
[cost.x]
link_usd_per_gbps = 1.0
switch_usd_per_gbps = 1.0
nic_usd_per_gbps = 1.0
"""


def test_a_libra_network_and_an_instance_file_serve_as_networks(tmp_path: Path):
    rows = ["tiny.toml,inst.toml,10,1", "tiny.toml,net.yml,10,1", "tiny.toml,net.toml,10,1"]
    path = write_case(tmp_path, rows)
    (tmp_path / "inst.toml").write_text(INSTANCE, encoding="utf-8")
    (tmp_path / "net.yml").write_text("Topology: [Switch]\nNpusCount: [2]\nCostDimension: [x]\n",
                                      encoding="utf-8")
    inst, yml, toml = read_runs(path)
    assert inst.net.placement == {"tp": (1,), "dp": (2,), "pp": (1,)}
    assert inst.net.settings == {"dimension_mode": "sequential"}
    assert yml.net.placement is None and yml.net.settings == {}
    times = [predict_ms(r) for r in (inst, yml, toml)]
    assert times == pytest.approx([times[2]] * 3, rel=1e-12)  # one dimension: every mode agrees


def test_an_instance_file_whose_groups_do_not_fit_the_plan_is_one_line(tmp_path: Path):
    path = write_case(tmp_path, ["tiny.toml,inst.toml,10,1,2,1"], HEADER + ",tp,dp")
    (tmp_path / "inst.toml").write_text(INSTANCE, encoding="utf-8")
    assert refused(path) == (
        f"{path}: line 3: network: {tmp_path / 'inst.toml'}: mapping.groups.tp: [1] has 1 NPU but "
        "the row's plan has tp = 2; fix: give the tp group 2 NPUs in [mapping.groups] of "
        f"{tmp_path / 'inst.toml'} (its sizes on the dimensions multiply to them), or give a "
        "network file without [mapping.groups] (the groups placed lowest-first)"
    )


INSTANCE_2X4 = """objective = "performance"
training_loop = "step"
workload = "tiny.toml"
[network]
dims = [{ block = "Switch", npus = 2, cost_class = "x" },
        { block = "Switch", npus = 4, cost_class = "y" }]
[mapping.groups]
tp = [2, 1]
dp = [1, 4]
pp = [1, 1]
[cost.x]
link_usd_per_gbps = 1.0
switch_usd_per_gbps = 1.0
nic_usd_per_gbps = 1.0
[cost.y]
link_usd_per_gbps = 5.0
switch_usd_per_gbps = 5.0
nic_usd_per_gbps = 5.0
"""
"""An instance of 2 x 4 NPUs whose workload (tiny.toml: dp 2 on 2 NPUs) its mapping (tp 2 on
dimension 0, dp 4 on dimension 1) does not fit: a runs file takes its network, cost and groups,
not its workload."""


NET_2X4 = """[network]
dims = [{ block = "Switch", npus = 2, cost_class = "x" },
        { block = "Switch", npus = 4, cost_class = "y" }]
"""


def test_an_instance_files_groups_are_checked_against_the_rows_plan(tmp_path: Path):
    # the groups are checked against the row's plan, not the instance's own workload (dp 2):
    # not "mapping.groups.dp: [1, 4] has 4 NPUs but the workload tiny was generated for dp = 2",
    # for a row of dp 4
    header = HEADER + ",tp,dp,npus"
    rows = ["tiny.toml,inst.toml,10;5,1,2,4,8", "tiny.toml,net.toml,10;5,1,2,4,8"]
    path = write_case(tmp_path, rows, header)
    (tmp_path / "inst.toml").write_text(INSTANCE_2X4, encoding="utf-8")
    (tmp_path / "net.toml").write_text(NET_2X4, encoding="utf-8")
    inst, lowest = read_runs(path)
    assert inst.placement == {"tp": (2, 1), "dp": (1, 4), "pp": (1, 1)}
    assert lowest.placement is None and inst.network == lowest.network
    # tp 2 on dimension 0 and dp 4 on dimension 1 is the lowest-first placement: the same time
    assert predict_ms(inst) == pytest.approx(predict_ms(lowest), rel=1e-12)


def test_a_run_smaller_than_an_instance_files_network_is_sized_as_for_network_files(
        tmp_path: Path):
    # not "the run's tp x pp x dp = 4 NPUs do not fit the 2 x 4 network (which maps the
    # groups); fix: use a network whose inner dimensions (2 NPUs) divide the run's NPUs", though
    # 2 divides 4
    inst = INSTANCE_2X4.replace("dp = [1, 4]", "dp = [1, 2]")
    header = HEADER + ",tp,dp,npus"
    rows = ["tiny.toml,inst.toml,10;5,1,2,2,4", "tiny.toml,net.toml,10;5,1,2,2,4"]
    path = write_case(tmp_path, rows, header)
    (tmp_path / "inst.toml").write_text(inst, encoding="utf-8")
    (tmp_path / "net.toml").write_text(NET_2X4, encoding="utf-8")
    small, lowest = read_runs(path)
    assert [d.npus for d in small.network.dims] == [2, 2]  # (the 2 x 4 file sized to 4 NPUs)
    assert small.placement == {"tp": (2, 1), "dp": (1, 2), "pp": (1, 1)}
    assert predict_ms(small) == pytest.approx(predict_ms(lowest), rel=1e-12)
    # groups that do not tile the run's network (tp and dp both on dimension 0): the fix names
    # its sizes
    (tmp_path / "inst.toml").write_text(inst.replace("dp = [1, 2]", "dp = [2, 1]"),
                                        encoding="utf-8")
    assert refused(path) == (
        f"{path}: line 3: network: {tmp_path / 'inst.toml'}: mapping.groups: the plan's groups "
        "take tp 2 x dp 2 x pp 1 = 4 NPUs of dimension 0, which has 2 NPUs in the run's network "
        "(2 x 2: the file's 2 x 4 sized to its 4 NPUs); fix: give groups whose sizes on each "
        "dimension multiply to its NPUs in the run's network (2 x 2), or give a network file "
        "without [mapping.groups] (the groups placed lowest-first)"
    )


@pytest.mark.parametrize("text, want", [
    ("[network]\nchunks = 4\ndims = [{ block = \"Switch\", npus = 2, cost_class = \"x\" }]\n",
     "network.chunks: unknown key: chunks is a top-level key of the file, not a key of [network] "
     "(a key written below the [network] line belongs to that table); fix: move chunks = 4 above "
     "the [network] line (and above any other [table] line: a file's top-level keys come first)"),
    ("collectives_in_flight = 2\n[network]\n"
     "dims = [{ block = \"Switch\", npus = 2, cost_class = \"x\" }]\n",
     "collectives_in_flight: 2 is not modelled: 1 runs one collective at a time (ASTRA-sim's "
     "behaviour); without the key, the collectives that overlap all run at once, sharing each "
     "dimension's bandwidth; no other number of collectives in flight is modelled; fix: set "
     "collectives_in_flight = 1, or remove it"),
])
def test_a_network_files_top_level_keys_are_refused_with_the_reason(tmp_path: Path, text, want):
    # not "network.chunks: unknown key; fix: remove it or check its spelling", nor
    # "collectives_in_flight: Input should be 1; fix: got 2; use 1"
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,1"])
    (tmp_path / "net.toml").write_text(text, encoding="utf-8")
    assert refused(path) == f"{path}: line 3: network: {tmp_path / 'net.toml'}: {want}"
    # the same in an instance file
    inst = INSTANCE.replace("[network]\n", "[network]\nchunks = 4\n") if "chunks" in want else (
        "collectives_in_flight = 2\n" + INSTANCE)
    (tmp_path / "net.toml").write_text(inst, encoding="utf-8")
    assert refused(path) == f"{path}: line 3: network: {tmp_path / 'net.toml'}: {want}"


def test_dimension_mode_in_a_network_file_is_refused_for_the_plan_s_algorithm(tmp_path: Path):
    # not accepted without effect (each group runs by the plan's algorithm, default sequential:
    # a 22B TP-16 run is 9,791.9 ms with and without dimension_mode)
    path = write_case(tmp_path, ["tiny.toml,net2.toml,10;5,1,2"], HEADER + ",dp")
    two = '[network]\ndims = [{ block = "Switch", npus = 2, cost_class = "a" }, ' \
        '{ block = "Switch", npus = 2, cost_class = "b" }]\n'
    (tmp_path / "net2.toml").write_text('dimension_mode = "concurrent"\n' + two)
    assert refused(path) == (
        f"{path}: line 3: network: {tmp_path / 'net2.toml'}: dimension_mode: has no effect on a "
        "run: each group of the LLM plan runs its collectives over its dimensions by the plan's "
        "algorithm (collective_algorithms; default sequential); fix: remove it, and give the runs "
        'file a collective_algorithms column (e.g. {tp = "concurrent"}) for a group whose '
        "dimensions work concurrently")
    # the column does change the time: dp over both dimensions, concurrently (the all-reduce's
    # slower dimension alone) against one after the other (the sum)
    (tmp_path / "net2.toml").write_text(two)
    path = write_case(tmp_path, ["tiny.toml,net2.toml,10;5,1,4,", "tiny.toml,net2.toml,10;5,1,4,"
                                 '"{dp = ""concurrent""}"'], HEADER + ",dp,collective_algorithms")
    seq, conc = (predict_ms(r) for r in read_runs(path))
    assert conc < seq
