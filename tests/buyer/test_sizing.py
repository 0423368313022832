"""How many accelerators to buy: a co-design space with three cluster sizes (its npus list, one
search) and a deadline returns the cheapest size that meets it, as the brute force (every size
searched alone, every candidate solved) does; each size's best is its own optimum (a candidate is
pruned only by a proven bound against the best found on its size)."""

from __future__ import annotations

from pathlib import Path

import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.studies.sizing import size_cluster, sized_space
from tests.buyer.llama_space import LLAMA_SPACE
from tests.cases import NVLINK_SCALEOUT_COST_TOML

REPO = Path(__file__).resolve().parents[2]
SIZES = [1024, 2048, 4096]
SPACE = """
name = "gpt3-sizes"
model = "{model}"
npus = 4096
objective = "min_run_cost"
tokens = 300e9
constraints = ["sum(bw) >= 50", "sum(bw) <= 1100"]
mapping_rule = "lowest"
dims = [2, 2]
switch_only_at_top = false
[plans]
tp = [8]
pp = [8, 16]
zero_stage = [1]
recompute = ["selective"]
sequence_parallel = [true]
[[levels]]
name = "scaleup"
blocks = ["Switch"]
npus = [64, 64]
cost_class = "NVLink"
[[levels]]
name = "scaleout"
blocks = ["Switch"]
npus = [2, 4096]
cost_class = "ScaleOut"
""" + NVLINK_SCALEOUT_COST_TOML + """[cluster]
accelerator_usd = {usd}
amortisation_years = 4
"""


def _space(tmp_path: Path, usd: float) -> Path:
    path = tmp_path / "sizes.toml"
    path.write_text(SPACE.format(model=REPO / "models" / "gpt3-175b-llm.toml", usd=usd))
    return path


def brute_force(path: Path, deadline_days: float | None):
    """((value, size) of the cheapest answer, or None; size -> its rows): every candidate of
    every size solved, each size searched alone."""
    space = hieropt.load_codesign(path)
    rows: dict[int, list[dict]] = {n: [] for n in SIZES}
    for n in SIZES:
        one = sized_space(space, [n], None if deadline_days is None else deadline_days * 86400e9)
        hieropt.codesign(one, workers=1, prune=False, on_row=rows[n].append)
        assert rows[n]
        assert all(r["status"] in ("optimal", "infeasible") for r in rows[n])  # none pruned
    solved = [(r["objective_value"], n) for n in SIZES for r in rows[n] if r["status"] == "optimal"]
    best = min(solved, default=None)
    return best, rows


@pytest.mark.parametrize(("usd", "deadline_days", "size"), [
    (20000, None, 1024), pytest.param(20000, 16, 2048, marks=pytest.mark.heavy), (20000, 9, 4096),
    (150000, None, 1024)])
@pytest.mark.heavy
def test_the_cheapest_size_meeting_the_deadline(tmp_path, usd, deadline_days, size):
    path = _space(tmp_path, usd)
    (value, npus), brute = brute_force(path, deadline_days)
    assert npus == size
    got = size_cluster(
        path, SIZES, deadline_ns=None if deadline_days is None else deadline_days * 86400e9
    )
    assert got.chosen.npus == size
    assert got.chosen.best["objective_value"] == pytest.approx(value, rel=1e-12)
    for o in got.sizes:  # a size's bound: its candidates' least bound, below each one's optimum
        assert o.bound == pytest.approx(min(r["lower_bound"] for r in brute[o.npus]), rel=1e-12)
        optima = [r["objective_value"] for r in brute[o.npus] if r["status"] == "optimal"]
        assert all(o.bound <= v * (1 + 1e-9) for v in optima)
        # each size's row is that size's own optimum (pruned against its own incumbent)
        if optima:
            assert o.best["objective_value"] == pytest.approx(min(optima), rel=1e-12)
        else:
            assert o.best is None
    if deadline_days is not None:  # the chosen run meets the deadline; the smaller sizes miss it
        days = got.chosen.best["iteration_time_ns"] * 300e9 / (1536 * 2048) / 86400e9
        assert days <= deadline_days * (1 + 1e-9)
        assert all(r["status"] == "infeasible" for n in SIZES if n < size for r in brute[n])


@pytest.mark.heavy
def test_each_size_keeps_its_own_incumbent(tmp_path):
    """With dear accelerators ($150,000) 4,096 NPUs cannot give the cheapest run (its least bound is
    above 1,024 NPUs' best), yet its row is its own best, as the brute force's: a candidate is
    pruned only by a bound at least the best found on its own size."""
    rows: list[dict] = []
    got = size_cluster(_space(tmp_path, 150000), SIZES, on_row=rows.append)
    _, brute = brute_force(_space(tmp_path, 150000), None)
    largest = next(o for o in got.sizes if o.npus == 4096)
    assert largest.bound >= got.chosen.best["objective_value"] and largest.note is None
    own = min(r["objective_value"] for r in brute[4096] if r["status"] == "optimal")
    assert largest.best["objective_value"] == pytest.approx(own, rel=1e-12)
    for r in rows:
        if r["status"] == "pruned":
            n = r["npus"]
            incumbent = min(q["objective_value"] for q in rows
                            if q["npus"] == n and q["status"] == "optimal")
            assert r["lower_bound"] >= incumbent
            assert f"incumbent of {n} NPUs" in r["message"]


