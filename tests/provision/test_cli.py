"""``hieropt provision`` end to end: the default instance with the example catalog (NIC counts, bill
of materials, gap to the continuous bound, JSON), and bad catalogs (exit 2, one line naming file,
field and fix)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result

from hieropt.cli import app

REPO = Path(__file__).resolve().parents[2]
INSTANCE = REPO / "instances" / "gpt3-4d.toml"
CATALOG = REPO / "catalogs" / "example-4d.toml"

runner = CliRunner(
    env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1", "COLUMNS": "200"}
)


def run(*args: str | Path) -> Result:
    return runner.invoke(app, ["provision", *(str(a) for a in args)])


def assert_error(result: Result, code: int, *parts: str) -> str:
    """Exit ``code``, no traceback, nothing on stdout, one line ``error: ...`` on stderr containing
    ``parts``."""
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    msg = result.stderr.strip()
    assert msg.startswith("error: "), msg
    assert "\n" not in msg, f"not one line: {msg!r}"
    for p in parts:
        assert p in msg, f"{p!r} not in {msg!r}"
    return msg


def variant(tmp_path: Path, old: str, new: str, name: str = "cat.toml") -> Path:
    text = CATALOG.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- the default instance
def test_default_instance_report():
    start = time.perf_counter()
    result = run(INSTANCE, "--catalog", CATALOG)
    wall = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "status: optimal" in out and "relative gap" in out and "proven lower bound" in out
    # NIC count per NPU and in the cluster, switches, bill of materials, continuous bound and
    # roundings
    # link ports come one per peer (2 per NPU on the rings, 7 on the FullyConnected 8): the
    # fastest design with sum(bw) == 500 is 4 x d2d-50 (200), 7 x serdes-200G (175), 2 x
    # node-link-400G (100) and one 800G NIC per node of 4 (25): 4,096 x (4 x 100 + 7 x 160 + 2 x
    # 600) + 1,024 x 2,600 + 128 switches x 45,000 = $19,563,520 (every design with the sum
    # enumerated: 38, none faster; the three of equal bandwidths cost more)
    assert (
        "dimension 3 (Switch 32, InterPod) NICs: 1 x nic-800G-per-node per node of 4 NPUs "
        "(0.25 per NPU), 1,024 in "
        "the cluster; switches: 128 x switch-64x400G" in out
    )
    assert "Bill of materials" in out and "total" in out and "19,563,520" in out
    assert "continuous optimum" in out and "lower bound on every integer design's time" in out
    assert "round best" in out and "round down" in out and "none feasible" in out
    assert ("note: dimension 1 (FullyConnected 8): link ports are bought in multiples of 7 per NPU "
            "(7 x s per node of s NPUs), one to each of its 7 peers (a port is a point-to-point "
            "link to one peer)") in out.splitlines()
    # "round down" raised dimension 1 (138 GB/s, below 7 x 25 GB/s) to the fewest ports, one per
    # peer: the label says so, and the line under the table gives both figures
    rows = [[c.strip() for c in x.split("│")[1:-1]] for x in out.splitlines() if "│" in x]
    assert ["round down, dim 1 up to 7 units", "200, 175, 100, 25", "1,235.7439", "19,563,520",
            "1,235.7439 ms", "0.00%"] in rows
    assert (
        "round down: every dimension rounded down to whole units (at least 1) of each part; "
        "dimension 1: 138 GB/s per NPU is below the part's fewest units, 7 (one link port to each "
        "peer): raised to them, 175 GB/s: feasible"
    ) in out.splitlines()
    assert wall < 10  # measured ~0.2 s; generous for slow CI machines


def test_default_instance_json():
    result = run(INSTANCE, "--catalog", CATALOG, "--json", "-")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # nothing but JSON on stdout (HiGHS's banner kept off it)
    assert data["status"] == "optimal" and data["gap"] <= 1e-8
    assert data["bw_gbps_per_dim"] == [200.0, 175.0, 100.0, 25.0]  # (as the report's test)
    assert sum(data["bw_gbps_per_dim"]) == 500.0  # the instance's sum(bw) == 500, met exactly
    assert [r["label"] for r in data["roundings"]] == [
        "round down, dim 1 up to 7 units", "round up", "round best"]
    assert [o["units"] for o in data["design"][:3]] == [4, 7, 2]  # (multiples of 2, 7, 2)
    nic = data["design"][3]
    assert (
        nic["kind"],
        nic["units"],
        nic["units_per"],
        nic["units_per_npu"],
        nic["units_total"],
    ) == ("nic", 1, "node", 0.25, 1024)
    assert (nic["switches_total"], nic["switch_tiers"]) == (128, 1)
    assert sum(line["cost_usd"] for line in data["bom"]) == data["network_cost_usd"] == 19_563_520
    cont = data["continuous"]
    assert cont["iteration_time_ns"] <= data["iteration_time_ns"]
    # (1,235,743,863.0 ns against the continuous 1,166,511,725.3 ns)
    assert cont["integer_premium"] == pytest.approx(1 - 1_166_511_725.3 / 1_235_743_863.0,
                                                    rel=1e-8)
    assert data["solve_seconds"] < 5


@pytest.mark.parametrize("objective", ["min_cost", "performance_per_cost"])
def test_default_instance_other_objectives(objective: str):
    result = run(
        INSTANCE,
        "--catalog",
        CATALOG,
        "--objective",
        objective,
        "--max-time-ns",
        "1.25e9",
        "--json",
        "-",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["objective"] == objective and data["gap"] <= 1e-8
    assert data["iteration_time_ns"] <= 1.25e9


def test_yaml_catalog(tmp_path: Path):
    import tomllib

    path = tmp_path / "cat.yaml"
    path.write_text(
        yaml.safe_dump(tomllib.loads(CATALOG.read_text(encoding="utf-8"))), encoding="utf-8"
    )
    result = run(INSTANCE, "--catalog", path, "--no-compare")
    assert result.exit_code == 0, result.output


# ------------------------------------------------------------------------------------- bad catalogs
def test_missing_price(tmp_path: Path):
    cat = variant(tmp_path, 'gbps = 25, usd = 60, max_per_npu = 16', 'gbps = 25, max_per_npu = 16')
    assert_error(
        run(INSTANCE, "--catalog", cat),
        2,
        str(cat),
        "classes.InterChiplet.links[0] ('d2d-port-25GBs').usd",
        "missing price",
        "fix: add usd = <price of one link port in $>",
    )


def test_missing_switch_price(tmp_path: Path):
    cat = variant(tmp_path, ', usd_per_switch = 45000', '')
    assert_error(
        run(INSTANCE, "--catalog", cat),
        2,
        "classes.InterPod.switches[0] ('switch-64x400G')",
        "missing price",
        "fix: add usd_per_switch",
    )


@pytest.mark.parametrize(("old", "new", "line"), [
    (", usd_per_switch = 45000", ", usd_per_swich = 45000",
     "classes.InterPod.switches[0] ('switch-64x400G').usd_per_swich: unknown key (did you mean "
     "'usd_per_switch'?); fix: rename 'usd_per_swich' to 'usd_per_switch'"),
    ("gbps = 25, usd = 60, max_per_npu = 16", "gbps = 25, usd_ = 60, max_per_npu = 16",
     "classes.InterChiplet.links[0] ('d2d-port-25GBs').usd_: unknown key (did you mean 'usd'?); "
     "fix: rename 'usd_' to 'usd'"),
])
def test_a_misspelt_price_is_an_unknown_key_not_a_missing_price(tmp_path: Path, old, new, line):
    cat = variant(tmp_path, old, new)
    r = run(INSTANCE, "--catalog", cat)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"error: {cat}: {line}"


def test_two_parts_of_one_name(tmp_path: Path):
    """Two parts named alike in one class were accepted, and the bill of materials could not tell
    which was bought (new-user review)."""
    cat = variant(tmp_path, '{ name = "nic-200G",', '{ name = "nic-400G",')
    assert_error(
        run(INSTANCE, "--catalog", cat),
        2,
        "classes.InterPod.nics[1].name",
        "'nic-400G' is also the name of classes.InterPod.nics[0]",
        "fix: give every part of a class its own",
    )


def test_zero_bandwidth(tmp_path: Path):
    cat = variant(tmp_path, 'gbit_per_s = 400, usd = 1500', 'gbit_per_s = 0, usd = 1500')
    assert_error(
        run(INSTANCE, "--catalog", cat),
        2,
        "classes.InterPod.nics[1] ('nic-400G').gbit_per_s",
        "bandwidth per unit is 0",
        "fix: give a bandwidth > 0",
    )


def test_unknown_cost_class(tmp_path: Path):
    """A class no dimension uses in place of one the network needs: the missing class is named
    with the unused one beside it (a real catalog may hold classes of other designs, so the unused
    class alone is no error)."""
    cat = variant(tmp_path, "[classes.InterNode]", "[classes.InterRack]")
    assert_error(
        run(INSTANCE, "--catalog", cat),
        2,
        "classes.InterNode: missing: dimension 2 (Ring) uses cost class 'InterNode' but the "
        "catalog has no parts for it (its classes InterRack are used by no dimension)",
        "fix: add [classes.InterNode] with links, or rename one of InterRack to it",
    )


def test_class_without_parts(tmp_path: Path):
    cat = variant(tmp_path, "nics = [", "links = [")
    assert_error(
        run(INSTANCE, "--catalog", cat),
        2,
        "classes.InterPod.nics",
        "dimension 3 is a Switch",
        "fix: add nics",
    )


def test_part_that_never_meets_a_constraint(tmp_path: Path):
    """bw[3] >= 150, but every NIC of InterPod reaches at most 100 GB/s per NPU: no part serves
    dimension 3, and the error lists them all (it blamed nic-200G alone). With nic-400G allowed 4
    per NPU (200 GB/s) it serves: the parts that never can (4 x 25 = 100 and 4 x 100 per node of 4
    = 100) are left out with a note each, and the answer is the catalog's without them."""
    text = INSTANCE.read_text(encoding="utf-8")
    text = text.replace(
        'workload = "../models/gpt3-175b.toml"',
        f'workload = "{REPO / "models" / "gpt3-175b.toml"}"',
    )
    # (sum 525, not 500: link ports come one per peer, so dimensions 0 and 2 take multiples of 50
    # GB/s, dimension 1 87.5, 175, 262.5 or 350, and dimension 3 150 or 200 here: only bw[1] = 175
    # leaves the others a multiple of 50, so a sum of 500 has no design and 525 has)
    text = text.replace(
        'constraints = ["sum(bw) == 500"]', 'constraints = ["sum(bw) == 525", "bw[3] >= 150"]'
    )
    inst = tmp_path / "inst.toml"
    inst.write_text(text, encoding="utf-8")
    r = run(inst, "--catalog", CATALOG)
    assert_error(r, 2)
    assert r.stderr.strip() == (
        f"error: {CATALOG}: classes.InterPod: no part serves dimension 3 (class InterPod): "
        "constraint 'bw[3] >= 150' "
        "needs 150 GB/s per NPU, but its parts reach at most 'nic-200G' 4 x 25 GB/s = 100, "
        "'nic-400G' 2 x 50 GB/s = "
        "100, 'nic-800G-per-node' 4 x 100 GB/s per node of 4 = 100 GB/s per NPU; fix: raise "
        "a unit limit ('nic-200G' "
        "max_per_npu >= 6, 'nic-400G' max_per_npu >= 3, 'nic-800G-per-node' max_per_node >= "
        "6), add a faster part, or "
        "relax the constraint"
    )
    cat = variant(tmp_path, 'usd = 1500, max_per_npu = 2 }', 'usd = 1500, max_per_npu = 4 }')
    with_them = run(inst, "--catalog", cat, "--json", tmp_path / "with.json")
    assert with_them.exit_code == 0, with_them.output
    assert with_them.stderr == "".join(
        f"note: {cat}: classes.InterPod.nics[{i}] ('{name}'): reaches at most 4 x {reach} = 100 "
        "GB/s per NPU on dimension 3, but constraint 'bw[3] >= 150' needs 150: left out (other "
        "parts serve the network)\n"
        for i, name, reach in ((0, "nic-200G", "25 GB/s"),
                               (2, "nic-800G-per-node", "100 GB/s per node of 4"))
    )
    text = cat.read_text(encoding="utf-8")
    without = tmp_path / "without.toml"
    without.write_text("\n".join(line for line in text.splitlines()
                                 if "nic-200G" not in line and "nic-800G-per-node" not in line),
                       encoding="utf-8")
    alone = run(inst, "--catalog", without, "--json", tmp_path / "without.json")
    assert alone.exit_code == 0 and alone.stderr == "", alone.output
    got, want = (
        {k: v for k, v in json.loads((tmp_path / f).read_text(encoding="utf-8")).items()
         if k not in ("milp_seconds", "solve_seconds")}
        for f in ("with.json", "without.json")
    )
    assert got == want
    assert got["bw_gbps_per_dim"][3] == 150.0  # 3 x nic-400G


