"""``pareto --csv`` carries the buyer's columns of the table and the JSON (``usd_per_ms``,
``time_to_train_days``, ``run_cost_usd``: the JSON's names and units), empty where a point has no
such figure; they once were in the table and the JSON only."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

import hieropt
from hieropt.report.dicts import front_csv, front_dict

REPO = Path(__file__).resolve().parents[2]


def test_the_csv_has_days_run_cost_and_usd_per_ms_as_the_json():
    inst = hieropt.load_instance(REPO / "instances" / "llama3-405b-16k-cluster.toml")
    front = hieropt.pareto(inst, points=2)
    rows = list(csv.DictReader(io.StringIO(front_csv(inst, front))))
    assert list(rows[0])[-3:] == ["usd_per_ms", "time_to_train_days", "run_cost_usd"]
    js = front_dict(inst, front)["points"]
    for row, point in zip(rows, js, strict=True):
        t_ns = float(row["iteration_time_ns"])
        # 15.6e12 tokens in iterations of 2,048 sequences of 8,192 tokens, 86,400e9 ns a day
        days = 15.6e12 / (2048 * 8192) * t_ns / 86_400e9
        assert float(row["time_to_train_days"]) == pytest.approx(days, rel=1e-12)
        assert float(row["run_cost_usd"]) == point["run"]["run_cost_usd"]
        assert float(row["usd_per_ms"]) == point["usd_per_ms"]
    # the cheapest point: 19,334.06 ms, 208.07 days
    assert float(rows[0]["time_to_train_days"]) == pytest.approx(208.0722, abs=1e-4)


def test_figures_a_point_lacks_are_empty_cells():
    """gpt3-4d has no token budget and no [cluster]; its cheapest point's budget does not bind."""
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    front = hieropt.pareto(inst, points=2)
    text = front_csv(inst, front)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["time_to_train_days"] for r in rows] == ["", ""]
    assert [r["run_cost_usd"] for r in rows] == ["", ""]
    assert rows[0]["usd_per_ms"] == "" and float(rows[1]["usd_per_ms"]) > 0
    assert text.splitlines()[1].endswith(",,,")


def test_status_and_gap_are_the_jsons():
    """Each row carries its point's ``gap`` and ``status`` as the JSON does, after ``gap``; a gap
    that is not finite (a point stopped at a limit before any bound) is an empty cell, as the
    JSON's null, not a refusal to write."""
    from dataclasses import replace

    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    front = hieropt.pareto(inst, points=2)
    text = front_csv(inst, front)
    assert text.splitlines()[0] == (
        "budget_usd,network_cost_usd,iteration_time_ns,lower_bound_ns,gap,status,bw0_gbps,"
        "bw1_gbps,bw2_gbps,bw3_gbps,usd_per_ms,time_to_train_days,run_cost_usd")
    rows = list(csv.DictReader(io.StringIO(text)))
    js = front_dict(inst, front)["points"]
    assert [r["status"] for r in rows] == [p["status"] for p in js] == ["optimal", "optimal"]
    for row, point in zip(rows, js, strict=True):
        assert float(row["gap"]) == point["gap"] <= 1e-8
    stopped = replace(front, points=(replace(front.points[0], gap=float("inf"),
                                             status=hieropt.Status.LIMIT),))
    row = list(csv.DictReader(io.StringIO(front_csv(inst, stopped))))[0]
    assert (row["gap"], row["status"]) == ("", "limit")
    assert front_dict(inst, stopped)["points"][0]["gap"] is None
