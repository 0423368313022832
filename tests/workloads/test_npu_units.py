"""An LLM model file's NPU figures in the wrong unit are refused with the conversion, by the
catalog's rules: ``peak_tflops = 0.989`` (the H100's BF16 peak in PFLOP/s) once gave 32,085 days,
``peak_tflops = 989e12`` (FLOP/s) "MFU 0.0%", both accepted; ``hbm_gbps`` in bytes/s likewise.
Toy NPUs of 0.1 TFLOP/s and below (the tests' 1e-4) and every catalog peak stay accepted."""

from __future__ import annotations

import pytest

from hieropt.errors import InputError
from tests.cases import REPO

MODEL = REPO / "models" / "gpt3-175b-llm.toml"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "peak_tflops=0.989",
            "params.npu: peak_tflops: 0.989 TFLOP/s is below any accelerator's dense peak (the "
            "catalog's are 156 to 4,500 TFLOP/s): looks like PFLOP/s; fix: give TFLOP/s (1e12 "
            "FLOP/s): 0.989 PFLOP/s = 989 TFLOP/s (a toy NPU slower than 1 TFLOP/s on purpose: "
            "0.1 or less)",
        ),
        (
            "peak_tflops=989e12",
            "params.npu: peak_tflops: 9.89e+14 TFLOP/s is above 1e+06 TFLOP/s per NPU (over 200 x "
            "the fastest dense peak): looks like FLOP/s; fix: give TFLOP/s (1e12 FLOP/s): "
            "9.89e+14 FLOP/s = 989 TFLOP/s",
        ),
        (
            "peak_tflops=2.25e6",
            "params.npu: peak_tflops: 2.25e+06 TFLOP/s is above 1e+06 TFLOP/s per NPU (over 200 x "
            "the fastest dense peak): looks like GFLOP/s; fix: give TFLOP/s (1e12 FLOP/s): "
            "2.25e+06 GFLOP/s = 2250 TFLOP/s",
        ),
        (
            "hbm_gbps=2.039e12",
            "params.npu: hbm_gbps: 2.039e+12 looks like bytes/s; fix: give GB/s (2.039e+12 "
            "bytes/s = 2039 GB/s)",
        ),
        (
            "nic_gbps=800",
            "params.npu: nic_gbps: 800 GB/s per direction is a 6.4 Tb/s NIC, and 800 is a NIC's "
            "rating in Gb/s; fix: write nic_gbps = 100 (GB/s per direction: the 800 Gb/s rating "
            "/ 8)",
        ),
        (
            "nic_gbps=400",
            "params.npu: nic_gbps: 400 GB/s per direction is a 3.2 Tb/s NIC, and 400 is a NIC's "
            "rating in Gb/s; fix: write nic_gbps = 50 (GB/s per direction: the 400 Gb/s rating "
            "/ 8)",
        ),
        (
            "nic_gbps=5e10",
            "params.npu: nic_gbps: 5e+10 looks like bytes/s; fix: give GB/s per direction (5e+10 "
            "bytes/s = 50 GB/s per direction)",
        ),
    ],
)
def test_npu_figures_in_the_wrong_unit_are_refused(override: str, message: str) -> None:
    from hieropt.io.llm import read_llm

    with pytest.raises(InputError) as e:
        read_llm(MODEL, [override])
    # (the value is the override's, so the error names it, not the model file: "params.npu:
    # nic_gbps: 400 GB/s ..." -> "--set: nic_gbps=400: 400 GB/s ...")
    field, figure, problem = message.split(": ", 2)
    assert (field, figure) == ("params.npu", override.split("=")[0])
    assert str(e.value) == f"--set: {override}: {problem}"
    with pytest.raises(InputError) as e:
        read_llm(MODEL, [override], "space.toml: set")
    assert str(e.value) == f"space.toml: set: {override}: {problem}"


@pytest.mark.parametrize("peak", [1e-4, 0.1, 1.0, 156.0, 989.4, 4500.0, 1e6])
def test_plausible_and_toy_peaks_are_accepted(peak: float) -> None:
    from hieropt.workloads.llm import NPU

    assert NPU(peak_tflops=peak, efficiency=0.5, hbm_gib=80.0).peak_tflops == peak


@pytest.mark.parametrize("peak", [1e-4, 0.1, 1.0, 156.0, 312.0, 468.0])
def test_peaks_up_to_1_5_x_the_named_accelerators_are_accepted(peak: float) -> None:
    from hieropt.io.llm import read_llm

    # (the model file names the A100-SXM-80GB: 312 TFLOP/s dense BF16 in the catalog)
    assert read_llm(MODEL, [f"peak_tflops={peak!r}"]).npu.peak_tflops == peak


@pytest.mark.parametrize(
    ("peak", "problem", "fix"),
    [
        (
            "624",
            "624 TFLOP/s is 2 x the A100-SXM-80GB's dense bf16 peak of 312 TFLOP/s (catalog), "
            "more than 1.5 x: looks like the sparse figure (structured sparsity: 2 x the dense "
            "peak)",
            "give the dense peak: 624 / 2 = 312 TFLOP/s (or leave peak_tflops out: the "
            "catalog's 312)",
        ),
        (
            "312000",
            "312000 TFLOP/s is 1,000 x the A100-SXM-80GB's dense bf16 peak of 312 TFLOP/s "
            "(catalog), more than 1.5 x: looks like GFLOP/s",
            "give TFLOP/s: 312000 GFLOP/s = 312 TFLOP/s (or leave peak_tflops out: the "
            "catalog's 312)",
        ),
        (
            "469",
            "469 TFLOP/s is 1.503 x the A100-SXM-80GB's dense bf16 peak of 312 TFLOP/s "
            "(catalog), more than 1.5 x: no such part: a sparse figure, another number format's "
            "peak or another unit?",
            "give the dense bf16 peak in TFLOP/s (or leave peak_tflops out: the catalog's 312), "
            "or name another accelerator",
        ),
    ],
)
def test_a_peak_above_1_5_x_the_named_accelerators_is_refused(peak, problem, fix) -> None:
    from hieropt.io.llm import read_llm

    with pytest.raises(InputError) as e:
        read_llm(MODEL, [f"peak_tflops={peak}"])
    # (given by --set: the override is named, not the model file)
    assert str(e.value) == f"--set: peak_tflops={peak}: {problem}; fix: {fix}"


