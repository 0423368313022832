"""The library's messages for inputs it refuses: the project's words (problem; fix), never a
suggestion that is itself out of range, and the shape of an array given where a list is wanted."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from tests.cases import REPO

INSTANCE = REPO / "instances" / "gpt3-4d.toml"
LLM = REPO / "models" / "gpt3-175b-llm.toml"


def _message(call) -> str:
    with pytest.raises(hieropt.InputError) as e:
        call()
    return str(e.value)


def test_a_two_dimensional_array_of_bandwidths_is_named_by_its_shape():
    assert _message(lambda: hieropt.evaluate(INSTANCE, np.array([[250, 125, 75, 50]]))) == (
        "bw_gbps: an array of shape (1, 4) given, not one value per dimension (shape (4,)); fix: "
        "give a flat sequence of 4 values (GB/s), one per dimension (e.g. bw_gbps=a.ravel() for "
        "one row)")


def test_a_bandwidth_out_of_range_in_any_unit_gets_no_reading():
    assert _message(lambda: hieropt.evaluate(INSTANCE, [1e300] * 4)) == (
        "bw_gbps: dimension 0: 1e+300 GB/s per NPU is above 1e+06 GB/s per NPU (a thousand times "
        "the fastest scale-up link), and still above it read as bytes/s (1e+291 GB/s); fix: give "
        "GB/s per NPU (1 GB = 1e9 bytes), at most 1e6 (the most bw_gbps takes: a dimension with "
        "no limit)")
    # (a bytes/s slip keeps its reading: 300e9 bytes/s = 300 GB/s)
    assert "write bw_gbps=[300, 125, 75, 50]" in _message(
        lambda: hieropt.evaluate(INSTANCE, [300e9, 125, 75, 50]))


def test_an_hbm_capacity_out_of_range_in_bytes_too_gets_no_reading():
    assert _message(lambda: hieropt.load_llm(LLM, "npu.hbm_gib=1e30")) == (
        "overrides: npu.hbm_gib=1e30: 1e+30 GiB of HBM per NPU is "
        "953,674,316,406,250,018,963,456 PiB, and 9.313e+20 GiB read as bytes, still above 16 "
        "TiB; fix: give GiB (2^30 bytes), e.g. 80 for an 80 GiB part")
    assert _message(lambda: hieropt.load_llm(LLM, "npu.hbm_gib=80e9")).endswith(
        "fix: give GiB (2^30 bytes), e.g. 74.51 for 8e+10 bytes")


def test_a_bound_is_said_in_the_projects_words():
    assert _message(lambda: hieropt.load_llm(LLM, "tp=0")) == (
        "overrides: tp=0: 0 is below 1; fix: use an integer >= 1")


def test_npu_unit_hints_offer_no_out_of_range_reading():
    from hieropt.workloads.llm.accelerators import peak_slip, unit_slip

    assert unit_slip("hbm_gbps", 3.35e12) == (
        "hbm_gbps: 3.35e+12 looks like bytes/s; fix: give GB/s (3.35e+12 bytes/s = 3350 GB/s)")
    assert unit_slip("hbm_gbps", 1e30) == (
        "hbm_gbps: 1e+30 is above 1e+06 GB/s, and still above it read as bytes/s (1e+21 GB/s); "
        "fix: give GB/s, at most 1e+06")
    assert peak_slip(1e30) == (
        "peak_tflops: 1e+30 TFLOP/s is above 1e+06 TFLOP/s per NPU, and still above it read as "
        "FLOP/s (1e+18 TFLOP/s); fix: give the dense peak in TFLOP/s (1e12 FLOP/s)")


def test_a_power_budget_without_power_figures_names_the_argument_and_its_flag():
    catalog = REPO / "catalogs" / "example-4d.toml"
    assert _message(lambda: hieropt.provision(INSTANCE, catalog, max_power_w=300)) == (
        "catalog: classes.InterChiplet.links[0] ('d2d-port-25GBs').watts: no power figure, but "
        "max_power_w (--max-power-w) needs one on every part; fix: add watts = <W per unit> (0 "
        "for passive parts)")


def test_a_file_of_another_kind_names_the_library_function_too():
    space = REPO / "spaces" / "codesign-gpt3-4096.toml"
    with pytest.raises(hieropt.InputError) as e:
        hieropt.solve(space)
    assert e.value.fix == (f"run `hieropt codesign {space}` (from Python: hieropt.codesign)")


def test_a_huge_integer_is_shown_by_its_digits():
    from hieropt.io.common import short_number

    assert short_number(10**400) == "1.00e+400"  # (no float holds it: :g would overflow)
    assert short_number(-(10**401) * 3) == "-3.00e+401"
    assert short_number(10**60) == "1e+60"
    assert short_number(-123456789012345678) == "-1.23457e+17"
    assert short_number(999_999_999_999_999) == "999999999999999"
    assert short_number(0.25) == "0.25"
