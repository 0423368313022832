"""A space whose constraints leave no design: every candidate settled by its infinite time bound
gets the reason ``solve`` gives its instance (rows that cannot all hold are not "no bandwidth")."""

from __future__ import annotations

import pytest

from hieropt.errors import NoSolutionError
from hieropt.model.groups import instance_for
from hieropt.solvers.objectives import solve
from hieropt.spec.space import constraint_for
from hieropt.studies.codesign.solve import rows_reason
from hieropt.workloads.llm.space import PlanChoices
from tests.codesign.brute_force import search_with_rows
from tests.codesign.spaces import space

ROWS = ("sum(bw) <= 1", "sum(bw) >= 2")
"""Two rows no bandwidth meets together (at most 1 and at least 2 GB/s per NPU in all)."""
WHY = ("infeasible: the design constraints and bounds cannot all hold: sum(bw) <= 1; "
       "sum(bw) >= 2; fix: loosen a constraint or widen a bound")


def test_contradictory_rows_get_solves_reason():
    sp = space(constraints=ROWS, plans=PlanChoices(tp=(1, 2), pp=(1,)))
    r, rows = search_with_rows(sp)
    assert r.best is None and r.solved == 0 and r.statuses == {"infeasible": r.enumeration.count}
    assert r.infeasible_by_bound == r.enumeration.count
    assert {x["message"] for x in rows} == {WHY}
    # the same words as solve's, of a candidate's instance
    c = next(r.enumeration.candidates())
    n = c.network.n_dims
    inst = instance_for(c.params, c.network, sp.cost, c.placement,
                        constraints=tuple(constraint_for(t, n) for t in ROWS))
    with pytest.raises(NoSolutionError) as err:
        solve(inst).raise_for_status()
    assert str(err.value) == WHY


def test_rows_that_allow_bandwidth_have_no_reason():
    sp = space(constraints=("sum(bw) <= 3", "sum(bw) >= 1", "bw[0] <= 0.5"))
    assert rows_reason(sp, 1) == WHY.replace("sum(bw) <= 1; sum(bw) >= 2", "sum(bw) <= 3; "
                                             "sum(bw) >= 1; bw[0] <= 0.5")
    assert rows_reason(sp, 2) is None
    zero = space(constraints=("sum(bw) <= 0",))
    assert rows_reason(zero, 2) == ("infeasible: the design constraints force zero bandwidth on "
                                    "every dimension that carries traffic")


def test_the_summary_claims_no_cause_the_rows_reason_contradicts(tmp_path):
    """Every candidate of the tiny space (180) settles by its infinite time bound under rows that
    cannot all hold: the counts line names the rows among the causes (it said "above the target,
    or no bandwidth" alone), and the error line gives the candidates' own reason."""
    from tests.codesign.spaces import SPACE, codesign

    r = codesign(tmp_path, SPACE.replace('constraints = ["sum(bw) == 3"]',
                                         'constraints = ["sum(bw) <= 1", "sum(bw) >= 2"]'))
    assert r.exit_code == 3, r.output
    assert ("settled without a solve 180 (180 infeasible by their time bound or their rows: above "
            "the target, no bandwidth, or rows that cannot all hold; 0 pruned") in r.stdout
    assert "or no bandwidth;" not in r.stdout
    assert r.stderr.strip() == ("error: no candidate has a certified answer: 180 infeasible (e.g. "
                                + WHY + ")")