def test_unknown_key(tmp_path: Path):
    cat = variant(tmp_path, "max_per_npu = 8 },\n]\n\n[classes.InterPackage]",
                  "max_per_nup = 8 },\n]\n\n[classes.InterPackage]")
    assert_error(
        run(INSTANCE, "--catalog", cat),
        2,
        "classes.InterChiplet.links[1] ('d2d-port-50GBs')",
        "unknown key",
    )


def test_missing_catalog_file(tmp_path: Path):
    assert_error(
        run(INSTANCE, "--catalog", tmp_path / "none.toml"),
        2,
        "none.toml",
        "parts catalog file not found",
    )


def test_min_cost_needs_a_time_target():
    assert_error(run(INSTANCE, "--catalog", CATALOG, "--objective", "min_cost"), 2, "--max-time",
                 "missing for objective min_cost")


def test_unknown_objective():
    assert_error(
        run(INSTANCE, "--catalog", CATALOG, "--objective", "fastest"),
        2,
        "unknown objective 'fastest'",
    )


def test_an_objective_of_solve_alone_is_named_as_such():
    assert_error(
        run(INSTANCE, "--catalog", CATALOG, "--objective", "min_run_cost"),
        2,
        "--objective: 'min_run_cost' has no integer provisioning: provision supports "
        "performance, min_cost, performance_per_cost, min_power; fix: use one of them; 'hieropt "
        "solve --objective min_run_cost' gives its continuous design",
    )


