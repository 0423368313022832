"""Input-layer defects of the new-user review (findings F3, F4, F6, F7, F11): each bad input ends
with exit 2 and one ``error:`` line naming the file, the field and the fix (an :class:`InputError`
in the library), never a silent default, a traceback, a leaked warning or an earlier run's answer.

Every input is a small file written into ``tmp_path``; the shipped instances and catalogs are read
from the repository.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import yaml

from hieropt.errors import InputError
from hieropt.io.catalog import read_catalog
from hieropt.io.libra import read_communicator, read_cost_model, read_network

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
INSTANCE = REPO / "instances" / "gpt3-4d.toml"
CATALOG = REPO / "catalogs" / "example-4d.toml"



def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------------
# F4: a key given twice in a YAML input was silently accepted, the last one winning (a second
# NpusCount made a network of 8,192 NPUs; a second WeightGrad another mapping; a second cost or
# catalog class other prices).

NETWORK_DUP = (
    "Topology: [ Ring, FullyConnected, Ring, Switch ]\nNpusCount: [ 4, 8, 4, 32 ]\n"
    "NpusCount: [ 4, 8, 4, 64 ]\nCostDimension: [ InterChiplet, InterPackage, InterNode, "
    "InterPod ]\n"
)
COMMUNICATOR_DUP = (
    "Forward: [ 4, 4, -1, -1 ]\nInputGrad: [ 4, 4, -1, -1 ]\nWeightGrad: [ -1, 2, 4, 32 ]\n"
    "WeightGrad: [ -1, -1, 4, 32 ]\n"
)
COST_DUP = (
    "InterChiplet:\n  Link: 2.0\nInterPod:\n  Link: 7.8\n  Nic: 31.6\nInterPod:\n  Link: 1.0\n"
)


@pytest.mark.parametrize(("reader", "text", "line", "key", "first"), [
    (read_network, NETWORK_DUP, 3, "NpusCount", 2),
    (read_communicator, COMMUNICATOR_DUP, 4, "WeightGrad", 3),
    (read_cost_model, COST_DUP, 6, "InterPod", 3),
    (read_cost_model, "InterPod:\n  Link: 7.8\n  Link: 1.0\n", 3, "Link", 2),
])
def test_libra_yaml_with_a_key_given_twice_is_refused(tmp_path, reader, text, line, key, first):
    p = write(tmp_path / "f.yml", text)
    with pytest.raises(InputError) as e:
        reader(p)
    assert str(e.value) == (
        f"{p}: line {line}: key '{key}' given twice (first on line {first}; YAML would keep the "
        "last one); fix: keep one of them"
    )


def test_yaml_catalog_with_a_class_given_twice_is_refused(tmp_path):
    """The second class 'A' (part la2 at $1) replaced the first one (la at $100)."""
    p = write(tmp_path / "cat.yml", "name: c1\nclasses:\n  A:\n    links:\n"
              "      - {name: la, gbps: 10, usd: 100, max_per_npu: 10}\n"
              "  A:\n    links:\n      - {name: la2, gbps: 10, usd: 1, max_per_npu: 10}\n")
    with pytest.raises(InputError) as e:
        read_catalog(p)
    assert str(e.value) == (
        f"{p}: line 6: key 'A' given twice (first on line 3; YAML would keep the last one); "
        "fix: keep one of them"
    )


def test_yaml_catalog_with_a_part_field_given_twice_on_the_command_line(tmp_path):
    data = tomllib.loads(CATALOG.read_text(encoding="utf-8"))
    text = yaml.safe_dump(data, sort_keys=False).replace(
        "      gbps: 25\n", "      gbps: 25\n      gbps: 50\n", 1
    )
    p = write(tmp_path / "cat.yaml", text)
    line = text.splitlines().index("      gbps: 50") + 1
    r = run("provision", INSTANCE, "--catalog", p, "--no-compare")
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {p}: line {line}: key 'gbps' given twice (first on line {line - 1}; YAML would "
        "keep the last one); fix: keep one of them"
    )


def test_libra_network_with_npus_twice_on_the_command_line(tmp_path):
    net = write(tmp_path / "n.yml", NETWORK_DUP)
    comm = write(tmp_path / "c.yml", "Forward: [ 4, 4, -1, -1 ]\nInputGrad: [ 4, 4, -1, -1 ]\n"
                 "WeightGrad: [ -1, 2, 4, 32 ]\n")
    cost = write(
        tmp_path / "cost.yml",
        "InterChiplet: {Link: 2}\nInterPackage: {Link: 4}\nInterNode: {Link: 4}\n"
        "InterPod: {Link: 7.8, Switch: 18, Nic: 31.6}\n",
    )
    work = write(
        tmp_path / "w.txt", "DATA\n1\nl0 -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 1000000 10\n"
    )
    r = run("solve", "--network", net, "--workload", work, "--communicator", comm, "--cost", cost,
            "--constraint", "sum(bw) == 500", "--no-sensitivity")
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {net}: line 3: key 'NpusCount' given twice (first on line 2; YAML would keep "
        "the last one); fix: keep one of them"
    )


def test_yaml_merge_keys_and_distinct_keys_still_load():
    """A key next to '<<: *anchor' overrides the merged one by design: not a duplicate. A BOM is
    tolerated."""
    from hieropt.io.common import load_yaml

    assert load_yaml("\ufeffa: &x {b: 1, c: 2}\nd:\n  <<: *x\n  b: 3\n", "s") == {
        "a": {"b": 1, "c": 2}, "d": {"b": 3, "c": 2}}
    with pytest.raises(InputError, match=r"^s: line 1: key 'a' given twice \(first on line 1;"):
        load_yaml("x: {a: 1, a: 2}", "s")


# --------------------------------------------------------------------------------------------------
# F7: a UTF-8 byte-order mark at the start of a TOML file gave "invalid TOML: Invalid statement (at
# line 1, column 1)", while YAML and workload files with one were read. Every TOML reader now drops
# it.

BOM = "\ufeff"


def with_bom(src: Path, dst: Path, text: str | None = None) -> Path:
    dst.write_bytes(
        (BOM + (src.read_text(encoding="utf-8") if text is None else text)).encode("utf-8")
    )
    return dst


def test_instance_toml_with_a_bom_solves(tmp_path):
    text = INSTANCE.read_text(encoding="utf-8").replace('"../models/', f'"{REPO / "models"}/')
    p = with_bom(INSTANCE, tmp_path / "bom.toml", text)
    assert p.read_bytes().startswith(b"\xef\xbb\xbf")
    r = run("solve", p, "--no-sensitivity")
    assert r.exit_code == 0, r.output
    # (the cheapest of the equally fast designs, 1e-8 above the bound 1,166,511,725.3 ns)
    assert "iteration time: 1,166,511,737.0 ns" in r.stdout


def test_catalog_and_model_files_with_a_bom_are_read(tmp_path):
    from hieropt.io.llm import read_llm
    from hieropt.io.workload_file import read_model

    assert read_catalog(with_bom(CATALOG, tmp_path / "cat.toml")) == read_catalog(CATALOG)
    llm = REPO / "models" / "gpt3-175b-llm.toml"
    assert read_llm(with_bom(llm, tmp_path / "llm.toml")) == read_llm(llm)
    gen = REPO / "models" / "resnet50.toml"
    assert read_model(with_bom(gen, tmp_path / "resnet50.toml")) == read_model(gen)


def test_space_file_with_a_bom_is_read(tmp_path):
    from hieropt.io.space import load_space

    space = REPO / "spaces" / "gpt3-4096.toml"
    text = space.read_text(encoding="utf-8").replace('"../models/', f'"{REPO / "models"}/')
    plain = tmp_path / "plain.toml"
    plain.write_text(text, encoding="utf-8")
    assert load_space(with_bom(space, tmp_path / "bom.toml", text)) == load_space(plain)


# --------------------------------------------------------------------------------------------------
# F6: --json FILE kept an earlier run's optimal answer when the command line did not parse (exit 2
# from click or typer: a value of the wrong type, an unknown option or command). The error document
# is written there too.

@pytest.fixture(scope="module")
def optimal_json(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("json") / "first.json"
    assert run("solve", INSTANCE, "--no-sensitivity", "--json", out).exit_code == 0
    return out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("pareto", INSTANCE, "--points", "abc", "--json", "{out}"),
            "--points: input should be a valid integer, unable to parse string as an "
            "integer (given 'abc'); fix: see "
            "'hieropt pareto --help'",
        ),
        (
            ("pareto", INSTANCE, "--budget-usd", "1", "--json", "{out}"),
            "--budget-usd: no such option; fix: see 'hieropt pareto --help'",
        ),
        (
            ("solve", INSTANCE, "--json={out}", "--gap", "x"),
            "--gap: input should be a valid number, unable to parse string as a number "
            "(given 'x'); fix: see "
            "'hieropt solve --help'",
        ),
        (
            ("solv", INSTANCE, "--json", "{out}"),
            "command line: No such command 'solv'. Did you mean 'solve'?; fix: see 'hieropt "
            "--help'",
        ),
        (
            ("--bogus", "solve", INSTANCE, "--json", "{out}"),
            "--bogus: no such option; fix: see 'hieropt --help'",
        ),
        (
            ("evaluate", INSTANCE, "--json", "{out}", "--bw"),
            "--bw: requires an argument; fix: see 'hieropt evaluate --help'",
        ),
    ],
)
def test_json_file_after_a_usage_error_holds_its_outcome(tmp_path, optimal_json, args, message):
    import json

    out = tmp_path / "result.json"
    out.write_text(optimal_json, encoding="utf-8")
    r = run(*(str(a).replace("{out}", str(out)) for a in args))
    assert r.exit_code == 2
    assert json.loads(out.read_text(encoding="utf-8")) == {
        "status": "bad_input",
        "message": message,
        "exit_code": 2,
    }


def test_json_on_stdout_after_a_usage_error():
    import json

    r = run("pareto", INSTANCE, "--points", "abc", "--json", "-")
    assert r.exit_code == 2
    assert json.loads(r.stdout)["status"] == "bad_input"


def test_a_usage_error_without_a_json_value_writes_nothing(tmp_path):
    """'--json' last has no value (the usage error itself): no path is known, no file written; '--'
    ends the options, so a '--json' after it is an argument."""
    r = run("solve", INSTANCE, "--json")
    assert r.exit_code == 2 and r.stdout == ""
    from hieropt.cli.common import json_option

    assert json_option(["a", "--json", "x.json", "--json=y.json", "--", "--json", "z"]) == Path(
        "y.json"
    )
    assert json_option(["--json"]) is None


# --------------------------------------------------------------------------------------------------
# F3: extreme but finite numbers. 'bw[1] <= 1e-20' with 'sum(bw) == 500' ended with "error: HiGHS
# rejected the LP's rows" (exit 3, no field, no fix); 1e-300 leaked numpy RuntimeWarnings; a
# workload weight of 1e300 leaked warnings and then said "infeasible". Each is now refused where it
# is read, naming the field, the value and the range.

def test_a_ceiling_far_below_the_designs_floor_is_refused():
    r = run("solve", INSTANCE, "--constraint", "bw[1] <= 1e-20", "--no-sensitivity")
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --constraint: constraints[1] 'bw[1] <= 1e-20': its limit of 1e-20 GB/s per "
        "NPU is 1.25e+22 times "
        "below the 125 GB/s that constraints[0] 'sum(bw) == 500' asks for, beyond the 1e+14 "
        "the LP represents (HiGHS "
        "takes bounds of 1e20 or more in its units as infinite); fix: give both in GB/s per "
        "NPU, or remove the "
        "dimension the limit starves"
    )


def test_the_same_rows_in_an_instance_file_name_the_file(tmp_path):
    text = (
        INSTANCE.read_text(encoding="utf-8")
        .replace('"../models/', f'"{REPO / "models"}/')
        .replace(
            'constraints = ["sum(bw) == 500"]', 'constraints = ["sum(bw) == 500", "bw[1] <= 1e-20"]'
        )
    )
    p = write(tmp_path / "i.toml", text)
    r = run("solve", p)
    assert r.exit_code == 2
    assert error_line(r).startswith(
        f"error: {p}: constraints[1] 'bw[1] <= 1e-20': its limit of 1e-20 GB/s per NPU "
        "is 1.25e+22 times below the 125 GB/s that constraints[0] 'sum(bw) == 500' asks"
    )
    from hieropt.io.instance import load_instance

    with pytest.raises(
        InputError, match=r"constraints\[1\] 'bw\[1\] <= 1e-20': its limit of 1e-20 GB/s"
    ):
        load_instance(p)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "bw[1] <= 1e-300",
            "error: --constraint: constraint 'bw[1] <= 1e-300': the right-hand side 1e-300 "
            "asks for a "
            "bandwidth of 1e-300 GB/s per NPU, outside the accepted 1e-100 .. 1e+100 GB/s; "
            "fix: give the "
            "limit in GB/s per NPU (or drop the row)",
        ),
        (
            "bw[0] + 1e-120*bw[1] <= 500",
            "error: --constraint: constraint 'bw[0] + 1e-120*bw[1] <= 500': the coefficient "
            "of bw[1] is 1e-120, outside the accepted magnitudes 1e-100 .. 1e+100; fix: scale "
            "the row (divide both sides by the same number)",
        ),
    ],
)
def test_a_row_outside_the_representable_range_is_refused(text, line):
    r = run("solve", INSTANCE, "--constraint", text, "--no-sensitivity")
    assert r.exit_code == 2
    assert error_line(r) == line
    assert "Warning" not in r.output


def test_a_bound_outside_the_representable_range_is_refused(tmp_path):
    text = (
        INSTANCE.read_text(encoding="utf-8")
        .replace('"../models/', f'"{REPO / "models"}/')
        .replace(
            'constraints = ["sum(bw) == 500"]',
            'constraints = ["sum(bw) == 500"]\nbounds = [{ dim = 1, upper_gbps = 1e-200 }]',
        )
    )
    p = write(tmp_path / "i.toml", text)
    r = run("solve", p)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {p}: bounds[0].upper_gbps: 1e-200 GB/s per NPU is outside the accepted 1e-100 "
        ".. 1e+100; fix: give the bound in GB/s per NPU (0, or no upper bound, for none)"
    )


def test_a_weight_outside_the_representable_range_is_refused(tmp_path):
    mix = REPO / "instances" / "mix-gpt3-dlrm-4d.toml"
    text = mix.read_text(encoding="utf-8").replace("weight = 0.46655466", "weight = 1e300").replace(
        '"../models/', f'"{REPO / "models"}/')
    p = write(tmp_path / "mix.toml", text)
    r = run("solve", p, "--no-sensitivity")
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {p}: workloads[0].weight: 1e+300 is outside the accepted 1e-100 .. 1e+100 "
        "(weights are multiplied into bytes and times); fix: give the weights on a common scale, "
        "e.g. shares of cluster hours"
    )


def test_extreme_values_inside_the_ranges_still_solve():
    """A ceiling 1.25e13 below the floor, and coefficients at the range's ends: certified, no
    warning printed."""
    r = run(
        "solve",
        INSTANCE,
        "--constraint",
        "bw[1] <= 1e-11",
        "--constraint",
        "1e100*bw[2] + 1e-100*bw[3] <= 1e102",
    )
    assert r.exit_code == 0, r.output
    assert "status: optimal" in r.stdout and "Warning" not in r.stderr


def test_the_command_line_prints_no_numpy_float_warning(monkeypatch):
    """A safety net behind the range checks: hieropt.cli.main ignores numpy's floating-point
    RuntimeWarnings."""
    import warnings

    from hieropt.cli import main

    monkeypatch.setattr("sys.argv", ["hieropt", "--version"])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(SystemExit):
            main()
        warnings.warn("overflow encountered in divide", RuntimeWarning, stacklevel=1)
        warnings.warn("something else", RuntimeWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["something else"]
