"""``hieropt export --astra-sim`` and ``hieropt simulate``: the bundle, the network file alone,
stdout, and one-line errors (exit 2 bad input, 3 failed run / disagreement); with the real binary
when it is present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hieropt import api
from hieropt.io.astrasim2 import read_network_yml
from hieropt.io.instance import load_instance
from tests.cases import STEP_INSTANCE_TOML
from tests.cli.util import (
    BINARY,
    assert_error,
    assert_ok,
    astrasim_instance_file,
    run,
)

REPO = Path(__file__).resolve().parents[2]
G = 2**30 / 1e9


def test_export_network_file_alone(tmp_path: Path) -> None:
    inst = astrasim_instance_file(tmp_path)
    yml = tmp_path / "network.yml"
    r = run("export", inst, "--astra-sim", yml)
    assert_ok(r)
    assert f"wrote {yml}" in r.stdout.replace("\n", "")
    net = read_network_yml(yml)
    assert net.topology == ("Ring", "FullyConnected", "Switch") and net.npus_count == (4, 4, 8)
    assert net.latency == (0.0, 0.0, 0.0)
    sol = api.solve(load_instance(inst))
    b = sol.bw_gbps
    # Ring (ring algorithm): one link of B; FullyConnected and Switch (direct): B / (p - 1) per
    # link; 2^30-byte GB
    assert net.bandwidth == pytest.approx([b[0] / G, b[1] / 3 / G, b[2] / 7 / G], rel=1e-7)
    assert not (tmp_path / "traces").exists()


def test_export_bundle_and_stdout(tmp_path: Path) -> None:
    inst = astrasim_instance_file(tmp_path)
    r = run("export", inst, "--astra-sim", tmp_path / "b", "--bw", "50,30,20", "--chunks", "4")
    assert_ok(r)
    assert "wrote" in r.stdout and "133 files" in r.stdout.replace(",", "")  # 5 + 128 trace names
    system = json.loads((tmp_path / "b" / "system.json").read_text())
    assert system["preferred-dataset-splits"] == 4
    assert (tmp_path / "b" / "traces" / "0" / "et.127.et").stat().st_nlink == 128
    r = run("export", inst, "--astra-sim", "-", "--bw", "50,30,20")
    assert_ok(r)
    assert "topology: [ Ring, FullyConnected, Switch ]" in r.stdout
    assert "allocation" not in r.stdout  # the tables go to stderr when the file goes to stdout
    assert not Path("-").exists()


def test_export_errors(tmp_path: Path) -> None:
    assert_error(
        run("export", tmp_path / "none.toml", "--astra-sim", tmp_path / "n.yml"),
        2,
        "instance file not found",
    )
    inst = astrasim_instance_file(tmp_path)
    assert_error(
        run("export", inst, "--astra-sim", tmp_path / "n.yml", "--bw", "50,0,20"),
        2,
        "bw[1]",
        "bandwidth > 0",
    )
    assert_error(
        run("export", inst, "--astra-sim", tmp_path / "n", "--bw", "1,2"), 2, "--bw", "3 dimensions"
    )
    (tmp_path / "file").write_text("x")
    assert_error(
        run("export", inst, "--astra-sim", tmp_path / "file", "--bw", "1,2,3"), 2, "not a folder"
    )
    assert_error(
        run("export", inst, "--astra-sim", tmp_path / "no" / "such" / "n.yml", "--bw", "1,2,3"),
        2,
        "--astra-sim",
        "does not exist",
    )
    assert not (tmp_path / "n.yml").exists() and not (tmp_path / "n").exists()


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def test_simulate_errors(tmp_path: Path) -> None:
    inst = astrasim_instance_file(tmp_path)
    assert_error(
        run("simulate", inst, "--astra-sim", tmp_path / "missing", "--bw", "50,30,20"),
        2,
        "no such file",
    )
    plain = tmp_path / "plain"
    plain.write_text("")  # (an empty file is no program)
    assert_error(
        run("simulate", inst, "--astra-sim", plain, "--bw", "50,30,20"), 2, "is not a program"
    )
    plain.write_text("#!/bin/sh\n")  # (a script without its x bit)
    assert_error(
        run("simulate", inst, "--astra-sim", plain, "--bw", "50,30,20"), 2, "not executable"
    )
    # a run that fails: the line saying what ran, then the one error line
    crash = _script(tmp_path / "crash", "echo 'Assertion `delay > 0` failed.' >&2; exit 134")
    _failed_run(run("simulate", inst, "--astra-sim", crash, "--bw", "50,30,20"), "exit 134",
                "Assertion `delay > 0` failed.")
    quiet = _script(tmp_path / "quiet", "echo starting")
    _failed_run(run("simulate", inst, "--astra-sim", quiet, "--bw", "50,30,20"),
                "printed no result", "starting")


def _failed_run(r, *parts: str) -> None:
    """A simulator run that failed: exit 3, nothing on stdout, on stderr the run's start line
    (no end line) and one error line holding every one of ``parts``."""
    assert r.exit_code == 3 and r.stdout == "" and "Traceback" not in r.output, r.output
    start, error = r.stderr.strip().splitlines()
    assert start.startswith(
        "ASTRA-sim: simulating the bw_gbps (--bw) allocation, workload 'wl': 128 NPUs")
    assert error.startswith("error: ")
    for p in parts:
        assert p in error, (p, error)


def test_simulate_disagreement_exits_3(tmp_path: Path) -> None:
    """A 'simulator' that reports 1 ns for every NPU: the comparison is printed, then exit 3 with
    the reason."""
    inst = astrasim_instance_file(tmp_path)
    fake = _script(
        tmp_path / "fake",
        'i=0; while [ $i -lt 128 ]; do echo "sys[$i] finished, 1 cycles, exposed '
        'communication 0 cycles."; i=$((i+1)); done',
    )
    r = run(
        "simulate", inst, "--astra-sim", fake, "--bw", "50,30,20", "--json", tmp_path / "s.json"
    )
    assert r.exit_code == 3
    assert "the simulator does not confirm the answer" in r.stderr and "Traceback" not in r.output
    data = json.loads((tmp_path / "s.json").read_text())
    row = data["allocations"][0]
    assert row["simulated_iteration_time_ns"] == 1.0 and row["predicted_iteration_time_ns"] > 1e3
    assert data["agree"] is False


@pytest.mark.skipif(not BINARY.is_file(), reason="ASTRA-sim binary not found (set ASTRA_SIM)")
@pytest.mark.parametrize(
    "loop", ["no_overlap", pytest.param("tp_dp_overlap_cross", marks=pytest.mark.slow)]
)
def test_simulate_real_binary(tmp_path: Path, loop: str) -> None:
    inst = astrasim_instance_file(tmp_path, loop)
    r = run(
        "simulate",
        inst,
        "--astra-sim",
        BINARY,
        "--json",
        tmp_path / "s.json",
        "--keep",
        tmp_path / "keep",
    )
    if "error while loading shared libraries" in r.output:
        pytest.skip("ASTRA-sim cannot start (apt-get install -y libprotobuf32)")
    assert_ok(r)
    data = json.loads((tmp_path / "s.json").read_text())
    assert [a["name"] for a in data["allocations"]][0] == "optimum" and len(
        data["allocations"]
    ) == 3
    # (enough for 3 %: see simulate.md)
    assert data["dimension_mode"] == "concurrent" and data["chunks"] == 128
    # the simulator against what solve optimised (concurrent dimensions)
    for a in data["allocations"]:
        assert a["simulated_iteration_time_ns"] == pytest.approx(
            a["predicted_own_model_ns"], rel=0.03
        )
        # (approached from above)
        assert a["simulated_iteration_time_ns"] >= a["predicted_own_model_ns"]
    assert data["agree"] and data["optimum_fastest"] and data["same_ranking"]
    assert (tmp_path / "keep" / "optimum" / "run.sh").exists()


def test_export_writes_a_loop_step_bundle_per_stage(tmp_path: Path) -> None:
    """An LLM plan under loop 'step' (named groups, P2P sends, TP 4 x DP 4 x PP 4 on 64 NPUs): one
    trace per NPU (each names its neighbouring stages' NPUs), written from one template per stage;
    the network file alone of the 4,096-NPU plan as before."""
    model = (REPO / "models" / "gpt3-175b-llm.toml").read_text()
    model = model.replace("layers = 96", "layers = 8").replace("npus = 4096", "npus = 64").replace(
        "tp = 8", "tp = 4").replace("pp = 8", "pp = 4").replace("dp = 64", "dp = 4").replace(
        "global_batch_size = 1536", "global_batch_size = 16")
    (tmp_path / "model.toml").write_text(model)
    (tmp_path / "inst.toml").write_text(STEP_INSTANCE_TOML)
    folder = tmp_path / "bundle"
    r = run("export", tmp_path / "inst.toml", "--astra-sim", folder, "--bw", "300,200")
    assert_ok(r)
    assert "64 distinct trace file(s)" in r.stdout.replace("\n", " ")
    assert len(list((folder / "traces" / "0").glob("et.*.et"))) == 64
    manifest = json.loads((folder / "bundle.json").read_text())
    assert manifest["workloads"][0]["trace_files"] == 64 and manifest["training_loop"] == "step"
    yml = tmp_path / "net.yml"
    plan = REPO / "instances" / "gpt3-plan-4d.toml"
    r = run("export", plan, "--astra-sim", yml, "--bw", "200,150,100,50")
    assert_ok(r)
    import math

    assert math.prod(read_network_yml(yml).npus_count) == 4096


def test_exported_network_reads_back_to_the_same_network(tmp_path: Path) -> None:
    """read_network_yml on the file 'hieropt export' writes: the export's conventions (Ring one link
    of B, direct p - 1 links of B / (p - 1), latency per hop), split dimensions merged back; before,
    it read LIBRA's link counting (the Ring at 2 B, the Switch of 32 at B / 31) and five dimensions
    for four."""
    yml = tmp_path / "net.yml"
    assert_ok(
        run(
            "export",
            REPO / "instances" / "gpt3-4d.toml",
            "--astra-sim",
            yml,
            "--bw",
            "250,125,75,50",
        )
    )
    net = read_network_yml(yml)
    # dim 1 (FullyConnected 8) is two simulator dimensions
    assert net.npus_count == (4, 4, 2, 4, 32)
    assert net.bw_gbps == pytest.approx([250, 125, 125, 75, 50], rel=1e-12)
    inst = load_instance(REPO / "instances" / "gpt3-4d.toml")
    assert [(d.block, d.npus, d.algorithm) for d in net.dims] == [
        (d.block, d.npus, d.collective_algorithm) for d in inst.network.dims]
    assert [d.bw_gbps for d in net.dims] == pytest.approx([250, 125, 75, 50], rel=1e-12)
    assert [d.latency_ns for d in net.dims] == [0.0] * 4


def test_exported_latencies_and_algorithms_read_back(tmp_path: Path) -> None:
    inst = astrasim_instance_file(tmp_path)
    text = (
        inst.read_text()
        .replace(
            '{ block = "Ring", npus = 4, cost_class = "Inner" }',
            '{ block = "Ring", npus = 4, cost_class = "Inner", latency_ns = 120.0, '
            'algorithm = "direct" }',
        )
        .replace(
            '{ block = "FullyConnected", npus = 4, cost_class = "Inner" }',
            '{ block = "FullyConnected", npus = 4, cost_class = "Inner", latency_ns = 30.0, '
            'algorithm = "halving_doubling" }',
        )
        .replace(
            '{ block = "Switch", npus = 8, cost_class = "Outer" }',
            '{ block = "Switch", npus = 8, cost_class = "Outer", latency_ns = 500.0 }',
        )
    )
    inst.write_text(text)
    yml = tmp_path / "net.yml"
    assert_ok(run("export", inst, "--astra-sim", yml, "--bw", "50,30,20"))
    net = read_network_yml(yml)
    # per hop: Ring direct a / 2, FullyConnected a, Switch a / 2
    assert net.latency == pytest.approx([60.0, 30.0, 250.0])
    got = [(d.block, d.npus, d.algorithm) for d in net.dims]
    assert got == [
        ("Ring", 4, "direct"),
        ("FullyConnected", 4, "halving_doubling"),
        ("Switch", 8, "direct"),
    ]
    assert [d.bw_gbps for d in net.dims] == pytest.approx([50, 30, 20], rel=1e-12)
    assert [d.latency_ns for d in net.dims] == pytest.approx([120.0, 30.0, 500.0], rel=1e-12)


def test_edited_export_header_is_a_one_line_error(tmp_path: Path) -> None:
    from hieropt.errors import InputError

    yml = tmp_path / "net.yml"
    inst = astrasim_instance_file(tmp_path)
    assert_ok(run("export", inst, "--astra-sim", yml, "--bw", "50,30,20"))
    yml.write_text(yml.read_text().replace("npus_count: [ 4, 4, 8 ]", "npus_count: [ 4, 4, 16 ]"))
    with pytest.raises(InputError) as e:
        read_network_yml(yml)
    assert e.value.source == str(yml) and e.value.field == "topology[2]"
    assert "Switch of 16 NPUs, but the hieropt export header says Switch of 8" in e.value.problem
    assert "export the network again" in e.value.fix


def test_export_writes_the_design_solve_recommends(tmp_path: Path) -> None:
    # gpt3-4d's performance optimum is flat: the LP's own vertex (224.983, 138.048, 103.536,
    # 33.4334 GB/s, 1,166.511725 ms) and the cheapest design within the 1e-8 gap of it (the one
    # solve prints, 1,166.511737 ms) differ; export must check the one solve recommends
    inst = REPO / "instances" / "gpt3-4d.toml"
    out = tmp_path / "solve.json"
    assert_ok(run("solve", inst, "--no-sensitivity", "--json", out))
    solved = json.loads(out.read_text())
    r = run("export", inst, "--astra-sim", "-")
    assert_ok(r)
    line = next(x for x in r.stderr.splitlines() if x.startswith("allocation:"))
    assert line.startswith("allocation: optimum (1,166.511737 ms, relative gap 1e-08): "
                           "225.033, 138.022, 103.517, 33.4273 GB/s per NPU"), line
    shown = [float(x) for x in line.split("): ")[1].split(" GB/s")[0].split(", ")]
    assert shown == pytest.approx(solved["bw_gbps_per_dim"], rel=1e-5)


@pytest.mark.heavy
def test_simulate_shows_the_optimum_status_and_gap(tmp_path: Path) -> None:
    """Without --bw simulate solves the optimum first: its status and proven gap are printed in
    solve's words, and its --json has them under solve's keys ``status`` and ``gap``, the values
    ``solve --json`` writes (the fake 'simulator' disagrees, exit 3, after the table); with --bw
    no optimum is solved: both null."""
    inst = astrasim_instance_file(tmp_path)
    fake = _script(
        tmp_path / "fake",
        'i=0; while [ $i -lt 128 ]; do echo "sys[$i] finished, 1 cycles, exposed '
        'communication 0 cycles."; i=$((i+1)); done',
    )
    r = run("simulate", inst, "--astra-sim", fake, "--json", tmp_path / "sim.json")
    assert r.exit_code == 3, r.output
    # (solved to the gap target 1e-8 of solve's recommended options)
    assert "optimum: status: optimal; relative gap 1.00e-08 (proven)" in r.stdout
    assert_ok(run("solve", inst, "--no-sensitivity", "--json", tmp_path / "solve.json"))
    solved = json.loads((tmp_path / "solve.json").read_text())
    doc = json.loads((tmp_path / "sim.json").read_text())
    assert (doc["status"], doc["gap"]) == ("optimal", solved["gap"])
    assert solved["status"] == "optimal" and 0 <= solved["gap"] <= 1e-8
    given = run("simulate", inst, "--astra-sim", fake, "--bw", "50,30,20",
                "--json", tmp_path / "given.json")
    assert "optimum: status" not in given.output
    doc = json.loads((tmp_path / "given.json").read_text())
    assert (doc["status"], doc["gap"]) == (None, None)
