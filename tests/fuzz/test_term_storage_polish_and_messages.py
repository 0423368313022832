"""Term storage, the polish at bounds and one-line messages, on instances the long fuzz runs drew
(tests/fuzz/found.py).

- A term first registered by a tiny collective and then used by a huge one in the same direction (a
  1-byte reduce-scatter and a 62 MB all-gather on the same group) was stored at the tiny one's
  bytes: its epigraph rows' coefficients fell below HiGHS's 1e-9 matrix tolerance, were dropped, the
  LP set the term to 0 and the cutting planes stalled at an honest but 1 % gap (LIMIT) at every
  magnitude. Terms are now stored at their largest collective (hieropt/model/terms.py,
  ``TermBuilder.build``).
- min_cost with a target just above the fastest time stalled at gaps of 1e-8 .. 2.5e-6 (LIMIT): the
  KKT polish gave up whenever a bandwidth sat at a bound (hieropt/solvers/kkt.py: such a link now
  leaves the Newton system with t = 1/B fixed), and the 1e-12 margin below the target moved the
  exact optimum margin x T / (T(B) - T(fastest)) of the way to the fastest design
  (hieropt/solvers/cutting.py: a point within the target by both evaluators is taken).
- Mutated inputs: a value with a line break echoed in an error printed two lines
  (hieropt/cli/common.py ``error_line`` escapes line breaks: every message is one line); ``--json``
  into a missing folder named the path but not the flag (``write_json``); ``export`` of an optimum
  with 0 GB/s on a dimension without traffic named no file (hieropt/cli/astrasim.py passes the
  instance file as the source).
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

import hieropt
from hieropt import SolveOptions
from hieropt.model.timing import build_time_model
from tests.cases import shared_data_dir
from tests.fuzz import checks, found
from tests.fuzz.mutate import make_sandbox
from tests.fuzz.tasks import cli

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("scale", [1e-6, 1e-2, 1.0, 1e6])
def test_tiny_first_collective_of_a_term_does_not_stall_the_cuts(scale: float):
    inst = found.TINY_FIRST_TERM.instance(bw_scale=scale)
    sol = hieropt.solve(inst)
    assert sol.status.value == "optimal" and sol.gap <= 1e-8, (sol.status, sol.gap, sol.message)
    # the optimum (the weighted row 2.5 B0 + 0.5 B1 <= 16.43 binds; a send over the 128-NPU
    # FullyConnected dimension gets one of its 127 links) is the same at every magnitude, and the
    # evaluator agrees with it
    assert math.isclose(sol.iteration_time_ns, 8369267114.79144, rel_tol=1e-9)
    assert math.isclose(
        checks.time_ns(inst, np.asarray(sol.bw_gbps)), sol.iteration_time_ns, rel_tol=1e-12
    )


def test_terms_are_stored_at_their_largest_collective():
    """Every reference to a term has a coefficient <= 1 (the term is its largest collective), and T
    is unchanged."""
    inst = found.TINY_FIRST_TERM.instance()
    tm = build_time_model(inst)
    coefs = [a for pieces in tm.nodes for p in pieces for _, a in p.terms]
    assert coefs and max(coefs) <= 1.0 + 1e-12, max(coefs)
    bw = np.array([6.259968, 1.564992])
    assert math.isclose(tm.time_ns(bw), hieropt.evaluate(inst, bw).iteration_time_ns, rel_tol=1e-12)


def test_min_cost_near_the_fastest_time_with_bandwidths_at_their_bounds():
    """min_cost with a target just above the fastest time and two bandwidths at their bounds:
    certified (it stalled at gap 2.3e-6), and the budget sweep agrees: the fastest design within (1
    - 1e-7) x the proven cheapest cost misses the target."""
    inst = found.MIN_COST_AT_BOUNDS.instance()
    target = 124854471916.48625
    sol = hieropt.solve(
        inst, objective="min_cost", options=SolveOptions(max_iteration_time_ns=target)
    )
    assert sol.status.value == "optimal" and sol.gap <= 1e-8, (sol.status, sol.gap, sol.message)
    assert checks.time_ns(inst, np.asarray(sol.bw_gbps)) <= target
    assert math.isclose(
        sol.network_cost_usd,
        float(checks.unit_costs(inst) @ np.asarray(sol.bw_gbps)),
        rel_tol=1e-12,
    )
    cheaper = hieropt.solve(inst, options=SolveOptions(budget_usd=sol.objective_bound * (1 - 1e-7)))
    assert cheaper.iteration_time_ns > target, (cheaper.iteration_time_ns, target)



def test_step_loop_four_dims_reaches_the_gap_target():
    """An instance where the cuts alone stop at an honest 1.5e-8: the polish's active-set
    corrections (blocking rows of a run-away Newton, epigraph columns freed when their row joins)
    now reach it."""
    sol = hieropt.solve(found.NEAR_TARGET_LIMIT.instance())
    assert sol.status.value == "optimal" and sol.gap <= 1e-8, (sol.status, sol.gap, sol.message)

# ------------------------------------------------------------------------ messages (mutated inputs)
@pytest.fixture()
def sandbox(tmp_path: Path) -> Path:
    """A copy of the shipped instances and models."""
    for d in ("instances", "models"):
        shutil.copytree(REPO / d, tmp_path / d)
    (tmp_path / "out").mkdir()
    return tmp_path


def _one_error_line(r: dict) -> str:
    assert r["traceback"] is None, r["traceback"]
    assert r["code"] == 2, (r["code"], r["stderr"])
    lines = r["stderr"].splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r["stderr"]
    return lines[0]


def test_a_line_break_in_a_value_keeps_the_message_on_one_line(tmp_path: Path):
    """A LIBRA network file whose building block has a line break (``"line\\nbreak"``): the message
    quoted it as is and took two lines (mutant seed 3673425947)."""
    data = shared_data_dir()
    if data is None or not (data / "libra" / "network" / "4d_network.yml").is_file():
        pytest.skip("the shared LIBRA inputs are not available")
    box = make_sandbox(tmp_path, data)
    path = box / "libra" / "network" / "4d_network.yml"
    path.write_text(path.read_text().replace("[ Ring, FullyConnected,", '[ Ring, "line\\nbreak",'))
    line = _one_error_line(
        cli(
            [
                "solve",
                "--network",
                "libra/network/4d_network.yml",
                "--workload",
                "libra/workload/GPT_3.txt",
                "--communicator",
                "libra/communicator/GPT_3_4d.yml",
                "--cost",
                "libra/cost_model/4d_cost_model.yml",
                "--constraint",
                "sum(bw) == 500",
            ],
            str(box),
        )
    )
    assert "4d_network.yml" in line and "line\\nbreak" in line, line


def test_json_to_a_missing_folder_names_the_flag(sandbox: Path):
    line = _one_error_line(
        cli(["solve", "instances/gpt3-4d.toml", "--json", "/nonexistent/dir/x.json"], str(sandbox))
    )
    assert "--json /nonexistent/dir/x.json" in line, line


def test_export_of_a_dimension_without_bandwidth_names_the_instance(sandbox: Path):
    """The optimum leaves a dimension that carries no traffic at 0 GB/s; the simulator needs > 0
    there."""
    path = sandbox / "instances" / "gpt3-4d.toml"
    # a data-parallel workload (its header states no group size: the mapping is taken as given)
    # whose one all-reduce runs on dimensions 0-2 only
    (sandbox / "models" / "data.txt").write_text(
        "DATA\n1\nl0 -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 1000000 0\n"
    )
    path.write_text(
        path.read_text()
        .replace("weight_grad = [1, 2, 4, 32]", "weight_grad = [4, 2, 4, -1]")
        .replace('"../models/gpt3-175b.toml"', '"../models/data.txt"')
    )
    line = _one_error_line(
        cli(["export", "instances/gpt3-4d.toml", "--astra-sim", "out/net.yml"], str(sandbox))
    )
    assert "instances/gpt3-4d.toml" in line and "bw[3]" in line, line


def test_a_price_with_hundreds_of_digits_is_an_input_error(tmp_path: Path):
    """A LIBRA cost-model price given as an integer of 70 digits overflowed float(): exit 1 with an
    OverflowError traceback (mutant seed 3171757429). Also a space file's workload weight, read by
    the same helper."""
    data = shared_data_dir()
    if data is None or not (data / "libra" / "cost_model" / "4d_cost_model.yml").is_file():
        pytest.skip("the shared LIBRA inputs are not available")
    box = make_sandbox(tmp_path, data)
    path = box / "libra" / "cost_model" / "4d_cost_model.yml"
    path.write_text(path.read_text().replace("31.60004", "9" * 400))
    line = _one_error_line(
        cli(
            [
                "solve",
                "--network",
                "libra/network/4d_network.yml",
                "--workload",
                "libra/workload/GPT_3.txt",
                "--communicator",
                "libra/communicator/GPT_3_4d.yml",
                "--cost",
                "libra/cost_model/4d_cost_model.yml",
                "--constraint",
                "sum(bw) == 500",
            ],
            str(box),
        )
    )
    assert "4d_cost_model.yml" in line and "InterPod.Nic" in line and "too large" in line, line


def test_positive_number_refuses_overflow_and_non_numbers():
    from hieropt.errors import InputError
    from hieropt.io.common import positive_number

    assert positive_number(3, "f.yml", "a", "fix") == 3.0
    for bad in (10**400, True, "3", 0, -1.0, float("inf")):
        with pytest.raises(InputError, match="f.yml"):
            positive_number(bad, "f.yml", "a", "fix")
