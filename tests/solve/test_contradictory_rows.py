"""Design constraints that contradict the instance's bounds: the message lists the bounds with the
constraints (the buyer sees which bound the constraint runs into), and says what to change."""

from __future__ import annotations

from tests.cases import REPO
from tests.cli.util import error_line, run

LLAMA = REPO / "instances" / "llama3-405b-16k-cluster.toml"


def test_a_constraint_beyond_a_bound_names_that_bound():
    # NVLink 4 gives at most 450 GB/s per GPU (the file's bound on dim 0): 500 cannot be had
    r = run("solve", LLAMA, "--constraint", "bw[0] >= 500", "--no-sensitivity")
    assert r.exit_code == 3
    assert error_line(r) == (
        "error: infeasible: the design constraints and bounds cannot all hold: bw[0] >= 500; "
        "bounds (GB/s per NPU): 50 <= bw[0] <= 450, 12.5 <= bw[1] <= 50; fix: loosen a "
        "constraint or widen a bound")


def test_bounds_left_at_their_default_are_not_listed(tmp_path):
    text = (REPO / "instances" / "gpt3-4d.toml").read_text()
    path = tmp_path / "gpt3.toml"
    path.write_text(text.replace('"../models/', f'"{REPO}/models/'))
    r = run("solve", path, "--constraint", "sum(bw) <= 400", "--no-sensitivity")
    assert r.exit_code == 3
    assert error_line(r) == (
        "error: infeasible: the design constraints and bounds cannot all hold: sum(bw) == 500; "
        "sum(bw) <= 400; fix: loosen a constraint or widen a bound")
