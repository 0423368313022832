"""The command line on bad input: exit code 2 (bad input) or 3 (infeasible / unbounded), one line on
stderr naming the file, the field and the fix, never a traceback; plus the good inputs next to them
(zero-byte collectives, ASTRA-sim headers, tabs, lower-case names) and the default instance end to
end.

Every input is a small file written into ``tmp_path`` from the valid set in :func:`files` (2
dimensions: Ring 4 x Switch 8, 32 NPUs), changed in one place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from hieropt.cli import app

REPO = Path(__file__).resolve().parents[2]
DEFAULT_INSTANCE = REPO / "instances" / "gpt3-4d.toml"

# This typer's CliRunner keeps stdout and stderr apart (result.stdout, result.stderr; result.output
# mixes both). No colour codes, and wide enough that help text does not wrap mid-phrase.
runner = CliRunner(
    env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1", "COLUMNS": "200"}
)

NETWORK_YML = """\
Topology: [Ring, Switch]
NpusCount: [4, 8]
CostDimension: [Inner, Outer]
"""
COMM_YML = """\
Forward: [4, -1]
InputGrad: [4, -1]
WeightGrad: [-1, 8]
"""
COST_YML = """\
Inner:
  Link: 2.0
Outer:
  Link: 8.0
  Switch: 18.0
  Nic: 30.0
"""
WORKLOAD_TXT = """\
L1 -1 1000 ALLREDUCE 1000000 1000 ALLREDUCE 1000000 1000 ALLREDUCE 2000000 10
L2 -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 2000000 10
"""
INSTANCE_TOML = """\
name = "small"
objective = "performance"
training_loop = "no_overlap"
workload = "wl.txt"
constraints = ["sum(bw) == 100"]

[network]
dims = [
  { block = "Ring", npus = 4, cost_class = "Inner" },
  { block = "Switch", npus = 8, cost_class = "Outer" },
]

[mapping]
forward = [4, 1]
input_grad = [4, 1]
weight_grad = [1, 8]

