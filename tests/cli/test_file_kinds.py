"""A file of another kind than the command reads is named for what it is, with the command or flag
it belongs to (one line, exit 2), instead of failing on its first key as an unknown one or as bad
TOML: ``FILE is a co-design space, not an instance; fix: run `hieropt codesign FILE` (from Python:
hieropt.codesign)``. Every
shipped input file is recognised as its own kind, and a file of the right kind with a typo keeps
the message that names the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hieropt.io.kinds import file_kind
from tests.cases import REPO, shared_data_dir
from tests.cli.util import error_line, run

INSTANCE = REPO / "instances" / "gpt3-4d.toml"
SPACE = REPO / "spaces" / "codesign-gpt3-4096.toml"
CATALOG = REPO / "catalogs" / "example-4d.toml"
RUNS = REPO / "validation" / "calibration" / "a100-one-node.csv"
SOLVE = "run `hieropt solve {f}` (or evaluate, compare, pareto; from Python: hieropt.solve)"


@pytest.mark.parametrize(("args", "file", "line"), [
    (("solve",), SPACE,
     "is a co-design space, not an instance; fix: run `hieropt codesign {f}` (from Python: "
     "hieropt.codesign)"),
    (("solve",), CATALOG,
     "is a parts catalog, not an instance; fix: give it to provision: `hieropt provision "
     "INSTANCE --catalog {f}` (from Python: hieropt.provision(instance, catalog))"),
    (("codesign",), INSTANCE, "is an instance, not a co-design space; fix: " + SOLVE),
    (("provision", INSTANCE, "--catalog"), INSTANCE,
     "is an instance, not a parts catalog; fix: " + SOLVE),
    (("explore",), INSTANCE, "is an instance, not a shape space; fix: " + SOLVE),
    (("workload", "show"), INSTANCE, "is an instance, not a workload model file; fix: " + SOLVE),
    (("workload", "plan"), INSTANCE, "is an instance, not an LLM model file; fix: " + SOLVE),
    (("validate", REPO / "validation" / "bloom2022.csv", "--npu"), RUNS,
     "is a runs CSV, not a calibrated accelerator file (--npu); fix: run `hieropt validate {f}` "
     "(or `hieropt calibrate {f}`; from Python: hieropt.validate, hieropt.calibrate)"),
    (("explore",), SPACE, "is a co-design space, not a shape space; fix: run `hieropt codesign "
     "{f}` (from Python: hieropt.codesign)"),
    (("codesign",), REPO / "spaces" / "gpt3-4096.toml",
     "is a shape space (explore), not a co-design space; fix: run `hieropt explore {f}` (from "
     "Python: hieropt.explore)"),
    (("solve",), REPO / "validation" / "networks" / "dgx-a100-hdr.toml",
     "is a network file (a runs file's network), not an instance; fix: name it in a runs file's "
     "network column (`hieropt validate RUNS.csv`)"),
])
def test_a_file_of_another_kind_is_named_with_its_command(args, file, line):
    r = run(*args, file)
    assert r.exit_code == 2
    assert error_line(r) == f"error: {file} " + line.format(f=file)


def test_an_astrasim_workload_given_as_an_instance(tmp_path):
    """An ASTRA-sim workload text file (its header policy on line 1) is not bad TOML."""
    w = tmp_path / "w.txt"
    w.write_text("HYBRID_TRANSFORMER_FWD_IN_BCKWD\tmodel_parallel_NPU_group: 4\n1\n"
                 "l0\t-1\t5\tNONE\t0\t5\tNONE\t0\t5\tALLREDUCE\t64\t10\n")
    r = run("solve", w)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {w} is an ASTRA-sim workload text file, not an instance; fix: run `hieropt "
        f"workload show {w}`, or give it to solve with the LIBRA flags: `hieropt solve --workload "
        f"{w} --network N.yml --cost C.yml`")


def test_a_libra_network_given_as_a_workload(tmp_path):
    net = tmp_path / "4d_network.yml"
    net.write_text("Topology: [ Ring, Switch ]  # 2D\nNpusCount: [ 4, 8 ]\n"
                   "CostDimension: [ A, B ]\n")
    r = run("workload", "show", net)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {net} is a LIBRA network YAML, not an ASTRA-sim workload text file; fix: give it "
        f"to solve with the LIBRA flags: `hieropt solve --network {net} --workload W.txt --cost "
        "C.yml`")


def test_a_runs_file_given_as_a_workload_model(tmp_path):
    r = run("workload", "plan", RUNS)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {RUNS} is a runs CSV, not an LLM model file; fix: run `hieropt validate {RUNS}` "
        f"(or `hieropt calibrate {RUNS}`; from Python: hieropt.validate, hieropt.calibrate)")


def test_a_typo_in_a_file_of_the_right_kind_keeps_its_message(tmp_path):
    """An instance without its [network] table is not taken for another kind: its missing key is
    named; bad TOML in an instance is still bad TOML."""
    text = INSTANCE.read_text().replace('"../models/', f'"{REPO}/models/')
    path = tmp_path / "i.toml"
    path.write_text(text.replace("training_loop =", "trainig_loop ="))
    assert error_line(run("solve", path)).startswith(
        f"error: {path}: trainig_loop: unknown key (did you mean 'training_loop'?)")
    path.write_text(text.replace('objective = "performance"', 'objective = "performance'))
    assert "invalid TOML" in error_line(run("solve", path))
    space = tmp_path / "s.toml"
    space.write_text(SPACE.read_text().replace('"../models/', f'"{REPO}/models/')
                     .replace("\nmodel =", "\nmodle ="))
    assert error_line(run("codesign", space)).startswith(
        f"error: {space}: modle: unknown key (did you mean 'model'?)")


KINDS = {
    "instances": "instance", "spaces/codesign-": "co-design space",
    "spaces/gpt3-4096": "shape space", "catalogs/npus": "accelerator catalog",
    "catalogs/": "parts catalog", "models/moe-16l": "workload text",
    "-llm.toml": "llm model", "models/llama3": "llm model", "megatron-1t": "llm model",
    "mixtral": "llm model", "validation/models": "llm model", "models/": "workload model",
    "validation/networks": "network", "validation/": "runs",
}
"""Each shipped input file's kind, by the first part of its path that matches."""