def test_unreachable_time_target():
    assert_error(
        run(INSTANCE, "--catalog", CATALOG, "--objective", "min_cost", "--max-time-ns", "1.1e9"),
        3,
        "infeasible: time target 1,100,000,000.0 ns: the fastest design from the catalog takes "
        "1,235,743,863.0 ns",  # (the design of test_default_instance_report)
    )


def test_budget_below_the_cheapest_design():
    # the cheapest design is printed to the cent, rounded up: a budget of it is met, a cent less
    # is not. With link ports one per peer it is 10 x d2d-25 (250 GB/s), 7 x serdes-200G (175), 2 x
    # node-link-200G (50) and one 800G NIC per node (25): 4,096 x (10 x 60 + 7 x 160 + 2 x 350) +
    # 2,662,400 + 5,760,000 = $18,334,720 (the least of the 38 designs with sum(bw) == 500)
    assert_error(
        run(INSTANCE, "--catalog", CATALOG, "--max-cost-usd", "1e6"),
        3,
        "infeasible: budget $1,000,000.00: the cheapest design from the catalog that meets the "
        "constraints costs $18,334,720.00; raise the budget or add cheaper parts",
    )
    assert run(INSTANCE, "--catalog", CATALOG, "--max-cost-usd", "18334720").exit_code == 0
    # (half a dollar less: 18,334,719.99 is the double 18,334,719.98999..., printed to the cent
    # below it)
    assert_error(run(INSTANCE, "--catalog", CATALOG, "--max-cost-usd", "18334719.5"), 3,
                 "budget $18,334,719.50: the cheapest design from the catalog that meets the "
                 "constraints costs $18,334,720.00")


