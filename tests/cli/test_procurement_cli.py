"""The procurement questions from the command line: one command each, exit codes and messages."""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from hieropt.cli import app
from tests.cases import REPO

runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"})
INSTANCE = str(REPO / "instances" / "gpt3-4d.toml")


def _json(args: list[str]) -> dict:
    result = runner.invoke(app, [*args, "--json", "-"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_performance_per_cost_command():
    out = _json(["solve", INSTANCE, "--objective", "performance_per_cost"])
    assert out["status"] == "optimal" and out["objective"] == "performance_per_cost"
    assert out["objective_unit"] == "ns*USD"
    assert out["gap"] <= 1e-7
    assert out["objective_value"] == out["iteration_time_ns"] * out["network_cost_usd"]
    # (one LP can certify it: the rows bound the costs without LPs)
    assert out["extra"]["kappa_evaluations"] >= 1
    lo, hi = out["extra"]["kappa_range_usd"]
    assert 0 < lo <= out["network_cost_usd"] <= hi
    fastest = _json(["solve", INSTANCE])
    assert out["network_cost_usd"] < fastest["network_cost_usd"]
    assert out["iteration_time_ns"] > fastest["iteration_time_ns"]


def test_min_cost_command_and_budget_command_agree():
    budget = _json(["solve", INSTANCE, "--budget-usd", "8e6"])
    assert budget["network_cost_usd"] <= 8e6 * (1 + 1e-9)
    target = budget["iteration_time_ns"] * (1 + 1e-9)
    cheap = _json(["solve", INSTANCE, "--objective", "min_cost", "--max-time-ns", repr(target)])
    assert cheap["iteration_time_ns"] <= target * (1 + 1e-9)
    assert abs(cheap["network_cost_usd"] - 8e6) <= 1e-6 * 8e6


def test_time_target_below_fastest_exit_3():
    fastest = _json(["solve", INSTANCE])["iteration_time_ns"]
    result = runner.invoke(
        app, ["solve", INSTANCE, "--objective", "min_cost", "--max-time-ns", str(fastest * 0.9)]
    )
    assert result.exit_code == 3
    assert "infeasible: time target" in result.stderr and "fastest possible is" in result.stderr
    assert "Traceback" not in result.output


def test_min_cost_without_target_exit_2():
    result = runner.invoke(app, ["solve", INSTANCE, "--objective", "min_cost"])
    assert result.exit_code == 2
    assert "--max-time" in result.stderr and "fix:" in result.stderr


def test_perf_per_cost_without_floor_exit_3(tmp_path):
    text = (
        (REPO / "instances" / "gpt3-4d.toml")
        .read_text()
        .replace('"sum(bw) == 500"', '"sum(bw) <= 500"')
    )
    inst = tmp_path / "nofloor.toml"
    inst.write_text(text.replace('workload = "../models/', f'workload = "{REPO}/models/'))
    result = runner.invoke(app, ["solve", str(inst), "--objective", "performance_per_cost"])
    assert result.exit_code == 3
    assert "no minimiser at positive bandwidth" in result.stderr
    assert "Traceback" not in result.output


def test_pareto_command_writes_csv_plot_and_json(tmp_path):
    csv_path, png = tmp_path / "front.csv", tmp_path / "front.png"
    result = runner.invoke(
        app, ["pareto", INSTANCE, "--points", "8", "--csv", str(csv_path), "--plot", str(png)]
    )
    assert result.exit_code == 0, result.stderr
    assert "Pareto front" in result.stdout and "best performance per cost" in result.stdout
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    assert len(rows) == 8
    times = [float(r["iteration_time_ns"]) for r in rows]
    assert times == sorted(times, reverse=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    out = _json(["pareto", INSTANCE, "--points", "4"])
    assert len(out["points"]) == 4 and out["best_per_cost"]["objective"] == "performance_per_cost"
    assert out["points"][-1]["iteration_time_ns"] <= out["points"][0]["iteration_time_ns"]


def test_pareto_points_validation():
    result = runner.invoke(app, ["pareto", INSTANCE, "--points", "1"])
    assert result.exit_code == 2 and "at least 2 points" in result.stderr
    result = runner.invoke(app, ["pareto", INSTANCE, "--spacing", "cubic"])
    assert (
        result.exit_code == 2
        and "unknown spacing 'cubic'" in result.stderr
        and "linear, log" in result.stderr
    )


def test_pareto_log_spacing():
    out = _json(["pareto", INSTANCE, "--points", "4", "--spacing", "log"])
    budgets = [p["budget_usd"] for p in out["points"]]
    assert budgets[2] / budgets[1] == pytest.approx(budgets[1] / budgets[0], rel=1e-9)
    assert budgets[1] / budgets[0] > 1 + 1e-6


def test_folder_given_as_a_file_is_named_as_such(tmp_path):
    result = runner.invoke(app, ["solve", "--network", str(tmp_path), "--workload", str(tmp_path),
                                 "--cost", str(tmp_path)])
    assert result.exit_code == 2
    assert "is a folder, not a network file" in result.stderr


def test_huge_budget_is_not_a_false_optimum():
    """At 1e9 GB/s per NPU the tangent cuts' coefficients once fell below HiGHS's 1e-9 threshold and
    a false 'proven' optimum came back (slower than the equal split). The LP is now scaled: the
    optimum must beat it. (A row of 1e9 written in a file or on the command line is refused as
    bytes/s; the row is built here, where the API takes it as stated.)"""
    import hieropt
    from hieropt.model.timing import evaluate
    from hieropt.solvers.objectives import solve
    from hieropt.spec import LinearConstraint

    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    huge = LinearConstraint(coefficients=(1.0,) * 4, sense="==", rhs=1e9, text="sum(bw) == 1e9")
    inst = inst.model_copy(update={"constraints": (huge,)})
    sol = solve(inst, "performance")
    t_equal = evaluate(inst, [2.5e8] * 4).iteration_time_ns
    assert sol.success
    assert sol.objective_value <= t_equal
    assert sol.lower_bound_ns <= t_equal


def test_min_cost_command_without_a_bandwidth_cap(tmp_path):
    """The default instance without its 'sum(bw) == 500' cap: min_cost for 1.3e9 ns solves (exit 0)
    and is cheaper than with the cap; the fastest network does not exist (exit 3, 'unbounded')."""
    text = (REPO / "instances" / "gpt3-4d.toml").read_text()
    assert 'constraints = ["sum(bw) == 500"]' in text
    inst = tmp_path / "nocap.toml"
    inst.write_text(text.replace('constraints = ["sum(bw) == 500"]', "constraints = []")
                    .replace('"../models/', f'"{REPO / "models"}/'))
    free = _json(["solve", str(inst), "--objective", "min_cost", "--max-time-ns", "1.3e9"])
    capped = _json(["solve", INSTANCE, "--objective", "min_cost", "--max-time-ns", "1.3e9"])
    assert free["status"] == capped["status"] == "optimal"
    assert free["iteration_time_ns"] <= 1.3e9 * (1 + 1e-9)
    assert free["network_cost_usd"] < capped["network_cost_usd"]
    result = runner.invoke(app, ["solve", str(inst)])
    assert result.exit_code == 3 and "unbounded" in result.output


def test_a_large_front_shows_a_sample_table_and_a_progress_bar(tmp_path, monkeypatch):
    """A front of many points: the table shows FRONT_ROWS evenly spaced points (numbered as in the
    front, both ends), the CSV has every point, and from PROGRESS_POINTS a progress bar ends at
    points/points on stderr."""
    from hieropt.cli import solve as solve_cli
    from hieropt.report import text

    monkeypatch.setattr(text.front_table, "__defaults__", (5,))
    monkeypatch.setattr(solve_cli, "PROGRESS_POINTS", 9)
    csv_path = tmp_path / "front.csv"
    result = runner.invoke(app, ["pareto", INSTANCE, "--points", "9", "--csv", str(csv_path)])
    assert result.exit_code == 0, result.stderr
    assert (
        "(9 budgets, each point proven optimal, 5 of them shown: --csv or --json has every point)"
        in result.stdout
    )
    numbers = [
        line.split("│")[1].strip() for line in result.stdout.splitlines() if line.startswith("│")
    ]
    assert numbers == ["1", "3", "5", "7", "9"]  # round(k * 8 / 4)
    assert len(list(csv.DictReader(io.StringIO(csv_path.read_text())))) == 9
    assert "9/9" in result.stderr
    small = runner.invoke(app, ["pareto", INSTANCE, "--points", "4"])
    assert "shown" not in small.stdout and "4/4" not in small.stderr