def _shipped() -> list[Path]:
    folders = ("instances", "spaces", "catalogs", "models", "validation")
    return sorted(p for f in folders for p in (REPO / f).rglob("*")
                  if p.is_file() and p.suffix in (".toml", ".csv", ".txt"))


@pytest.mark.parametrize("path", _shipped(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_shipped_file_is_its_own_kind(path):
    name = str(path.relative_to(REPO))
    assert file_kind(path.read_text()) == next(k for part, k in KINDS.items() if part in name)


def test_the_shared_data_files_are_their_own_kind():
    data = shared_data_dir()
    if data is None:
        pytest.skip("the shared data folder is not here (set HIEROPT_SHARED_DATA)")
    kinds = {"astrasim1": "workload text", "astrasim2": "astrasim network",
             "libra/communicator": "libra communicator", "libra/cost_model": "libra cost model",
             "libra/network": "libra network", "libra/workload": "workload text",
             "simai": "workload text"}
    for folder, kind in kinds.items():
        files = [p for p in (data / folder).iterdir() if p.suffix in (".txt", ".yml")]
        assert files and {file_kind(p.read_text()) for p in files} == {kind}, folder


def test_a_shared_libra_network_given_to_workload_show(tmp_path):
    data = shared_data_dir()
    if data is None:
        pytest.skip("the shared data folder is not here (set HIEROPT_SHARED_DATA)")
    net = tmp_path / "4d_network.yml"
    shutil.copy(data / "libra" / "network" / "4d_network.yml", net)
    assert error_line(run("workload", "show", net)).startswith(
        f"error: {net} is a LIBRA network YAML, not an ASTRA-sim workload text file; ")


def test_libra_flags_given_files_of_other_kinds():
    """The LIBRA flags: an instance as the network, a cost model as the communicator; a YAML
    file with a syntax error keeps its line (it is YAML, whatever kind it was meant as)."""
    data = shared_data_dir()
    if data is None:
        pytest.skip("the shared data folder is not here (set HIEROPT_SHARED_DATA)")
    libra = data / "libra"
    workload, cost = libra / "workload" / "GPT_3.txt", libra / "cost_model" / "4d_cost_model.yml"
    r = run("solve", "--network", INSTANCE, "--workload", workload, "--cost", cost)
    assert r.exit_code == 2
    assert error_line(r) == f"error: {INSTANCE} is an instance, not a LIBRA network YAML; fix: " + (
        SOLVE.format(f=INSTANCE))
    r = run("solve", "--network", libra / "network" / "4d_network.yml", "--workload", workload,
            "--cost", cost, "--communicator", cost)
    assert error_line(r) == (
        f"error: {cost} is a LIBRA cost model YAML, not a LIBRA communicator YAML; fix: give it "
        f"to solve with the LIBRA flags: `hieropt solve --network N.yml --workload W.txt --cost "
        f"{cost}`")


@pytest.mark.parametrize(("text", "args", "line"), [
    ('{"best": {"id": "a"}, "ranking": []}', ("solve",),
     "is a co-design result (the JSON `hieropt codesign --json` writes), not an instance; fix: "
     "give it to the committee page: `hieropt report {f}`"),
    ('{"status": "optimal", "objective": "performance"}', ("codesign",),
     "is an answer hieropt wrote (--json), not a co-design space; fix: give the command the "
     "input it was made from (an instance, a space, a model or a runs file)"),
])
def test_hieropts_own_json_answers_are_named(tmp_path, text, args, line):
    f = tmp_path / "answer.json"
    f.write_text(text)
    r = run(*args, f)
    assert r.exit_code == 2
    assert error_line(r) == f"error: {f} " + line.format(f=f)
