"""Amounts of money in messages are exact enough to act on: a floor (the cheapest network) is
printed to the cent rounded up, so a budget of the printed amount is never below it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hieropt.units import usd_cents

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
NVL = REPO / "instances" / "gpt3-nvl72-2304.toml"
GPT3 = REPO / "instances" / "gpt3-4d.toml"
CENTS = r"\$([0-9,]+\.[0-9]{2})"


def _usd(text: str) -> float:
    return float(text.replace(",", ""))


def test_the_printed_cheapest_network_is_a_budget_that_is_met():
    budget = "9555551.99"
    line = error_line(run("solve", NVL, "--budget", budget))
    m = re.fullmatch(rf"error: infeasible: the budget \$9,555,551\.99 is below the cheapest "
                     rf"network the design constraints allow, {CENTS}", line)
    assert m, line
    cheapest = _usd(m[1])
    # (to the cent: one cent less is the budget refused above)
    assert cheapest == pytest.approx(_usd(budget) + 0.01, abs=1e-6)
    r = run("solve", NVL, "--budget", m[1].replace(",", ""))
    assert r.exit_code == 0, r.output
    assert "status: optimal" in r.stdout


def test_the_pareto_note_prints_the_cheapest_network_to_the_cent():
    r = run("pareto", GPT3, "--points", "3")
    assert r.exit_code == 0, r.output
    m = re.search(rf"the cheapest feasible network \({CENTS}\) leaves a dimension", r.stdout)
    assert m, r.stdout
    # (by hand: all 500 GB/s on dimension 0 at $2 per GB/s per NPU x 4,096 NPUs; rounded up)
    assert 4_096_000 <= _usd(m[1]) <= 4_096_000.01


@pytest.mark.parametrize(("usd", "up", "text"), [
    (9555551.994, True, "9,555,552.00"),
    (9555551.994, False, "9,555,551.99"),
    (9555552.0, True, "9,555,552.00"),
    (0.001, True, "0.01"),
    (0.001, False, "0.00"),
    (1e300, True, "1e+300"),
    (1e15 + 0.25, False, "1,000,000,000,000,000.2"),
    (float("inf"), True, "inf"),
])
def test_usd_cents(usd, up, text):
    assert usd_cents(usd, up=up) == text
    if abs(usd) >= 1e15 and usd != float("inf"):
        assert _usd(text) == usd  # (reads back as the same double)


def test_a_budget_in_a_message_is_printed_to_the_cent_rounded_down():
    # by hand: the fastest design within $5,000,000.125 (at most $5,000,000.12 to the cent, never
    # shown above what was given) takes 3.04 s, above the 2 s target
    line = error_line(run("solve", GPT3, "--budget", "5000000.125", "--max-time", "2s",
                          "--no-sensitivity"))
    assert line.startswith("error: infeasible: time target 2,000,000,000.0 ns: fastest possible "
                           "is 3,036,9"), line
    assert line.endswith(" ns within the budget $5,000,000.12"), line


def test_a_hair_above_the_cheapest_network_the_floor_is_printed_to_the_cent():
    # a budget 1e-12 above the cheapest network ($4,096,000): the loop stops at a proven gap and
    # names the cheapest network as a floor, to the cent (not "$4.096e+06" or "$4,096,000")
    r = run("solve", GPT3, "--budget", "4096000.000004096", "--no-sensitivity")
    assert r.exit_code == 3, r.output  # (a limit, not a certified optimum)
    m = re.search(r"the budget is only \$4\.1e-06 \(1e-12 of it\) above the cheapest network "
                  rf"\({CENTS}\), and the design found", " ".join(r.stdout.split()))
    assert m and m[1] == "4,096,000.00", r.stdout
