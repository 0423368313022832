"""The command line's outputs and number parsing on inputs easy to get wrong, each a reproducer:

- a stdout closed by its reader (``| head -1``) ended with exit 1 (a bug's status), nothing on
  stderr, and the ``--json`` file of a certified run never written: now the files come first and the
  run ends with 141 (SIGPIPE);
- ``explore --json FILE`` ending with exit 3 left an earlier run's answer in FILE; ``pareto --csv``
  / ``--plot`` and ``export`` left theirs after a failure;
- a co-design space's ``set`` list errors were blamed on a ``--set`` flag or on the model file, and
  ``set = ["npus=4096"]`` beside ``npus = 2048`` was silently lost;
- ``export --bw`` exported an allocation that breaks the design constraints without evaluate's
  warning;
- messages: ``error: : cannot write`` (no flag named), "instance file not found" for /dev/null, "not
  a instance file", a NaN price "should be <= 1e12", ``--budget-usd 1e400`` reported as "inf" (and
  accepted by compare), and ``--bw 1_00`` or full-width digits read as 100.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hieropt.cli.common import STDOUT_CLOSED, write_stdout

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"  # 4 dimensions, sum(bw) == 500
BW_OK = "250,125,75,50"  # sums to 500


def hieropt(*args: str | Path) -> subprocess.CompletedProcess:
    """``python -m hieropt ARGS`` as a process whose reader closes stdout before reading
    anything."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    p = subprocess.Popen([sys.executable, "-m", "hieropt", *map(str, args)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=REPO)
    p.stdout.close()  # (as `| head -0`: every write to stdout gets EPIPE)
    stderr = p.stderr.read().decode()
    p.stderr.close()
    return subprocess.CompletedProcess(p.args, p.wait(timeout=300), "", stderr)


# ---------------------------------------------------------------------------------- a closed stdout

@pytest.mark.parametrize("args, key", [
    (("solve", GPT3, "--no-sensitivity"), "status"),
    (("evaluate", GPT3, "--bw", BW_OK), "breakdown"),
])
def test_a_closed_stdout_ends_quietly_after_the_json_file(tmp_path, args, key):
    out = tmp_path / "r.json"
    r = hieropt(*args, "--json", out)
    assert r.returncode == STDOUT_CLOSED == 141, r.stderr
    assert r.stderr == ""
    data = json.loads(out.read_text())  # the certified run's own answer, complete
    assert key in data and data.get("status", "optimal") == "optimal"


def test_a_closed_stdout_keeps_pareto_csv(tmp_path):
    csv = tmp_path / "front.csv"
    r = hieropt("pareto", GPT3, "--points", "3", "--csv", csv)
    assert r.returncode == 141 and r.stderr == ""
    assert len(csv.read_text().splitlines()) == 4  # header + 3 points


@pytest.mark.parametrize(
    "args", [("--help",), ("solve", "--help"), ("export", GPT3, "--astra-sim", "-", "--bw", BW_OK)]
)
def test_a_closed_stdout_under_typer_help_and_the_network_file(args):
    r = hieropt(*args)
    assert (r.returncode, r.stderr) == (141, "")


def test_write_stdout_on_a_closed_pipe_exits_141(monkeypatch):
    class Closed:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

    monkeypatch.setattr(sys, "stdout", Closed())
    with pytest.raises(SystemExit) as e:
        write_stdout("x\n")
    assert e.value.code == 141


# ---------------------------------------------------------------- no earlier answer after a failure

def infeasible_space(tmp_path: Path) -> Path:
    text = (REPO / "spaces" / "gpt3-4096.toml").read_text()
    assert '"sum(bw) == 500"' in text
    text = text.replace('"sum(bw) == 500"', '"sum(bw) == 500", "bw[0] >= 600"').replace(
        "../models/", f"{REPO}/models/"
    )
    p = tmp_path / "space.toml"
    p.write_text(text)
    return p


@pytest.mark.heavy
def test_explore_exit_3_replaces_an_earlier_json(tmp_path):
    out = tmp_path / "ex.json"
    out.write_text('{"old": "answer from an earlier run"}')
    r = run("explore", infeasible_space(tmp_path), "--workers", "1", "--json", out)
    assert r.exit_code == 3
    data = json.loads(out.read_text())
    assert "old" not in data
    assert (data["status"], data["exit_code"], data["ranking"]) == ("infeasible", 3, [])
    assert data["message"].startswith("no shape has a certified answer (e.g. ")
    assert "bw[0] >= 600" in data["message"]


