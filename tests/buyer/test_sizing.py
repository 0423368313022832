"""How many accelerators to buy: a co-design space with three cluster sizes (its npus list, one
search) and a deadline returns the cheapest size that meets it, as the brute force (every size
searched alone, every candidate solved) does; sizes are skipped only by a proven bound."""

from __future__ import annotations

from pathlib import Path

import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.studies.sizing import size_cluster, sized_space

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
[cost.NVLink]
link_usd_per_gbps = 4.0
switch_usd_per_gbps = 13.0
nic_usd_per_gbps = 0.01
[cost.ScaleOut]
link_usd_per_gbps = 50.0
switch_usd_per_gbps = 93.75
nic_usd_per_gbps = 120.0
[cluster]
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
    (200000, None, 1024)])
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
    if deadline_days is not None:  # the chosen run meets the deadline; the smaller sizes miss it
        days = got.chosen.best["iteration_time_ns"] * 300e9 / (1536 * 2048) / 86400e9
        assert days <= deadline_days * (1 + 1e-9)
        assert all(r["status"] == "infeasible" for n in SIZES if n < size for r in brute[n])


def test_dear_accelerators_skip_the_largest_size_by_its_bound(tmp_path):
    rows: list[dict] = []
    got = size_cluster(_space(tmp_path, 200000), SIZES, on_row=rows.append)
    skipped = [o for o in got.sizes if o.note is not None and o.note.startswith("skipped")]
    assert [o.npus for o in skipped] == [4096]
    assert skipped[0].bound >= got.chosen.best["objective_value"]
    largest = [r for r in rows if r["npus"] == 4096]  # none solved: every one pruned by its bound
    assert largest and all(r["status"] == "pruned" for r in largest)
    assert min(r["lower_bound"] for r in largest) == pytest.approx(skipped[0].bound, rel=1e-12)


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
    with pytest.raises(InputError, match="shape space"):
        size_cluster(space.model_copy(update={"network": net, "levels": ()}), [1024])


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
    assert "--sizes" in error_line(run("codesign", path, "--sizes", "1024,x"))
    assert (
        run("codesign", path, "--sizes", "1024", "--deadline", "5d", "--workers", "1").exit_code
        == 3
    )
