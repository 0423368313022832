"""The co-design search on a Dask cluster (a LocalCluster started here, two worker processes): the
candidates streamed to the workers give the serial best and statuses."""

from __future__ import annotations

import os

import pytest

from hieropt.studies.codesign.search import codesign
from hieropt.workloads.llm.space import PlanChoices
from tests.codesign.spaces import space


@pytest.mark.heavy
def test_local_cluster_gives_the_serial_answer():
    distributed = pytest.importorskip("distributed")
    sp = space(plans=PlanChoices(tp=(1, 2), pp=(1, 2)))
    serial = codesign(sp, workers=1)
    rows: list[dict] = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        r = codesign(sp, dask=cluster.scheduler_address, on_row=rows.append)
    assert r.backend == f"dask({cluster.scheduler_address})"
    assert r.best.objective_value == pytest.approx(serial.best.objective_value, rel=1e-12)
    assert r.solved + r.settled == serial.enumeration.count == len(rows)
    assert all(
        not x["worker"].endswith(f":{os.getpid()}") for x in rows if x["status"] == "optimal"
    )
