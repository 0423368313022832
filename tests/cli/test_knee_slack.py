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
    """The error line of ``--within GIVEN`` below 1e-8."""
    return (
        f"error: --within: {float(given):g} is below 1e-08, the relative gap to which the fastest "
        "time is proven: the knee within it is undecided; fix: give a slack of at least 1e-08 "
        "(or 0 to turn the knee off)"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["solve", GPT3, "--no-sensitivity"],
        ["provision", GPT3, "--catalog", REPO / "catalogs" / "example-4d.toml"],
        ["report", GPT3, "--points", "2"],
    ],
)
@pytest.mark.parametrize("within", ["1e-15", "1e-12", "5e-7%"])
def test_a_slack_below_the_proven_gap_is_refused(tmp_path, args, within):
    extra = ["-o", tmp_path / "rep"] if args[0] == "report" else []
    r = run(*args, *extra, "--within", within)
    assert r.exit_code == 2, r.output
    given = str(float(within.removesuffix("%")) / 100) if within.endswith("%") else within
    assert error_line(r) == refusal(given)
    assert not (tmp_path / "rep").exists()


def test_the_least_slack_prints_the_optimum_and_its_knee():
    r = run("solve", GPT3, "--no-sensitivity", "--within", "1e-8")
    assert r.exit_code == 0, r.output
    assert "iteration time: 1,166,511,737.0 ns" in r.stdout
    assert "knee (the cheapest design within 1e-06 % of the fastest time)" in r.stdout


def test_the_library_refuses_the_same_slack():
    assert MIN_WITHIN == 1e-8
    assert check_within(1e-8) == 1e-8
    with pytest.raises(InputError, match=r"within: 1e-09 is below 1e-08"):
        check_within(1e-9)
