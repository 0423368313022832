"""The knee's slack ``--within`` is at least the relative gap to which the fastest time is proven
(1e-8): a smaller one is refused with exit 2 and the least slack accepted, before any solve (it
made ``solve`` end with exit 3, "undecided: time target ... lies within the optimality gap", and
no optimum printed, though no time target was given); the least one prints the optimum and a
knee."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.errors import InputError
from hieropt.studies.knee import MIN_WITHIN, check_within

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"


def refusal(given: str) -> str:
    """The error line of ``--within GIVEN%`` below 1e-6 % (1e-8)."""
    return (
        f"error: --within: {float(given):g} % is below 1e-06 %, the relative gap to which the "
        "fastest time is proven: the knee within it is undecided; fix: give a slack of at least "
        "1e-06% (or 0 to turn the knee off)"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["solve", GPT3, "--no-sensitivity"],
        ["provision", GPT3, "--catalog", REPO / "catalogs" / "example-4d.toml"],
        ["report", GPT3, "--points", "2"],
    ],
)
@pytest.mark.parametrize("within", ["1e-13%", "1e-10%", "5e-7%"])
def test_a_slack_below_the_proven_gap_is_refused(tmp_path, args, within):
    extra = ["-o", tmp_path / "rep"] if args[0] == "report" else []
    r = run(*args, *extra, "--within", within)
    assert r.exit_code == 2, r.output
    assert error_line(r) == refusal(within.removesuffix("%"))
    assert not (tmp_path / "rep").exists()


def test_the_least_slack_prints_the_optimum_and_its_knee():
    r = run("solve", GPT3, "--no-sensitivity", "--within", "1e-6%")
    assert r.exit_code == 0, r.output
    assert "iteration time: 1,166,511,737.0 ns" in r.stdout
    assert "knee (the cheapest design within 1e-06 % of the fastest time)" in r.stdout


def test_the_library_refuses_the_same_slack():
    assert MIN_WITHIN == 1e-8
    assert check_within(1e-8) == 1e-8
    with pytest.raises(InputError, match=r"within: 1e-09 is below 1e-08"):
        check_within(1e-9)


@pytest.mark.parametrize(
    ("within", "words"),
    [
        ("0.5", "0.5 looks like a fraction (a plain number is a percentage); fix: write --within "
         "50 for 50 % or --within 0.5% for 0.5 %"),
        ("1e-8", "1e-8 looks like a fraction (a plain number is a percentage); fix: write --within "
         "1e-06% for 1e-06 % or --within 1e-8% for 1e-8 %"),
    ],
)
def test_a_plain_slack_below_one_looks_like_a_fraction_and_is_refused(within, words):
    r = run("solve", GPT3, "--no-sensitivity", "--within", within)
    assert r.exit_code == 2, r.output
    assert error_line(r) == f"error: --within: {words}"


@pytest.mark.parametrize("within", ["5", "5%", " 5 % "])
def test_a_plain_slack_is_a_percentage_as_with_a_percent_sign(within):
    """``--within 1`` was refused as 100 %, ``--within 0.5`` read as 50 %: a plain number is now
    the percentage the % form gives."""
    r = run("solve", GPT3, "--no-sensitivity", "--within", within)
    assert r.exit_code == 0, r.output
    assert "knee (the cheapest design within 5 % of the fastest time): 5.00% slower, network " \
        "$9,952,479 instead of $13,659,961" in r.stdout
