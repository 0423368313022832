"""The roofline compute model: every kernel of a layer (:mod:`hieropt.workloads.llm.kernels`) timed
on the NPU.

A kernel of F FLOPs moving Y bytes, launched c times, takes (ns)

    t = max(F / (P x eta), Y / (W x eta_hbm)) + c x o

with P the dense peak (FLOP/ns = ``peak_tflops`` x 1e3; under FP8 training the 16-bit peak, P /
:data:`FP8_SPEEDUP`, for the kernels that stay in 16 bits: the attention core, the logits GEMM and
the MoE router's, :mod:`hieropt.workloads.llm.kernels`), W the HBM bandwidth (bytes/ns =
``hbm_gbps``), eta_hbm ``hbm_efficiency``, o ``kernel_overhead_us`` x 1e3 and eta the kernel's
compute efficiency:

- a GEMM of F FLOPs per launch: eta(F) = eta_max F / (F + F_half), saturating in the GEMM's size
  (``matrix_efficiency`` eta_max, ``gemm_half_gflop`` F_half x 1e9) -- the shape of Calculon's
  size-dependent efficiency tables (Isaev et al., SC'23) and of NVIDIA's GEMM characterisation
  (Matrix Multiplication Background User's Guide); its compute time F / (P eta) = (F + F_half) / (P
  eta_max) is the asymptotic rate plus a fixed ramp F_half / (P eta_max) per GEMM. The ramp is a
  time (the catalog scales ``gemm_half_gflop`` with the 16-bit peak from one NPU to the next: the
  same ramp F_half / P on each), so an FP8 GEMM, at FP8_SPEEDUP x the 16-bit rate, reaches half its
  asymptote at FP8_SPEEDUP x F_half: ``gemm_half_gflop`` is a 16-bit GEMM's, and under FP8 training
  the GEMMs not marked ``sixteen_bit`` take FP8_SPEEDUP x it (:func:`gemm_half_flops`; the part of
  the ramp that is wave quantisation, a count of output tiles, would not scale, the fixed per-tile
  prologue and epilogue would);
- the fused FlashAttention kernel: eta = ``attention_efficiency``;
- an element-wise kernel: F = 0 (its bytes at the HBM bandwidth).

A layer's compute per phase is the sum over its kernels (kernels of one NPU run one after another).
The optimizer step reads and writes its state, reads the gradient and writes the weight: (2 K +
gradient_bytes + weight_bytes) bytes per parameter at W x eta_hbm, plus one kernel's overhead per
layer. The flat model (``efficiency`` given) times a layer as FLOPs / (P x efficiency) instead
(:meth:`hieropt.workloads.llm.Step.compute_ns`).
"""

from __future__ import annotations

from ...cache import Same, current
from .kernels import FWD, IN, WT, Kernel, layer_kernels
from .npu import NPU
from .params import LLMParams

PHASE_INDEX = {FWD: 0, IN: 1, WT: 2}

FP8_SPEEDUP = 2.0
"""The dense FP8 peak over the dense 16-bit (BF16) peak: 2 on every accelerator of the catalog
(``catalogs/npus.toml``: A100 has no FP8; H100, H200, B200, GB200 and MI300X 2.0). Under FP8
training the kernels marked ``sixteen_bit`` (:class:`hieropt.workloads.llm.kernels.Kernel`: the
attention core, the logits GEMM, the MoE router's GEMM) run at the NPU's ``peak_tflops`` (the FP8
peak) / FP8_SPEEDUP, and the other GEMMs ramp to FP8_SPEEDUP x ``gemm_half_gflop``
(:func:`gemm_half_flops`)."""


def gemm_half_flops(npu: NPU, sixteen_bit: bool = False) -> float:
    """F_half of a GEMM on ``npu``, FLOPs: ``gemm_half_gflop`` x 1e9 for a 16-bit GEMM, and
    :data:`FP8_SPEEDUP` x that for an FP8 one (``number_format = "fp8"`` and not ``sixteen_bit``:
    the same ramp time at twice the rate; module docstring).

    Raises:
        ValueError: the NPU has no roofline calibration.
    """
    _need_roofline(npu)
    fp8 = npu.number_format == "fp8" and not sixteen_bit
    return npu.gemm_half_gflop * 1e9 * (FP8_SPEEDUP if fp8 else 1.0)


def matrix_efficiency(npu: NPU, flops: float, sixteen_bit: bool = False) -> float:
    """eta(F) = matrix_efficiency x F / (F + F_half) of a GEMM launch of ``flops`` FLOPs, F_half
    from :func:`gemm_half_flops` (``sixteen_bit``: a GEMM kept in 16 bits under FP8 training; module
    docstring); 0 for 0 FLOPs.

    Raises:
        ValueError: the NPU has no roofline calibration (it uses the flat efficiency).
    """
    _need_roofline(npu)
    if flops <= 0:
        return 0.0
    return npu.matrix_efficiency * flops / (flops + gemm_half_flops(npu, sixteen_bit))


