"""Workload generator for today's LLM training: a decoder-only transformer (GQA, SwiGLU, MoE)
trained with TP (+ sequence parallelism), PP (1F1B or interleaved), DP with ZeRO 0-3 and EP,
micro-batching, recompute.

- :mod:`.params`: the inputs (:class:`LLMParams` = :class:`Architecture` + :class:`Plan` +
  :class:`NPU` + :class:`Precision`) and the rules a plan must meet;
- :mod:`.npu`: the NPU; :mod:`.accelerators`: the accelerator catalog's schema and the compute
  model's calibration parameters (``CALIBRATION_FIELDS``);
- :mod:`.counts`: parameters and FLOPs of one layer on one NPU (Narayanan et al. 2021; Korthikanti
  et al. 2022);
- :mod:`.kernels` and :mod:`.roofline`: every kernel of a layer and its time on the NPU (the
  roofline compute model, docs/compute-model.md);
- :mod:`.step`: the iteration per pipeline stage, every collective with its group, phase and bytes;
- :mod:`.lower`: the stage as a hieropt :class:`~hieropt.spec.Workload` (layers x phases) with the
  group of each phase's collective, and the mapping of the groups onto network dimensions.

Memory per NPU is :func:`hieropt.model.memory.memory`.
"""

from .params import NPU, Architecture, LLMParams, MoE, Plan, Precision
from .step import Comm, Op, Stage, Step, build_step

__all__ = [
    "Architecture",
    "MoE",
    "Plan",
    "NPU",
    "Precision",
    "LLMParams",
    "Comm",
    "Op",
    "Stage",
    "Step",
    "build_step",
]
