"""What a training run is made of, as its workload's generator knows it: tokens and FLOPs per
iteration and the NPUs' peak (the inputs of the buyer's figures, :mod:`hieropt.model.run`).

Units are in the field names: FLOPs are counted with a multiply-add as 2 (Narayanan et al. 2021,
arXiv 2104.04473, §5.1), FLOP/s per NPU at the training number format's dense peak.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from .base import Frozen


class Training(Frozen):
    """One iteration of an LLM training plan over the whole job.

    Attributes:
        model: the model's name.
        tokens_per_iteration: tokens consumed per iteration (global batch x sequence length).
        model_flops_per_iteration: FLOPs of one iteration over every NPU without recompute
            (Megatron's model FLOPs: forward, and backward = twice the forward; Narayanan et al.
            2021, §5.1), FLOP.
        hardware_flops_per_iteration: the same with the recompute's FLOPs added (>= the model
            FLOPs), FLOP.
        npus: NPUs in the job.
        peak_flops_per_npu: the NPU's dense peak in the training number format, FLOP/s.
        default_calibration: the calibration the notes on days, MFU and $ state
            (:func:`hieropt.io.npus.calibration_of`), set by the model-file reader: the
            accelerator whose compute was timed with the shipped catalog's default calibration
            (``catalogs/npus.toml``: kernel-level figures, or fitted on the measured runs its
            entry's ``runs_file`` names), or the absolute path of the calibrated accelerator file
            (written by ``hieropt calibrate``) its ``[params.npu] calibrated`` names; None for a
            calibration given inline in the file, or the flat efficiency.
        microbatch_group: the plan's interleaved micro-batch group N when it sets one (None: the
            default, the pipeline stages); a loaded instance's ``[step]`` takes it
            (:class:`hieropt.spec.StepSchedule`).
        caveats: what the validation against measured runs (docs/validation.md) says of the
            plan's features it does not cover or predicts worst, one sentence each (empty: none).
        npu: the NPU's name (its catalog entry's), for the caveats on a design's bandwidths.
        scaleup_gbps: the NPU's scale-up bandwidth per direction, GB/s (its catalog entry's, or
            the model file's; None: unknown): a design's bandwidth above it, or scale-out above
            two NICs per NPU, gets a caveat
            (:func:`hieropt.workloads.llm.links.bandwidth_caveats`).
        scaleup_npus: NPUs of the NPU's largest scale-up domain (its catalog entry's, or the
            model file's; None: unknown) and ``nic_gbps`` the most scale-out GB/s per direction
            one NPU carries: a design's dimension reaching beyond that domain faster than it gets
            a caveat.
        nic_gbps: see ``scaleup_npus``.
        scaleup_source: where ``scaleup_gbps``, ``scaleup_npus`` and ``nic_gbps`` come from
            (``catalog``, ``model file``, ``calibrated file NAME``;
            :func:`hieropt.workloads.llm.links.figure_source` words it).
        npu_catalog: with ``scaleup_source`` ``catalog``, the model file's own accelerator
            catalog the NPU's entry is in (its ``npu_catalog`` path); None: the shipped one.
        given_figures: with ``scaleup_source`` ``catalog``, which of ``scaleup_gbps``,
            ``scaleup_npus`` and ``nic_gbps`` the model file's ``[params.npu]`` gives in place of
            the catalog entry's (:attr:`hieropt.workloads.llm.NPU.given_figures`).
    """

    model: str
    tokens_per_iteration: float = Field(gt=0, allow_inf_nan=False)
    model_flops_per_iteration: float = Field(gt=0, allow_inf_nan=False)
    hardware_flops_per_iteration: float = Field(gt=0, allow_inf_nan=False)
    npus: int = Field(ge=1)
    peak_flops_per_npu: float = Field(gt=0, allow_inf_nan=False)
    default_calibration: str | None = None
    microbatch_group: int | None = Field(default=None, ge=1)
    caveats: tuple[str, ...] = ()
    npu: str = "npu"
    scaleup_gbps: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    scaleup_npus: int | None = Field(default=None, ge=1)
    nic_gbps: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    scaleup_source: str = "catalog"
    npu_catalog: str | None = None
    given_figures: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _ordered(self) -> Training:
        if self.hardware_flops_per_iteration < self.model_flops_per_iteration * (1 - 1e-12):
            raise ValueError(
                "hardware_flops_per_iteration: below the model FLOPs (recompute only adds "
                "FLOPs); fix: "
                "give hardware FLOPs >= model FLOPs"
            )
        return self

    @property
    def recomputes(self) -> bool:
        """Whether recompute adds FLOPs (hardware FLOPs above the model FLOPs)."""
        return self.hardware_flops_per_iteration > self.model_flops_per_iteration * (1 + 1e-12)


def tokens_problem(tokens: float | None, training: Training | None) -> str | None:
    """Why a run's token budget ``tokens`` cannot be trained by a workload of ``training`` facts:
    fewer tokens than one iteration consumes (a run is whole iterations; ``--tokens 1M`` on a plan
    of 4.19M tokens per iteration would print a run of no days and $1). The problem of an error
    message (``"1,000,000 tokens is fewer than one iteration of llama3-70b (4,194,304 tokens per
    iteration)"``), or None: no budget, no training facts, or at least one iteration."""
    if tokens is None or training is None or tokens >= training.tokens_per_iteration:
        return None
    return (
        f"{tokens:,.0f} tokens is fewer than one iteration of {training.model} "
        f"({training.tokens_per_iteration:,.0f} tokens per iteration)"
    )


__all__ = ["Training", "tokens_problem"]
