"""Measured bandwidths in the wrong unit are refused: Gb/s for GB/s, the scale-up's bidirectional
figure, a scale-out above the NIC an NPU can feed, each with the conversion; the shipped runs
files are far from the thresholds."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.io.run_units import (
    BANDWIDTH_FACTOR,
    SCALEOUT_GBPS,
    peak_time_ms,
    scaleup_gbps,
)
from hieropt.io.runs import read_runs

from .tiny import refused
from .validation_files import KORTHIKANTI, VALIDATION, copy_of


def test_bandwidths_in_gbit_are_refused_with_the_conversion(tmp_path: Path):
    # 2400;200 Gb/s is NVLink's 300 GB/s and 8 x 200 Gb/s HDR per node = 25 GB/s per GPU
    path = copy_of(tmp_path, KORTHIKANTI, ("300;25,gpt-530b,105", "2400;200,gpt-530b,105"))
    assert refused(path) == (
        f"{path}: line 14: bw_gbps: dimension 0: 2400 GB/s per NPU is more than 2 x the "
        "A100-SXM-80GB's scale-up bandwidth (300 GB/s per direction): looks like Gb/s "
        "(/ 8 = 300 GB/s); fix: give GB/s per NPU per direction (a Gb/s link rate / 8, the "
        "datasheet's bidirectional figure / 2): 300;25 if every value is Gb/s"
    )
    assert BANDWIDTH_FACTOR == 2.0


@pytest.mark.parametrize("bw, want", [
    # the A100 datasheet's 600 GB/s is NVLink's 300 per direction both ways: refused at exactly
    # 2 x itself, not only above 2 x (600 refused as 601 is)
    ("600;25", "dimension 0: 600 GB/s per NPU is 2 x the A100-SXM-80GB's scale-up bandwidth "
     "(300 GB/s per direction): looks like the datasheet's bidirectional figure; fix: give GB/s "
     "per NPU per direction: the datasheet's bidirectional figure / 2 = 300 (300;25)"),
    ("601;25", "dimension 0: 601 GB/s per NPU is more than 2 x the A100-SXM-80GB's scale-up "
     "bandwidth (300 GB/s per direction): looks like Gb/s (/ 8 = 75.125 GB/s); fix: give GB/s "
     "per NPU per direction (a Gb/s link rate / 8, the datasheet's bidirectional figure / 2): "
     "75.125;3.125 if every value is Gb/s"),
    ("599.9;25", None),
])
def test_a_bidirectional_scale_up_figure_is_refused_at_twice_the_scale_up(tmp_path: Path, bw,
                                                                         want):
    path = copy_of(tmp_path, KORTHIKANTI, ("300;25,gpt-530b,105", f"{bw},gpt-530b,105"))
    if want is None:
        (run,) = [r for r in read_runs(path) if r.line == 14]
        assert run.bw_gbps == (599.9, 25.0)
        return
    assert refused(path) == f"{path}: line 14: bw_gbps: {want}"


@pytest.mark.parametrize("dp, mbs, gbs, ms", [(32, 4, 512, 3600), (4096, 1, 4096, 500)])
def test_the_scale_out_dimension_is_the_network_files_whatever_the_runs_size(
        tmp_path: Path, shared_data: Path, dp, mbs, gbs, ms):
    # LIBRA's 4-dimension network: 4 x 8 x 4 x 32 NPUs (InterChiplet, InterPackage, InterNode,
    # InterPod)
    libra = shared_data / "libra" / "network" / "4d_network.yml"
    # not the outermost dimension a run uses judged scale-out, which would refuse the
    # InterPackage 250 GB/s as Gb/s on 32 NPUs (dimensions 0 and 1) and pass it on 4,096 NPUs
    # an A100-like NPU given inline (no catalog entry, so no scale-up domain or NIC bound: the
    # LIBRA network's hypothetical 250 GB/s beyond 8 NPUs is not refused as more than a NIC)
    model = tmp_path / "a100-inline.toml"
    model.write_text(
        (VALIDATION / "models" / "megatron-gpt-a100.toml").read_text(encoding="utf-8").replace(
            'accelerator = "A100-SXM-80GB"', 'name = "A100-like"\npeak_tflops = 312.0\n'
            "hbm_gib = 80.0\nscaleup_gbps = 300.0\nefficiency = 0.5"),
        encoding="utf-8")
    path = tmp_path / "runs.csv"
    path.write_text(
        "name,model,network,bw_gbps,tp,pp,dp,micro_batch_size,global_batch_size,recompute,"
        f"measured_ms\nr,{model},{libra},225;250;103.5;33.4,1,1,{dp},{mbs},{gbs},full,{ms}\n",
        encoding="utf-8",
    )
    (run,) = read_runs(path)
    assert run.bw_gbps == (225.0, 250.0, 103.5, 33.4)[: run.network.n_dims]
    assert run.network.n_dims == (2 if dp == 32 else 4)
    # the file's outermost dimension at 250 is refused as Gb/s, whatever the run's size
    path.write_text(path.read_text().replace("103.5;33.4", "103.5;250"), encoding="utf-8")
    if dp == 32:
        assert read_runs(path)[0].bw_gbps == (225.0, 250.0)  # (dimension 3 not used)
    else:
        assert refused(path).startswith(
            f"{path}: line 2: bw_gbps: dimension 3 (scale-out): 250 GB/s per NPU is more than "
            "200 GB/s"
        )


A100_NIC = (
    "GB/s per direction one A100-SXM-80GB can send through its NIC (catalog nic_gbps of the "
    "A100-SXM-80GB: its PCIe x16 host link to the fastest NIC on it); the dimension reaches 64 "
    "NPUs, beyond the A100-SXM-80GB's scale-up domain of 8 (catalog scaleup_npus of the "
    "A100-SXM-80GB), so its traffic runs through the NIC")


NIC_FIX = (
    "give per-NPU GB/s per direction: 200 Gb/s per GPU is 25 (Gb/s / 8), and a node's NICs are "
    "shared by its NPUs (four 200 Gb/s NICs for 8 GPUs: 100 GB/s / 8 = 12.5)")


@pytest.mark.parametrize("bw, want", [
    # 250 Gb/s written as GB/s: above the A100's 32 GB/s PCIe Gen4 x16 host link
    ("300;250", f"250 GB/s per NPU is above the 32 {A100_NIC}: looks like Gb/s per NPU or GB/s "
     f"per node of 8 NPUs (/ 8 = 31.25 GB/s); fix: {NIC_FIX}; 300;31.25 if it is Gb/s per NPU"),
    # 200 Gb/s HDR per GPU written as 200 (not accepted as two 800 Gb/s NICs per NPU)
    ("300;200", f"200 GB/s per NPU is above the 32 {A100_NIC}: looks like Gb/s per NPU or GB/s "
     f"per node of 8 NPUs (/ 8 = 25 GB/s); fix: {NIC_FIX}; 300;25 if it is Gb/s per NPU"),
    # a node's four 200 Gb/s NICs as GB/s (100) shared by its 8 GPUs: 12.5 each
    ("300;100", f"100 GB/s per NPU is above the 32 {A100_NIC}: looks like Gb/s per NPU or GB/s "
     f"per node of 8 NPUs (/ 8 = 12.5 GB/s); fix: {NIC_FIX}; 300;12.5 if it is Gb/s per NPU"),
    ("300;32", None),  # the bound itself: PCIe Gen4 x16, 64 GB/s bidirectional
    ("300;300", None),  # an outer tier at the scale-up bandwidth (an NVLink domain)
])
def test_a_scale_out_bandwidth_above_the_nic_bound_is_refused(tmp_path: Path, bw, want):
    # line 14: the 530B model on 8 x 35 x 1 = 280 A100s: dimension 1 reaches 280 NPUs, beyond the
    # DGX A100's 8; not only the global 200 GB/s bound, which 300;200 and 300;100 pass
    path = copy_of(tmp_path, KORTHIKANTI, ("300;25,gpt-530b,105", f"{bw},gpt-530b,105"))
    if want is None:
        (run,) = [r for r in read_runs(path) if r.line == 14]
        assert run.bw_gbps == tuple(map(float, bw.split(";")))
        return
    assert refused(path) == (f"{path}: line 14: bw_gbps: dimension 1: {want}".replace(
        "reaches 64 NPUs", "reaches 280 NPUs"))
    assert SCALEOUT_GBPS == 2 * 800 / 8


DGXC = VALIDATION / "dgxc-h100-2024.csv"
"""NVIDIA DGX Cloud H100 runs (NVLink 4 at 450 GB/s; 8 x 400 Gb/s NDR per node = 50 GB/s per
GPU)."""


@pytest.mark.parametrize("source, old, bw, line, want", [
    # an H100's 400 Gb/s written as 400: above its 50 GB/s bound (one 400 Gb/s ConnectX-7 on
    # its PCIe Gen5 x16 link), below its 450 GB/s NVLink
    (DGXC, "70B 64 GPUs,models/llama3-8b-h100.toml,networks/dgx-h100-ndr.toml,450;50",
     "450;400", 64, "400 GB/s per NPU is above the 50 GB/s per direction one H100-SXM can send "
     "through its NIC (catalog nic_gbps of the H100-SXM: its PCIe x16 host link to the fastest "
     "NIC on it); the dimension reaches 64 NPUs, beyond the H100-SXM's scale-up domain of 8 "
     "(catalog scaleup_npus of the H100-SXM), so its traffic runs through the NIC: looks like "
     "Gb/s per NPU or GB/s per "
     f"node of 8 NPUs (/ 8 = 50 GB/s); fix: {NIC_FIX}; 450;50 if it is Gb/s per NPU"),
    # an A100's 400 Gb/s written as 400: 50 GB/s would still be above its 32
    (KORTHIKANTI, "300;25,gpt-530b,105", "300;400", 14, f"400 GB/s per NPU is above the 32 "
     f"{A100_NIC.replace('64 NPUs', '280 NPUs')}; fix: {NIC_FIX}"),
    (DGXC, "70B 64 GPUs,models/llama3-8b-h100.toml,networks/dgx-h100-ndr.toml,450;50",
     "450;450", 64, None),  # an outer NVLink tier at the scale-up bandwidth
])
def test_a_scale_out_in_gbit_is_refused_at_the_nic_bound(tmp_path: Path, source, old, bw, line,
                                                           want):
    path = copy_of(tmp_path, source, (old, old.replace("450;50" if source == DGXC else "300;25",
                                                       bw)))
    if want is None:
        (run,) = [r for r in read_runs(path) if r.line == line]
        assert run.bw_gbps == tuple(map(float, bw.split(";")))
        return
    assert refused(path) == f"{path}: line {line}: bw_gbps: dimension 1: {want}"


def test_every_shipped_runs_file_is_far_from_the_unit_thresholds():
    for path in [*VALIDATION.glob("*.csv"), *VALIDATION.glob("calibration/*.csv")]:
        for r in read_runs(path):
            assert r.measured_ms > 1.59 * peak_time_ms(r.params)  # threshold: 0.1 x
            # at most the accelerator's own NVLink (300, 450, 900 GB/s); threshold: 2 x that
            scaleup = scaleup_gbps(r.params, r.model_data, r.model_path)
            assert max(r.bw_gbps) <= scaleup and scaleup in (300.0, 450.0, 900.0)
            assert len(r.bw_gbps) < 2 or r.bw_gbps[-1] <= 50.0  # scale-out: 6.25-50 GB/s


@pytest.mark.parametrize("cell, want", [
    # bytes/s for GB/s, on an NPU given inline (no catalog figure to compare with): --bw's words
    ("4e11", "dimension 0: 4e+11 GB/s per NPU is above 1e+06 GB/s per NPU (a thousand times the "
     "fastest scale-up link): looks like bytes/s; fix: give GB/s per NPU (1 GB = 1e9 bytes): "
     "4e+11 bytes/s = 400 GB/s: write 400"),
    ("1e30", "dimension 0: 1e+30 GB/s per NPU is above 1e+06 GB/s per NPU (a thousand times the "
     "fastest scale-up link), and still above it read as bytes/s (1e+21 GB/s); fix: give GB/s "
     "per NPU (1 GB = 1e9 bytes), at most 1e6"),
    ("1e6", None),  # (at the threshold: read, as --bw's 1e6)
])
def test_bandwidths_in_bytes_per_second_are_refused_for_an_npu_given_inline(tmp_path: Path,
                                                                           cell, want):
    from .tiny import write_case

    path = write_case(tmp_path, [f"tiny.toml,net.toml,{cell},1"])
    if want is None:
        assert read_runs(path)[0].bw_gbps == (1e6,)
        return
    assert refused(path) == f"{path}: line 3: bw_gbps: {want}"


def test_bandwidths_in_bytes_per_second_are_not_read_as_gbit_on_a_catalog_npu(tmp_path: Path):
    # 3e11;2.5e10 bytes/s is the A100's 300 GB/s NVLink and 25 GB/s of HDR: not "Gb/s (/ 8)"
    path = copy_of(tmp_path, KORTHIKANTI, ("300;25,gpt-530b,105", "3e11;2.5e10,gpt-530b,105"))
    assert refused(path) == (
        f"{path}: line 14: bw_gbps: dimension 0: 3e+11 GB/s per NPU is above 1e+06 GB/s per NPU "
        "(a thousand times the fastest scale-up link): looks like bytes/s; fix: give GB/s per NPU "
        "(1 GB = 1e9 bytes): 3e+11 bytes/s = 300 GB/s: write 300;25")
