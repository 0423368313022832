"""``hieropt codesign SPACE.toml``: a tiny space end to end (JSON and tables), one-line errors for
bad space files, and exit 3 when no plan fits in memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hieropt.cli import app
from hieropt.errors import InputError
from hieropt.io.codesign import load_codesign
from tests.cli.util import runner
from tests.codesign.spaces import MODEL, SPACE, write_space_files


def test_codesign_cli_end_to_end(tmp_path):
    path = write_space_files(tmp_path)
    r = runner.invoke(app, ["codesign", str(path), "--workers", "1", "--json", "-"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["plans"]["combinations"] == 12
    assert d["candidates"] == d["solved"] + d["settled_without_solve"]
    assert d["best"]["plan"].startswith("tp2 cp1 pp1 dp4")
    assert d["best"]["nics"] is not None and d["by_dims"]
    assert "best: tp2 cp1 pp1 dp4" in r.stderr and "Per dimension count" in r.stderr


@pytest.mark.parametrize(
    "edit, message",
    [
        (("npus = 8", "npus = 8\ncolour = 1"), "colour: unknown key"),
        (('model = "model.toml"\n', ""), "model: missing"),
        (("tp = [1, 2, 4]", "tpp = [1]"), "plans.tpp: unknown key"),
        (('recompute = ["none", "full"]', 'recompute = ["some"]'), "plans.recompute[0]"),
        (
            (
                '[[levels]]\nname = "a"',
                '[network]\ndims = [{block = "Ring", npus = 4, cost_class = "A"}]\n[[levels]]\n'
                'name = "a"',
            ),
            "network: give either one network",
        ),
    ],
)
def test_bad_space_files(tmp_path, edit, message):
    with pytest.raises(InputError) as e:
        load_codesign(write_space_files(tmp_path, SPACE.replace(*edit)))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_no_plan_fits_exit_3(tmp_path):
    r = runner.invoke(
        app,
        [
            "codesign",
            str(write_space_files(
                tmp_path, model=MODEL.replace("hbm_gib = 1.0", "hbm_gib = 0.000001"))),
            "--workers",
            "1",
        ],
    )
    assert r.exit_code == 3
    assert "infeasible: no plan fits: the smallest needs" in r.stderr


def test_codesign_writes_instances_that_solve_reads(tmp_path):
    """--write-instances DIR --top K: K instance files, each re-solved by 'hieropt solve' to the
    row's optimum; the JSON's rows carry arrays and objects (bw_gbps, placement,
    communication_by_group_ns), not joined text."""
    out = tmp_path / "answers"
    r = runner.invoke(
        app,
        [
            "codesign",
            str(write_space_files(tmp_path)),
            "--workers",
            "1",
            "--no-prune",
            "--top",
            "2",
            "--write-instances",
            str(out),
            "--json",
            "-",
        ],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    best = d["best"]
    assert isinstance(best["bw_gbps"], list) and isinstance(best["placement"], dict)
    assert isinstance(best["communication_by_group_ns"], dict) and set(best["placement"]) == {
        "tp",
        "dp",
        "pp",
    }
    assert len(d["instances"]) == 2 and sorted(p.name for p in out.iterdir()) == sorted(
        Path(p).name for p in d["instances"])
    # (the instance files are the rows the table shows: tie_of null)
    shown = [r for r in d["ranking"] if r["tie_of"] is None][:2]
    for path, row in zip(d["instances"], shown, strict=True):
        s = runner.invoke(app, ["solve", path, "--json", "-"])
        assert s.exit_code == 0, s.output
        assert json.loads(s.stdout)["objective_value"] == pytest.approx(
            row["objective_value"], rel=1e-9
        )
        # the header's evaluate line gives the row's own design: its time and network cost
        line = next(t for t in Path(path).read_text().splitlines() if "hieropt evaluate" in t)
        bw = line.split("--bw ")[1]
        e = runner.invoke(app, ["evaluate", path, "--bw", bw, "--json", "-"])
        assert e.exit_code == 0, e.output
        ev = json.loads(e.stdout)
        assert ev["iteration_time_ns"] == pytest.approx(row["iteration_time_ns"], rel=1e-12)
        assert ev["network_cost_usd"] == pytest.approx(row["network_cost_usd"], rel=1e-12)


REPO = Path(__file__).resolve().parents[2]


@pytest.mark.heavy
def test_codesign_catalog_gives_an_integer_bill_of_materials():
    """--catalog on the NVL72 space: the best candidates provisioned with whole parts (integer
    counts) and ranked by the integer design; the shortlist in the JSON."""
    r = runner.invoke(
        app,
        [
            "codesign",
            str(REPO / "spaces" / "codesign-gpt3-nvl72-2304.toml"),
            "--workers",
            "1",
            "--catalog",
            str(REPO / "catalogs" / "nvl72-ethernet.toml"),
            "--provision-top",
            "1",
            "--json",
            "-",
        ],
    )
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["provisioned"]
    assert [x["bom_rank"] for x in rows] == [1]
    for x in rows:
        assert x["status"] == "optimal" and x["power_w"] > 0 and x["network_cost_usd"] > 0
        assert all(
            part.split(" x ")[0].isdigit() for dim in x["parts"] for part in dim.split(" + ")
        )
    assert "provisioned from the catalog" in r.stderr


# --------------------------------------------------------------------------------------------------
# The shipped NVL72 space with its NIC written as 400 (Gb/s) in nic_gbps ran, exit 0, and counted
# 2,304 NICs for 200 GB/s per NPU (the shipped file: 9,216); a space's constraint errors named no
# file and quoted 'bw[1]' for the 'bw[top]' written.

def _nvl72(tmp_path: Path, old: str, new: str) -> Path:
    text = (REPO / "spaces" / "codesign-gpt3-nvl72-2304.toml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "space.toml"
    path.write_text(text.replace(old, new).replace('"../models/', f'"{REPO}/models/'),
                    encoding="utf-8")
    return path


@pytest.mark.heavy
def test_a_nic_rating_in_gbit_is_refused_and_counted_when_written_as_gbit(tmp_path):
    from tests.cli.util import error_line

    r = runner.invoke(app, ["codesign", str(_nvl72(tmp_path, "nic_gbps = 50 ", "nic_gbps = 400 ")),
                            "--workers", "1"])
    assert r.exit_code == 2
    assert error_line(r).endswith(
        "nic_gbps: 400 GB/s per direction is a 3.2 Tb/s NIC, and 400 is a NIC's rating in Gb/s; "
        "fix: write nic_gbit_per_s = 400 (or nic_gbps = 50); if a 3.2 Tb/s NIC is meant, write "
        "nic_gbit_per_s = 3200")
    path = _nvl72(tmp_path, "nic_gbps = 50 ", "nic_gbit_per_s = 400 ")
    r = runner.invoke(app, ["codesign", str(path), "--workers", "1", "--json", "-"])
    assert r.exit_code == 0, r.output
    best = json.loads(r.stdout)["best"]
    # bw[top] <= 200 binds the fastest design: 200 GB/s per NPU / 50 GB/s per NIC = 4 NICs on each
    # of 2,304 NPUs (the row's design, the cheapest within 1e-8 of the fastest time, 199.99 GB/s)
    assert best["scaleout_gbps_per_npu"] == pytest.approx(200.0, rel=1e-4)
    assert best["nics"] == 4 * 2304 == 9216


@pytest.mark.parametrize(("old", "new", "message"), [
    ('"bw[top] <= 200"', '"bw[top] <= 200 Gb/s"',
     "constraints[2]: 'bw[top] <= 200 Gb/s': syntax error at column 12: '200' has the unit 'Gb/s'"),
    ('"bw[top] >= 12.5"', '"bw[5] >= 12.5"',
     "constraints[3]: 'bw[5] >= 12.5': bw[5] at column 1 is out of range: the network has 2 "
     "dimensions; fix: use bw[0]..bw[1]"),
    ('"bw[top] >= 12.5"', '"bw[top] >== 12.5"',
     "constraints[3]: 'bw[top] >== 12.5': syntax error at column 9: '>==' is not a comparison "
     "operator; fix: use >="),
])
def test_a_bad_constraint_of_a_space_names_the_file_and_the_text(tmp_path, old, new, message):
    from tests.cli.util import error_line

    path = _nvl72(tmp_path, old, new)
    r = runner.invoke(app, ["codesign", str(path), "--workers", "1"])
    assert r.exit_code == 2
    assert error_line(r).startswith(f"error: {path}: {message}")


def test_an_unknown_objective_lists_only_those_a_space_takes():
    # (the list named min_max_regret, which codesign then refuses: a space has one model)
    from tests.cli.util import error_line

    r = runner.invoke(app, ["codesign", str(REPO / "spaces" / "codesign-gpt3-4096-libra-plan.toml"),
                            "--objective", "min_power"])
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --objective: unknown objective 'min_power'; fix: use one of performance, "
        "performance_per_cost, min_cost, min_run_cost")


@pytest.mark.heavy
def test_codesign_and_its_report_show_the_status_and_gap(tmp_path):
    """The best line of codesign and the recommendation of report on its JSON carry the optimum's
    status and proven gap in solve's words (the search is solved to its gap target 1e-8)."""
    path = write_space_files(tmp_path)
    out = tmp_path / "cd.json"
    r = runner.invoke(app, ["codesign", str(path), "--workers", "1", "--json", str(out)])
    assert r.exit_code == 0, r.output
    best = next(line for line in r.stdout.splitlines() if line.startswith("best: "))
    # (the search's best solved to a proven gap of 1e-12; the knee's min_cost solve to 1e-9)
    assert best == ("best: tp2 cp1 pp1 dp4 ep1 z0 nore nosp v1 mb2 | b:SW8 | tp 2 dp 4 pp 1; "
                    "status: optimal; relative gap 1.00e-12 (proven)")
    rep = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "rep")])
    assert rep.exit_code == 0, rep.output
    head = rep.stdout.splitlines()[:2]
    assert head[0].startswith("recommendation: knee (cheapest within 1 %) - ")
    assert head[1] == "  status: optimal; relative gap 1.00e-09 (proven)"
