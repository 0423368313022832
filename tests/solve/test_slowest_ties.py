"""The solve table's slowest column states ties as ``hieropt compare`` names them: at the GPT-3 4D
optimum dimensions 1, 2 and 3 are each busy 157.544 ms with weight_grad's collective, tied as its
slowest, and each is credited those 157.544 ms (once 157.544 for dimension 1 and 0 for 2 and 3,
while compare said "dim 1, tied with dim 2, 3")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.cases import REPO
from tests.cli.util import run


def test_tied_dimensions_each_get_the_slowest_time():
    import hieropt
    from hieropt.model.timing import build_time_model, evaluate
    from hieropt.studies.compare import bottleneck

    r = run("solve", REPO / "instances" / "gpt3-4d.toml", "--no-sensitivity", "--json", "-")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    slowest = np.asarray(out["breakdown"]["bottleneck_ns_per_dim"]) / 1e6
    busy = np.asarray(out["breakdown"]["busy_ns_per_dim"]) / 1e6
    assert slowest == pytest.approx([128.8299, 157.5440, 157.5440, 157.5440], abs=1e-4)
    # dims 2 and 3 are the slowest for all of their busy time, dim 1 for weight_grad's part of it
    assert slowest[2:] == pytest.approx(busy[2:], rel=1e-9)
    assert busy[1] == pytest.approx(210.0554, abs=1e-4)
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    bd = evaluate(inst, out["bw_gbps_per_dim"])
    assert bottleneck(build_time_model(inst), bd) == (1, (1, 2, 3))
    text = run("solve", REPO / "instances" / "gpt3-4d.toml", "--no-sensitivity").stdout
    rows = [line for line in text.splitlines() if line.startswith("│   ")]
    assert [row.split("│")[9].strip() for row in rows] == [
        "128.8299", "157.5440", "157.5440", "157.5440"
    ]


def test_tied_slowest_rule():
    from hieropt.model.breakdown import TIE_REL, tied_slowest

    assert TIE_REL == 1e-6
    t = np.array([[3.0, 3.0 * (1 - 1e-7), 1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 2.0 * (1 - 1e-5)]])
    assert tied_slowest(t).tolist() == [
        [True, True, False],
        [True, False, False],  # no time: the first dimension, as argmax names it
        [False, True, False],
    ]
