"""Design rows that alone leave no design get from ``provision`` (with and without ``--tradeoff``)
the status and the reason ``solve`` gives (:func:`hieropt.solvers.cost_range.no_design_by_rows`),
before any part of the catalog is fitted to them: infeasible, exit 3, not a catalog error."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import hieropt
from hieropt.cli import app
from hieropt.solvers.provision import provision
from hieropt.solvers.provision_milp import provision_tradeoff

REPO = Path(__file__).resolve().parents[2]
INSTANCE = REPO / "instances" / "gpt3-4d.toml"
CATALOG = REPO / "catalogs" / "example-4d.toml"

CASES = [
    (["sum(bw) <= 0"], "the design constraints force zero bandwidth on every dimension that "
     "carries traffic"),
    (["bw[1] <= 0"], "dimension 1 carries traffic but the design constraints force bw[1] = 0"),
    (["sum(bw[1:]) <= 100", "sum(bw[1:]) >= 120"], "the design constraints and bounds cannot all "
     "hold: sum(bw[1:]) <= 100; sum(bw[1:]) >= 120; fix: loosen a constraint or widen a bound"),
]
"""Rows (replacing the instance's ``sum(bw) == 500``) and the reason: every part of the example
catalog gives at least 12.5 GB/s per NPU, so before this check each was a catalog error (exit 2)
naming a part that cannot meet a row."""


def _instance_file(folder: Path, rows: list[str]) -> Path:
    """gpt3-4d with ``rows`` as its only design constraints, in ``folder``."""
    text = INSTANCE.read_text().replace('constraints = ["sum(bw) == 500"]', "constraints = ["
                                        + ", ".join(f'"{r}"' for r in rows) + "]")
    text = text.replace('workload = "../models/', f'workload = "{REPO / "models"}/')
    (folder / "inst.toml").write_text(text)
    return folder / "inst.toml"


@pytest.mark.parametrize("rows, reason", CASES)
def test_solve_and_provision_give_the_same_reason(tmp_path, rows, reason):
    inst = hieropt.load_instance(_instance_file(tmp_path, rows))
    assert hieropt.solve(inst).message == reason
    with pytest.raises(hieropt.NoSolutionError) as err:
        provision(inst, CATALOG, compare=False)
    assert (err.value.kind, str(err.value)) == ("infeasible", "infeasible: " + reason)
    with pytest.raises(hieropt.NoSolutionError) as err:
        provision_tradeoff(inst, CATALOG, levels=2)
    assert (err.value.kind, str(err.value)) == ("infeasible", "infeasible: " + reason)


@pytest.mark.parametrize("tradeoff", [(), ("--tradeoff", "2")])
@pytest.mark.parametrize("rows, reason", CASES)
def test_the_command_exits_3_with_the_reason(tmp_path, rows, reason, tradeoff):
    runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"})
    path = _instance_file(tmp_path, rows)
    res = runner.invoke(app, ["provision", str(path), "--catalog", str(CATALOG), *tradeoff])
    assert res.exit_code == 3, res.output
    assert res.stdout == ""
    assert res.stderr.strip() == "error: infeasible: " + reason
