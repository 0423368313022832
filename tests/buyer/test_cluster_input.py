"""The [cluster] section and the token budget of instance files, and the buyer's figures in `hieropt
solve`'s JSON: values, sources, and one-line errors naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hieropt
from hieropt.errors import InputError
from tests.cli.util import error_line, run

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "instances" / "gpt3-plan-4d.toml"

CLUSTER = """
tokens = 300e9
[cluster]
accelerator_usd = { value = 15000, source = "nextplatform" }
accelerator_w = 400
npus_per_server = 8
server_usd = 100000
server_w = 3000
pue = 1.1
electricity_usd_per_kwh = 0.08
amortisation_years = 4
[cluster.sources.nextplatform]
ref = "nextplatform.com, Nvidia's premium for Hopper (2022-05-09): A100 40 GB $12,500-15,000"
date = "2026-12-05"
kind = "estimate"
"""


def _instance(tmp_path: Path, extra: str) -> Path:
    text = PLAN.read_text().replace('workload = "../models/', f'workload = "{REPO}/models/')
    head, sep, rest = text.partition("\n[network]")
    path = tmp_path / "inst.toml"
    path.write_text(
        head
        + extra.split("[cluster]")[0]
        + sep
        + rest
        + ("\n[cluster]" + extra.split("[cluster]")[1] if "[cluster]" in extra else "")
    )
    return path


def test_cluster_section_and_sources(tmp_path):
    inst = hieropt.load_instance(_instance(tmp_path, CLUSTER))
    assert inst.tokens == 300e9
    cl = inst.cluster
    assert cl.accelerator_usd == 15000 and cl.npus_per_server == 8 and cl.pue == 1.1
    assert cl.sources == {"accelerator_usd": "nextplatform"}
    assert cl.references["nextplatform"].kind == "estimate"


@pytest.mark.parametrize(
    ("extra", "field", "words"),
    [
        (
            '[cluster]\naccelerator_usd = { value = 1, source = "nope" }\n',
            "accelerator_usd.source",
            "unknown source",
        ),
        (
            "[cluster]\naccelerator_usd = 1\nrequire_sources = true\n",
            "accelerator_usd",
            "no source",
        ),
        ("[cluster]\npue = 0.5\n", "cluster.pue", ">= 1"),
        ("[cluster]\nserver_usd = 5\n", "server_usd", "npus_per_server"),
        ("tokens = -3\n", "tokens", "positive"),
    ],
)
def test_bad_cluster_fields_name_the_field(tmp_path, extra, field, words):
    with pytest.raises(InputError) as e:
        hieropt.load_instance(_instance(tmp_path, extra))
    assert field in str(e.value) and words in str(e.value)
    assert "\n" not in str(e.value)


def test_solve_json_has_the_buyer_keys(tmp_path):
    r = run(
        "solve", _instance(tmp_path, CLUSTER), "--tokens", "15T", "--no-sensitivity", "--json", "-"
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    fig = out["run"]
    assert fig["tokens"] == 15e12
    for key in (
        "tokens_per_s",
        "model_flops_per_iteration",
        "mfu",
        "time_to_train_days",
        "energy_mwh",
        "run_cost_usd",
    ):
        assert isinstance(fig[key], float), key
    assert fig["time_to_train_days"] == pytest.approx(
        15e12 / fig["tokens_per_s"] / 86400, rel=1e-12
    )
    assert fig["network_capex_usd"] == out["network_cost_usd"]


def test_tokens_with_a_bad_suffix_is_one_line():
    r = run("solve", PLAN, "--tokens", "15X")
    assert r.exit_code == 2
    assert "--tokens" in error_line(r) and "suffix" in error_line(r)


def test_evaluate_json_has_the_buyer_keys():
    llama = REPO / "instances" / "llama3-405b-16k-cluster.toml"
    r = run("evaluate", llama, "--bw", "400,10", "--json", "-")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    fig = out["run"]
    assert fig["iteration_time_ns"] == out["breakdown"]["iteration_time_ns"]
    assert fig["time_to_train_days"] == pytest.approx(
        15.6e12 / fig["tokens_per_s"] / 86400, rel=1e-12
    )
    assert fig["run_cost_usd"] == pytest.approx(
        fig["cost_per_hour_usd"] * fig["time_to_train_days"] * 24, rel=1e-12
    )
    s = run("solve", llama, "--no-sensitivity", "--json", "-")
    value = json.loads(s.stdout)["objective_value"]
    s = run("solve", llama, "--no-sensitivity")
    assert f"objective min_run_cost: ${value:,.0f} per run" in s.stdout


def test_pareto_shows_days_and_dollars_per_run():
    r = run(
        "pareto",
        REPO / "instances" / "llama3-405b-16k-cluster.toml",
        "--points",
        "4",
        "--json",
        "-",
    )
    assert r.exit_code == 0, r.output
    points = json.loads(r.stdout)["points"]
    cheapest = min(points, key=lambda p: p["run"]["run_cost_usd"])
    assert points[0]["run"]["time_to_train_days"] > cheapest["run"]["time_to_train_days"]
    assert "days" in r.stderr and "$ per run" in r.stderr
    assert f"{cheapest['run']['run_cost_usd']:,.0f}" in r.stderr


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        ('kind = "estimate"', 'kind = "guess"',
         "cluster.sources.nextplatform.kind: Input should be 'list', 'street', 'estimate', "
         "'spec', 'assumption' or 'invented'; fix: got 'guess'; use 'list', 'street', "
         "'estimate', 'spec', 'assumption' or 'invented'"),
        ('kind = "estimate"', 'kind = "estimate"\nkinds = 1',
         "cluster.sources.nextplatform.kinds: unknown key (did you mean 'kind'?); fix: rename "
         "'kinds' to 'kind'"),
        ("accelerator_w = 400", "acelerator_usd = 400",
         "cluster.acelerator_usd: unknown key (did you mean 'accelerator_usd'?); fix: rename "
         "'acelerator_usd' to 'accelerator_usd'"),
    ],
)
def test_a_cluster_error_names_the_path_as_the_file_writes_it(tmp_path, old, new, line):
    """A [cluster.sources.KEY] table's field is named there (the model calls the tables
    ``references``), and a misspelled figure gets the figure it most likely meant."""
    assert old in CLUSTER
    path = _instance(tmp_path, CLUSTER.replace(old, new))
    r = run("solve", path)
    assert r.exit_code == 2
    assert error_line(r) == f"error: {path}: {line}"
