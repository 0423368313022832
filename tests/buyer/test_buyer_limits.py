"""A deadline ("15.6T tokens within 150 days"), a total capex budget and the site's power cap; times
and money with units on the command line, one budget name, and the hints on numbers in the wrong
unit; the Llama 3 405B example."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hieropt
from hieropt import SolveOptions
from hieropt.cli.numbers import parse_amount, parse_deadline_ns, parse_time_ns
from hieropt.errors import InputError, NoSolutionError
from hieropt.model.run import iteration_target_ns, network_budget_usd
from tests.cli.util import error_line, run

REPO = Path(__file__).resolve().parents[2]
LLAMA = REPO / "instances" / "llama3-405b-16k-cluster.toml"
GPT3 = REPO / "instances" / "gpt3-4d.toml"


@pytest.fixture(scope="module")
def llama():
    return hieropt.load_instance(LLAMA)


@pytest.fixture(scope="module")
def answers(llama):
    """The three answers of the example: fastest, performance per network cost, min $ per run."""
    return {o: hieropt.solve(llama, objective=o, options=SolveOptions(sensitivity=False))
            for o in ("performance", "performance_per_cost", "min_run_cost")}


def test_the_cheapest_run_buys_nearly_all_the_scale_out(llama, answers):
    floor = llama.bounds_or_default[1].lower_gbps
    ceiling = llama.bounds_or_default[1].upper_gbps
    assert (floor, ceiling) == (12.5, 50)  # a 100 to a 400 Gb/s port per GPU
    fast, cheap, ratio = (answers[o] for o in ("performance", "min_run_cost",
                                                "performance_per_cost"))
    assert fast.bw_gbps == pytest.approx([450, ceiling], rel=1e-9)
    # 16,384 NPUs x (450 GB/s x 3 x $0.01 + 50 GB/s x $(56 + 93.75 + 240))
    assert fast.network_cost_usd == pytest.approx(16384 * 19501, rel=1e-9)
    cost = {o: s.run.run_cost_usd for o, s in answers.items()}
    assert cost["min_run_cost"] == pytest.approx(cheap.objective_value, rel=1e-12)
    # the cheapest run stops short of the ceiling: the last GB/s of scale-out cost more than the
    # cluster hours they save; time x network cost starves the network and costs far more per run
    assert cheap.bw_gbps[0] == pytest.approx(450, rel=1e-9)
    assert ratio.bw_gbps[1] < cheap.bw_gbps[1] < ceiling * (1 - 1e-3)
    assert cost["min_run_cost"] < cost["performance"] * (1 - 1e-3)
    assert cost["min_run_cost"] < 0.7 * cost["performance_per_cost"]


def test_a_deadline_binds_the_cheapest_network_not_the_cheapest_run(llama, answers):
    free = answers["min_run_cost"]
    # the cheapest run takes 69.1 days, the fastest design 68.0: a shorter deadline is infeasible
    assert 67 < answers["performance"].run.time_to_train_days < free.run.time_to_train_days < 70
    target = iteration_target_ns(llama, 150 * 86400e9)
    assert target == pytest.approx(150 * 86400e9 / (15.6e12 / (2048 * 8192)), rel=1e-15)
    short = iteration_target_ns(llama, 50 * 86400e9)
    late = hieropt.solve(
        llama,
        objective="min_run_cost",
        options=SolveOptions(max_iteration_time_ns=short, sensitivity=False),
    )
    assert late.status == "infeasible"
    assert run("solve", LLAMA, "--deadline", "50d", "--no-sensitivity").exit_code == 3
    sol = hieropt.solve(
        llama,
        objective="min_cost",
        options=SolveOptions(max_iteration_time_ns=target, sensitivity=False),
    )
    assert sol.success
    assert sol.run.time_to_train_days == pytest.approx(150, rel=1e-7)  # the deadline binds
    assert floor_of(llama) < sol.bw_gbps[1] < free.bw_gbps[1]
    assert sol.run.run_cost_usd > free.objective_value
    r = run("solve", LLAMA, "--objective", "min_cost", "--deadline", "150d", "--no-sensitivity",
            "--json", "-")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["run"]["run_cost_usd"] == pytest.approx(
        sol.run.run_cost_usd, rel=1e-9
    )


def floor_of(instance):
    """The lower bandwidth bound of the scale-out dimension (dim 1), GB/s per NPU."""
    return instance.bounds_or_default[1].lower_gbps


def test_a_deadline_needs_a_token_budget():
    with pytest.raises(InputError, match="token budget"):
        iteration_target_ns(hieropt.load_instance(GPT3), 90 * 86400e9)
    assert "--tokens" in error_line(run("solve", GPT3, "--deadline", "90d"))


def test_a_deadline_of_a_day_or_more_per_iteration_is_refused(llama):
    # 15.6T tokens in iterations of 2,048 x 8,192 = 16,777,216 tokens: 929,832.46 iterations;
    # 1e8 days over them is 107.5 days per iteration: a unit slip, refused up front
    iterations = 15.6e12 / (2048 * 8192)
    assert round(iterations, 2) == 929_832.46 and round(1e8 / iterations, 1) == 107.5
    assert iteration_target_ns(llama, 1e8 * 86400e9) == pytest.approx(
        1e8 * 86400e9 / iterations, rel=1e-12)
    r = run("solve", LLAMA, "--deadline", "1e8d", "--no-sensitivity")
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --deadline: '1e8d' for 929,832 iterations is 107.5 days per iteration, and no "
        "training iteration takes a day; fix: check the deadline's unit (d, h, min, s): give less "
        "than 929,832 days (one day per iteration), e.g. --deadline 90d")


def test_a_total_budget_leaves_the_rest_for_the_network(llama):
    # accelerators 16,384 x $33,750 and a facility of 16,384 x (700 + 4,600 / 8) W = 20.89 MW x
    # $11.7M
    fixed = 16384 * 33750 + 11.7e6 * 16384 * (700 + 4600 / 8) / 1e6
    assert network_budget_usd(llama, 1e9) == pytest.approx(1e9 - fixed, rel=1e-12)
    with pytest.raises(NoSolutionError, match="does not cover"):
        network_budget_usd(llama, 5e8)
    r = run(
        "solve",
        LLAMA,
        "--objective",
        "performance",
        "--total-budget",
        "1B",
        "--no-sensitivity",
        "--json",
        "-",
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["network_cost_usd"] <= (1e9 - fixed) * (1 + 1e-9)
    assert out["run"]["capex_usd"] == pytest.approx(1e9, rel=1e-6)  # binds: the fastest is $1.117B


def test_the_site_power_cap(llama):
    mw = 16384 * (700 + 4600 / 8) * 1.25 / 1e6  # 26.11 MW
    capped = llama.model_copy(
        update={"cluster": llama.cluster.model_copy(update={"max_power_mw": 26.0})}
    )
    with pytest.raises(NoSolutionError, match="26.11 MW"):
        hieropt.solve(capped, options=SolveOptions(sensitivity=False)).raise_for_status()
    # the sweeps' tie-break (explore's and codesign's rows) refuses it too
    from hieropt.solvers.objectives import solve_fastest_cheapest

    with pytest.raises(NoSolutionError, match="26.11 MW"):
        solve_fastest_cheapest(capped)
    ok = llama.model_copy(
        update={"cluster": llama.cluster.model_copy(update={"max_power_mw": 26.2})}
    )
    assert hieropt.solve(ok, options=SolveOptions(sensitivity=False)).run.power_mw == pytest.approx(
        mw, rel=1e-12
    )


def _capped_file(tmp_path: Path, cap_mw: float) -> Path:
    """The Llama 3 instance file with ``max_power_mw = cap_mw`` in its ``[cluster]``."""
    text = LLAMA.read_text().replace('"../models/', f'"{REPO}/models/')
    path = tmp_path / "capped.toml"
    cap = f'max_power_mw = {{ value = {cap_mw}, source = "epoch-cost-model" }}'
    path.write_text(text.replace("\n[cluster]\n", f"\n[cluster]\n{cap}\n", 1))
    return path


def test_evaluate_says_a_design_is_above_the_site_power_cap(tmp_path):
    # 16,384 x (700 + 4,600 / 8) W x 1.25 = 26.112 MW, above a 25 MW cap
    r = run("evaluate", _capped_file(tmp_path, 25), "--bw", "450,50", "--json", "-")
    assert r.exit_code == 0, r.output
    note = ("infeasible at this site (solve exits 3): the cluster draws 26.11 MW (with PUE), above "
            "the site's power cap of 25.00 MW; fewer NPUs or a higher cap")
    assert note in json.loads(r.stdout)["notes"]
    assert f"warning: {note}" in r.stderr
    under = run("evaluate", _capped_file(tmp_path, 26.2), "--bw", "450,50")
    assert under.exit_code == 0 and "site" not in under.output


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("1.3s", 1.3e9),
        ("1300ms", 1.3e9),
        ("23h", 23 * 3600e9),
        ("2h", 7.2e12),
        ("1300", 1300.0),
        ("5us", 5e3),
        ("1.5e9ns", 1.5e9),
    ],
)
def test_times_with_units(text, ns):
    assert parse_time_ns(text, "--max-time") == pytest.approx(ns, rel=1e-15)


def test_a_deadline_of_days_is_a_time_an_iteration_target_is_not():
    assert parse_deadline_ns("90d") == pytest.approx(90 * 86400e9, rel=1e-15)
    with pytest.raises(InputError, match=r"^--max-time: '90d' is 90 days per iteration"):
        parse_time_ns("90d", "--max-time")


@pytest.mark.parametrize(
    ("text", "usd"),
    [("10M", 1e7), ("2.5B", 2.5e9), ("$750k", 7.5e5), ("1e7", 1e7), ("15T", 1.5e13)],
)
def test_money_with_suffixes(text, usd):
    assert parse_amount(text, "--budget") == pytest.approx(usd, rel=1e-15)


@pytest.mark.parametrize(
    ("flag", "text", "words"),
    [
        ("--max-time", "1.3 fortnights", "unknown time unit"),
        ("--budget", "10X", "unknown suffix"),
        ("--budget", "-5M", "'-5M' is negative"),
    ],
)
def test_bad_units_are_one_line_errors(flag, text, words):
    line = error_line(run("solve", GPT3, flag, text))
    assert flag in line and words in line


def test_budget_has_one_name_and_its_old_names_still_work():
    new = json.loads(run("solve", GPT3, "--budget", "8M", "--no-sensitivity", "--json", "-").stdout)
    old = json.loads(
        run("solve", GPT3, "--budget-usd", "8e6", "--no-sensitivity", "--json", "-").stdout
    )
    # the fastest within the budget spends it (to the gap: the cheapest of the equally fast)
    assert new["network_cost_usd"] == old["network_cost_usd"] == pytest.approx(8e6, rel=1e-7)
    assert new["network_cost_usd"] <= 8e6
    lib = hieropt.solve(GPT3, options=SolveOptions(budget_usd=8e6, sensitivity=False))
    assert lib.network_cost_usd == pytest.approx(8e6, rel=1e-9)
    with pytest.warns(DeprecationWarning), pytest.raises(InputError, match="old name"):
        hieropt.solve(GPT3, budget_usd=8e6, max_network_cost_usd=9e6)


def test_max_time_with_units_equals_ns():
    fast = hieropt.solve(GPT3, options=SolveOptions(sensitivity=False)).iteration_time_ns
    target_s = fast * 1.01 / 1e9
    a = json.loads(
        run(
            "solve",
            GPT3,
            "--objective",
            "min_cost",
            "--max-time",
            f"{target_s!r}s",
            "--no-sensitivity",
            "--json",
            "-",
        ).stdout
    )
    b = json.loads(
        run(
            "solve",
            GPT3,
            "--objective",
            "min_cost",
            "--max-time-ns",
            repr(target_s * 1e9),
            "--no-sensitivity",
            "--json",
            "-",
        ).stdout
    )
    assert a["network_cost_usd"] == pytest.approx(b["network_cost_usd"], rel=1e-9)


def test_a_time_target_a_million_times_too_small_gets_a_hint():
    fast = hieropt.solve(
        GPT3, options=SolveOptions(sensitivity=False)
    ).iteration_time_ns  # about 1.17 s
    line = error_line(run("solve", GPT3, "--objective", "min_cost", "--max-time-ns", "1300"))
    assert (
        "fastest possible" in line
        and "a plain number is ns" in line
        and "did you mean 1300ms" in line
    )
    assert fast > 1300 * 1e6 * 0.5


def test_hbm_given_in_bytes_is_refused_with_the_fix():
    from hieropt.io.llm import read_llm

    with pytest.raises(InputError) as e:
        read_llm(REPO / "models" / "gpt3-175b-llm.toml", ["hbm_gib=85899345920"])
    msg = str(e.value)
    assert "hbm_gib" in msg and "bytes rather than GiB" in msg and "e.g. 80 for" in msg
    assert "\n" not in msg


def test_a_nic_rated_in_gbit_written_as_gbps_is_refused(tmp_path):
    from hieropt.io.catalog import read_catalog

    text = (REPO / "catalogs" / "nvl72-infiniband.toml").read_text()
    assert "gbit_per_s = 800" in text
    cat = tmp_path / "c.toml"
    cat.write_text(text.replace("gbit_per_s = 800", "gbps = 800", 1))
    with pytest.raises(InputError) as e:
        read_catalog(cat)
    msg = str(e.value)
    assert "6.4 Tb/s NIC" in msg and "gbit_per_s = 800" in msg and "gbps = 100" in msg
    # a 6.4 Tb/s NIC that is meant is written in Gb/s and loads
    assert msg.endswith("if a 6.4 Tb/s NIC is meant, write gbit_per_s = 6400")
    cat.write_text(text.replace("gbit_per_s = 800", "gbit_per_s = 6400", 1))
    assert read_catalog(cat).classes["ScaleOut"].nics[1].unit_gbps == 800.0


@pytest.mark.parametrize("command", ["solve", "codesign"])
def test_a_deadline_without_a_unit_is_a_slip_for_days(command):
    path = LLAMA if command == "solve" else REPO / "spaces" / "codesign-llama3-405b.toml"
    r = run(command, path, "--deadline", "150")
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --deadline: 150 has no unit (a run's wall time, not ns); fix: did you mean "
        "150d? write e.g. --deadline 90d or --deadline 2160h (units: d, h, min, s; the unit is "
        "required)"
    )


@pytest.mark.parametrize(
    ("deadline", "fix"),
    [
        ("2w", "for 2 weeks write --deadline 14d"),
        ("3y", "write e.g. --deadline 90d or --deadline 2160h"),
    ],
)
def test_a_deadline_in_an_unknown_unit_is_hinted_in_days_and_hours(deadline, fix):
    """A deadline's hint is a run's wall time in its accepted units (not an iteration time's
    1.3 s, nor 'a plain number is ns', which --deadline refuses); weeks are given in days."""
    r = run("solve", LLAMA, "--deadline", deadline)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: --deadline: unknown time unit '{deadline[-1]}' in '{deadline}'; fix: {fix} "
        "(units: d, h, min, s; the unit is required)"
    )


def test_a_missed_deadline_is_said_in_days_and_ms(llama, answers):
    r = run("solve", LLAMA, "--deadline", "50d", "--no-sensitivity")
    assert r.exit_code == 3
    # 50 days for 15.6T tokens of 2,048 x 8,192 per iteration: 4,646.0 ms per iteration
    target = 50 * 86400e9 / (15.6e12 / (2048 * 8192))
    fast = answers["performance"].iteration_time_ns  # 6,317.6 ms
    assert error_line(r).endswith(
        f"; 50 d needs \u2264 {target / 1e6:,.1f} ms per iteration; the fastest design takes "
        f"{fast / 1e6:,.1f} ms: {50 * fast / target:,.1f} d"
    )
    assert "4,646.0 ms" in r.stderr and "ms: 68.0 d" in r.stderr


def test_a_total_budget_below_the_cluster_is_no_design_as_a_budget_below_the_network():
    # exit 3 (no design), as --budget below the cheapest network; it was exit 2 (bad input)
    fixed = 16384 * 33750 + 11.7e6 * 16384 * (700 + 4600 / 8) / 1e6
    r = run("solve", LLAMA, "--total-budget", "500M", "--no-sensitivity", "--json", "-")
    assert r.exit_code == 3
    message = (
        "infeasible: the total budget $500,000,000.00 does not cover the cluster without its "
        f"network, ${fixed:,.2f} (accelerators, servers, racks and facility): raise the total "
        "budget above it"
    )
    assert error_line(r) == f"error: {message}"
    assert json.loads(r.stdout) == {"status": "infeasible", "message": message, "exit_code": 3}
    r = run("solve", GPT3, "--budget", "1000")
    assert r.exit_code == 3 and error_line(r).startswith("error: infeasible: the budget $1,000.00")


def test_a_time_target_given_with_its_unit_is_not_read_as_a_slip():
    line = error_line(run("solve", GPT3, "--objective", "min_cost", "--max-time", "1ms"))
    assert "did you mean" not in line
    assert "the target is 1.17e+03x below the fastest (1 ms against 1,166.51 ms): check the" in line


def test_a_total_budget_constrains_the_files_objective_and_says_whether_it_binds():
    # the example's objective is min_run_cost: $1.2B leaves 1.2e9 - 797M = $403M for the network,
    # more than the cheapest run's $240M network (and the fastest design's $320M): it does not bind
    r = run("solve", LLAMA, "--total-budget", "1.2B", "--no-sensitivity", "--json", "-")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["objective"] == "min_run_cost" and round(out["iteration_time_ns"] / 1e6) == 6424
    note = next(n for n in out["notes"] if n.startswith("--total-budget"))
    assert note == (
        "--total-budget $1.2B leaves $403M for the network after the cluster's $797M "
        "(accelerators, servers, racks, facility); it does not bind: the min_run_cost design's "
        "network costs $240M, $162M under it (a larger total budget gives the same design)")
    # $1B leaves $203M, below the cheapest run's network: it binds
    r = run("solve", LLAMA, "--total-budget", "1B", "--no-sensitivity", "--json", "-")
    out = json.loads(r.stdout)
    note = next(n for n in out["notes"] if n.startswith("--total-budget"))
    assert note.endswith("it binds: the min_run_cost design's network spends it ($203M)"), note
    assert round(out["iteration_time_ns"] / 1e6) == 7620


def test_a_link_rated_in_gbit_written_as_gbps_is_refused_as_a_nic_is(tmp_path):
    """example-4d's 400 Gb/s node link written as gbps = 400 (a 3.2 Tb/s link port) is refused by
    the NIC's rule, naming the link; the provision of gpt3-4d on it exits 2."""
    text = (REPO / "catalogs" / "example-4d.toml").read_text()
    old = '{ name = "node-link-400G", gbit_per_s = 400,'
    assert old in text
    cat = tmp_path / "c.toml"
    cat.write_text(text.replace(old, '{ name = "node-link-400G", gbps = 400,'))
    r = run("provision", GPT3, "--catalog", cat)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {cat}: classes.InterNode: link port 'node-link-400G': gbps = 400 GB/s per "
        "direction is a 3.2 Tb/s link port, and 400 is a link port's rating in Gb/s; fix: write "
        "gbit_per_s = 400 (or gbps = 50); if a 3.2 Tb/s link port is meant, write gbit_per_s = "
        "3200")


def test_a_total_budget_short_of_the_cheapest_network_says_the_total_needed():
    """$800M leaves $2,631,680 for the network after the 16,384 H100s' $797,368,320 (the example's
    [cluster]); its cheapest network costs $79,845,376 (the design bounds' floor): a total of
    $877,213,696 buys it."""
    r = run("solve", LLAMA, "--total-budget", "800M")
    assert r.exit_code == 3
    assert error_line(r).endswith(
        "; --total-budget $800M leaves $2.63M for the network after the cluster's $797M "
        "(accelerators, servers, racks, facility), and the cheapest network costs $79.8M: a total "
        "budget of at least $877,213,696.00 buys it")
    assert 797_368_320 + 79_845_376 == 877_213_696
