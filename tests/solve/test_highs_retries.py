"""The HiGHS back end's retries (:data:`hieropt.solvers.highs.RETRIES`) end: the interior-point
retry stops at :data:`hieropt.solvers.highs.IPM_ITERATIONS` iterations.

``ipm_stall.mps`` is an LP of a Pareto front's cutting-plane loop (146 rows of design rows,
epigraphs and tangent cuts, 21 columns) on which HiGHS's warm, cold and primal simplex solves ended
without an answer at the tightened 1e-10 tolerances; the interior-point retry then ran 82,812
iterations without converging and held the front for its 60 s time limit (the simplex solves the
LP cold at the default tolerances in no iteration)."""

from __future__ import annotations

from pathlib import Path

import highspy

from hieropt.result import Status
from hieropt.solvers.highs import IPM_ITERATIONS, RETRIES, STATUS_OF

LP = Path(__file__).with_name("ipm_stall.mps")


def test_the_interior_point_retry_stops_at_its_iteration_limit():
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(LP))
    # (threads 0: whatever scheduler this process's other HiGHS users started; asking for 1 after
    # one started with more makes run() refuse, status kNotset, as hieropt.solvers.highs handles)
    for name, value in (("presolve", "off"), ("threads", 0), ("time_limit", 30.0),
                        ("primal_feasibility_tolerance", 1e-10),
                        ("dual_feasibility_tolerance", 1e-10), *RETRIES[-1]):
        h.setOptionValue(name, value)
    h.run()
    status = h.getModelStatus()
    assert status == highspy.HighsModelStatus.kIterationLimit  # (not the 30 s time limit)
    assert h.getInfo().ipm_iteration_count == IPM_ITERATIONS
    assert STATUS_OF[status] is Status.LIMIT
    # the simplex at HiGHS's default tolerances solves it
    h.clearSolver()
    h.setOptionValue("solver", "simplex")
    h.setOptionValue("primal_feasibility_tolerance", 1e-7)
    h.setOptionValue("dual_feasibility_tolerance", 1e-7)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