[cost.Inner]
link_usd_per_gbps = 2.0
[cost.Outer]
link_usd_per_gbps = 8.0
switch_usd_per_gbps = 18.0
nic_usd_per_gbps = 30.0
"""


@dataclass(frozen=True)
class Files:
    """A valid small problem in both forms: LIBRA files (with ``--constraint 'sum(bw) == 100'``) and
    an instance."""

    dir: Path
    network: Path
    communicator: Path
    cost: Path
    workload: Path
    instance: Path

    def write(self, name: str, text: str) -> Path:
        path = self.dir / name
        path.write_text(text, encoding="utf-8")
        return path

    def variant(self, name: str, base: Path, old: str, new: str) -> Path:
        """A copy of ``base`` with ``old`` replaced by ``new`` (exactly once)."""
        text = base.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{old!r} must occur once in {base.name}"
        return self.write(name, text.replace(old, new))

    def libra(self, *extra: str, network: Path | None = None, workload: Path | None = None,
              communicator: Path | None = None, cost: Path | None = None,
              constraints: tuple[str, ...] = ("sum(bw) == 100",)) -> list[str]:
        """``solve`` arguments for the LIBRA flags, with any file replaced."""
        args = ["--network", network or self.network, "--workload", workload or self.workload,
                "--communicator", communicator or self.communicator, "--cost", cost or self.cost]
        for c in constraints:
            args += ["--constraint", c]
        return [str(a) for a in (*args, *extra)]


@pytest.fixture
def files(tmp_path: Path) -> Files:
    f = Files(
        tmp_path,
        tmp_path / "net.yml",
        tmp_path / "comm.yml",
        tmp_path / "cost.yml",
        tmp_path / "wl.txt",
        tmp_path / "inst.toml",
    )
    for path, text in ((f.network, NETWORK_YML), (f.communicator, COMM_YML), (f.cost, COST_YML),
                       (f.workload, WORKLOAD_TXT), (f.instance, INSTANCE_TOML)):
        path.write_text(text, encoding="utf-8")
    return f


def run(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args])


def assert_ok(result: Result) -> None:
    assert result.exit_code == 0, result.output
    assert result.exception is None, result.exc_info
    assert "Traceback" not in result.output


def assert_error(result: Result, code: int, *parts: str) -> str:
    """Exit ``code``, no traceback, nothing on stdout, and one line ``error: ...`` on stderr
    containing ``parts``."""
    assert "Traceback" not in result.output
    # an uncaught exception would be the exception itself here, not the SystemExit of a handled
    # error
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    msg = result.stderr.strip()
    assert msg.startswith("error: "), msg
    assert "\n" not in msg, f"not one line: {msg!r}"
    for p in parts:
        assert p in msg, f"{p!r} not in {msg!r}"
    return msg


def solve_json(*args: str | Path) -> dict:
    result = run("solve", *args, "--json", "-")
    assert_ok(result)
    return json.loads(result.stdout)


def evaluate_json(*args: str | Path) -> dict:
    result = run("evaluate", *args, "--json", "-")
    assert_ok(result)
    return json.loads(result.stdout)


# ------------------------------------------------------------------------------------ missing files
def test_valid_small_files_solve(files: Files) -> None:
    """The base of every variant below is valid in both forms, so each failure is due to its one
    change."""
    assert solve_json(files.instance)["status"] == "optimal"
    assert solve_json(*files.libra())["status"] == "optimal"


def test_missing_instance_file(files: Files) -> None:
    assert_error(run("solve", files.dir / "nope.toml"), 2, "nope.toml", "instance file not found",
                 "fix: check the path")


@pytest.mark.parametrize(
    ("flag", "what"),
    [
        ("network", "network"),
        ("workload", "workload"),
        ("communicator", "communicator"),
        ("cost", "cost model"),
    ],
)
def test_missing_libra_file(files: Files, flag: str, what: str) -> None:
    missing = files.dir / f"absent_{flag}.yml"
    assert_error(
        run("solve", *files.libra(**{flag: missing})),
        2,
        str(missing),
        f"{what} file not found",
        "fix: check the path",
    )


def test_missing_file_named_by_instance(files: Files) -> None:
    inst = files.variant("i.toml", files.instance, 'workload = "wl.txt"', 'workload = "absent.txt"')
    assert_error(
        run("solve", inst),
        2,
        str(files.dir / "absent.txt"),
        "workload file not found",
        "fix: check the path",
    )


def test_missing_libra_flag(files: Files) -> None:
    args = files.libra()
    i = args.index("--cost")
    del args[i : i + 2]
    assert_error(
        run("solve", *args), 2, "--cost", "missing LIBRA flag", "fix: give all of --network"
    )


def test_no_instance_at_all() -> None:
    assert_error(run("solve"), 2, "no instance given", "fix: pass an instance TOML file")


def test_instance_and_libra_flags_together(files: Files) -> None:
    assert_error(run("solve", files.instance, "--network", files.network), 2, "--network",
                 "both an INSTANCE file and LIBRA flags", "fix: give either an instance file or")


# ------------------------------------------------------------------------------------ workload text
def test_workload_line_with_wrong_field_count(files: Files) -> None:
    wl = files.variant(
        "w.txt",
        files.workload,
        "NONE 0 1000 ALLREDUCE 2000000 10\n",
        "NONE 0 1000 ALLREDUCE 2000000\n",
    )
    assert_error(
        run("solve", *files.libra(workload=wl)),
        2,
        "w.txt",
        "line 2",
        "11 fields, expected 12",
        "fix: write exactly 12 whitespace-separated fields",
    )


def test_workload_unknown_collective(files: Files) -> None:
    wl = files.variant("w.txt", files.workload, "L2 -1 1000 NONE", "L2 -1 1000 ALLREDUCEX")
    assert_error(
        run("solve", *files.libra(workload=wl)),
        2,
        "w.txt",
        "line 2, field 4 (collective)",
        "unknown collective 'ALLREDUCEX'",
        "fix: use one of NONE, ALLREDUCE, REDUCESCATTER, ALLGATHER, ALLTOALL",
    )


def test_workload_negative_time(files: Files) -> None:
    wl = files.variant("w.txt", files.workload, "L2 -1 1000 NONE", "L2 -1 -5 NONE")
    assert_error(
        run("solve", *files.libra(workload=wl)),
        2,
        "w.txt",
        "line 2, field 3 (forward compute ns)",
        "'-5' is not a finite number >= 0",
        "fix: write a non-negative number",
    )


def test_workload_non_numeric_size(files: Files) -> None:
    wl = files.variant(
        "w.txt",
        files.workload,
        "L2 -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 2000000",
        "L2 -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 2MB",
    )
    assert_error(
        run("solve", *files.libra(workload=wl)),
        2,
        "w.txt",
        "line 2, field 11 (weight_grad size bytes)",
        "'2MB'",
        "fix: write a non-negative number",
    )


def test_workload_header_count_differs_from_lines(files: Files) -> None:
    wl = files.write("w.txt", "DATA\n3\n" + WORKLOAD_TXT)
    assert_error(
        run("solve", *files.libra(workload=wl)),
        2,
        "w.txt",
        "header layer count",
        "says 3 layers",
        "has 2 layer lines",
        "fix: set line 2 to 2",
    )


# ------------------------------------------------------------------------------------- communicator
def test_communicator_length_differs_from_dimensions(files: Files) -> None:
    comm = files.variant("c.yml", files.communicator, "Forward: [4, -1]", "Forward: [4, -1, -1]")
    assert_error(
        run("solve", *files.libra(communicator=comm)),
        2,
        "c.yml",
        "Forward",
        "has 3 entries",
        "network has 2 dimensions",
        "fix: give one group size per dimension",
    )


def test_inline_mapping_length_differs_from_dimensions(files: Files) -> None:
    inst = files.variant(
        "i.toml", files.instance, "weight_grad = [1, 8]", "weight_grad = [1, 8, 1]"
    )
    assert_error(
        run("solve", inst),
        2,
        "i.toml",
        "mapping.weight_grad",
        "has 3 entries",
        "network has 2 dimensions",
        "fix: give one group size per dimension",
    )


def test_communicator_group_of_zero(files: Files) -> None:
    comm = files.variant("c.yml", files.communicator, "InputGrad: [4, -1]", "InputGrad: [0, -1]")
    assert_error(
        run("solve", *files.libra(communicator=comm)),
        2,
        "c.yml",
        "InputGrad[0]",
        "group size 0 is invalid",
        "fix: use an integer >= 1, or -1",
    )


def test_communicator_group_larger_than_dimension(files: Files) -> None:
    comm = files.variant("c.yml", files.communicator, "WeightGrad: [-1, 8]", "WeightGrad: [-1, 16]")
    assert_error(
        run("solve", *files.libra(communicator=comm)),
        2,
        "c.yml",
        "WeightGrad[1]",
        "group of 16 NPUs exceeds dimension 1's 8 NPUs",
        "fix: use a group size between 1 and 8",
    )


# ------------------------------------------------------------------------------------------ network
def test_libra_dimension_of_size_one(files: Files) -> None:
    net = files.variant("n.yml", files.network, "NpusCount: [4, 8]", "NpusCount: [1, 8]")
    assert_error(
        run("solve", *files.libra(network=net)),
        2,
        "n.yml",
        "NpusCount[0]",
        "dimension size 1",
        "fix: a dimension connects at least 2 NPUs",
    )


def test_inline_dimension_of_size_one(files: Files) -> None:
    inst = files.variant("i.toml", files.instance, "npus = 4", "npus = 1")
    assert_error(
        run("solve", inst),
        2,
        "i.toml",
        "network.dims[0].npus",
        "1 is below 2",
        "fix: use an integer >= 2",
    )


def test_libra_unknown_building_block(files: Files) -> None:
    net = files.variant(
        "n.yml", files.network, "Topology: [Ring, Switch]", "Topology: [Torus, Switch]"
    )
    assert_error(
        run("solve", *files.libra(network=net)),
        2,
        "n.yml",
        "Topology[0]",
        "unknown building block 'Torus'",
        "fix: use one of Ring, FullyConnected, Switch",
    )


def test_inline_unknown_building_block(files: Files) -> None:
    inst = files.variant("i.toml", files.instance, 'block = "Ring"', 'block = "Torus"')
    assert_error(run("solve", inst), 2, "i.toml", "network.dims[0].block", "'Torus'",
                 "fix: got 'Torus'; use 'Ring', 'FullyConnected' or 'Switch'")


# --------------------------------------------------------------------------------------- cost model
def test_libra_unknown_cost_class(files: Files) -> None:
    net = files.variant(
        "n.yml", files.network, "CostDimension: [Inner, Outer]", "CostDimension: [Inner, Outr]"
    )
    assert_error(
        run("solve", *files.libra(network=net)),
        2,
        "n.yml",
        "CostDimension[1]",
        "unknown cost class 'Outr'",
        "fix: use 'Outer' (priced, and used by no dimension) or rename the cost model's 'Outer' "
        "to 'Outr'",
        str(files.cost),
    )


def test_inline_unknown_cost_class(files: Files) -> None:
    inst = files.variant("i.toml", files.instance, 'cost_class = "Outer"', 'cost_class = "Outr"')
    assert_error(
        run("solve", inst),
        2,
        "i.toml",
        "network.dims[1].cost_class",
        "unknown cost class 'Outr'",
        "fix: use 'Outer' (priced, and used by no dimension) or rename the cost model's 'Outer' "
        "to 'Outr'",
    )


def test_misspelled_cost_table_is_named(files: Files) -> None:
    """A cost table whose name is a misspelling of a dimension's class ([cost.Outr] for "Outer"):
    the error names the table as the likely misspelling, not only the classes priced."""
    inst = files.variant("t.toml", files.instance, "[cost.Outer]", "[cost.Outr]")
    assert_error(
        run("solve", inst),
        2,
        "t.toml",
        "network.dims[1].cost_class",
        "unknown cost class 'Outer'",
        "fix: use 'Outr' (priced, and used by no dimension) or rename the cost model's 'Outr' "
        "to 'Outer'",
    )


def test_unknown_cost_class_far_from_every_table(files: Files) -> None:
    inst = files.variant("f.toml", files.instance, 'cost_class = "Outer"', 'cost_class = "Qz"')
    assert_error(
        run("solve", inst),
        2,
        "f.toml",
        "unknown cost class 'Qz'",
        "fix: use one of Inner, Outer or add it to the cost model",
    )


@pytest.mark.parametrize("twice", ["  LINK: 100.0\n", "  link: 2.0\n"])
def test_libra_cost_part_given_twice_in_another_case(files: Files, twice: str) -> None:
    """Part names are case-insensitive, so 'Link' and 'LINK' are one part given twice: refused,
    never resolved by keeping the last price (which silently changed the network's cost)."""
    cost = files.variant("k.yml", files.cost, "  Link: 8.0\n", "  Link: 8.0\n" + twice)
    assert_error(
        run("solve", *files.libra(cost=cost)),
        2,
        "k.yml",
        f"Outer.{twice.split(':')[0].strip()}",
        "the same part as 'Link' (part names are case-insensitive): given twice",
        "fix: keep one price per part",
    )


@pytest.mark.parametrize(
    ("drop", "part"), [("  Nic: 30.0\n", "Nic"), ("  Switch: 18.0\n", "Switch")]
)
def test_libra_switch_cost_class_without_price(files: Files, drop: str, part: str) -> None:
    cost = files.variant("k.yml", files.cost, drop, "")
    assert_error(
        run("solve", *files.libra(cost=cost)),
        2,
        "k.yml",
        "cost.Outer",
        f"dimension 1 is a Switch, which needs both a Switch and a Nic price, and its cost "
        f"class has no {part} price",
        f"fix: add {part.lower()}_usd_per_gbps ({part} in a LIBRA cost YAML), $ per GB/s, "
        "to cost class 'Outer' (a Nic price of 0 for a domain without NICs, e.g. NVLink)",
    )


@pytest.mark.parametrize(("drop", "part"), [("nic_usd_per_gbps = 30.0\n", "Nic"),
                                            ("switch_usd_per_gbps = 18.0\n", "Switch")])
def test_inline_switch_cost_class_without_price(files: Files, drop: str, part: str) -> None:
    inst = files.variant("i.toml", files.instance, drop, "")
    assert_error(
        run("solve", inst),
        2,
        "i.toml",
        "cost.Outer",
        f"has no {part} price",
        f"fix: add {part.lower()}_usd_per_gbps ({part} in a LIBRA cost YAML), $ per GB/s, "
        "to cost class 'Outer' (a Nic price of 0 for a domain without NICs, e.g. NVLink)",
    )


COSTMSG_TOML = """name = "costmsg"
objective = "performance"
training_loop = "no_overlap"
workload = "ar.txt"
constraints = ["sum(bw) == 150"]
[network]
dims = [
  { block = "Switch", npus = 8, cost_class = "NVLink" },
  { block = "Switch", npus = 4, cost_class = "B" },
]
[cost.NVLink]
link_usd_per_gbps = 10.0
PRICES
[cost.B]
link_usd_per_gbps = 5.0
switch_usd_per_gbps = 7.0
nic_usd_per_gbps = 11.0
"""


def _costmsg(tmp_path: Path, prices: str) -> Path:
    (tmp_path / "ar.txt").write_text(
        "DATA\n1\nlayer0\t-1\t1000\tNONE\t0\t2000\tNONE\t0\t3000\tALLREDUCE\t1000000000\t0\n"
    )
    (tmp_path / "i.toml").write_text(COSTMSG_TOML.replace("PRICES", prices))
    return tmp_path / "i.toml"


def test_a_switch_class_without_either_price_names_both_in_one_message(tmp_path: Path) -> None:
    r = run("solve", _costmsg(tmp_path, ""))
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"error: {tmp_path / 'i.toml'}: cost.NVLink: dimension 0 is a Switch, which needs both a "
        "Switch and a Nic price, and its cost class has neither; fix: add switch_usd_per_gbps "
        "(Switch in a LIBRA cost YAML) and nic_usd_per_gbps (Nic in a LIBRA cost YAML), $ per "
        "GB/s, to cost class 'NVLink' (a Nic price of 0 for a domain without NICs, e.g. NVLink)"
    )