def test_no_size_meets_an_impossible_deadline(tmp_path):
    got = size_cluster(_space(tmp_path, 20000), SIZES, deadline_ns=5 * 86400e9)
    assert got.chosen is None
    assert all("deadline" in o.note for o in got.sizes)


def test_sizes_need_a_shape_space():
    from hieropt.io.codesign import load_codesign
    from hieropt.spec import Dimension, Network

    space = load_codesign(REPO / "spaces" / "codesign-gpt3-4096.toml")
    net = Network(dims=(Dimension(block="Ring", npus=64, cost_class="InterNode"),
                        Dimension(block="Switch", npus=64, cost_class="InterPod")))
    with pytest.raises(InputError, match="the fixed network holds 4,096 NPUs, not 1,024: one "
                       "fixed network has one cluster size; fix: describe the network family "
                       r"with \[\[levels\]\] to search several sizes, or give only 4096"):
        size_cluster(space.model_copy(update={"network": net, "levels": ()}), [1024])


@pytest.mark.heavy
def test_codesign_command_with_sizes_and_a_deadline(tmp_path):
    import json

    from tests.cli.util import error_line, run

    path = _space(tmp_path, 20000)
    r = run("codesign", path, "--sizes", "1024,2048,4096", "--deadline", "16d", "--workers", "1",
            "--json", "-")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["chosen_npus"] == 2048
    assert [s["npus"] for s in out["sizes"]] == SIZES
    chosen = out["sizes"][1]
    assert chosen["run"]["time_to_train_days"] <= 16
    assert chosen["run"]["run_cost_usd"] == pytest.approx(chosen["best"]["objective_value"],
                                                          rel=1e-9)
    # (the A100's default: worst held-out error 27.9 % on plans without ZeRO-3, mostly too fast)
    t = chosen["run"]["time_to_train_days"]
    band = chosen["run"]["band"]
    assert band["time_to_train_days"] == pytest.approx([t, t / (1 - 0.279)])
    assert band["one_sided"] is True and band["held_out_error"] == pytest.approx(0.279)
    assert out["run"]["band"]["time_to_train_days"][0] == out["run"]["time_to_train_days"]
    assert chosen["best"]["sequence_parallel"] is True  # (JSON booleans, as the ranking's)
    assert "--sizes" in error_line(run("codesign", path, "--sizes", "1024,x"))
    assert (
        run("codesign", path, "--sizes", "1024", "--deadline", "5d", "--workers", "1").exit_code
        == 3
    )


def _usd_per_hour(npus: int, network_usd: float) -> float:
    """The cost rate of :data:`LLAMA_SPACE`'s cluster by hand: IT W = N 700 + N / 8 x 4,600."""
    it_mw = (npus * 700 + npus // 8 * 4600) / 1e6
    return ((npus * 33750 + network_usd) / (5 * 8760) + 11.7e6 * it_mw / (15 * 8760)
            + it_mw * 1.25 * 1000 * 0.0826)


@pytest.mark.heavy
def test_per_size_rows_equal_the_search_without_pruning(tmp_path):
    """`codesign --json` sizes[].best of the pruned search are each size's optimum, as `--no-prune`
    finds them (512 NPUs: tp4 pp4 dp32 at $796,763 per run; 1,024: tp8 pp8 dp16 at $970,452, with
    bf16's FP32 gradients; with 2-byte ones tp4 pp4 dp32 at $770,172 and tp4 pp2 dp128 at
    $925,187), and each $ per run is the run's hours at the hand-computed cost rate: 2e12 / (512 x
    8,192) = 476,837.16 iterations."""
    import json

    from tests.cli.util import run

    path = tmp_path / "llama.toml"
    path.write_text(LLAMA_SPACE.format(model=REPO / "models" / "llama3-70b.toml"))
    out = {}
    for flag in ("--prune", "--no-prune"):
        r = run("codesign", path, flag, "--workers", "1", "--json", "-")
        assert r.exit_code == 0, r.output
        out[flag] = json.loads(r.stdout)
    pruned, brute = out["--prune"], out["--no-prune"]
    assert brute["pruned"] == 0 and brute["solved"] == 39 > pruned["solved"]
    for a, b in zip(pruned["sizes"], brute["sizes"], strict=True):
        assert a["npus"] == b["npus"] and a["note"] is None
        assert a["best"]["id"] == b["best"]["id"]
        assert a["best"]["objective_value"] == pytest.approx(b["best"]["objective_value"],
                                                             rel=1e-12)
    best = {s["npus"]: s["best"] for s in pruned["sizes"]}
    assert best[512]["plan"].startswith("tp4 cp1 pp4 dp32 ")
    assert best[1024]["plan"].startswith("tp8 cp1 pp8 dp16 ")
    iterations = 2e12 / (512 * 8192)
    for n, usd in ((256, 700_494), (512, 797_762), (1024, 971_526)):
        b = best[n]
        hours = iterations * b["iteration_time_ns"] / 3.6e12
        assert b["objective_value"] == pytest.approx(
            hours * _usd_per_hour(n, b["network_cost_usd"]), rel=1e-9)
        assert b["objective_value"] == pytest.approx(usd, abs=0.5)
    assert pruned["chosen_npus"] == 256
