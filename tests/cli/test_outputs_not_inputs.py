"""An output option never replaces an input file: a ``--json``, ``--out`` or ``--csv`` path that is
one of the command's input files (named on its command line, or read through one: the model file
a runs file names, the workload an instance names) is refused with exit 2 and the input is left
byte for byte as it was, the error document included."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
ONE_NODE = REPO / "validation" / "calibration" / "a100-one-node.csv"


def copies(tmp_path: Path) -> dict[str, Path]:
    """The one-node calibration runs with their model and network folders, and gpt3-plan-4d.toml
    with its model file, copied into ``tmp_path`` (relative paths kept)."""
    for folder in ("models", "networks"):
        shutil.copytree(REPO / "validation" / folder, tmp_path / folder)
    (tmp_path / "calibration").mkdir()
    runs = tmp_path / "calibration" / "cal.csv"
    shutil.copy(ONE_NODE, runs)
    (tmp_path / "instances").mkdir()
    inst = tmp_path / "instances" / "plan.toml"
    shutil.copy(REPO / "instances" / "gpt3-plan-4d.toml", inst)
    shutil.copy(REPO / "models" / "gpt3-175b-llm.toml", tmp_path / "models")
    return {"runs": runs, "instance": inst, "model": tmp_path / "models" / "megatron-gpt-a100.toml"}


def refused(args: list, target: Path, message: str) -> None:
    """Run ``hieropt ARGS``: exit 2, the one error line ``message``, ``target`` unchanged."""
    before = target.read_bytes()
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert error_line(r) == message
    assert target.read_bytes() == before


def test_calibrate_refuses_an_out_file_that_is_its_runs_file_or_a_model_it_reads(tmp_path):
    f = copies(tmp_path)
    runs, model = f["runs"], f["model"]
    refused(["calibrate", runs, "--out", runs], runs,
            f"error: --out {runs}: is the command's RUNS ({runs}): writing there would replace "
            "it; fix: give another output path")
    # the model file the rows name: found once the runs are read, before the fit
    refused(["calibrate", runs, "--out", model], model,
            f"error: --out {model}: is a file this command reads ({os.path.realpath(model)}): "
            "writing there would replace it; fix: give another output path")
    # --json: the error document is not written over the input either
    refused(["calibrate", runs, "--out", tmp_path / "a.toml", "--json", runs], runs,
            f"error: --json {runs}: is the command's RUNS ({runs}): writing there would replace "
            "it; fix: give another output path")
    assert not (tmp_path / "a.toml").exists()


def test_validate_refuses_a_json_file_that_is_an_input(tmp_path):
    f = copies(tmp_path)
    runs, model = f["runs"], f["model"]
    refused(["validate", runs, "--json", runs], runs,
            f"error: --json {runs}: is the command's RUNS ({runs}): writing there would replace "
            "it; fix: give another output path")
    refused(["validate", runs, "--json", model], model,
            f"error: --json {model}: is a file this command reads ({os.path.realpath(model)}): "
            "writing there would replace it; fix: give another output path")
    other = tmp_path / "other.csv"
    shutil.copy(runs, other)
    refused(["validate", runs, "--calibrate-on", other, "--json", other], other,
            f"error: --json {other}: is the command's --calibrate-on ({other}): writing there "
            "would replace it; fix: give another output path")


def test_solve_refuses_a_json_file_that_is_its_instance_before_any_other_error(tmp_path):
    f = copies(tmp_path)
    inst = f["instance"]
    # --budget -1 is refused as well, but the output is checked first and nothing is written
    refused(["solve", inst, "--budget", "-1", "--json", inst], inst,
            f"error: --json {inst}: is the command's INSTANCE ({inst}): writing there would "
            "replace it; fix: give another output path")
    link = tmp_path / "link.toml"
    link.symlink_to(inst)
    refused(["evaluate", inst, "--bw", "100,100,100,100", "--json", link], inst,
            f"error: --json {link}: is the command's INSTANCE ({inst}): writing there would "
            "replace it; fix: give another output path")
    # the workload model file the instance names
    model = tmp_path / "models" / "gpt3-175b-llm.toml"
    refused(["evaluate", inst, "--bw", "100,100,100,100", "--json", model], model,
            f"error: --json {model}: is a file this command reads "
            f"({os.path.realpath(model)}): writing there would replace it; fix: give another "
            "output path")


def test_a_command_line_click_cannot_parse_writes_no_error_document_over_an_input(tmp_path):
    inst = copies(tmp_path)["instance"]
    before = inst.read_bytes()
    r = run("solve", inst, "--budgett", "1", "--json", inst)
    assert r.exit_code == 2
    assert inst.read_bytes() == before
    out = tmp_path / "r.json"
    r = run("solve", inst, "--budgett", "1", "--json", out)
    assert r.exit_code == 2 and '"status": "bad_input"' in out.read_text()


@pytest.mark.heavy
def test_an_output_beside_the_inputs_is_written(tmp_path):
    f = copies(tmp_path)
    out = tmp_path / "a100.toml"
    r = run("calibrate", f["runs"], "--out", out, "--json", tmp_path / "c.json")
    assert r.exit_code == 0, r.output
    assert out.is_file() and (tmp_path / "c.json").is_file()