def test_a_nic_price_of_zero_is_a_domain_without_nics(tmp_path: Path) -> None:
    """NVLink: link $10 + switch $5 + NIC $0 = $15 per GB/s per NPU on dim 0, $23 on dim 1, 32
    NPUs: at 100 and 50 GB/s the network costs 32 x (15 x 100 + 23 x 50) = $84,800; the solve is
    certified like any other."""
    import hieropt

    nvlink = "switch_usd_per_gbps = 5.0\nnic_usd_per_gbps = 0"
    inst = hieropt.load_instance(_costmsg(tmp_path, nvlink))
    assert inst.cost.classes["NVLink"].nic_usd_per_gbps == 0.0
    assert hieropt.evaluate(inst, [100.0, 50.0]).network_cost_usd == 84_800.0
    sol = hieropt.solve(inst)
    assert sol.status.value == "optimal" and sol.gap <= 1e-8
    assert sol.network_cost_usd == pytest.approx(32 * (15 * sol.bw_gbps[0] + 23 * sol.bw_gbps[1]),
                                                 rel=1e-12)
    assert hieropt.verify(inst, sol.bw_gbps, sol.iteration_time_ns).ok
    r = run("solve", _costmsg(tmp_path, "switch_usd_per_gbps = 5.0\nnic_usd_per_gbps = -1"))
    assert r.exit_code == 2 and "nic_usd_per_gbps: -1 is below 0; fix: use a number >= 0" in (
        r.stderr
    )


