"""A committee page with columns on two price bases (a catalog's whole parts, the cost model's $ per
GB/s) recommends a design that can be bought and names each column's basis; a run's error band is
in the unit of its days; a run with days but no band says why; a front's small $ per ms keeps its
significant digits."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from rich.console import Console

import hieropt
from hieropt.model.run import RunFigures
from hieropt.report.committee import Alternative
from hieropt.report.committee_asked import Asked
from hieropt.report.committee_basis import (
    BOUGHT_WHY,
    PAGE_RUN_COST,
    basis_lines,
    priced_labels,
    recommend,
)
from hieropt.report.common import fmt_usd_per_ms
from hieropt.report.run import band_of, fmt_days_range, no_band_reason
from hieropt.report.text import front_table
from tests.cases import REPO


def alt(key: str, label: str, usd: float | None, days: float, bw: float) -> Alternative:
    """A column of Llama 3 70B on 1,024 H100 (450 GB/s NVLink, ``bw`` GB/s of InfiniBand), a
    2T-token run of ``days`` days at ``usd`` $."""
    fig = RunFigures(iteration_time_ns=days * 1e9, time_to_train_days=days, run_cost_usd=usd)
    return Alternative(key, label, "how", "tp8 cp1 pp4 dp32", f"450, {bw} GB/s", 1024, (450.0, bw),
                       days * 1e9, 1e6, fig)


# the procurement page's columns: the cost model's least $ per run is 16.91 GB/s of InfiniBand
# (no catalog part gives it), $983k and 34.3 days; the catalog's 2 x 400G NICs per GPU (100 GB/s)
# $890k and 30.6 days
COST_MODEL = [alt("min_run_cost", "least $ per run (min_run_cost)", 983e3, 34.3, 16.91),
              alt("fastest", "fastest (performance)", 1.43e6, 30.6, 100.0),
              alt("cheapest", PAGE_RUN_COST.replace("least $ per run", "cheapest network"),
                  2.22e6, 80.1, 12.5)]
WHOLE = [alt("catalog_knee", "knee in whole parts, cheapest within 1 %", 890e3, 30.6, 100.0),
         alt("catalog", "fastest in whole parts (performance)", 890e3, 30.6, 100.0)]


def test_a_page_with_whole_parts_recommends_the_least_run_cost_that_can_be_bought():
    key, why = recommend(COST_MODEL + WHOLE, 0.01)
    assert (key, why) == ("catalog_knee", BOUGHT_WHY)  # (a tie in $ and days: the page's order)
    # a bound cheaper than every part list ($36.7M against the catalog's $37.5M, Llama 3 405B
    # on 16,384 GPUs) is still no purchase: the whole parts are recommended
    cheaper = [alt("min_run_cost", "least $ per run", 36.72e6, 69.14, 37.62),
               alt("catalog", "fastest in whole parts", 37.54e6, 67.99, 50.0)]
    assert recommend(cheaper, 0.01)[0] == "catalog"
    # of two part lists, the cheaper run; at equal $, the faster
    two = [alt("catalog_knee", "k", 900e3, 31.0, 50.0), alt("catalog", "f", 890e3, 30.6, 100.0)]
    assert recommend(two, 0.01)[0] == "catalog"
    tie = [alt("catalog_knee", "k", 890e3, 31.0, 50.0), alt("catalog", "f", 890e3, 30.6, 100.0)]
    assert recommend(tie, 0.01)[0] == "catalog"
    # without whole parts: the least $ per run, as before
    assert recommend(COST_MODEL, 0.01)[0] == "min_run_cost"
    # $ per run unknown: the knee in whole parts, else (within 0) the catalog's fastest
    unpriced = [alt(a.key, a.label, None, 30.6, 100.0) for a in COST_MODEL + WHOLE]
    assert recommend(unpriced, 0.01)[0] == "catalog_knee"
    key, why = recommend([a for a in unpriced if a.key != "catalog_knee"], 0.0)
    assert key == "catalog" and why.startswith("the fastest design in the catalog's whole parts")
    # an objective asked with --objective is answered by its own column, whatever its basis
    asked = Asked("min_run_cost", True, answer="min_run_cost")
    assert recommend(COST_MODEL + WHOLE, 0.01, asked)[0] == "min_run_cost"


def test_each_column_names_its_price_basis():
    alts = priced_labels(COST_MODEL + WHOLE)
    assert [a.label for a in alts] == [
        "least $ per run (min_run_cost) [$ per GB/s]",
        "fastest (performance) [$ per GB/s]",
        "cheapest network of the continuous designs [$ per GB/s]",
        "knee in whole parts, cheapest within 1 %",
        "fastest in whole parts (performance)",
    ]
    assert [a.price_basis for a in alts] == ["cost_model"] * 3 + ["catalog"] * 2
    assert [a.to_dict()["price_basis"] for a in alts[2:4]] == ["cost_model", "catalog"]
    assert basis_lines(alts) == (
        "whole parts from the catalog, priced by their bill of materials (designs that can be "
        "bought): knee in whole parts, cheapest within 1 %; fastest in whole parts (performance)",
        "the cost model's $ per GB/s per NPU (continuous bandwidths no catalog part need give: a "
        "bound on the network's $, not a purchase; compare their times, not their $, with the "
        "whole-parts columns'): least $ per run (min_run_cost) [$ per GB/s]; fastest "
        "(performance) [$ per GB/s]; cheapest network of the continuous designs [$ per GB/s]",
    )
    # a page of one basis: labels unchanged, no lines
    assert priced_labels(COST_MODEL) == COST_MODEL and basis_lines(COST_MODEL) == ()


def test_the_band_is_in_the_unit_of_the_days():
    # the H100's default calibration: w = 6.3 % either way, T / 1.063 to T / 0.937
    minutes = RunFigures(iteration_time_ns=1.0, time_to_train_days=44.1 / 1440)
    assert band_of(minutes, "H100-SXM").text().startswith(
        "41.5 to 47.1 minutes at the calibration's")  # (44.1 / 1.063, 44.1 / 0.937)
    hours = RunFigures(iteration_time_ns=1.0, time_to_train_days=10 / 24)
    assert band_of(hours, "H100-SXM").text().startswith("9.4 to 10.7 hours")
    # 1.02 days: its band's low end, 0.96 days, is in days too
    assert band_of(RunFigures(iteration_time_ns=1.0, time_to_train_days=1.02),
                   "H100-SXM").text().startswith("1.0 to 1.1 days")
    assert fmt_days_range(29.2 / 1.063, 29.2 / 0.937, 29.2) == "27.5 to 31.2 days"
    assert fmt_days_range(30 / 86400, 40 / 86400, 35 / 86400) == "30 to 40 seconds"


def test_a_run_without_a_band_says_why():
    fig = RunFigures(iteration_time_ns=1.0, time_to_train_days=47.7)
    assert no_band_reason(fig, "/home/me/mine.toml") == (
        "no error band: a calibration of your own (mine.toml) has no held-out error here (its "
        "fit's errors are on the runs it was fitted to); 'hieropt validate RUNS.csv --npu "
        "mine.toml' measures it on runs it was not fitted to")
    assert no_band_reason(fig, "H100-SXM") is None  # (it has a band)
    assert no_band_reason(fig, None) is None  # (values given inline: no note, no word)
    assert no_band_reason(RunFigures(iteration_time_ns=1.0), "/home/me/mine.toml") is None


def test_a_small_dollars_per_ms_keeps_its_digits():
    assert fmt_usd_per_ms(0.1709621431638067) == "0.171"
    assert fmt_usd_per_ms(26_454.18061073677) == "26,454"
    assert fmt_usd_per_ms(1e-5) == "1e-05"
    instance = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    point = SimpleNamespace(budget_usd=4_990_341.0, network_cost_usd=4_990_341.0,
                            iteration_time_ns=14_506.0063e6, gap=4.9e-10, status="optimal",
                            usd_per_ms=0.1709621431638067, bw=np.array([50.0, 12.5, 10.0, 5.0]))
    console = Console(record=True, width=200)
    console.print(front_table(instance, SimpleNamespace(points=(point,))))
    row = next(line for line in console.export_text().splitlines() if "4,990,341" in line)
    assert "│    0.171 │" in row


@pytest.mark.parametrize(("usd", "text"), [(0.0, "0"), (999.94, "999.9"), (1000.4, "1,000")])
def test_dollars_per_ms_below_a_thousand_keep_four_digits(usd, text):
    assert fmt_usd_per_ms(usd) == text
