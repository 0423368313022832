"""min_run_cost in a co-design space (plans x a fixed two-dimension network, a [cluster] and a token
budget): the pruned search returns the brute force's best, its bound never prunes the best, and the
value is the run's $."""

from __future__ import annotations

from pathlib import Path

import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.report.run import codesign_run
from tests.cases import NVLINK_SCALEOUT_COST_TOML

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
""" + NVLINK_SCALEOUT_COST_TOML + """{cluster}
"""
CLUSTER = "[cluster]\naccelerator_usd = {usd}\namortisation_years = 4\n"


def _space(tmp_path: Path, cluster: str) -> Path:
    path = tmp_path / "space.toml"
    path.write_text(SPACE.format(model=REPO / "models" / "gpt3-175b-llm.toml", cluster=cluster))
    return path


@pytest.mark.heavy
@pytest.mark.parametrize("usd", [2000, 20000, 150000])
def test_pruned_search_equals_brute_force(tmp_path, usd):
    path = _space(tmp_path, CLUSTER.format(usd=usd))
    pruned = hieropt.codesign(path, workers=1)
    rows: list[dict] = []
    brute = hieropt.codesign(path, workers=1, prune=False, on_row=rows.append)
    # 12 plans, 11 fit: TP 4 x PP 4 with selective recompute needs 87.41 GB per NPU with the FP32
    # gradients of bf16 training (81.60 GB available)
    assert brute.pruned == 0 and brute.solved == len(rows) == 11
    best = min((r for r in rows if r["status"] == "optimal"), key=lambda r: r["objective_value"])
    assert pruned.best.id == best["id"]
    assert pruned.best.objective_value == pytest.approx(best["objective_value"], rel=1e-12)
    for r in rows:  # every bound is below the candidate's own optimum
        assert r["lower_bound"] <= r["objective_value"] * (1 + 1e-9)
    run = codesign_run(pruned)
    assert run.run_cost_usd == pytest.approx(pruned.best.objective_value, rel=1e-9)


@pytest.mark.heavy
def test_a_rented_cluster_space(tmp_path):
    """A space priced by usd_per_npu_hour alone ($2 per NPU-hour, no amortisation_years): the
    pruned search returns the brute force's best, whose $ per run is 300e9 / 3,145,728 iterations
    x T x 4,096 NPUs x $2 / 3.6e12 (the network's price does not enter)."""
    path = _space(tmp_path, "[cluster]\nusd_per_npu_hour = 2.0\n")
    pruned = hieropt.codesign(path, workers=1)
    rows: list[dict] = []
    brute = hieropt.codesign(path, workers=1, prune=False, on_row=rows.append)
    assert brute.solved == len(rows) == 11  # (12 plans, 11 fit: above)
    best = min((r for r in rows if r["status"] == "optimal"), key=lambda r: r["objective_value"])
    assert pruned.best.id == best["id"]
    for r in rows:
        assert r["lower_bound"] <= r["objective_value"] * (1 + 1e-9)
        assert r["objective_value"] == pytest.approx(
            300e9 / 3_145_728 * r["iteration_time_ns"] * 4096 * 2.0 / 3.6e12, rel=1e-9)
    assert codesign_run(pruned).run_cost_usd == pytest.approx(pruned.best.objective_value,
                                                              rel=1e-9)


def test_min_run_cost_space_needs_a_cluster(tmp_path):
    with pytest.raises(InputError, match="cluster"):
        hieropt.load_codesign(_space(tmp_path, ""))


@pytest.mark.heavy
def test_report_of_a_space_uses_its_token_budget_and_cluster(tmp_path):
    """`hieropt report SPACE` (and `report RESULT.json --space SPACE`) read the space's `tokens` and
    `[cluster]` as `codesign` does: without --tokens the least $ per run is recommended and its $
    is the hand-computed run cost of its row. GPT-3 (B = 1,536, s = 2,048): 300e9 / 3,145,728 =
    95,367.43 iterations; 4,096 NPUs at $20,000 over 4 years: rate = (81.92M + C) / 35,040 $/h."""
    import json

    from tests.cli.util import run

    path = _space(tmp_path, CLUSTER.format(usd=20000))
    path.write_text(path.read_text().replace("tp = [4, 8]", "tp = [8]"))  # 6 candidates
    result = tmp_path / "cd.json"
    assert run("codesign", path, "--workers", "1", "--json", result).exit_code == 0
    best = json.loads(result.read_text())["best"]
    for args in ([path], [result, "--space", path]):
        r = run("report", *args, "-o", tmp_path / "out", "--json", "-")
        assert r.exit_code == 0, r.output
        data = json.loads(r.stdout)
        assert data["recommended"] == "min_run_cost"
        assert "a run of 300B tokens" in data["subject"]
        head = data["headline"]
        iterations = 300e9 / (1536 * 2048)
        assert iterations == pytest.approx(95367.431640625, rel=1e-15)
        hours = iterations * head["iteration_time_ns"] / 3.6e12
        rate = (4096 * 20000 + head["network_cost_usd"]) / (4 * 8760)
        assert head["run_cost_usd"] == pytest.approx(hours * rate, rel=1e-9)
        assert head["run_cost_usd"] == pytest.approx(best["objective_value"], rel=1e-9)
        assert head["time_to_train_days"] == pytest.approx(hours / 24, rel=1e-12)


SHIPPED = REPO / "spaces" / "codesign-gpt3-4096-run-cost.toml"
HOURS = 4 * 8760  # the NPUs', servers' and network's 4 years of amortisation, h


def test_the_shipped_run_cost_space_prices_the_whole_cluster():
    """spaces/codesign-gpt3-4096-run-cost.toml (docs/buyer.md's hand-computed [cluster]): the $ of
    its best run is the run's days x 24 h x the cost rate, the rate the cluster's fixed $ per hour
    plus the network's capex over 4 years, the days 300B tokens / 3,145,728 per iteration x T."""
    r = hieropt.codesign(SHIPPED, workers=1)
    best = r.best
    assert best.status == "optimal" and best.objective == "min_run_cost"
    # fixed: 4,096 NPUs x $15,000 + 512 servers x $100,000 over 4 years; a facility of
    # (4,096 x 400 + 512 x 3,000) W = 3.1744 MW x $11.7M over 15 years; 3,174.4 kW x PUE 1.1 x $0.08
    it_kw = (4096 * 400 + 512 * 3000) / 1e3
    fixed = ((4096 * 15000 + 512 * 100000) / HOURS + 11.7e6 * it_kw / 1e3 / (15 * 8760)
             + it_kw * 1.1 * 0.08)
    assert fixed == pytest.approx(3214.612 + 282.652 + 279.347, abs=1e-3)  # $3,776.61 per hour
    run = codesign_run(r)
    assert run.cost_per_hour_usd == pytest.approx(fixed + best.network_cost_usd / HOURS, rel=1e-12)
    days = 300e9 / 3_145_728 * best.iteration_time_ns / 86400e9
    assert run.time_to_train_days == pytest.approx(days, rel=1e-12)
    assert run.run_cost_usd == pytest.approx(days * 24 * run.cost_per_hour_usd, rel=1e-12)
    assert best.objective_value == pytest.approx(run.run_cost_usd, rel=1e-9)
    assert run.power_mw == pytest.approx(it_kw * 1.1 / 1e3, rel=1e-12)  # 3.49184 MW
    # the answer (TP 8 x PP 8 x DP 64, selective recompute): $771,366 per run of 7.1 days
    assert (best.tp, best.pp, best.dp, best.recompute) == (8, 8, 64, "selective")
    assert best.objective_value == pytest.approx(771_366, abs=1)
    # the fastest design of the same space costs at least as much per run
    fast = hieropt.codesign(SHIPPED, "performance", workers=1)
    fast_run = codesign_run(fast)
    assert fast.best.iteration_time_ns <= best.iteration_time_ns * (1 + 1e-9)
    assert fast_run.run_cost_usd >= run.run_cost_usd * (1 - 1e-9)
    # (no budget: the fastest takes the bounds' 900 and 200 GB/s per NPU, $1.69M per run)
    assert fast.best.bw_gbps == pytest.approx([900, 200], rel=1e-5)
    assert fast_run.run_cost_usd == pytest.approx(1_686_167, abs=1)