# --------------------------------------------------------------------------------- sourced catalogs
NVL = REPO / "instances" / "gpt3-nvl72-2304.toml"
IB = REPO / "catalogs" / "nvl72-infiniband.toml"


def ib_variant(tmp_path: Path, old: str, new: str) -> Path:
    text = IB.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / "ib.toml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "parts"),
    [
        (
            "watts = 25                  # assumption (no-power)",
            "watts = -25",
            ("classes.ScaleOut.nics[0] ('ConnectX-7 400G NDR').watts", "negative", "fix:"),
        ),
        (
            "radix = 64                  # 32 OSFP cages",
            "radix = 3 #",
            ("classes.ScaleOut.switches[0] ('Quantum-2 QM9700 64x400G').radix", "below 4", "fix:"),
        ),
        (
            "oversubscription = [[1, 2]]",
            "oversubscription = [[1, 0.5]]",
            ("classes.ScaleOut.fabric.oversubscription", "below 1", "fix:"),
        ),
        (
            "usd = 12000                 # ~$12k (infra-economics, estimate)\nwatts = 25    "
            "              # assumption "
            '(no-power)\nsource = "infra-economics"\n',
            "usd = 12000\nwatts = 25\n",
            ("classes.ScaleOut.nics[0] ('ConnectX-7 400G NDR').source", "require_sources", "fix:"),
        ),
    ],
    ids=["negative-power", "radix-3", "oversubscription-0.5", "price-without-source"],
)
def test_sourced_catalog_bad_input(tmp_path, old, new, parts):
    assert_error(run(NVL, "--catalog", ib_variant(tmp_path, old, new)), 2, str(tmp_path), *parts)