def test_a_switch_price_of_zero_is_a_bundled_switch(tmp_path: Path) -> None:
    """A switch bundled with the servers (as [cluster] and a catalog take it): link $10 + switch
    $0 + NIC $0 = $10 per GB/s per NPU on dim 0, $23 on dim 1, 32 NPUs: at 100 and 50 GB/s the
    network costs 32 x (10 x 100 + 23 x 50) = $68,800; the fastest and the min-cost solves are
    certified (the link price keeps every dimension's price positive). Before, "use a number >=
    1e-12"."""
    import hieropt

    bundled = "switch_usd_per_gbps = 0\nnic_usd_per_gbps = 0"
    inst = hieropt.load_instance(_costmsg(tmp_path, bundled))
    assert inst.cost.classes["NVLink"].switch_usd_per_gbps == 0.0
    assert hieropt.evaluate(inst, [100.0, 50.0]).network_cost_usd == 68_800.0
    fast = hieropt.solve(inst)
    assert fast.status.value == "optimal" and fast.gap <= 1e-8
    limit = hieropt.SolveOptions(max_iteration_time_ns=fast.iteration_time_ns * 1.1)
    cheap = hieropt.solve(inst, objective="min_cost", options=limit)
    assert cheap.status.value == "optimal" and cheap.gap <= 1e-8
    assert cheap.network_cost_usd == pytest.approx(
        32 * (10 * cheap.bw_gbps[0] + 23 * cheap.bw_gbps[1]), rel=1e-12)
    assert hieropt.verify(inst, cheap.bw_gbps, cheap.iteration_time_ns).ok


