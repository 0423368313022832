"""Workload weights as shares of the cluster's hours (``[[workloads]] hours_share``), normalised by
hieropt and turned into share / own optimum: the same answer as those weights computed by hand,
whatever scale the shares are given in."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hieropt
from hieropt import SolveOptions
from hieropt.errors import InputError

REPO = Path(__file__).resolve().parents[2]
MIX = REPO / "instances" / "mix-gpt3-dlrm-4d.toml"


def _with_shares(tmp_path: Path, a: str, b: str, name: str = "shares.toml") -> Path:
    text = MIX.read_text().replace('"../models/', f'"{REPO}/models/')
    text = text.replace("weight = 0.46655466   # 0.6 / 1.286022940 s", f"hours_share = {a}")
    text = text.replace("weight = 3262.9973    # 0.4 / 122.587 us", f"hours_share = {b}")
    path = tmp_path / name
    path.write_text(text)
    return path


def test_shares_are_normalised_and_become_share_over_own_optimum(tmp_path):
    inst = hieropt.load_instance(_with_shares(tmp_path, "60", "40"))
    assert inst.weights == "hours" and [j.weight for j in inst.jobs] == pytest.approx(
        [0.6, 0.4], rel=1e-15
    )
    sol = hieropt.solve(inst, options=SolveOptions(sensitivity=False))
    own = [
        hieropt.solve(
            inst.model_copy(
                update={"more_workloads": (), "weights": "plain", "workload_weight": 1.0}
            ),
            options=SolveOptions(sensitivity=False),
        ).iteration_time_ns
    ]
    dlrm = inst.more_workloads[0]
    own.append(
        hieropt.solve(
            inst.model_copy(
                update={
                    "workload": dlrm.workload,
                    "mapping": dlrm.mapping,
                    "more_workloads": (),
                    "weights": "plain",
                    "workload_weight": 1.0,
                }
            ),
            options=SolveOptions(sensitivity=False),
        ).iteration_time_ns
    )
    by_hand = inst.model_copy(
        update={
            "workload_weight": 0.6 / own[0],
            "weights": "plain",
            "more_workloads": (dlrm.model_copy(update={"weight": 0.4 / own[1]}),),
        }
    )
    ref = hieropt.solve(by_hand, options=SolveOptions(sensitivity=False))
    np.testing.assert_allclose(sol.bw_gbps, ref.bw_gbps, rtol=1e-6)
    assert sol.objective_value == pytest.approx(ref.objective_value, rel=1e-8)
    # the hour-weighted relative time: 1 at the own optima
    assert 1.0 <= sol.objective_value <= 1.0 + 0.5
    assert any(n.startswith("weights from shares of hours") for n in sol.notes)


def test_the_scale_of_the_shares_does_not_matter(tmp_path):
    a = hieropt.solve(
        hieropt.load_instance(_with_shares(tmp_path, "0.6", "0.4")),
        options=SolveOptions(sensitivity=False),
    )
    b = hieropt.solve(
        hieropt.load_instance(_with_shares(tmp_path, "3", "2", "b.toml")),
        options=SolveOptions(sensitivity=False),
    )
    np.testing.assert_allclose(a.bw_gbps, b.bw_gbps, rtol=1e-9)


def test_weight_and_hours_share_are_not_mixed(tmp_path):
    text = (
        _with_shares(tmp_path, "60", "40")
        .read_text()
        .replace("hours_share = 40", "weight = 3262.9973")
    )
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(InputError, match="workloads\\[1\\].weight"):
        hieropt.load_instance(bad)
