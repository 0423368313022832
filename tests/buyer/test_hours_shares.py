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


# --------------------------------------------------------------------------------------------------
# A bad hours_share was named 'workloads[1].weight', a key the file does not hold, with a fix about
# weights; 'hours_shares' got no "did you mean", as a misspelled top-level key does.

_SHARE_FIX = ("give the workload's share of the cluster's hours, a number > 0 (the shares are "
              "normalised to sum 1: 60 and 40, or 0.6 and 0.4); remove a workload that gets no "
              "hours")


@pytest.mark.parametrize(("share", "message"), [
    ("-40", f"workloads[1].hours_share: -40 is not a positive, finite number; fix: {_SHARE_FIX}"),
    ("0", f"workloads[1].hours_share: 0 is not a positive, finite number; fix: {_SHARE_FIX}"),
    ("true", f"workloads[1].hours_share: True is not a positive, finite number; fix: {_SHARE_FIX}"),
    ('"40%"', "workloads[1].hours_share: '40%' is text, not a number; fix: write 40 without '%' "
              "(the shares are normalised to sum 1: give every workload's share in one scale, e.g. "
              "60 and 40 for 60 % and 40 %)"),
    ('"40"', "workloads[1].hours_share: '40' is text, not a number; fix: write 40 without quotes"),
    ("1e300", "workloads[1].hours_share: 1e+300 is outside the accepted 1e-100 .. 1e+100"),
])
def test_a_bad_share_names_the_hours_share(tmp_path, share, message):
    path = _with_shares(tmp_path, "60", share)
    with pytest.raises(InputError) as e:
        hieropt.load_instance(path)
    assert str(e.value).startswith(f"{path}: {message}")


def test_a_misspelled_hours_share_names_the_key_meant(tmp_path):
    path = _with_shares(tmp_path, "60", "40")
    path.write_text(path.read_text().replace("hours_share = 40", "hours_shares = 40"))
    with pytest.raises(InputError) as e:
        hieropt.load_instance(path)
    assert str(e.value) == (f"{path}: workloads[1].hours_shares: unknown key (did you mean "
                            "'hours_share'?); fix: rename 'hours_shares' to 'hours_share'")
    path.write_text(path.read_text().replace("hours_shares = 40", "colour = 40"))
    with pytest.raises(InputError) as e:
        hieropt.load_instance(path)
    assert str(e.value) == (f"{path}: workloads[1].colour: unknown key; fix: use workload, "
                            "mapping, weight or hours_share")
