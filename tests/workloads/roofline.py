"""The roofline NPU of the compute-model tests (100 TFLOP/s, 1,000 GB/s, hand-chosen calibration),
in 16-bit and FP8, and the tiny LLM on it."""

from __future__ import annotations

from hieropt.workloads.llm import NPU, Architecture, LLMParams, Plan

from .tiny import ARCH, PLAN

# 100 TFLOP/s = 1e5 FLOP/ns; eta_max 0.5, F_half 1 GFLOP; 1000 GB/s x 0.5 = 500 bytes/ns; 2 us per
# kernel
CAL = dict(
    matrix_efficiency=0.5,
    gemm_half_gflop=1.0,
    hbm_efficiency=0.5,
    kernel_overhead_us=2.0,
    attention_efficiency=0.25,
)
"""The roofline NPU's calibration fields."""
ROOF = NPU(peak_tflops=100.0, hbm_gib=1.0, hbm_gbps=1000.0, **CAL)
"""The roofline NPU: 100 TFLOP/s, 1,000 GB/s of HBM, :data:`CAL`."""


def tiny(npu: NPU = ROOF, arch=None, **plan) -> LLMParams:
    """The tiny model of tests/workloads/tiny.py on the roofline NPU ``npu``, with architecture
    fields ``arch`` and plan fields ``plan`` replaced."""
    return LLMParams(
        model=Architecture(**{**ARCH, **(arch or {})}), plan=Plan(**{**PLAN, **plan}), npu=npu
    )


FP8_ROOF = NPU(peak_tflops=200.0, number_format="fp8", hbm_gib=1.0, hbm_gbps=1000.0, **CAL)
"""ROOF training in FP8: 200 TFLOP/s is its FP8 peak, so its 16-bit peak is 100 TFLOP/s."""