def test_sourced_catalogs_end_to_end(tmp_path):
    out = tmp_path / "p.json"
    for cat in (IB, REPO / "catalogs" / "nvl72-ethernet.toml"):
        r = run(
            NVL,
            "--catalog",
            cat,
            "--objective",
            "min_power",
            "--max-time-ns",
            "4.1e8",
            "--no-compare",
            "--json",
            out,
        )
        assert r.exit_code == 0, r.output
        data = json.loads(out.read_text())
        assert data["units"]["objective"] == "W" and data["objective_value"] == pytest.approx(
            data["power_w"]
        )
        assert data["power_w"] == pytest.approx(sum(b["watts"] for b in data["bom"]))
        assert (
            data["iteration_time_ns"] <= 4.1e8 and data["design"][0]["placement"] == "multi_plane"
        )
        # 18 NVLink switch chips per NVL72 rack
        assert data["design"][0]["switches_total"] == 32 * 18


@pytest.mark.parametrize("objective", ["min_power", "min_cost"])
def test_a_missing_time_target_is_asked_for_with_a_unit(objective: str):
    # the fix said "give the iteration-time target in ns, e.g. 1.3e9", while --max-time takes units
    msg = assert_error(run(INSTANCE, "--catalog", CATALOG, "--objective", objective), 2)
    assert msg == (
        f"error: --max-time: missing for objective {objective}; fix: give the iteration-time "
        "target (--max-time 1.3s, or max_iteration_time_ns in ns)"
    )