def kernel_ns(npu: NPU, k: Kernel) -> float:
    """Time of kernel ``k`` on ``npu``, ns: the roofline max of compute and memory time plus its
    launch overheads.

    Raises:
        ValueError: the NPU has no roofline calibration.
    """
    _need_roofline(npu)
    peak = npu.peak_tflops * 1e3  # FLOP/ns
    if k.sixteen_bit and npu.number_format == "fp8":
        peak /= FP8_SPEEDUP  # (the 16-bit peak)
    memory = k.bytes / (npu.hbm_gbps * npu.hbm_efficiency)
    if k.kind == "gemm":
        eta = matrix_efficiency(npu, k.flops, k.sixteen_bit)
        compute = k.flops / (peak * eta) if k.flops > 0 else 0.0
    elif k.kind == "attention":
        compute = k.flops / (peak * npu.attention_efficiency)
    else:
        compute = 0.0
    return max(compute, memory) + k.launches * npu.kernel_overhead_us * 1e3


def kernels_ns(npu: NPU, kernels: list[Kernel]) -> tuple[float, float, float]:
    """(forward, input gradient, weight gradient) time of ``kernels``, ns: each phase's kernels one
    after another."""
    out = [0.0, 0.0, 0.0]
    for k in kernels:
        out[PHASE_INDEX[k.phase]] += kernel_ns(npu, k)
    return out[0], out[1], out[2]


def layer_ns(p: LLMParams, kind: str) -> tuple[float, float, float]:
    """(forward, input gradient with recompute, weight gradient) compute of one layer of ``kind`` on
    one NPU for one micro-batch, ns (roofline model;
    :func:`hieropt.workloads.llm.kernels.layer_kernels` lists the kernels).

    Raises:
        ValueError: the NPU has no roofline calibration.
        KeyError: an unknown kind.
    """
    return current().memo("layer_ns", (Same(p), kind),
                          lambda: kernels_ns(p.npu, layer_kernels(p, kind)))


def launches(p: LLMParams, kind: str) -> tuple[int, int, int]:
    """Kernels launched per phase by one layer of ``kind`` (each pays ``kernel_overhead_us``)."""
    out = [0, 0, 0]
    for k in layer_kernels(p, kind):
        out[PHASE_INDEX[k.phase]] += k.launches
    return out[0], out[1], out[2]


def optimizer_ns(p: LLMParams, params: float) -> float:
    """Optimizer-step time of ``params`` parameters on one NPU (already divided by any ZeRO
    sharding), ns per
    iteration: (2 K + gradient_bytes + weight_bytes) bytes each at the HBM bandwidth x
    hbm_efficiency, plus one kernel's overhead when ``params`` > 0 (module docstring).

    Raises:
        ValueError: the NPU has no roofline calibration.
    """
    npu, pr = p.npu, p.precision
    _need_roofline(npu)
    if params <= 0:
        return 0.0
    nbytes = params * (2 * pr.optimizer_bytes_per_param + p.gradient_bytes + p.weight_bytes)
    return nbytes / (npu.hbm_gbps * npu.hbm_efficiency) + npu.kernel_overhead_us * 1e3


def update_ns(p: LLMParams, dense: int, expert: int) -> float:
    """Optimizer-step time of a layer with ``dense`` parameters (replicated over dp x cp) and
    ``expert`` parameters (over edp = dp / ep) on one NPU, ns per iteration. Under ZeRO >= 1 each
    NPU updates its share, 1 / (dp x cp) of the dense and 1 / edp of the expert parameters: the
    groups that reduce the gradients (:func:`hieropt.workloads.llm.comms.dp_comms`) and that the
    memory model shards the optimizer state over (:mod:`hieropt.model.memory`), as Megatron-Core's
    distributed optimizer shards over the data-parallel group with context parallelism (context
    parallelism is modelled for dense models only, so edp needs no cp). With the roofline model
    :func:`optimizer_ns`; with the flat model (2 K + gradient_bytes + weight_bytes) bytes per
    parameter at the HBM bandwidth, 0 ns when the NPU gives none."""
    npu, pr, pl = p.npu, p.precision, p.plan
    if not npu.roofline and npu.hbm_gbps is None:
        return 0.0
    sharded = pl.zero_stage >= 1
    n = dense / (pl.dpc if sharded else 1) + expert / (pl.edp if sharded else 1)
    if npu.roofline:
        return optimizer_ns(p, n)
    return (
        n * (2 * pr.optimizer_bytes_per_param + p.gradient_bytes + p.weight_bytes) / npu.hbm_gbps
    )


def _need_roofline(npu: NPU) -> None:
    if not npu.roofline:
        raise ValueError(
            "npu.efficiency: the NPU uses the flat compute model; "
            "fix: drop efficiency and give the "
            "roofline calibration (or an accelerator from the catalog)"
        )


__all__ = [
    "gemm_half_flops",
    "matrix_efficiency",
    "kernel_ns",
    "kernels_ns",
    "layer_ns",
    "launches",
    "optimizer_ns",
    "update_ns",
    "PHASE_INDEX",
    "FP8_SPEEDUP",
]