# -------------------------------------------------------------------------------------- constraints
def test_constraint_names_missing_dimension(files: Files) -> None:
    assert_error(
        run("solve", *files.libra(constraints=("sum(bw) == 100", "bw[2] <= 5"))),
        2,
        "--constraint",
        "constraint 'bw[2] <= 5'",
        "out of range",
        "network has 2 dimensions",
        "fix: use bw[0]..bw[1]",
    )


def test_instance_constraint_names_missing_dimension(files: Files) -> None:
    inst = files.variant(
        "i.toml", files.instance, '["sum(bw) == 100"]', '["sum(bw) == 100", "bw[3] >= 1"]'
    )
    assert_error(
        run("solve", inst),
        2,
        "i.toml",
        "constraint 'bw[3] >= 1'",
        "out of range",
        "fix: use bw[0]..bw[1]",
    )


def test_non_linear_constraint(files: Files) -> None:
    assert_error(
        run("solve", *files.libra(constraints=("sum(bw) == 100", "bw[0]*bw[1] <= 5"))),
        2,
        "--constraint",
        "constraint 'bw[0]*bw[1] <= 5'",
        "not linear",
        "fix: multiply bandwidth only by constants",
    )


def test_infeasible_constraints(files: Files) -> None:
    msg = assert_error(
        run("solve", *files.libra(constraints=("sum(bw) == 500", "bw[0] >= 600"))),
        3,
        "infeasible",
        "sum(bw) == 500",
        "bw[0] >= 600",
    )
    assert msg.startswith("error: infeasible")