def test_an_instance_objective_without_integer_provisioning_names_the_file_s_objective():
    # llama3-405b-16k-cluster.toml asks for min_run_cost; --objective was not given
    r = run(REPO / "instances" / "llama3-405b-16k-cluster.toml", "--catalog",
            REPO / "catalogs" / "nvl72-infiniband.toml")
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines()[-1] == (
        "error: llama3-405b-16k-cluster: objective: 'min_run_cost' has no integer provisioning; "
        "fix: give an objective (objective=..., --objective), one of performance, min_cost, "
        "performance_per_cost, min_power "
        "(codesign --catalog provisions a min_run_cost search's shortlist for performance: "
        "--objective performance gives its figures)"
    )


# --------------------------------------------------------------------------------------------------
# --max-power-w took only a plain number: '500kW' was "unable to parse", though --budget 10M and
# --max-time 1.3s take their units.

NVL72 = REPO / "instances" / "gpt3-nvl72-2304.toml"
NVL72_CATALOG = REPO / "catalogs" / "nvl72-ethernet.toml"


@pytest.mark.parametrize("power", ["300kW", "0.3MW", "300000W"])
def test_a_power_budget_takes_its_unit(power):
    r = run(NVL72, "--catalog", NVL72_CATALOG, "--max-power-w", power, "--no-compare",
            "--json", "-")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    # the budget is 300,000 W however written; the fastest design within it draws 266,976 W (the
    # fastest of all: 425,952 W)
    assert out["max_power_w"] == pytest.approx(3e5, rel=1e-15)
    assert out["power_w"] == 266976.0


@pytest.mark.parametrize(("power", "problem"), [
    ("500kw", "unknown power unit 'kw' in '500kw'"),
    ("500 GB", "unknown power unit 'GB' in '500 GB'"),
    ("-5kW", "'-5kW' is negative (want a value > 0)"),
])
def test_a_power_budget_in_another_unit_is_refused(power, problem):
    assert_error(run(NVL72, "--catalog", NVL72_CATALOG, "--max-power-w", power), 2,
                 f"error: --max-power-w: {problem}; fix: ")


@pytest.mark.parametrize(("power", "meant", "watts"), [
    ("300", "300kW", "300000"),    # kW meant: the lowest-power design draws 205,920 W
    ("0.25", "0.25MW", "250000"),  # MW meant (it was printed as a budget of "0 W")
])
def test_a_plain_power_budget_far_below_every_design_names_the_unit_meant(power, meant, watts):
    r = run(NVL72, "--catalog", NVL72_CATALOG, "--max-power-w", power, "--no-compare")
    ratio = f"{205920 / float(power):,.0f}"
    assert_error(r, 3, f"error: infeasible: power budget {power} W: the lowest-power design from "
                 "the catalog that meets the other limits draws 205,920 W — the budget is "
                 f"{ratio}x below it: a plain number is W; did you mean {meant}? (write "
                 f"--max-power-w {meant}, or max_power_w={watts}); raise the power budget")


@pytest.mark.parametrize("power", ["300W", "0.3kW"])
def test_a_power_budget_given_with_its_unit_gets_no_plain_number_hint(power):
    """300 W written with its unit: the ratio to the least design stays, but no "did you mean
    300kW" (1,000 times the value given)."""
    r = run(NVL72, "--catalog", NVL72_CATALOG, "--max-power-w", power, "--no-compare")
    msg = assert_error(r, 3, "error: infeasible: power budget 300 W: the lowest-power design "
                       "from the catalog that meets the other limits draws 205,920 W — the budget "
                       "is 686x below it; raise the power budget")
    assert "did you mean" not in msg and "plain number" not in msg


