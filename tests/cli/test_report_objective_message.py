"""``hieropt report --objective`` with an objective the page's rules of thumb are not placed for is
refused by ``report``'s own message (exit 2, one line, nothing written): it names ``report`` (not
``compare``) and says what to do instead. A co-design input refuses ``--objective``, ``--max-time``
and ``--budget`` the same way, naming the search that answers the question."""

from __future__ import annotations

import json

import pytest

from tests.cases import REPO
from tests.cli.util import error_line, run

MIX = REPO / "instances" / "mix-gpt3-dlrm-4d.toml"
GPT3 = REPO / "instances" / "gpt3-4d.toml"
PLACED = "performance, performance_per_cost, min_cost"


@pytest.mark.parametrize(
    ("path", "objective", "instead"),
    [
        (MIX, "min_max_regret",
         f"'hieropt solve {MIX} --objective min_max_regret' gives the min_max_regret design"),
        (GPT3, "min_run_cost",
         "the page's 'least $ per run' column is the min_run_cost design (it needs [cluster])"),
    ],
)
def test_report_refuses_an_objective_without_rules_of_thumb_in_its_own_words(
    tmp_path, path, objective, instead
):
    out = tmp_path / "rep"
    r = run("report", path, "--objective", objective, "-o", out)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: --objective: report does not compare the rules of thumb for objective "
        f"'{objective}' (its detail places them for {PLACED} only); fix: leave out --objective "
        f"(report then compares for the instance's objective, or for performance with a note) "
        f"or give one of {PLACED}; {instead}"
    )
    assert "compare does not" not in r.output and not out.exists()


def test_the_refusal_reaches_the_json_file(tmp_path):
    r = run("report", MIX, "--objective", "min_max_regret", "-o", tmp_path / "rep",
            "--json", tmp_path / "c.json")
    assert r.exit_code == 2
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["status"] == "bad_input" and data["exit_code"] == 2
    assert data["message"].startswith("--objective: report does not compare the rules of thumb")


def test_compare_keeps_its_own_words():
    r = run("compare", MIX, "--objective", "min_max_regret")
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --objective: compare does not place heuristics for objective 'min_max_regret'; "
        f"fix: use one of {PLACED}"
    )


SPACE = REPO / "spaces" / "codesign-gpt3-nvl72-2304.toml"


@pytest.mark.parametrize(
    ("flags", "named"),
    [(("--objective", "min_cost", "--max-time", "1.3s"), "--objective"),
     (("--budget", "10M"), "--budget"),
     (("--catalog", str(REPO / "catalogs" / "example-4d.toml")), "--catalog")],
)
def test_a_codesign_input_refuses_a_question_it_cannot_answer(tmp_path, flags, named):
    """A co-design page shows the candidates of a search for its space's objective and targets:
    ``--objective``, ``--max-time``, ``--budget`` or ``--catalog`` is refused (exit 2, nothing
    written), with the search that answers the question (its JSON holds its space: no --space)."""
    out = tmp_path / "rep"
    r = run("report", SPACE, *flags, "-o", out)
    assert r.exit_code == 2 and not out.exists()
    given = " ".join(flags)
    assert error_line(r) == (
        f"error: {named}: the committee page of a co-design input ({SPACE}) shows the candidates "
        "of a search for its space's objective and targets, so it cannot answer another question "
        "(--objective, --max-time and --budget apply to an instance; a catalog's shortlist is "
        "provisioned by the search: codesign --catalog); fix: search for it: "
        f"'hieropt codesign {SPACE} {given} --json result.json', then 'hieropt report "
        "result.json'"
    )
    result = tmp_path / "result.json"
    result.write_text("{}")
    r = run("report", result, *flags, "-o", out)
    assert r.exit_code == 2 and not out.exists()
    assert f"'hieropt codesign SPACE {given} --json result.json'" in error_line(r)