@pytest.mark.parametrize("constraints", [(), ("bw[0] <= 100",), ("bw[0] >= 100",)])
def test_unbounded_bandwidth(files: Files, constraints: tuple[str, ...]) -> None:
    assert_error(
        run("solve", *files.libra(constraints=constraints)),
        3,
        "unbounded: add a bandwidth budget",
        "bw[1]",
        "sum(bw) == 500",
    )


def test_unbounded_instance_without_constraints(files: Files) -> None:
    inst = files.variant("i.toml", files.instance, 'constraints = ["sum(bw) == 100"]', "")
    assert_error(run("solve", inst), 3, "unbounded: add a bandwidth budget")


def test_bounded_by_per_dimension_bounds_only(files: Files) -> None:
    """Not unbounded: bw[1] is capped by its bound, not by a constraint, and the instance solves."""
    inst = files.variant("i.toml", files.instance, 'constraints = ["sum(bw) == 100"]',
                         'constraints = ["bw[0] <= 100"]\nbounds = [{dim = 1, upper_gbps = 50}]')
    sol = solve_json(inst)
    assert sol["status"] == "optimal"
    assert sol["bw_gbps_per_dim"] == pytest.approx([100, 50])


# ------------------------------------------------------------------------------------ instance TOML
def test_instance_unknown_key(files: Files) -> None:
    inst = files.variant("i.toml", files.instance, "constraints = [", "constraint = [")
    assert_error(
        run("solve", inst), 2, "i.toml", ": constraint: unknown key", "fix: use only", "constraints"
    )


