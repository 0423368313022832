"""min_run_cost in a co-design space (plans x a fixed two-dimension network, a [cluster] and a token
budget): the pruned search returns the brute force's best, its bound never prunes the best, and the
value is the run's $."""

from __future__ import annotations

from pathlib import Path

import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.report.run import codesign_run

REPO = Path(__file__).resolve().parents[2]

SPACE = """
name = "gpt3-run-cost"
model = "{model}"
npus = 4096
objective = "min_run_cost"
tokens = 300e9
constraints = ["bw[0] >= 50", "bw[0] <= 900", "bw[1] >= 1", "bw[1] <= 200"]
mapping_rule = "lowest"
[plans]
tp = [4, 8]
pp = [4, 8, 16]
zero_stage = [1]
recompute = ["selective", "full"]
sequence_parallel = [true]
[network]
dims = [{{ block = "Switch", npus = 64, cost_class = "NVLink" }},
        {{ block = "Switch", npus = 64, cost_class = "ScaleOut" }}]
[cost.NVLink]
link_usd_per_gbps = 4.0
switch_usd_per_gbps = 13.0
nic_usd_per_gbps = 0.01
[cost.ScaleOut]
link_usd_per_gbps = 50.0
switch_usd_per_gbps = 93.75
nic_usd_per_gbps = 120.0
{cluster}
"""
CLUSTER = "[cluster]\naccelerator_usd = {usd}\namortisation_years = 4\n"


def _space(tmp_path: Path, cluster: str) -> Path:
    path = tmp_path / "space.toml"
    path.write_text(SPACE.format(model=REPO / "models" / "gpt3-175b-llm.toml", cluster=cluster))
    return path


@pytest.mark.heavy
@pytest.mark.parametrize("usd", [2000, 20000, 200000])
def test_pruned_search_equals_brute_force(tmp_path, usd):
    path = _space(tmp_path, CLUSTER.format(usd=usd))
    pruned = hieropt.codesign(path, workers=1)
    rows: list[dict] = []
    brute = hieropt.codesign(path, workers=1, prune=False, on_row=rows.append)
    assert brute.pruned == 0 and brute.solved == len(rows) == 12
    best = min((r for r in rows if r["status"] == "optimal"), key=lambda r: r["objective_value"])
    assert pruned.best.id == best["id"]
    assert pruned.best.objective_value == pytest.approx(best["objective_value"], rel=1e-12)
    for r in rows:  # every bound is below the candidate's own optimum
        assert r["lower_bound"] <= r["objective_value"] * (1 + 1e-9)
    run = codesign_run(pruned)
    assert run.run_cost_usd == pytest.approx(pruned.best.objective_value, rel=1e-9)


def test_min_run_cost_space_needs_a_cluster(tmp_path):
    with pytest.raises(InputError, match="cluster"):
        hieropt.load_codesign(_space(tmp_path, ""))