def test_pareto_failure_removes_earlier_csv_and_plot(tmp_path):
    csv, plot, js = tmp_path / "f.csv", tmp_path / "f.png", tmp_path / "f.json"
    for p in (csv, plot, js):
        p.write_text("earlier run")
    r = run(
        "pareto", GPT3, "--constraint", "bw[0] >= 600", "--csv", csv, "--plot", plot, "--json", js
    )
    assert r.exit_code == 3
    assert not csv.exists() and not plot.exists()
    assert json.loads(js.read_text())["status"] == "infeasible"


def test_export_failure_removes_the_earlier_network_file_and_bundle(tmp_path):
    yml, bundle = tmp_path / "net.yml", tmp_path / "bundle"
    assert run("export", GPT3, "--astra-sim", yml, "--bw", BW_OK).exit_code == 0
    assert run("export", GPT3, "--astra-sim", bundle, "--bw", BW_OK).exit_code == 0
    assert yml.is_file() and (bundle / "run.sh").is_file() and (bundle / "traces").is_dir()
    (bundle / "mine.txt").write_text("not the bundle's")
    for target in (yml, bundle):
        r = run("export", GPT3, "--astra-sim", target, "--bw", "1,2")
        assert r.exit_code == 2 and "2 values given but the network has 4 dimensions" in error_line(
            r
        )
    assert not yml.exists()
    assert sorted(p.name for p in bundle.iterdir()) == ["mine.txt"]  # the bundle's files only


# ------------------------------------------------------------------------ export --bw: the warnings

def test_export_warns_for_a_given_allocation_that_breaks_a_constraint(tmp_path):
    r = run("export", GPT3, "--astra-sim", tmp_path / "n.yml", "--bw", "100,100,100,100")
    assert r.exit_code == 0
    assert r.stderr.strip() == (
        "warning: violates design constraint 'sum(bw) == 500' (lhs 400 vs 500) (relative "
        "violation 0.2)"
    )
    ev = run("evaluate", GPT3, "--bw", "100,100,100,100")  # the same words as evaluate's
    assert r.stderr.strip() in ev.stdout
    ok = run("export", GPT3, "--astra-sim", tmp_path / "m.yml", "--bw", BW_OK)
    assert ok.exit_code == 0 and ok.stderr == ""


def test_an_evaluation_says_which_constraints_its_allocation_breaks(tmp_path):
    import hieropt

    # 100 x 4 = 400 GB/s per NPU against sum(bw) == 500: (500 - 400) / 500 = 0.2
    said = ("violates design constraint 'sum(bw) == 500' (lhs 400 vs 500) (relative violation "
            "0.2)")
    assert hieropt.evaluate(GPT3, [100, 100, 100, 100]).violations == (said,)
    assert hieropt.evaluate(GPT3, [250, 125, 75, 50]).violations == ()
    out = tmp_path / "e.json"
    r = run("evaluate", GPT3, "--bw", "100,100,100,100", "--json", out)
    assert r.exit_code == 0 and f"warning: {said}" in r.stdout
    assert json.loads(out.read_text())["notes"][0] == said
    ok = tmp_path / "ok.json"
    assert run("evaluate", GPT3, "--bw", BW_OK, "--json", ok).exit_code == 0
    assert not any("violates" in n for n in json.loads(ok.read_text())["notes"])


def limited(tmp_path: Path, budget: str, target: str) -> Path:
    """instances/gpt3-4d.toml with a network budget and a time target (the file's keys)."""
    text = GPT3.read_text().replace('"../models/', f'"{REPO}/models/')
    path = tmp_path / "limited.toml"
    limits = f"max_network_cost_usd = {budget}\nmax_iteration_time_ns = {target}\n"
    line = 'constraints = ["sum(bw) == 500"]\n'
    path.write_text(text.replace(line, line + limits))
    return path