def test_instance_missing_objective(files: Files) -> None:
    inst = files.variant("i.toml", files.instance, 'objective = "performance"\n', "")
    assert_error(
        run("solve", inst), 2, "i.toml", "objective: missing", 'fix: add objective = "performance"'
    )


def test_instance_invalid_toml(files: Files) -> None:
    inst = files.variant("i.toml", files.instance, 'name = "small"', 'name = "small')
    assert_error(
        run("solve", inst), 2, "i.toml", "invalid TOML", "line 1", "fix: fix the TOML syntax"
    )


# ------------------------------------------------------------------------------------ evaluate --bw
@pytest.mark.parametrize(("bw", "count"), [("50", "1 value given"), ("50,50,50", "3 values given")])
def test_evaluate_wrong_bandwidth_count(files: Files, bw: str, count: str) -> None:
    assert_error(
        run("evaluate", files.instance, "--bw", bw),
        2,
        "--bw",
        count,
        "network has 2 dimensions",
        "fix: give 2 comma-separated GB/s values",
    )


def test_evaluate_non_number_bandwidth(files: Files) -> None:
    assert_error(run("evaluate", files.instance, "--bw", "50,abc"), 2, "--bw", "'50,abc'",
                 "not a comma-separated list of numbers", "fix: write e.g. --bw")


def test_evaluate_negative_bandwidth(files: Files) -> None:
    assert_error(
        run("evaluate", files.instance, "--bw=-5,50"),
        2,
        "--bw: bw[0]",
        "-5 is not a finite number >= 0",
        "fix: give a bandwidth >= 0 GB/s",
    )


def test_evaluate_zero_bandwidth_on_loaded_dimension(files: Files) -> None:
    assert_error(run("evaluate", *files.libra("--bw", "0,50", constraints=())), 2, "--bw", "bw[0]",
                 "0 GB/s but dimension 0 carries", "fix: give it a positive bandwidth")


def test_evaluate_without_bandwidths(files: Files) -> None:
    assert_error(
        run("evaluate", files.instance),
        2,
        "--bw",
        "no bandwidths given",
        "fix: give 2 comma-separated",
    )