def test_a_rounding_label_names_the_dimensions_that_went_the_other_way():
    from types import SimpleNamespace as NS

    import numpy as np

    from hieropt.report.provision import rounding_label

    p = NS(continuous=NS(bw_gbps=np.array([400.0, 30.0, 10.0])))

    def r(name, bw, units=(1, 1, 1)):
        return NS(name=name, bw_gbps=None if bw is None else np.array(bw),
                  design=tuple(NS(units=u, kind="link") for u in units))

    assert rounding_label(p, r("down", [375.0, 25.0, 10.0])) == "round down"
    # (within 1e-4 of the continuous value: rounded to it, not against the rounding)
    assert rounding_label(p, r("down", [375.0, 30.002, 10.0])) == "round down"
    assert rounding_label(p, r("down", [375.0, 50.0, 25.0])) == "round down, dims 1, 2 up to 1 unit"
    # (link ports of a FullyConnected 8: the fewest is 7, one per peer)
    assert rounding_label(p, r("down", [375.0, 50.0, 10.0], (2, 7, 1))) == (
        "round down, dim 1 up to 7 units")
    assert rounding_label(p, r("down", [375.0, 50.0, 25.0], (2, 7, 1))) == (
        "round down, dims 1, 2 up to the fewest units")
    assert rounding_label(p, r("up", [300.0, 50.0, 25.0])) == (
        "round up, dim 0 down to the unit limit")
    assert rounding_label(p, r("best", [375.0, 50.0, 25.0])) == "round best"
    assert rounding_label(p, r("down", None)) == "round down"


@pytest.mark.heavy
def test_provision_keeps_a_total_budget_on_the_command_line():
    """``--total-budget``: 16,384 H100s at Meta's figures cost $797,368,320 without their network;
    the cheapest design of catalogs/nvl72-infiniband.toml needs $248,206,800 of parts and the
    facility for their 1,256,264 W at $11.7 per W ($14,698,288.80): $1,060,273,408.80 in all,
    which $1.08B buys and $1.0B does not."""
    from tests.cli.util import run

    args = ("provision", REPO / "instances" / "llama3-405b-16k-cluster.toml", "--catalog",
            REPO / "catalogs" / "nvl72-infiniband.toml", "--objective", "performance")
    assert 248_206_800 + 1_256_264 * 11.7 + 797_368_320 == pytest.approx(1_060_273_408.80)
    r = run(*args, "--total-budget", "1.08B")
    assert r.exit_code == 0, r.output
    assert ("note: total budget $1,080,000,000: the cluster costs $1,060,273,409 with this network "
            "($797,368,320 without it + its parts' $248,206,800 + $14,698,289 of facility for "
            "their 1,256,264 W)") in r.stdout
    short = run(*args, "--total-budget", "1.0B")
    assert short.exit_code == 3
    last = short.stderr.strip().splitlines()[-1]  # (after the catalog's notes)
    assert last.startswith("error: infeasible: total budget $1,000,000,000.00: ")
    assert last.endswith("a total budget of at least $1,060,273,408.80 buys it")


def test_provisioning_to_dict_is_the_commands_json_but_its_run_and_knee(tmp_path):
    import hieropt

    inst, cat = REPO / "instances" / "gpt3-4d.toml", REPO / "catalogs" / "example-4d.toml"
    js = tmp_path / "p.json"
    r = run(inst, "--catalog", cat, "--json", js)
    assert r.exit_code == 0, r.output
    cli = json.loads(js.read_text())
    data = hieropt.provision(inst, cat).to_dict(hieropt.load_instance(inst))
    assert set(cli) - set(data) == {"run", "knee"}
    added = cli["notes"][len(data["notes"]):]  # (the command's run and power notes, after)
    assert cli["notes"] == data["notes"] + added
    for d in (data, cli):  # (wall times differ)
        for key in ("solve_seconds", "milp_seconds", "notes", "run", "knee"):
            d.pop(key, None)
    assert data == cli
    assert data["status"] == "optimal" and data["catalog"] == "example-4d-INVENTED-prices"