def test_an_evaluation_says_which_budget_and_time_target_its_design_breaks(tmp_path):
    """200, 200, 50, 50 GB/s (sum 500: no constraint broken) cost $17,489,920 and take
    1,351,262,045.4 ns: over a $10M budget by $7,489,920 and a 1e9 ns target by 351,262,045 ns;
    the evaluation says both (library, console, --json), and nothing under $2e7 and 1.5e9 ns."""
    import hieropt

    bw = [200, 200, 50, 50]
    bd = hieropt.evaluate(GPT3, bw)
    assert bd.network_cost_usd == pytest.approx(17_489_920, rel=1e-12)
    assert bd.iteration_time_ns == pytest.approx(1_351_262_045.4, abs=0.1)
    said = ("exceeds the network budget max_network_cost_usd = $10,000,000: the network costs "
            "$17,489,920, $7,489,920 over",
            "exceeds the time target max_iteration_time_ns = 1,000,000,000 ns: the iteration "
            "takes 1,351,262,045 ns, 351,262,045 ns over")
    over = limited(tmp_path, "10e6", "1e9")
    assert hieropt.evaluate(over, bw).violations == said
    out = tmp_path / "e.json"
    r = run("evaluate", over, "--bw", "200,200,50,50", "--json", out)
    assert r.exit_code == 0 and all(f"warning: {s}" in r.stdout for s in said)
    assert json.loads(out.read_text())["notes"][:2] == list(said)
    assert hieropt.evaluate(limited(tmp_path, "2e7", "1.5e9"), bw).violations == ()


def test_export_warns_for_the_budget_and_time_target_its_allocation_breaks(tmp_path):
    """``export --bw`` says what ``evaluate`` says of the same design: 200, 200, 50, 50 GB/s over a
    $10M budget ($17,489,920, $7,489,920 over) and a 1e9 ns target (351,262,045 ns over)."""
    over = limited(tmp_path, "10e6", "1e9")
    r = run("export", over, "--astra-sim", tmp_path / "n.yml", "--bw", "200,200,50,50")
    assert r.exit_code == 0, r.output
    assert r.stderr.strip().splitlines() == [
        "warning: exceeds the network budget max_network_cost_usd = $10,000,000: the network "
        "costs $17,489,920, $7,489,920 over",
        "warning: exceeds the time target max_iteration_time_ns = 1,000,000,000 ns: the "
        "iteration takes 1,351,262,045 ns, 351,262,045 ns over"]
    ok = run("export", limited(tmp_path, "2e7", "1.5e9"), "--astra-sim", tmp_path / "m.yml",
             "--bw", "200,200,50,50")
    assert ok.exit_code == 0 and ok.stderr == ""


# --------------------------------------------------------------------- a co-design space's set list

def space(tmp_path: Path, old: str, new: str) -> Path:
    text = (REPO / "spaces" / "codesign-1t-4096.toml").read_text()
    assert old in text
    p = tmp_path / "cd.toml"
    p.write_text(text.replace(old, new).replace("../models/", f"{REPO}/models/"))
    return p


@pytest.mark.parametrize(
    "old, new, message",
    [
        ('"dp=8"', '"dpp=8"', "set: dpp: unknown key (did you mean 'dp'?); fix: use 'dp' "),
        (
            '"npus=4096", "dp=8"',
            '"npus=abc"',
            "set: npus=abc: 'abc' is text, not a number; fix: write the number without quotes",
        ),
        (
            "\nnpus = 4096",
            "\nnpus = 2048",
            "set: npus=4096: contradicts npus = 2048 of the same file",
        ),
        (
            '"npus=4096", "dp=8"',
            '"dp8"',
            'set: dp8: expected KEY=VALUE; fix: write e.g. set = ["tp=8"]',
        ),
    ],
)
def test_codesign_set_errors_name_the_space_file(tmp_path, old, new, message):
    p = space(tmp_path, old, new)
    line = error_line(run("codesign", p, "--workers", "1"))
    assert line.startswith(f"error: {p}: {message}")
    assert "--set" not in line


# ------------------------------------------------------------------------------------- the messages

def test_csv_on_a_full_device_names_the_flag():
    r = hieropt("pareto", GPT3, "--points", "2", "--csv", "/dev/full")
    assert r.returncode == 2
    assert r.stderr.strip() == (
        "error: --csv /dev/full: cannot write or read: No space left on device; fix: free "
        "space on that file system, or give a path on another one"
    )


