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


def test_report_refuses_an_objective_without_rules_of_thumb_in_its_own_words(tmp_path):
    out = tmp_path / "rep"
    r = run("report", MIX, "--objective", "min_max_regret", "-o", out)
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --objective: report does not compare the rules of thumb for objective "
        f"'min_max_regret' (its detail places them for {PLACED} only); fix: leave out "
        "--objective (report then compares for the instance's objective, or for performance with "
        f"a note) or give one of {PLACED}; 'hieropt solve {MIX} --objective min_max_regret' "
        "gives the min_max_regret design"
    )
    assert "compare does not" not in r.output and not out.exists()


def test_report_min_run_cost_needs_a_cluster(tmp_path):
    out = tmp_path / "rep"
    r = run("report", GPT3, "--objective", "min_run_cost", "-o", out)
    assert r.exit_code == 2 and not out.exists()
    assert error_line(r) == (
        "error: --objective: min_run_cost prices a training run and the instance has no "
        "[cluster] section (its cost rate); fix: add [cluster] with usd_per_npu_hour, or "
        "accelerator_usd with amortisation_years (docs/buyer.md), or give one of "
        f"{PLACED}"
    )


@pytest.mark.heavy
def test_report_answers_min_run_cost_asked_as_the_files_own(tmp_path):
    """``--objective min_run_cost`` on an instance with [cluster]: the page recommends the least $
    per run, and its detail compares the rules of thumb for performance, saying so (as for an
    instance whose own objective is min_run_cost)."""
    inst = tmp_path / "g.toml"
    inst.write_text(GPT3.read_text().replace('"../models/', f'"{REPO}/models/')
                    + "\n[cluster]\nusd_per_npu_hour = 2.0\n")
    out = tmp_path / "rep"
    r = run("report", inst, "--objective", "min_run_cost", "--points", "2", "-o", out)
    assert r.exit_code == 0, r.output
    assert ("recommendation: least $ per run (min_run_cost) - the certified optimum of the "
            "objective asked (min_run_cost)") in r.stdout
    data = json.loads((out / "report.json").read_text())
    assert data["committee"]["asked"] == {
        "objective": "min_run_cost", "given": True, "max_iteration_time_ns": None,
        "max_network_cost_usd": None, "answer": "min_run_cost", "why_not": None}
    assert ("the rules of thumb are compared for performance (iteration time): the objective "
            "asked (--objective) min_run_cost has no heuristic comparison") in " ".join(
                data["notes"])
    # rented at $2 per NPU-hour, the cheapest run is the fastest time: the performance optimum
    assert data["optimum"]["iteration_time_ns"] == pytest.approx(1_166_511_737, rel=1e-8)


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