def test_the_sparse_h100_figure_names_the_fp8_peak_too(tmp_path) -> None:
    from tests.cli.util import error_line, run

    text = (REPO / "models" / "llama3-70b.toml").read_text()
    anchor = 'accelerator = "H100-SXM"'
    assert anchor in text
    for peak, hint in (("1979", "looks like the sparse figure"), ("989400", "GFLOP/s")):
        p = tmp_path / f"h100-{peak}.toml"
        p.write_text(text.replace(anchor, f"{anchor}\npeak_tflops = {peak}"))
        r = run("workload", "plan", p)
        assert r.exit_code == 2
        line = error_line(r)
        assert line.startswith(f"error: {p}: params.npu.peak_tflops: {peak} TFLOP/s is ")
        assert hint in line
    assert line.endswith("fix: give TFLOP/s: 989400 GFLOP/s = 989.4 TFLOP/s (or leave "
                         "peak_tflops out: the catalog's 989.4)")
    r = run("workload", "plan", tmp_path / "h100-1979.toml")
    assert error_line(r).endswith(
        "1979 TFLOP/s is 2 x the H100-SXM's dense bf16 peak of 989.4 TFLOP/s (catalog), more "
        "than 1.5 x: looks like the sparse figure (structured sparsity: 2 x the dense peak), or "
        "the fp8 peak (1978.9 TFLOP/s); fix: give the dense peak: 1979 / 2 = 989.5 TFLOP/s (or "
        "leave peak_tflops out: the catalog's 989.4); for fp8 training set number_format = "
        '"fp8" instead')


def test_a_peak_below_half_the_named_accelerators_is_noted(tmp_path) -> None:
    import json

    from tests.cli.util import run

    inst = (REPO / "instances" / "llama3-405b-16k-cluster.toml").read_text()
    model = (REPO / "models" / "llama3-405b.toml").read_text()
    assert "[params.npu]\n" in model and '"../models/llama3-405b.toml"' in inst
    (tmp_path / "m.toml").write_text(model.replace("[params.npu]\n",
                                                   "[params.npu]\npeak_tflops = 400\n"))
    p = tmp_path / "i.toml"
    p.write_text(inst.replace('"../models/llama3-405b.toml"', '"m.toml"'))
    r = run("evaluate", p, "--bw", "450,50", "--json", tmp_path / "e.json")
    assert r.exit_code == 0, r.output
    note = (
        "peak_tflops = 400 is 0.4 x the H100-SXM's dense bf16 peak of 989.4 TFLOP/s (catalog), "
        "below 0.5 x: compute times, MFU, days and $ are computed at this peak; if the part is "
        "not derated, give its dense peak in TFLOP/s or leave peak_tflops out (the catalog's)"
    )
    assert f"note: {note}" in r.stdout.splitlines()
    assert note in json.loads((tmp_path / "e.json").read_text())["notes"]
    # and workload plan, of the model file alone
    r = run("workload", "plan", tmp_path / "m.toml")
    assert r.exit_code == 0, r.output
    assert f"note: {note}" in r.stdout.splitlines()
    # at the catalog's own peak: no note
    r = run("evaluate", REPO / "instances" / "llama3-405b-16k-cluster.toml", "--bw", "450,50")
    assert r.exit_code == 0 and "peak_tflops =" not in r.stdout


def test_the_cli_exits_2_with_the_fix() -> None:
    from tests.cli.util import error_line, run

    r = run("workload", "plan", MODEL, "--set", "peak_tflops=989e12")
    assert r.exit_code == 2
    assert error_line(r).endswith("fix: give TFLOP/s (1e12 FLOP/s): 9.89e+14 FLOP/s = 989 TFLOP/s")


@pytest.mark.parametrize("gbps", [25.0, 50.0, 100.0, 200.0])
def test_nic_speeds_in_gb_per_s_are_accepted(gbps: float) -> None:
    from hieropt.io.llm import read_llm

    assert read_llm(MODEL, [f"nic_gbps={gbps:g}"]).npu.nic_gbps == gbps


def test_a_model_files_nic_rating_in_gbit_is_refused_before_provision(tmp_path) -> None:
    """An 800 Gb/s rating written as ``[params.npu] nic_gbps`` once bought two 800G NICs per GPU
    (200 GB/s each) for the 100 GB/s host link; the file and the field are named."""
    from tests.cli.util import error_line, run

    text = MODEL.read_text(encoding="utf-8").replace("[params.npu]", "[params.npu]\nnic_gbps = 800")
    model = tmp_path / "m.toml"
    model.write_text(text, encoding="utf-8")
    r = run("workload", "plan", model)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {model}: params.npu: nic_gbps: 800 GB/s per direction is a 6.4 Tb/s NIC, and 800 "
        "is a NIC's rating in Gb/s; fix: write nic_gbps = 100 (GB/s per direction: the 800 Gb/s "
        "rating / 8)"
    )