def test_an_instance_that_is_not_a_regular_file(tmp_path):
    assert error_line(run("solve", "/dev/null")) == (
        "error: /dev/null: exists but is not a regular file (a device, a pipe or a socket), "
        "so not an instance "
        "file; fix: give the instance file's path"
    )
    assert error_line(run("solve", tmp_path)) == (
        f"error: {tmp_path}: is a folder, not an instance file; fix: give the instance file's path")
    assert error_line(run("provision", GPT3, "--catalog", tmp_path)) == (
        f"error: {tmp_path}: is a folder, not a parts catalog file; fix: give the parts "
        "catalog file's path"
    )


@pytest.mark.parametrize(
    "price, problem",
    [
        ("nan", "nan is not a number (want a finite number)"),
        (
            "inf",
            "inf is not finite (a value beyond 1.8e308, e.g. 1e400, overflows to inf; want "
            "a finite number)",
        ),
    ],
)
def test_a_price_that_is_not_a_number(tmp_path, price, problem):
    text = GPT3.read_text()
    inst = tmp_path / "i.toml"
    first = text.index("link_usd_per_gbps = ")
    end = text.index("\n", first)
    inst.write_text(text[:first] + f"link_usd_per_gbps = {price}" + text[end:])
    inst.write_text(inst.read_text().replace('workload = "../', f'workload = "{REPO}/'))
    line = error_line(run("evaluate", inst, "--bw", BW_OK))
    assert f"link_usd_per_gbps: {problem}; fix: use a number <= 1e+12" in line


@pytest.mark.parametrize("command", ["solve", "compare"])
def test_a_budget_that_overflows(command):
    line = error_line(run(command, GPT3, "--budget-usd", "1e400"))
    assert line == (
        "error: --budget: inf is not finite (a value beyond 1.8e308, e.g. 1e400, overflows to inf; "
        "want a positive number); fix: give a finite value > 0"
    )
    assert error_line(run(command, GPT3, "--budget-usd", "nan")).startswith(
        "error: --budget: nan is not a number (want a positive number)")


@pytest.mark.parametrize("bw, word, fix", [
    ("1_00,125,75,50", "1_00", "write --bw 100,125,75,50 (plain ASCII digits, no '_' separators)"),
    ("\uff11" "00,125,75,50", "\uff11" "00",  # a full-width 1
     "write --bw 100,125,75,50 (ASCII digits)"),
    ("250,125,75,\u0665\u0660", "\u0665\u0660",  # Arabic-Indic 50
     "write --bw 250,125,75,50 (ASCII digits)"),
    ("250,125,75,x50", "x50", "write e.g. --bw 250,125,75,50 (plain ASCII digits, no '_' "
     "separators)"),
])
def test_bandwidths_are_plain_ascii_numbers(bw, word, fix):
    line = error_line(run("evaluate", GPT3, "--bw", bw))
    assert (
        f"is not a comma-separated list of numbers ('{word}' is not a plain decimal number)" in line
    )
    assert line.endswith(f"fix: {fix}")


def test_plain_numbers_still_parse():
    r = run("evaluate", GPT3, "--bw", "2.5e2, 125.0,+75,.5e2")
    assert r.exit_code == 0, r.output
    assert "network cost" in r.stdout
    assert error_line(run("evaluate", GPT3, "--bw", "1e400,125,75,50")).startswith(
        "error: --bw: bw[0]: inf is not finite (a value beyond 1.8e308, e.g. 1e400, "
        "overflows to inf"
    )


