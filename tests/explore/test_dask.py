"""The same sweep on a Dask cluster (a LocalCluster started here, two worker processes) gives the serial table."""

from __future__ import annotations

import os

import pytest

from hieropt.studies.explore import explore, load_space, read_results

from .util import write_space


def _table(result) -> list[tuple]:
    return [(r["shape_id"], r["rank"], r["objective_value"], r["network_cost_usd"]) for r in result.ranking]


def test_local_cluster_gives_the_serial_table(tmp_path):
    distributed = pytest.importorskip("distributed")
    space = load_space(write_space(tmp_path, tp=4, rule="all_placements"))
    serial = explore(space, workers=1)
    out = tmp_path / "dask.csv"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        result = explore(space, dask=cluster.scheduler_address, out=out)
        with distributed.Client(cluster) as client:  # a Client works too; a rerun resumes from the file
            again = explore(space, dask=client, out=out)
    assert result.backend == f"dask({cluster.scheduler_address})"
    assert _table(result) == _table(serial)
    assert again.solved_ids == () and _table(again) == _table(serial)
    rows = read_results(out)
    assert len(rows) == len(serial.rows)
    assert all(not r["worker"].endswith(f":{os.getpid()}") for r in rows)  # solved in the cluster's workers