# -------------------------------------------------------------------------------------- good inputs
def test_zero_byte_collective_costs_nothing(files: Files) -> None:
    """A collective of 0 bytes is valid and takes 0 ns: the same as NONE, in evaluate and in
    solve."""
    zero = files.write("zero.txt", WORKLOAD_TXT.replace("L2 -1 1000 NONE 0 1000 NONE 0",
                                                        "L2 -1 1000 ALLTOALL 0 1000 allgather 0"))
    none_args = files.libra("--bw", "50,50")
    zero_args = files.libra("--bw", "50,50", workload=zero)
    ref = evaluate_json(*none_args)["breakdown"]
    got = evaluate_json(*zero_args)["breakdown"]
    assert got["iteration_time_ns"] == ref["iteration_time_ns"]
    assert got["communication_by_phase_ns"] == ref["communication_by_phase_ns"]
    ref_sol = solve_json(*files.libra())
    sol = solve_json(*files.libra(workload=zero))
    assert sol["status"] == "optimal"
    assert sol["iteration_time_ns"] == pytest.approx(ref_sol["iteration_time_ns"], rel=1e-9)


def test_all_collectives_zero_bytes(files: Files) -> None:
    """Only zero-byte collectives: no communication time at all; solve still certifies an
    optimum."""
    wl = files.write(
        "zero.txt", "L1 -1 1000 ALLREDUCE 0 1000 REDUCESCATTER 0 1000 ALLREDUCE 0 10\n"
    )
    bd = evaluate_json(*files.libra("--bw", "50,50", workload=wl))["breakdown"]
    assert bd["communication_ns"] == 0
    assert bd["iteration_time_ns"] == 3000
    sol = solve_json(*files.libra(workload=wl))
    assert sol["status"] == "optimal"
    assert sol["iteration_time_ns"] == pytest.approx(3000)


def test_workload_header_tabs_blank_lines_lower_case(files: Files) -> None:
    text = ("\nDATA\n\n2\n\n"
            "L1\t-1\t1000\tallreduce\t1000000\t1000\tAllReduce\t1e6\t1000\tallreduce\t2000000\t10\n"
            "\n  L2  -1 1000\tnone 0 1000 None 0   1000 ALLREDUCE 2000000 10  \n\n")
    wl = files.write("hdr.txt", text)
    ref = evaluate_json(*files.libra("--bw", "50,50"))
    got = evaluate_json(*files.libra("--bw", "50,50", workload=wl))
    by_name = [
        list(d["breakdown"].pop("iteration_time_by_workload_ns").values()) for d in (got, ref)
    ]
    # (keyed by the file's name)
    assert by_name[0] == by_name[1] == [got["breakdown"]["iteration_time_ns"]]
    assert got["breakdown"] == ref["breakdown"]
    assert got["instance"]["workload"]["layers"] == 2
    assert got["instance"]["workload"]["policy"] == "DATA"


def test_workload_header_policy_with_extra_tokens(files: Files) -> None:
    wl = files.write(
        "hdr.txt", "HYBRID_TRANSFORMER model_parallel_NPU_group: 4\n2\n" + WORKLOAD_TXT
    )
    got = evaluate_json(*files.libra("--bw", "50,50", workload=wl))
    assert got["instance"]["workload"]["policy"] == "HYBRID_TRANSFORMER model_parallel_NPU_group: 4"
    assert got["instance"]["workload"]["layers"] == 2
    assert solve_json(*files.libra(workload=wl))["status"] == "optimal"


def test_default_instance_json_to_stdout() -> None:
    """``--json -``: stdout is exactly one JSON document (tables go to stderr)."""
    result = run("solve", DEFAULT_INSTANCE, "--json", "-")
    assert_ok(result)
    data = json.loads(result.stdout)  # fails if anything else is on stdout
    assert data["status"] == "optimal"
    assert "Optimal per-dimension bandwidth" in result.stderr
    assert "Optimal per-dimension bandwidth" not in result.stdout


def test_default_instance_solves() -> None:
    result = run("solve", DEFAULT_INSTANCE)
    assert_ok(result)
    assert "status: optimal" in result.stdout


def test_help_states_units() -> None:
    result = run("--help")
    assert_ok(result)
    text = " ".join(result.output.split())
    assert "GB/s" in text
    assert "times in ns" in text