@pytest.mark.parametrize("command, module, name, terminated", [
    ("explore", "hieropt.studies.explore", "explore", False),
    ("explore", "hieropt.studies.explore", "explore", True),
    ("codesign", "hieropt.studies.codesign", "codesign", False),
    ("explore", "hieropt.io.space", "load_space", False),  # (before the sweep: reading the space)
    ("codesign", "hieropt.io.codesign", "load_codesign", False),
])
def test_an_interrupted_sweep_replaces_an_earlier_json(
    tmp_path, monkeypatch, command, module, name, terminated
):
    """Ctrl-C (130) or SIGTERM (143), in the sweep or before it, writes this
    run's outcome to --json, never leaving an earlier run's answer there."""
    import importlib

    from hieropt.errors import Terminated

    def interrupted(*args, **kwargs):
        raise (Terminated if terminated else KeyboardInterrupt)()

    monkeypatch.setattr(importlib.import_module(module), name, interrupted)
    space = (
        REPO / "spaces" / ("gpt3-4096.toml" if command == "explore" else "codesign-gpt3-4096.toml")
    )
    out = tmp_path / "sweep.json"
    out.write_text('{"old": "answer from an earlier run"}')
    r = run(command, space, "--workers", "1", "--json", out)
    code = 143 if terminated else 130
    assert r.exit_code == code
    data = json.loads(out.read_text())
    assert (data["status"], data["exit_code"]) == ("interrupted", code)
    assert data["message"].startswith(
        "terminated: no --out file" if terminated else "interrupted: no --out file"
    )


@pytest.mark.heavy
def test_an_interrupt_after_the_answer_keeps_it(tmp_path, monkeypatch):
    """A Ctrl-C while the tables print, after the --json answer was written: exit 130, the answer
    stays."""
    from hieropt.report import explore as report

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "summary_lines", interrupted)
    out = tmp_path / "sweep.json"
    r = run("explore", REPO / "spaces" / "gpt3-4096.toml", "--workers", "1", "--json", out)
    assert r.exit_code == 130
    data = json.loads(out.read_text())
    assert "status" not in data and data["ranking"]


@pytest.mark.parametrize(
    ("bw", "cost"),
    [
        # 1e-6 GB/s on each dimension: $0.2762 (printed "$0" before)
        ("0.000001,0.000001,0.000001,0.000001", "network cost: $0.28\n"),
        (BW_OK, "network cost: $17,080,320\n"),
    ],
)
def test_evaluate_prints_a_small_network_cost_in_cents(bw: str, cost: str):
    r = run("evaluate", GPT3, "--bw", bw)
    assert r.exit_code == 0, r.output
    assert cost in r.stdout


@pytest.mark.parametrize(
    ("args", "problem", "fix"),
    [
        # (was "-1e+09 is not a positive number": the value in ns, never typed)
        (["solve", GPT3, "--objective", "min_cost", "--max-time=-1s"], "--max-time: '-1s' is "
         "negative", "write e.g. --max-time 1.3s"),
        (["solve", GPT3, "--objective", "min_cost", "--max-time=-5ms"], "--max-time: '-5ms' is "
         "negative", "write e.g. --max-time 1.3s"),
        (["solve", GPT3, "--objective", "min_cost", "--max-time", "0s"], "--max-time: '0s' is "
         "zero", "write e.g. --max-time 1.3s"),
        # (was "-5e+06 is not a positive number")
        (["solve", GPT3, "--budget=-5M"], "--budget: '-5M' is negative", "write e.g. --budget 10M"),
    ],
)
def test_a_limit_below_zero_is_told_in_the_unit_typed(args, problem, fix):
    line = error_line(run(*args))
    assert line.startswith(f"error: {problem} (want a value > 0); fix: {fix}"), line


@pytest.mark.parametrize(("text", "seconds"), [
    ("3600", 3600.0), ("2h", 7200.0), ("90min", 5400.0), ("45s", 45.0), ("1d", 86400.0),
])
def test_a_simulator_timeout_takes_a_unit_and_a_plain_number_is_seconds(text, seconds):
    from hieropt.cli.numbers import parse_seconds

    assert parse_seconds(text, "--timeout") == seconds


@pytest.mark.parametrize(("timeout", "problem"), [
    # (was "input should be a valid number, unable to parse string as a number (given '2h')")
    ("30m", "unknown time unit 'm' in '30m'"),
    ("0.5", "'0.5' is 0.5 s, below 1 s"),
    ("-1", "'-1' is negative (want a value > 0)"),
])
def test_a_simulator_timeout_in_another_unit_is_refused_in_its_words(timeout, problem):
    line = error_line(run("simulate", GPT3, "--astra-sim", "/nonexistent", "--timeout", timeout))
    assert line == (f"error: --timeout: {problem}; fix: write e.g. --timeout 2h or --timeout 7200 "
                    "(units: s, min, h, d; a plain number is s)")
