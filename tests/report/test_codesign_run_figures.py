"""The committee page of a co-design result takes the run figures from the result itself: the JSON
``codesign --json`` writes holds its space (``space_definition``), so the page of the JSON alone
gives every candidate's tokens/s, MFU, days and (with a [cluster]) $ per run, equal to the page
with ``--space``; ``--tokens`` refigures them; and the "cheapest network" column is never dearer
than another design on the page (the knee solved for its least cost included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.util import run
from tests.report.nvl72 import CLUSTER, SPACE, TOKENS

HOURS = 5 * 8760.0
N = 2304
TOKENS_PER_ITERATION = 2304 * 2048  # the space's global batch 2,304 x GPT-3's 2,048 tokens
FIGURES = ("tokens_per_s", "mfu", "time_to_train_days", "run_cost_usd", "power_mw",
           "iteration_time_ns", "network_cost_usd")


def report_json(tmp_path: Path, name: str, *args) -> dict:
    out = tmp_path / name
    r = run("report", *args, "-o", out, "--json", "-")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    for key in ("time_to_train_days", "mfu", "tokens_per_s"):  # (printed, not "unknown")
        assert data["headline"][key] is not None, key
        assert f"{key}: unknown" not in r.stderr
    return data


def alts(data: dict) -> dict[str, dict]:
    return {a["key"]: a for a in data["alternatives"]}


@pytest.fixture(scope="module")
def priced_result(tmp_path_factory) -> Path:
    """``codesign --json`` on the NVL72 space with the [cluster] of tests/report/nvl72.py and
    tokens = 300e9."""
    tmp = tmp_path_factory.mktemp("priced-codesign")
    space = tmp / "space.toml"
    text = SPACE.read_text().replace('model = "../', f'model = "{SPACE.parents[1]}/')
    head, sep, rest = text.partition("\n[")
    space.write_text(f"{head}\ntokens = {TOKENS:g}\n{sep}{rest}{CLUSTER}")
    path = tmp / "result.json"
    r = run("codesign", space, "--workers", "1", "--json", path)
    assert r.exit_code == 0, r.output
    return path


@pytest.mark.heavy
def test_the_json_alone_gives_every_figure(tmp_path, priced_result):
    """Days, MFU, tokens/s, MW and $ per run of every column from the JSON alone, equal to those
    with --space; the search's best has the figures codesign printed; the recommendation (least $
    per run) by hand from the [cluster] figures."""
    result = json.loads(priced_result.read_text())
    assert result["space_definition"]["tokens"] == TOKENS
    alone = report_json(tmp_path, "alone", priced_result)
    assert alone["subject"][1] == "a run of 300B tokens"
    best = alts(alone)["best"]
    for key in ("mfu", "tokens_per_s", "time_to_train_days", "run_cost_usd"):
        assert best[key] == pytest.approx(result["run"][key], rel=1e-12)
    assert alone["recommended"] == "min_run_cost"
    h = alone["headline"]
    days = TOKENS / TOKENS_PER_ITERATION * h["iteration_time_ns"] * 1e-9 / 86400
    assert h["time_to_train_days"] == pytest.approx(days, rel=1e-12)
    assert h["tokens_per_s"] == pytest.approx(
        TOKENS_PER_ITERATION / (h["iteration_time_ns"] * 1e-9), rel=1e-12)
    it_w = N * 1200.0
    per_hour = ((N * 43000 + h["network_cost_usd"]) / HOURS + 11.7e6 * it_w / 1e6 / HOURS
                + it_w * 1.25 / 1e3 * 0.0826)
    assert h["run_cost_usd"] == pytest.approx(per_hour * days * 24, rel=1e-12)
    assert h["power_mw"] == pytest.approx(it_w * 1.25 / 1e6, rel=1e-12)
    for a in alone["alternatives"]:
        assert all(a[k] is not None for k in FIGURES), a


def test_tokens_refigure_every_column(tmp_path, priced_result):
    """--tokens 600e9 on the JSON: the subject says so, and every column's days and $ per run are
    twice those of the result's 300e9 (the cost rate and the time unchanged)."""
    base = alts(report_json(tmp_path, "base", priced_result))
    data = report_json(tmp_path, "double", priced_result, "--tokens", "600e9")
    assert data["subject"][1] == "a run of 600B tokens"
    for key, a in alts(data).items():
        assert a["iteration_time_ns"] == base[key]["iteration_time_ns"]
        assert a["time_to_train_days"] == pytest.approx(2 * base[key]["time_to_train_days"],
                                                        rel=1e-12)
        assert a["run_cost_usd"] == pytest.approx(2 * base[key]["run_cost_usd"], rel=1e-12)


