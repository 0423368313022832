"""Limits far outside any real network: a budget below the cheapest network is infeasible with the
cheapest network's cost, however small the budget ($1e-300 made the LP's units 1e-307 GB/s and
HiGHS rejected its rows); a time target far below the fastest time is printed as given (not
"0.0 ns"); a design row that limits every dimension below 1e-9 GB/s per NPU is refused as a value
in the wrong unit; a time of many digits prints the same digits in ns and ms."""

from __future__ import annotations

from pathlib import Path

import pytest

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"

CHEAPEST = (
    "is below the cheapest network the design constraints allow, $4,096,000.00"
)
"""gpt3-4d.toml under sum(bw) == 500: every GB/s costs at least $2 per NPU on the chiplet ring
(4,096 NPUs x $2 x 500 GB/s = $4,096,000)."""


@pytest.mark.parametrize(
    ("budget", "shown"),
    [("1e-300", "0.00"), ("1e-100", "0.00"), ("1e-10", "0.00"), ("4095000", "4,095,000.00")],
)
def test_a_budget_below_the_cheapest_network_says_so(budget, shown):
    r = run("solve", GPT3, "--budget", budget, "--no-sensitivity")
    assert r.exit_code == 3, r.output
    assert error_line(r) == f"error: infeasible: the budget ${shown} {CHEAPEST}"


@pytest.mark.parametrize(
    ("target", "shown", "below"),
    [
        ("1e-300", "1e-300", "more than 1e+308x"),
        ("1e-50", "1e-50", "1.17e+59x"),
        ("1e-5", "1e-05", "1.17e+14x"),
    ],
)
def test_a_min_cost_target_far_below_the_fastest_is_printed_as_given(target, shown, below):
    r = run("solve", GPT3, "--objective", "min_cost", "--max-time", target)
    assert r.exit_code == 3, r.output
    assert error_line(r) == (
        f"error: infeasible: time target {shown} ns: fastest possible is 1,166,511,725.3 ns — "
        f"the target is {below} below the fastest: times are ns (the target, "
        "max_iteration_time_ns (--max-time))"
    )


@pytest.mark.parametrize("row", ["sum(bw) == 1e-50", "sum(bw) <= 1e-12", "2*sum(bw) <= 1e-10"])
def test_a_row_that_starves_every_dimension_is_refused_as_the_wrong_unit(row):
    r = run("solve", GPT3, "--constraint", row, "--no-sensitivity")
    assert r.exit_code == 2, r.output
    rhs = row.split()[-1]
    level = {"1e-50": "1e-50", "1e-12": "1e-12", "1e-10": "5e-11"}[rhs]
    assert error_line(r) == (
        f"error: --constraint: constraint '{row}': the right-hand side {float(rhs):g} limits "
        f"every dimension to {level} GB/s per NPU, below 1e-09 GB/s (one byte per second): "
        "likely the wrong unit; fix: give the limit in GB/s per NPU (500 GB/s per NPU is "
        "'sum(bw) == 500', not 500e-9)"
    )


def test_the_same_row_in_an_instance_file_names_the_file_and_the_constraint(tmp_path):
    text = GPT3.read_text(encoding="utf-8").replace(
        '"../models/', f'"{REPO / "models"}/').replace("sum(bw) == 500", "sum(bw) == 1e-50")
    p = tmp_path / "tiny.toml"
    p.write_text(text, encoding="utf-8")
    r = run("solve", p)
    assert r.exit_code == 2, r.output
    assert error_line(r).startswith(
        f"error: {p}: constraint 'sum(bw) == 1e-50': the right-hand side 1e-50 limits every "
        "dimension to 1e-50 GB/s per NPU"
    )


@pytest.mark.parametrize("row", ["bw[1] <= 1e-11", "bw[0] >= 1e-12", "sum(bw) >= 1e-12"])
def test_a_row_that_leaves_a_dimension_free_is_solved(row):
    r = run("solve", GPT3, "--constraint", row, "--no-sensitivity")
    assert r.exit_code == 0, r.output


def test_a_time_of_many_digits_shows_the_same_digits_in_ns_and_ms():
    """bw[1] <= 1e-11 GB/s: the iteration takes about 2.9e21 ns; its ms form is the ns form with
    the decimal point moved, not the digits of another double."""
    r = run("solve", GPT3, "--constraint", "bw[1] <= 1e-11", "--no-sensitivity")
    assert r.exit_code == 0, r.output
    line = next(x for x in r.stdout.splitlines() if x.startswith("iteration time: "))
    ns, ms = line.removeprefix("iteration time: ").split(" ns (")[:2]
    ms = ms.split(" ms)")[0]
    whole, tenths = ns.replace(",", "").split(".")
    assert len(whole) == 22 and tenths == "0"  # (a double this large is a whole number of ns)
    assert ms.replace(",", "") == f"{whole[:-6]}.{whole[-6:]}"


@pytest.mark.parametrize(
    ("command", "target", "shown"),
    [
        ("solve", "20d", "'20d' is 20 days"),
        ("solve", "1e30", "'1e30' is 1.157e+16 days"),
        ("provision", "90d", "'90d' is 90 days"),
        ("compare", "48h", "'48h' is 2 days"),
    ],
)
def test_an_iteration_time_target_of_days_is_refused_as_a_run_deadline(command, target, shown):
    """`--max-time 20d` was taken as 20 days per iteration: min_cost answered with the cheapest
    network (a 503-day run of the Llama 3 70B example) instead of refusing a target no training
    iteration has (1e30 ns: 1e21 s / 86,400 s = 1.157e+16 days)."""
    args = [command, GPT3, "--objective", "min_cost", "--max-time", target]
    if command == "provision":
        args += ["--catalog", REPO / "catalogs" / "example-4d.toml"]
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert error_line(r) == (
        f"error: --max-time: {shown} per iteration, and no training iteration takes a day: it "
        "looks like the run's wall time; fix: give the time of one iteration (e.g. --max-time "
        "1.3s), or the run's deadline as --deadline with its token budget (solve, codesign)"
    )


def test_an_iteration_time_target_of_hours_is_taken():
    """A target below a day is an iteration time: under sum(bw) == 500 the cheapest network meeting
    2 h puts nearly all 500 GB/s on the $2 chiplet ring (4,096 NPUs x $2 x 500 GB/s = $4,096,000)
    and just enough on the others to take the 2 h."""
    r = run("solve", GPT3, "--objective", "min_cost", "--max-time", "2h", "--no-sensitivity")
    assert r.exit_code == 0, r.output
    assert "(7,200,000.000000 ms)" in r.stdout
    assert "network cost: $4,096,271" in r.stdout
