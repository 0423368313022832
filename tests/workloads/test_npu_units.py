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
    ],
)
def test_npu_figures_in_the_wrong_unit_are_refused(override: str, message: str) -> None:
    from hieropt.io.llm import read_llm

    with pytest.raises(InputError) as e:
        read_llm(MODEL, [override])
    assert str(e.value) == f"{MODEL}: {message}"


@pytest.mark.parametrize("peak", [1e-4, 0.1, 1.0, 156.0, 989.4, 4500.0, 1e6])
def test_plausible_and_toy_peaks_are_accepted(peak: float) -> None:
    from hieropt.io.llm import read_llm

    p = read_llm(MODEL, [f"peak_tflops={peak!r}"])
    assert p.npu.peak_tflops == peak


def test_the_cli_exits_2_with_the_fix() -> None:
    from tests.cli.util import error_line, run

    r = run("workload", "plan", MODEL, "--set", "peak_tflops=989e12")
    assert r.exit_code == 2
    assert error_line(r).endswith("fix: give TFLOP/s (1e12 FLOP/s): 9.89e+14 FLOP/s = 989 TFLOP/s")
