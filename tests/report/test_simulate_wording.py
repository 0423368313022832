"""``simulate`` states one difference: the prediction's error relative to the simulator,
(predicted - simulated) / simulated, in its table, its caption and its exit-3 line alike (the table
once gave simulated / predicted, 1.0765, beside "differ by up to 7.11 %"). A fake simulator
reports chosen times (tests/fidelity/test_simulate_mode.py)."""

from __future__ import annotations

import json

from hieropt.io.instance import load_instance
from hieropt.model.timing import evaluate
from tests.cli.util import run
from tests.fidelity.test_simulate_mode import _allocations, _fake, _instance


def test_the_table_the_caption_and_the_error_line_give_one_difference(tmp_path):
    path = _instance(tmp_path)
    inst = load_instance(path)
    own = {n: evaluate(inst, bw).iteration_time_ns for n, bw in _allocations(inst).items()}
    # the traffic split simulated 1.25 x its prediction (85,375 ns): 106,719 cycles (ns), so the
    # prediction is (85,375 - 106,719) / 106,719 = -20.0 % off; the others as predicted
    cycles = {**own, "traffic": own["traffic"] * 1.25}
    keep = tmp_path / "keep"
    r = run("simulate", path, "--astra-sim", _fake(tmp_path, keep, cycles), "--keep", keep,
            "--json", tmp_path / "s.json")
    assert r.exit_code == 3, r.output
    assert own["traffic"] == 85375.0
    rows = {line.split("│")[1].strip(): line.split("│")[5].strip()
            for line in r.stdout.splitlines() if line.count("│") == 7}
    # (the optimum's 85,375.00085 ns prediction against 85,375 cycles: +1e-8, shown +0.00 %)
    assert rows == {"optimum": "+0.00 %", "equal split": "+0.00 %",
                    "traffic-proportional": "-20.00 %"}
    caption = " ".join(r.stdout.split())
    assert "predicted vs simulated: (predicted - simulated) / simulated" in caption
    assert "Tolerance 3 % on that error's size, largest 20 %;" in caption
    assert ("differ by up to 20 % of the simulated time (tolerance 3 %)"
            in r.stderr.splitlines()[-1])
    data = json.loads((tmp_path / "s.json").read_text())
    row = next(a for a in data["allocations"] if a["name"] == "traffic")
    assert row["relative_error"] == data["largest_relative_error"] == (106719 - 85375) / 106719
    assert row["ratio"] == 106719 / 85375  # (the JSON's ratio: simulated / predicted)
