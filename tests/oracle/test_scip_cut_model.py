"""SCIP's global optimum (tests/oracle/loops.py states every loop independently) against
hieropt solved on the cutting-plane time model of large workloads (hieropt/model/cutmodel.py),
forced on small random instances of every training loop: the certified optimum must match SCIP's
re-evaluated point."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hieropt.model.slopes import supported
from hieropt.solvers import objectives
from hieropt.spec import TRAINING_LOOPS

pytest.importorskip("pyscipopt")

from tests.oracle.loop_instances import loop_instances  # noqa: E402
from tests.oracle.scip_loops import check_against_scip  # noqa: E402


@pytest.mark.parametrize("loop", TRAINING_LOOPS)
@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_cut_model_matches_scip(monkeypatch, loop: str, data):
    inst = data.draw(loop_instances(loop))
    with monkeypatch.context() as m:
        m.setattr(objectives, "prefers_cuts", supported)
        check_against_scip(inst)
