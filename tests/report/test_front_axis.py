"""The time axis of the report's front figure (front.png,
:func:`hieropt.report.plots.plot_front_points`) is in the unit of its points: ms for times in ns,
the ratio itself for workloads weighted by shares of hours. Its top was the slowest design in ms
even for a ratio (1.4 / 1e6), so a ratio's axis ran from 1.19 down to about -0.6: upside down and
nowhere near the designs."""

from __future__ import annotations

import pytest

from hieropt.report.plots import front_points_ylim


def _data(unit: str, points: list[float], front: list[float]) -> dict:
    return {"time_unit": unit, "front_time_ns": front,
            "points": [{"label": f"p{i}", "cost_usd": 1e6, "time_ns": t}
                       for i, t in enumerate(points)]}


def test_a_ratio_axis_spans_the_designs_ratios():
    # designs at 1.2 and 1.4, the front from 1.22 to 2.0: span 0.2 of the designs,
    # from 1.2 - 0.05 x 0.2 = 1.19 to 1.4 + 0.6 x 0.2 = 1.52
    lo, hi = front_points_ylim(_data("hours_weighted_ratio", [1.2, 1.4], [1.22, 1.3, 2.0]))
    assert lo == pytest.approx(1.19, abs=1e-8)
    assert hi == pytest.approx(1.52, abs=1e-8)


def test_a_time_axis_is_in_ms():
    # designs at 2 and 3 ms, the front's fastest at 2.5 ms: from 2 - 0.05 = 1.95 to 3 + 0.6 = 3.6
    lo, hi = front_points_ylim(_data("ns", [2e6, 3e6], [2.5e6, 9e6]))
    assert lo == pytest.approx(1.95, abs=1e-8)
    assert hi == pytest.approx(3.6, abs=1e-8)
