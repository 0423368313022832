"""``hieropt explore`` end to end, the space reader's one-line errors, and the shipped example
space."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.errors import InputError
from hieropt.studies.explore import candidates, load_space, read_results

from .util import space_text, write_space

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner(
    env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1", "COLUMNS": "200"}
)


def test_cli_ranked_table_summary_and_pareto(tmp_path):
    space = write_space(tmp_path, tp=4, rule="all_placements")
    out = tmp_path / "r.csv"
    res = runner.invoke(
        app, ["explore", str(space), "--workers", "1", "--top", "3", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    text = res.stdout
    # (19 distinct problems: a partial group's Ring and FullyConnected variants differ, its links)
    assert "Top 3 of 19 shapes by proven optimum" in text
    assert "Scale-out (NIC) spend vs dimension count" in text and "Pareto set of shapes" in text
    assert "58 candidates" in text and "39 exact duplicates pruned" in text
    assert len(read_results(out)) == 19
    again = runner.invoke(app, ["explore", str(space), "--workers", "1", "--out", str(out)])
    assert again.exit_code == 0 and "0 solved now, 19 read back" in again.stdout
    small = write_space(tmp_path, "small.toml")  # 16 shapes under tp_lowest
    ppc = runner.invoke(
        app,
        [
            "explore",
            str(small),
            "--workers",
            "1",
            "--objective",
            "performance_per_cost",
            "--no-prune",
            "--top",
            "2",
        ],
    )
    assert ppc.exit_code == 0, ppc.output
    assert "time x cost" in ppc.stdout and "0 exact duplicates pruned" in ppc.stdout
    cheap = runner.invoke(app, ["explore", str(small), "--workers", "1", "--objective", "min_cost",
                                "--max-time-ns", "1e13", "--top", "2"])
    assert cheap.exit_code == 0, cheap.output
    header = next(
        line for line in cheap.stdout.splitlines() if "rank" in line and "GB/s per NPU" in line
    )
    # (it had the cost column twice)
    assert header.count("cost $") == 1 and header.count("time ms") == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("npus = 16\n", "npus = 16\ncolour = 3\n"), "colour: unknown key; fix: use only"),
        # a misspelled key below the top level names the key meant, as one at the top does
        (("max_dims = 2", "max_dim = 2"),
         "levels[0].max_dim: unknown key (did you mean 'max_dims'?); fix: use only name, blocks"),
        (('rule = "tp_lowest"', 'rules = "tp_lowest"'),
         "mapping.rules: unknown key (did you mean 'rule'?); fix: use rule and tp"),
        (
            ('rule = "tp_lowest"', 'rule = "tp_everywhere"'),
            "mapping.rule: unknown rule 'tp_everywhere'; fix: use one of",
        ),
        (('cost_class = "A"', 'cost_class = "Z"'), "levels[0].cost_class: unknown cost class 'Z'"),
        (("npus = [2, 4]", "npus = [4, 2]"), "levels[0].npus: range [4, 2] is empty"),
        (
            ('["sum(bw) == 500"]', '["sum(bw) == 500", "bw[2] <= 100"]'),
            "constraints[1]: 'bw[2] <= 100' does not fit 2 dimensions",
        ),
        (
            ("tp = 2\n", "tp = 4\n"),
            "mapping.tp: tp 4 differs from the workload's model_parallel_NPU_group 2",
        ),
        (
            ('objective = "performance"', 'objective = "min_cost"'),
            "max_iteration_time_ns: missing for objective min_cost",
        ),
        (
            ('training_loop = "no_overlap"', 'training_loop = "pipeline"'),
            "training_loop: the pipeline loop is not",
        ),
        (
            ("link_usd_per_gbps = 7.8\nswitch_usd_per_gbps = 18.0\n", "link_usd_per_gbps = 7.8\n"),
            "cost.B: level 'b' allows a Switch but its cost class has no switch or NIC price",
        ),
    ],
)
def test_bad_spaces_one_line_errors(tmp_path, change, message):
    path = tmp_path / "bad.toml"
    text = space_text()
    assert change[0] in text
    path.write_text(text.replace(change[0], change[1], 1), encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_space(path)
    assert message in str(e.value) and "\n" not in str(e.value) and str(path) in str(e.value)
    res = runner.invoke(app, ["explore", str(path)])
    assert res.exit_code == 2 and message in res.stderr.replace("\n", "")


def test_top_constraint_fits_every_dimension_count(tmp_path):
    path = tmp_path / "top.toml"
    path.write_text(
        space_text().replace('["sum(bw) == 500"]', '["sum(bw) == 500", "bw[top] <= 100"]')
    )
    space = load_space(path)
    assert [c.coefficients for c in space.constraints_for(2)][1] == (0.0, 1.0)
    assert [c.coefficients for c in space.constraints_for(3)][1] == (0.0, 0.0, 1.0)


def test_cli_bad_options(tmp_path):
    space = write_space(tmp_path)
    res = runner.invoke(app, ["explore", str(space), "--objective", "fastest"])
    assert res.exit_code == 2 and "unknown objective 'fastest'" in res.stderr
    res = runner.invoke(app, ["explore", str(space), "--objective", "min_cost"])
    assert res.exit_code == 2 and "missing for objective min_cost" in res.stderr
    res = runner.invoke(app, ["explore", str(space), "--workers", "0"])
    assert res.exit_code == 2 and "--workers" in res.stderr
    infeasible = tmp_path / "inf.toml"
    infeasible.write_text(
        space_text().replace('["sum(bw) == 500"]', '["sum(bw) == 500", "bw[top] >= 600"]')
    )
    res = runner.invoke(app, ["explore", str(infeasible), "--workers", "1"])
    assert res.exit_code == 3 and "no shape has a certified answer" in res.stderr
    assert "7 infeasible" in res.stdout  # (7 distinct problems: tests/explore/test_enumerate.py)


@pytest.mark.heavy
def test_shipped_space_enumerates():
    # The full sweep takes seconds; here only the enumeration and its duplicate pruning.
    space = load_space(REPO / "spaces" / "gpt3-4096.toml")
    enum = candidates(space)
    assert space.npus == 4096 and (space.min_dims, space.max_dims) == (2, 5)
    # (215 distinct problems: TP 16's and DP's partial groups tell Ring from FullyConnected apart)
    assert enum.shapes == enum.placements == 2186 and len(enum.candidates) == 215
    assert {c.n_dims for c in enum.candidates} == {2, 3, 4, 5}


def test_cli_json_reports_throughput_per_core(tmp_path):
    import json

    # 58 candidates, 19 distinct problems
    space = write_space(tmp_path, tp=4, rule="all_placements")
    path = tmp_path / "sweep.json"
    res = runner.invoke(
        app, ["explore", str(space), "--workers", "1", "--top", "5", "--json", str(path)]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(path.read_text())
    tp = data["throughput"]
    assert (data["candidates"], data["pruned"], data["solved"]) == (58, 39, 19)
    assert tp["cores"] == 1 and tp["backend"] == "serial"
    # every distinct problem certified; duplicates share it
    assert tp["certified"] == 19 and tp["covered"] == 58
    assert tp["certified_per_s_per_core"] == pytest.approx(19 / tp["seconds"], rel=1e-12)
    assert [r["rank"] for r in data["ranking"]][0] == 1 and len(data["ranking"]) == 5
    # (a list of GB/s per dimension, as every JSON has it; the results file joins them with ;)
    best = data["ranking"][0]
    assert isinstance(best["bw_gbps"], list) and len(best["bw_gbps"]) == best["n_dims"]
    assert all(b > 0 for b in best["bw_gbps"])
    assert "candidates certified in" in res.stdout and "certified per second per core" in res.stdout
    to_stdout = runner.invoke(app, ["explore", str(space), "--workers", "1", "--json", "-"])
    assert to_stdout.exit_code == 0
    assert json.loads(to_stdout.stdout)["throughput"]["certified"] == 19  # tables went to stderr


def test_a_json_path_in_a_missing_folder_is_refused_before_the_sweep(tmp_path):
    """``--json`` into a folder that does not exist: exit 2 before any solve (not after the whole
    sweep, with nothing kept)."""
    from tests.cli.util import error_line, run

    target = tmp_path / "missing" / "x.json"
    r = run("explore", REPO / "spaces" / "gpt3-4096.toml", "--workers", "1", "--json", target)
    assert r.exit_code == 2
    assert error_line(r) == (f"error: --json {target}: the folder {target.parent} does not exist; "
                             "fix: create the folder first, or give a path in an existing folder")


def test_a_one_element_list_is_a_range_of_one_value(tmp_path):
    """``dims = [2]`` was refused with "expected a whole number, got [2]; fix: write dims = [2, 5]
    ... or dims = 4": a one-element list is now the range of that one value, as ``dims = 2`` (and
    ``npus = [4]`` as ``npus = 4``); a list of three values is refused as such."""
    one = load_space(write_space(tmp_path, "one.toml", dims="[2]", a_npus="[4]"))
    plain = load_space(write_space(tmp_path, "plain.toml", dims="2", a_npus="4"))
    assert (one.min_dims, one.max_dims) == (plain.min_dims, plain.max_dims) == (2, 2)
    assert one.levels[0].npus == plain.levels[0].npus == (4, 4)
    assert candidates(one) == candidates(plain)
    path = write_space(tmp_path, "three.toml", dims="[2, 3, 4]")
    with pytest.raises(InputError) as e:
        load_space(path)
    assert str(e.value) == (
        f"{path}: dims: expected [min, max] or one whole number, got a list of 3 values [2, 3, 4]; "
        "fix: write dims = [2, 5] (fewest and most dimensions) or dims = 4 (or [4])"
    )


def test_a_space_naming_an_llm_plan_is_refused(tmp_path):
    """A shape space's loops (LIBRA's) time one micro-batch of one stage of an LLM plan, not its
    iteration: a space naming an LLM model file is refused, naming the workload and codesign."""
    from tests.validate.tiny import MODEL

    (tmp_path / "tiny.toml").write_text(MODEL, encoding="utf-8")
    from .util import WORKLOAD

    text = space_text().replace(WORKLOAD.format(tp=2, dp=8), "\n")
    path = tmp_path / "s.toml"
    path.write_text(text.replace("\n[mapping]", '\nworkload = "tiny.toml"\n[mapping]', 1),
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"workload: LLM plan 'tiny': .*one micro-batch of one "
                                         r"stage.*hieropt codesign"):
        load_space(path)


def test_exploration_to_dict_is_the_commands_json(tmp_path):
    import json

    import hieropt

    space = write_space(tmp_path, "small.toml")
    path = tmp_path / "sweep.json"
    res = runner.invoke(
        app, ["explore", str(space), "--workers", "1", "--top", "4", "--json", str(path)]
    )
    assert res.exit_code == 0, res.output
    data = hieropt.explore(str(space), workers=1).to_dict(top=4)
    cli = json.loads(path.read_text())
    for d in (data, cli):  # (wall times differ)
        d.pop("throughput")
        for row in d["ranking"] + d["pareto"] + [e["best"] for e in d["by_dims"]]:
            row.pop("solve_seconds")
    assert data == cli
    assert len(data["ranking"]) == 4 and data["ranking"][0]["rank"] == 1