def test_the_searchs_token_budget_is_kept_with_a_space_file_without_one(tmp_path, codesign_json):
    """The search ran with --tokens on a space file without tokens: the page of the JSON, alone or
    with that space file, figures the run for the search's budget (never "no token budget
    given"), and the two agree."""
    alone = report_json(tmp_path, "alone", codesign_json)
    with_space = report_json(tmp_path, "space", codesign_json, "--space", SPACE)
    for data in (alone, with_space):
        assert data["subject"][1] == "a run of 300B tokens"
    a, b = alts(alone), alts(with_space)
    assert a.keys() == b.keys()
    for key in a:
        for fig in ("time_to_train_days", "mfu", "tokens_per_s", "iteration_time_ns",
                    "network_cost_usd"):
            assert a[key][fig] == b[key][fig], (key, fig)
    h = alone["headline"]
    assert h["time_to_train_days"] == pytest.approx(
        TOKENS / TOKENS_PER_ITERATION * h["iteration_time_ns"] * 1e-9 / 86400, rel=1e-12)


def test_a_result_without_its_space_scales_the_best_runs_days(tmp_path, codesign_json):
    """A result written without ``space_definition`` and read without --space: the best row's
    figures come from its ``run``, and --tokens scales its days (iterations = tokens / tokens per
    iteration), not "unknown"."""
    result = json.loads(codesign_json.read_text())
    del result["space_definition"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(result))
    out = tmp_path / "out"
    r = run("report", old, "--tokens", "600e9", "-o", out, "--json", "-")
    assert r.exit_code == 0, r.output
    best = alts(json.loads(r.stdout))["best"]
    assert best["time_to_train_days"] == pytest.approx(
        2 * result["run"]["time_to_train_days"], rel=1e-12)
    assert best["mfu"] == result["run"]["mfu"]


def test_the_cheapest_column_is_the_cheapest_design_on_the_page(codesigned):
    """Every design on the page costs at least the "cheapest network" column: here the knee's
    network solved for its least cost ($47.8M; $39.1M with the ZeRO-1 all-gather on the overlapped
    gradient stream, not after the optimizer step) is cheaper than every ranked row (each at its own
    fastest, $156.8M), so the cheapest column is that design."""
    _, data = codesigned
    a = alts(data)
    assert a["cheapest"]["network_cost_usd"] <= min(x["network_cost_usd"] for x in a.values())
    assert a["cheapest"]["network_cost_usd"] == a["knee"]["network_cost_usd"]
    # (TP 8 x PP 2 x DP 144 with FP32 gradients: its DP reduction is small enough that 1 % slower
    # needs far less scale-out; $109.7M when the pick was TP 8 x DP 288 with 2-byte gradients)
    assert a["cheapest"]["network_cost_usd"] == pytest.approx(47_754_129, abs=1)
    assert a["cheapest"]["how"] == (
        "the least network capex among the designs on this page: the 15 ranked candidates of the "
        "result and the knee's network solved for its least cost (the knee's design)")


def test_a_bad_token_budget_is_refused(tmp_path, codesign_json):
    r = run("report", codesign_json, "--tokens", "1M", "-o", tmp_path / "out")
    assert r.exit_code == 2
    assert "1,000,000 tokens is fewer than one iteration" in r.stderr
