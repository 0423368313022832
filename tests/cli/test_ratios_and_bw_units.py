"""Inputs every command checks alike, each a reproducer:

- ``[heuristic_ratios]`` with the wrong number of ratios was accepted silently by ``solve`` and
  refused by ``compare`` and ``report`` without the file's path: now the instance file's reader
  refuses it, naming the file and the field ``heuristic_ratios.NAME``;
- ``evaluate --bw 250e9,125e9,75e9,50e9`` (bytes/s meant as GB/s) printed a $1.7e19 network without
  a word, then with a note only, where a design row or a bound above 1e6 GB/s is refused: now it is
  refused the same way (exit 2, the dimension and the list in GB/s), unless the values meet the
  instance's own design rows and bounds (then noted, as ``solve`` notes such an optimum);
- ``--bw 2000Gb/s,...`` was refused without the "Gb/s / 8" hint a ``--constraint`` gets.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hieropt.units import implausible_bw_notes

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"


def with_ratios(tmp_path: Path, entry: str) -> Path:
    """gpt3-4d-compare.toml (4 dimensions) with the extra ``[heuristic_ratios]`` line ``entry``."""
    text = (REPO / "instances" / "gpt3-4d-compare.toml").read_text()
    text = text.replace('"../models/', f'"{REPO}/models/')
    anchor = '"scale-up 9:1" = [9, 9, 9, 1]\n'
    assert anchor in text
    p = tmp_path / "ratios.toml"
    p.write_text(text.replace(anchor, anchor + entry + "\n"))
    return p


FIX = "fix: give 4 finite ratios >= 0, at least one positive, one per dimension"


@pytest.mark.parametrize("command", [
    ["solve"], ["evaluate", "--bw", "250,125,75,50"], ["pareto", "--points", "2"], ["compare"],
    ["report"], ["export", "--astra-sim", "net.yml"],
])
def test_wrong_ratio_count_is_refused_by_every_command(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    p = with_ratios(tmp_path, '"bad" = [1, 2, 3]')
    r = run(command[0], p, *command[1:])
    assert r.exit_code == 2
    assert error_line(r) == f"error: {p}: heuristic_ratios.bad: 3 ratios for 4 dimensions; {FIX}"


@pytest.mark.parametrize(("entry", "problem"), [
    ('"bad" = [1, -2, 3, 4]', "ratios [1.0, -2.0, 3.0, 4.0] must be finite numbers >= 0; " + FIX),
    ('"bad" = [0, 0, 0, 0]', "every ratio is 0; " + FIX),
    ('"bad" = "8:4:2:1"',
     "expected a list of 4 numbers, got '8:4:2:1'; fix: write \"bad\" = [8, 4, 2, 1]"),
    ('"bad" = [1, true, 3, 4]',
     "expected a list of 4 numbers, got [1, True, 3, 4]; fix: write \"bad\" = [8, 4, 2, 1]"),
])
def test_each_ratio_problem_names_the_file_and_entry(tmp_path, entry, problem):
    p = with_ratios(tmp_path, entry)
    assert error_line(run("solve", p)) == f"error: {p}: heuristic_ratios.bad: {problem}"


def test_a_ratio_too_large_for_a_float_is_refused_not_a_traceback(tmp_path):
    p = with_ratios(tmp_path, '"bad" = [8, 4, 2, 1' + "9" * 400 + "]")
    line = error_line(run("solve", p))
    assert line.startswith(f"error: {p}: heuristic_ratios.bad: [8, 4, 2, 1999")
    assert line.endswith("... holds a number too large to be a ratio (not a finite number); "
                         + FIX)


def test_valid_ratios_are_read_as_floats():
    import hieropt

    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d-compare.toml")
    assert inst.heuristic_ratios == {
        "halving per level": (8.0, 4.0, 2.0, 1.0), "scale-up 9:1": (9.0, 9.0, 9.0, 1.0),
    }


# ------------------------------------------------------------------------------- --bw in bytes/s

HIGH_NOTE = (
    "implausible allocation: dim 0 2.5e+11, dim 1 1.25e+11, dim 2 7.5e+10, dim 3 5e+10 GB/s per "
    "NPU, above 1e+06 GB/s per NPU; bandwidths, design constraints and bounds are in GB/s per NPU "
    "(1 GB = 1e9 bytes), not bytes/s: check their units (500 GB/s per NPU is --bw 500, not 500e9)"
)


def test_evaluate_refuses_bandwidths_in_bytes_per_second(tmp_path):
    r = run("evaluate", GPT3, "--bw", "250e9,125e9,75e9,50e9")
    assert r.exit_code == 2 and r.stdout == ""
    assert error_line(r) == (
        "error: --bw: dimension 0: 2.5e+11 GB/s per NPU is above 1e+06 GB/s per NPU (a thousand "
        "times the fastest scale-up link): looks like bytes/s; fix: give GB/s per NPU (1 GB = 1e9 "
        "bytes): 2.5e+11 bytes/s = 250 GB/s: write --bw 250,125,75,50 (1e6 is the most --bw takes: "
        "a dimension with no limit)"
    )
    # one dimension in bytes/s: that dimension is named, the others kept as given
    r = run("evaluate", GPT3, "--bw", "300,100,50e9,50")
    assert r.exit_code == 2
    assert error_line(r).startswith("error: --bw: dimension 2: 5e+10 GB/s per NPU is above")
    assert "write --bw 300,100,50,50 " in error_line(r)
    out = tmp_path / "e.json"
    r = run("evaluate", GPT3, "--bw", "250e9,125e9,75e9,50e9", "--json", out)
    assert r.exit_code == 2
    assert json.loads(out.read_text())["status"] == "bad_input"
    # 1e6 itself is the what-if of a dimension with no limit: evaluated, no note
    r = run("evaluate", GPT3, "--bw", "1e6,125,75,50")
    assert r.exit_code == 0, r.output
    assert "implausible" not in r.stdout


def test_evaluate_notes_bytes_per_second_inside_the_instance_design_space(tmp_path):
    # the instance's own rows allow them (a solve could answer them): evaluated, with the note
    text = GPT3.read_text().replace('"../models/', f'"{REPO}/models/')
    text = text.replace('constraints = ["sum(bw) == 500"]', 'constraints = ["bw[3] >= 10"]')
    p = tmp_path / "open.toml"
    p.write_text(text)
    r = run("evaluate", p, "--bw", "250e9,125e9,75e9,50e9")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    # 1e9 x the $17,080,320 of 250,125,75,50 GB/s (cost is linear in bandwidth)
    assert "network cost: $17,080,320,000,000,000" in lines
    assert f"note: {HIGH_NOTE}" in lines
    out = tmp_path / "e.json"
    assert run("evaluate", p, "--bw", "250e9,125e9,75e9,50e9", "--json", out).exit_code == 0
    assert HIGH_NOTE in json.loads(out.read_text())["notes"]


def test_evaluate_notes_bandwidths_far_too_small():
    r = run("evaluate", GPT3, "--bw", "250e-9,125e-9,75e-9,50e-9")
    assert r.exit_code == 0, r.output
    assert (
        "note: implausible allocation: dim 0 2.5e-07, dim 1 1.25e-07, dim 2 7.5e-08, dim 3 5e-08 "
        "GB/s per NPU, below 0.001 GB/s per NPU; bandwidths, design constraints and bounds are in "
        "GB/s per NPU (1 GB = 1e9 bytes), check their units (500 GB/s per NPU is --bw 500, not 0.5 "
        "or 500e-9)"
    ) in r.stdout.splitlines()


def test_a_bandwidth_a_round_off_below_the_threshold_is_not_noted_below_it():
    """A bound ``bw[0] <= 0.001`` met a round-off below 0.001 GB/s per NPU was noted "dim 0 0.001
    GB/s per NPU, below 0.001 GB/s per NPU": the bandwidths are compared as printed (6 significant
    digits), so 0.001 and 0.001 x (1 - 1e-9) are at the threshold (no note), as is 1e6 x (1 +
    1e-9) at the upper one; 0.000999 is noted below it."""
    for bw in (0.001, 0.001 * (1 - 1e-9)):
        assert implausible_bw_notes([bw, 1e6 * (1 + 1e-9)], [True, True]) == ()
    assert implausible_bw_notes([0.000999, 100], [True, True], "allocation", "--bw 500") == (
        "implausible allocation: dim 0 0.000999 GB/s per NPU, below 0.001 GB/s per NPU; "
        "bandwidths, design constraints and bounds are in GB/s per NPU (1 GB = 1e9 bytes), check "
        "their units (500 GB/s per NPU is --bw 500, not 0.5 or 500e-9)",
    )


def test_evaluate_of_plausible_bandwidths_has_no_unit_note():
    r = run("evaluate", GPT3, "--bw", "250,125,75,50")
    assert r.exit_code == 0 and "implausible" not in r.output


UNIT_PROBLEM = (
    "--bw values take plain numbers, in GB/s per NPU (1 GB = 1e9 bytes; Gb/s / 8 = GB/s)"
)


@pytest.mark.parametrize(("bw", "line"), [
    ("2000Gb/s,1000Gb/s,600Gb/s,400Gb/s",
     f"error: --bw: bw[0]: '2000' has the unit 'Gb/s': {UNIT_PROBLEM}; fix: write --bw "
     "250,125,75,50 (2000 Gb/s = 250 GB/s per NPU)"),
    ("250,125,75,400Gbps",
     f"error: --bw: bw[3]: '400' has the unit 'Gbps': {UNIT_PROBLEM}; fix: write --bw "
     "250,125,75,50 (400 Gbps = 50 GB/s per NPU)"),
    ("250 GB/s,125,75,50",
     f"error: --bw: bw[0]: '250' has the unit 'GB/s': {UNIT_PROBLEM}; fix: write --bw "
     "250,125,75,50 (250 GB/s per NPU)"),
    # (a word that does not convert: the number alone)
    ("2000Gb/s,x,75,50",
     f"error: --bw: bw[0]: '2000' has the unit 'Gb/s': {UNIT_PROBLEM}; fix: write the number "
     "alone: 250 (2000 Gb/s = 250 GB/s per NPU)"),
])
def test_bw_with_a_unit_gets_the_constraint_hint(bw, line):
    assert error_line(run("evaluate", GPT3, "--bw", bw)) == line


def test_the_constraint_hint_is_the_same_words():
    line = error_line(run("solve", GPT3, "--constraint", "bw[0] <= 2000Gb/s"))
    assert line.endswith(
        "'2000' has the unit 'Gb/s': constraints take plain numbers, in GB/s per NPU (1 GB = 1e9 "
        "bytes; Gb/s / 8 = GB/s); fix: write the number alone: 250 (2000 Gb/s = 250 GB/s per NPU)"
    )


@pytest.mark.parametrize("command", ["evaluate", "export", "simulate"])
def test_every_command_taking_bw_refuses_bytes_per_second(command, tmp_path):
    # one check for every --bw: 250e9 "GB/s" is 250 GB/s written in bytes/s, refused before any
    # bundle is written or simulator run (export and simulate took it silently)
    extra = ["--astra-sim", tmp_path / "bundle"] if command == "export" else []
    r = run(command, GPT3, "--bw", "250e9,125e9,75e9,50e9", *extra)
    assert r.exit_code == 2, r.output
    assert error_line(r) == (
        "error: --bw: dimension 0: 2.5e+11 GB/s per NPU is above 1e+06 GB/s per NPU (a thousand "
        "times the fastest scale-up link): looks like bytes/s; fix: give GB/s per NPU (1 GB = 1e9 "
        "bytes): 2.5e+11 bytes/s = 250 GB/s: write --bw 250,125,75,50 (1e6 is the most --bw takes: "
        "a dimension with no limit)"
    )
    assert not (tmp_path / "bundle").exists()


L405 = REPO / "instances" / "llama3-405b-16k-cluster.toml"
TBPS = (
    "every dimension below 1 GB/s per NPU (0.45, 0.05) on the H100-SXM, whose scale-up alone has "
    "450 GB/s per direction: looks like TB/s; fix: give GB/s per NPU per direction (TB/s x "
    "1,000): {} if every value is TB/s"
)


def test_evaluate_refuses_bandwidths_in_terabytes_per_second():
    """--bw 0.45,0.05 for an H100's 450 GB/s of NVLink and 50 GB/s of scale-out was evaluated: a
    0.2 % MFU and a 39,846-day run of Llama 3 70B, printed as an answer."""
    r = run("evaluate", L405, "--bw", "0.45,0.05")
    assert r.exit_code == 2, r.output
    assert error_line(r) == "error: --bw: " + TBPS.format("450,50")


def test_a_runs_file_refuses_bandwidths_in_terabytes_per_second(tmp_path):
    runs = REPO / "validation" / "llama3-2024.csv"
    text = runs.read_text().replace("450;50,64,", "0.45;0.05,64,")
    p = tmp_path / "runs.csv"
    p.write_text(text.replace("models/", f"{runs.parent}/models/").replace(
        "networks/", f"{runs.parent}/networks/"))
    r = run("validate", p)
    assert r.exit_code == 2, r.output
    assert error_line(r) == f"error: {p}: line 11: bw_gbps: " + TBPS.format("450;50")


def test_one_slow_dimension_is_not_a_unit_slip():
    """A scale-out of 0.5 GB/s per NPU (one 100 Gb/s port shared by 25 NPUs) beside NVLink's 450
    is evaluated."""
    r = run("evaluate", L405, "--bw", "450,0.5")
    assert r.exit_code == 0, r.output
