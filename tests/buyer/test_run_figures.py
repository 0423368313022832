"""The buyer's figures (hieropt.model.run) against hand computations: MFU of a GPT-3 plan from its
FLOPs, time and peak; days and MWh for a token budget; $ per run from a [cluster] section; a
published training time; and what is said unknown for a workload without an LLM model."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import hieropt
from hieropt.io.llm import read_llm
from hieropt.model.run import run_figures
from hieropt.spec.cluster import Cluster
from hieropt.workloads.llm.flops import training_of

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "models" / "gpt3-175b-llm.toml"
PLAN = REPO / "instances" / "gpt3-plan-4d.toml"

# GPT-3 175B (Brown et al. 2020): B = 1,536 sequences, s = 2,048, L = 96, h = 12,288, V = 50,257
B, S, L, H, V = 1536, 2048, 96, 12288, 50257
# Narayanan et al. 2021 eq. 3 without recompute (the logit layer is not recomputed: V / 12 L h;
# Korthikanti et al. 2022 §6 write it so)
MODEL_FLOPS = 72 * B * S * L * H**2 * (1 + S / (6 * H) + V / (12 * L * H))


def test_gpt3_model_flops_are_megatrons_equation():
    tr = training_of(read_llm(GPT3))
    assert tr.tokens_per_iteration == B * S == 3_145_728
    assert tr.model_flops_per_iteration == pytest.approx(MODEL_FLOPS, rel=1e-12)
    # selective recompute repeats the attention core, 4 s^2 h per layer and sequence
    assert tr.hardware_flops_per_iteration - tr.model_flops_per_iteration == pytest.approx(
        B * L * 4 * S**2 * H, rel=1e-12
    )
    assert tr.npus == 4096 and tr.peak_flops_per_npu == 312e12


def test_full_recompute_adds_one_forward_of_the_blocks():
    tr = training_of(read_llm(GPT3, ["recompute=full"]))
    blocks = 24 * B * S * L * H**2 * (1 + S / (6 * H))  # one forward of every block
    assert tr.hardware_flops_per_iteration - tr.model_flops_per_iteration == pytest.approx(
        blocks, rel=1e-12
    )


def test_mfu_of_the_gpt3_plan_by_hand():
    inst = hieropt.load_instance(PLAN)
    fig = run_figures(inst, 10e9)  # an iteration of 10 s
    assert fig.mfu == pytest.approx(MODEL_FLOPS / (4096 * 312e12 * 10.0), rel=1e-12)
    assert fig.mfu == pytest.approx(0.264953, abs=1e-6)  # 3.385978e18 / 1.277952e19
    assert fig.tokens_per_s == pytest.approx(314_572.8, rel=1e-12)
    hw = MODEL_FLOPS + B * L * 4 * S**2 * H
    assert fig.hfu == pytest.approx(hw / (4096 * 312e12 * 10.0), rel=1e-12)


def _cluster(**figures) -> Cluster:
    return Cluster(**figures)


def test_days_and_mwh_for_a_token_budget():
    cl = _cluster(accelerator_w=400.0, npus_per_server=8, server_w=3000.0, pue=1.1)
    inst = hieropt.load_instance(PLAN).model_copy(update={"tokens": 300e9, "cluster": cl})
    fig = run_figures(inst, 10e9, network_cost_usd=5e6)
    iterations = 300e9 / 3_145_728  # 95,367.43 iterations of 10 s
    assert fig.iterations_per_run == pytest.approx(iterations, rel=1e-12)
    # 11.038 days
    assert fig.time_to_train_days == pytest.approx(iterations * 10 / 86400, rel=1e-12)
    it_w = 4096 * 400 + 512 * 3000  # 3,174,400 W of IT power
    assert fig.power_mw == pytest.approx(it_w * 1.1 / 1e6, rel=1e-12)  # 3.49184 MW
    assert fig.energy_mwh == pytest.approx(3.49184 * iterations * 10 / 3600, rel=1e-12)  # 925.0 MWh
    assert fig.run_cost_usd is None  # no prices
    assert any("accelerator_usd" in u for u in fig.unknown)


def test_run_cost_from_a_cluster_section():
    cl = _cluster(
        accelerator_usd=15000.0,
        accelerator_w=400.0,
        npus_per_server=8,
        server_usd=100000.0,
        server_w=3000.0,
        facility_usd_per_mw=11.7e6,
        pue=1.1,
        electricity_usd_per_kwh=0.08,
        amortisation_years=4.0,
        facility_amortisation_years=15.0,
    )
    inst = hieropt.load_instance(PLAN).model_copy(update={"tokens": 300e9, "cluster": cl})
    net = 5e6
    fig = run_figures(inst, 10e9, network_cost_usd=net)
    hours = 300e9 / 3_145_728 * 10 / 3600  # 264.9 h
    it_mw = 3.1744
    capex_it = 4096 * 15000 + 512 * 100000  # $112.64M
    rate = ((capex_it + net) / (4 * 8760) + 11.7e6 * it_mw / (15 * 8760)
            + it_mw * 1.1 * 1000 * 0.08)  # $/h: 3,357.3 + 282.7 + 279.3
    assert fig.cost_per_hour_usd == pytest.approx(rate, rel=1e-12)
    assert fig.run_cost_usd == pytest.approx(rate * hours, rel=1e-12)
    # as docs/buyer.md states them: $3,919 per hour, $1,038,261 per run
    assert round(fig.cost_per_hour_usd) == 3_919 and round(fig.run_cost_usd) == 1_038_261
    assert fig.capex_usd == pytest.approx(capex_it + 11.7e6 * it_mw + net, rel=1e-12)
    # no network_w_per_npu: the MW, MWh, facility and $ count no network power, and say so
    assert fig.left_out == (
        "network power (no network_w_per_npu): not in the MW, MWh, facility or $",)
    with_net = inst.model_copy(update={"cluster": cl.model_copy(update={"network_w_per_npu": 0.0})})
    assert run_figures(with_net, 10e9, network_cost_usd=net).left_out == ()


def test_without_the_networks_cost_the_capex_and_dollars_are_said_unknown():
    """A priced [cluster] and no network cost (``run_figures``'s default None): the capex, the cost
    per hour and the $ per run are unknown, and ``unknown`` says why (they were None with nothing
    said); the power and the days do not need it."""
    cl = _cluster(accelerator_usd=15000.0, accelerator_w=400.0, pue=1.1,
                  electricity_usd_per_kwh=0.08, amortisation_years=4.0)
    inst = hieropt.load_instance(PLAN).model_copy(update={"tokens": 300e9, "cluster": cl})
    fig = run_figures(inst, 10e9)
    assert fig.capex_usd is None and fig.cost_per_hour_usd is None and fig.run_cost_usd is None
    assert fig.unknown == ("capex and $: no network cost (give the network's cost in $, "
                           "network_cost_usd)",)
    assert fig.power_mw == pytest.approx(4096 * 400 * 1.1 / 1e6, rel=1e-12)
    assert fig.time_to_train_days == pytest.approx(300e9 / 3_145_728 * 10 / 86400, rel=1e-12)


def test_without_a_pue_the_power_is_the_it_power_and_is_said_so():
    """No ``pue`` in [cluster]: the MW are the IT power alone (4,096 x 400 W + 512 x 3,000 W =
    3.1744 MW, as with PUE 1), and ``left_out`` says so instead of a silent PUE of 1; the text's
    cluster line calls them IT power, not "with PUE"."""
    from hieropt.model.run import PUE_LEFT_OUT
    from hieropt.report.run import run_lines

    cl = _cluster(accelerator_w=400.0, npus_per_server=8, server_w=3000.0, network_w_per_npu=0.0)
    inst = hieropt.load_instance(PLAN).model_copy(update={"tokens": 300e9, "cluster": cl})
    fig = run_figures(inst, 10e9, network_cost_usd=5e6)
    assert fig.power_mw == pytest.approx(3.1744, rel=1e-12)
    assert fig.left_out == (
        "PUE (no pue): the MW, MWh and electricity $ are IT power only, as with pue = 1; set "
        "[cluster] pue (facility power / IT power, e.g. 1.25)",) == (PUE_LEFT_OUT,)
    text = "\n".join(run_lines(fig))
    assert "cluster: 3.17 MW (IT power, no PUE)" in text and "with PUE" not in text
    with_pue = inst.model_copy(update={"cluster": cl.model_copy(update={"pue": 1.25})})
    fig = run_figures(with_pue, 10e9, network_cost_usd=5e6)
    assert fig.left_out == () and fig.power_mw == pytest.approx(3.1744 * 1.25, rel=1e-12)
    assert "cluster: 3.97 MW (with PUE)" in "\n".join(run_lines(fig))


def test_solve_names_the_network_power_it_leaves_out():
    """The Llama 3 example (no network_w_per_npu): its 26.11 MW is 16,384 x 700 W + 2,048 x
    4,600 W at PUE 1.25, without the network; the JSON's run.left_out and the text's "left out:"
    line say so."""
    import json

    from tests.cli.util import run

    r = run("solve", REPO / "instances" / "llama3-405b-16k-cluster.toml", "--objective",
            "performance", "--json", "-")
    assert r.exit_code == 0, r.output
    fig = json.loads(r.stdout)["run"]
    assert fig["power_mw"] == pytest.approx((16384 * 700 + 2048 * 4600) * 1.25 / 1e6, rel=1e-12)
    line = "network power (no network_w_per_npu): not in the MW, MWh, facility or $"
    assert fig["left_out"] == [line]
    assert f"left out: {line}" in r.stderr.splitlines()


def test_an_npu_hour_rate_replaces_the_fixed_figures():
    cl = _cluster(usd_per_npu_hour=2.0, amortisation_years=5.0)
    inst = hieropt.load_instance(PLAN).model_copy(update={"tokens": 300e9, "cluster": cl})
    fig = run_figures(inst, 10e9, network_cost_usd=8.76e6)
    hours = 300e9 / 3_145_728 * 10 / 3600
    # 8,192 + 200
    assert fig.cost_per_hour_usd == pytest.approx(4096 * 2.0 + 8.76e6 / (5 * 8760), rel=1e-12)
    assert fig.run_cost_usd == pytest.approx(8392.0 * hours, rel=1e-12)
    assert fig.capex_usd is None and fig.power_mw is None


def test_published_gpt3_training_time():
    """Narayanan et al. 2021 §5.1: GPT-3 175B on 300B tokens with 1,024 A100 at 140 TFLOP/s per GPU
    (hardware FLOPs, full recompute) takes about 34 days."""
    p = read_llm(GPT3, ["npus=1024", "tp=8", "pp=8", "dp=16", "recompute=full"])
    tr = training_of(p)
    T_ns = tr.hardware_flops_per_iteration / (1024 * 140e12) * 1e9
    inst = hieropt.load_instance(PLAN).model_copy(update={"tokens": 300e9})
    inst = inst.model_copy(update={"workload": inst.workload.model_copy(update={"training": tr})})
    fig = run_figures(inst, T_ns)
    assert fig.hfu == pytest.approx(140 / 312, rel=1e-12)
    assert fig.time_to_train_days == pytest.approx(34, rel=0.03)


def test_the_tp_dp_transformer_generator_states_its_figures():
    # TP 16 x DP 256, one sequence per replica
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    tr = inst.workload.training
    assert tr.tokens_per_iteration == 256 * 2048 and tr.npus == 4096
    assert tr.model_flops_per_iteration == pytest.approx(
        72 * 256 * S * L * H**2 * (1 + S / (6 * H)), rel=1e-12
    )


def test_a_workload_without_an_llm_model_says_what_is_unknown():
    from hieropt.io.astrasim1 import read_workload

    assert read_workload(REPO / "models" / "moe-16l.txt").training is None
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    inst = inst.model_copy(update={"workload": inst.workload.model_copy(update={"training": None})})
    fig = run_figures(inst, 1e9, network_cost_usd=1e6, tokens=15e12)
    assert fig.mfu is None and fig.tokens_per_s is None and fig.time_to_train_days is None
    assert any("no LLM model" in u for u in fig.unknown)
    assert any("[cluster]" in u for u in fig.unknown)
    d = fig.to_dict()
    for key in (
        "tokens_per_s",
        "model_flops_per_iteration",
        "mfu",
        "time_to_train_days",
        "energy_mwh",
        "run_cost_usd",
    ):
        assert key in d and d[key] is None
    assert not math.isnan(d["iteration_time_ns"])


def test_bandwidth_sensitivity_in_the_buyers_units():
    from hieropt.report.sensitivity import BuyerScale, bandwidth_effect

    # 1 GB/s more per NPU saves 3 ms per iteration on 16,384 NPUs; 1e6 iterations per run of 10 s
    # each; $20,000 per hour; the network amortised over 5 years, $10 per GB/s per NPU on that
    # dimension across the cluster
    scale = BuyerScale(npus=16384, iterations=1e6, iteration_ns=10e9, usd_per_h=20000.0,
                       per_network_usd=1 / (5 * 8760), price_usd_per_gbps=(50.0, 16384 * 10.0))
    text = bandwidth_effect(scale, 1, -3e6)
    assert "16,384 GB/s = 131.1 Tb/s across the cluster" in text
    days = 3e6 * 1e6 / 86400e9  # 0.03472 days
    assert f"saves {days:,.4g} days per run" in text
    # -16,666.7 + 10,390.7 = -$6,276.0
    usd = 1e6 / 3.6e12 * (-3e6 * 20000 + 10e9 * 16384 * 10 / (5 * 8760))
    assert usd == pytest.approx(-6276.0, abs=0.1)
    assert "saves $6.28k per run" in text
    assert bandwidth_effect(None, 1, -3e6) == ""


def test_several_workloads_have_no_run_of_their_own():
    mix = hieropt.load_instance(REPO / "instances" / "mix-gpt3-dlrm-4d.toml")
    fig = run_figures(mix, 1.0, network_cost_usd=1e6, tokens=15e12)
    assert fig.mfu is None and fig.time_to_train_days is None
    assert any("several workloads" in u for u in fig.unknown)
    from hieropt.errors import InputError

    with pytest.raises(InputError, match="several workloads"):
        hieropt.solve(
            mix.model_copy(
                update={"cluster": Cluster(accelerator_usd=1.0, amortisation_years=4.0)}
            ),
            objective="min_run_cost",
        )


def test_plans_outside_the_validation_carry_its_caveat():
    """ZeRO-3 (measured 1.3-3.1x slower than predicted, docs/validation.md) and experts (no
    measured MoE run) carry their caveat into the run figures and every command's notes; a plan
    the measured runs cover (GPT-3's TP x PP x DP, ZeRO 1) carries none."""
    from hieropt.report.run import run_notes
    from hieropt.workloads.llm.flops import MOE_CAVEAT, ZERO3_CAVEAT, zero_pp_caveat

    assert training_of(read_llm(GPT3)).caveats == ()
    # (with GPT-3's 8 pipeline stages, ZeRO-3 also gets the note that common software refuses it)
    z3 = training_of(read_llm(GPT3, ["zero_stage=3"]))
    assert z3.caveats == (ZERO3_CAVEAT, zero_pp_caveat(3, 8)) and "1.3-3.1x" in ZERO3_CAVEAT
    moe = training_of(read_llm(REPO / "models" / "mixtral-8x7b.toml"))
    assert moe.caveats == (MOE_CAVEAT,)
    inst = hieropt.load_instance(PLAN)
    fig = run_figures(inst, 10e9)
    assert fig.caveats == () and fig.to_dict()["caveats"] == []
    from hieropt.model.run import figures

    fig3 = figures(z3, 4096, 10e9)
    assert fig3.to_dict()["caveats"] == [ZERO3_CAVEAT, zero_pp_caveat(3, 8)]
    # (with or without the MFU shown)
    assert run_notes(fig3, None) == [ZERO3_CAVEAT, zero_pp_caveat(3, 8)]


@pytest.mark.parametrize(("tokens", "words"), [
    (300e9, "11.0 days"),            # 95,367.43 iterations of 10 s: 11.038 days
    (3e9, "2.6 hours"),              # 953.67 iterations: 9,536.7 s
    (100e6, "5.3 minutes"),          # 31.789 iterations: 317.9 s
    (3_145_728, "10 seconds"),       # one iteration
])
def test_a_short_run_is_in_hours_minutes_or_seconds_not_zero_days(tokens, words):
    from hieropt.report.run import fmt_days, run_lines

    inst = hieropt.load_instance(PLAN).model_copy(update={"tokens": tokens})
    fig = run_figures(inst, 10e9, network_cost_usd=5e6)
    assert fmt_days(fig.time_to_train_days) == words
    line = next(x for x in run_lines(fig) if x.startswith("run of "))
    assert line.split(": ", 1)[1].split(",")[0] == words
