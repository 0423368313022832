"""The time-cost-power trade-off of workloads weighted by shares of hours (``[[workloads]]
hours_share``) times them as ``provision`` does (share / own optimum:
:func:`hieropt.solvers.portfolio.hours_weighted`): its fastest point is provision's performance
optimum, time, cost and parts. Both once stopped on the shares (the time model wants weights)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import tomli_w

import hieropt
from tests.cases import REPO


def _with_watts(node):
    """The catalog ``node`` with a power figure on every part: 1 W per $10 of its price (of a
    switch priced per port, its radix's ports)."""
    if isinstance(node, dict):
        out = {k: _with_watts(v) for k, v in node.items()}
        price = node.get("usd", node.get("usd_per_switch"))
        if "usd_per_port" in node:
            price = node["usd_per_port"] * node["radix"]
        if price is not None:
            out["watts"] = price / 10
        return out
    if isinstance(node, list):
        return [_with_watts(v) for v in node]
    return node


@pytest.mark.heavy
def test_the_tradeoffs_fastest_point_is_provisions_optimum(tmp_path: Path):
    text = (REPO / "instances" / "mix-gpt3-dlrm-4d.toml").read_text().replace(
        '"../models/', f'"{REPO}/models/')
    for old, new in (("weight = 0.46655466   # 0.6 / 1.286022940 s", "hours_share = 60"),
                     ("weight = 3262.9973    # 0.4 / 122.587 us", "hours_share = 40")):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "shares.toml"
    path.write_text(text)
    catalog = tmp_path / "catalog.toml"
    raw = tomllib.loads((REPO / "catalogs" / "example-4d.toml").read_text())
    catalog.write_text(tomli_w.dumps(_with_watts(raw)))
    inst = hieropt.load_instance(path)
    assert inst.weights == "hours"
    best = hieropt.provision(inst, catalog, objective="performance")
    front = hieropt.provision_tradeoff(inst, catalog, levels=2)
    fastest = min(front.points, key=lambda q: q.iteration_time_ns)
    # the hour-weighted ratio (1 when each workload runs at its own optimum), not ns
    assert 1.0 < best.iteration_time_ns < 2.0
    assert fastest.iteration_time_ns == pytest.approx(best.iteration_time_ns, rel=1e-9)
    assert fastest.network_cost_usd == pytest.approx(best.network_cost_usd, rel=1e-9)
