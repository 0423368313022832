"""The NPU of an LLM plan: its peak, memory and compute model (flat efficiency or the calibrated
roofline).

Kept apart from the model and plan (:mod:`.params`, which re-exports :class:`NPU`); the catalog it
may be filled from is :mod:`.accelerators`, the compute model :mod:`.roofline`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field, PrivateAttr, StrictBool, model_validator

from .accelerators import (
    CALIBRATION_NAMES,
    StrictModel,
    calibration_field,
    catalog_peak_note,
    peak_slip,
    unit_slip,
)

MAX_HBM_GIB = 2.0**20
"""Largest HBM per NPU accepted, GiB (1 PiB, thousands of times any part): a larger figure is a
capacity written in bytes (``hbm_gib = 80e9``), refused with the fix; between :data:`MIB_HBM_GIB`
and it, a capacity written in MiB (``hbm_gib = 81920`` for 80 GiB). A peak in PFLOP/s or FLOP/s
and an HBM bandwidth in bytes/s are refused by the catalog's rules
(:func:`hieropt.workloads.llm.accelerators.peak_slip`, ``unit_slip``)."""
MIB_HBM_GIB = 2.0**14
"""HBM per NPU above which a figure is a capacity in MiB, GiB (16 TiB: over 80 x the largest part of
``catalogs/npus.toml``, the MI300X's 192 GiB, so a what-if capacity stays below it)."""


SOURCED_FIGURES = ("scaleup_gbps", "scaleup_npus", "nic_gbps")
"""The NPU figures whose source the NIC cap and the design caveats name
(:func:`hieropt.workloads.llm.links.figure_source`): the scale-up bandwidth, the scale-up domain
and the NIC limit."""


class NPU(StrictModel):
    """The accelerator: compute throughput, memory and the compute model.

    Two compute models (:mod:`hieropt.workloads.llm.roofline`): with ``efficiency`` given, every
    layer's compute is its FLOPs over peak x efficiency (one number for all work, element-wise work
    free); without it, the roofline model times every kernel of a layer (GEMMs by a size-dependent
    matrix efficiency, element-wise work at the HBM bandwidth, a fixed overhead per kernel) from the
    calibration fields below, which a model file's ``accelerator = "<name>"`` fills from the catalog
    (``catalogs/npus.toml``; explicit fields win).

    Attributes:
        name: e.g. ``"A100-80GB"``.
        accelerator: the catalog entry the NPU's figures were taken from (None: all given inline).
        calibrated: a calibrated accelerator file (written by ``hieropt calibrate``) whose whole
            ``[params.npu]`` the NPU takes, fitted values and figures, fields given here winning
            except a fitted one, ``peak_tflops`` or ``number_format``; a model file gives its path
            relative to itself, not with ``accelerator``; once read, the file's absolute path
            (:func:`hieropt.io.npus.fill_calibrated`). None: none.
        number_format: the training number format whose dense peak ``peak_tflops`` is (``bf16``,
            ``fp16``, ``fp8``, ``tf32``): picks the catalog's peak.
        peak_format: the number format an inline ``peak_tflops`` states when it is not
            ``number_format``: filled in by the reader when an override (``--set
            number_format=...``) changes the format of a model file whose NPU gives its own peak
            (no ``accelerator``), which the peak then does not follow (:attr:`peak_note`); None:
            the peak is ``number_format``'s.
        peak_tflops: dense peak in the training number format, TFLOP/s (1e12 FLOP/s); above 0.1
            and below 1 (PFLOP/s) or above 1e6 (FLOP/s) is refused with the conversion.
        catalog_peak_tflops: the catalog's dense peak of ``accelerator`` in ``number_format``,
            TFLOP/s, filled in by the reader whenever ``accelerator`` is named and the table
            does not give it (a value written wins: the part's own dense peak, e.g. a catalog
            entry out of date); None: no catalog entry. A ``peak_tflops`` below half of it gets a
            note (:attr:`peak_note`), one above 1.5 x it is refused.
        efficiency: the flat model: fraction of peak all compute sustains, 0 < efficiency <= 1;
            None: roofline.
        hbm_gib: HBM capacity, GiB (2^30 bytes; an "80GB" A100 or H100 has 80 GiB).
        hbm_reserve_gib: HBM kept free for the framework, communication buffers and fragmentation,
            GiB.
        hbm_gbps: HBM bandwidth, GB/s (1e9 bytes/s): the optimizer step's time and the roofline's
            memory time; None (flat model only): the step takes 0 ns. Above 1e6 (bytes/s) is
            refused with the conversion.
        scaleup_gbps: scale-up (NVLink, Infinity Fabric) bandwidth per NPU and direction, GB/s
            (the catalog entry's, or given here; None: unknown): no dimension of a design can be
            faster (:func:`hieropt.workloads.llm.links.bandwidth_caveats`). Above 1e6 (bytes/s)
            is refused with the conversion.
        scaleup_npus: NPUs of the largest scale-up domain of the part's baseboard or rack (the
            catalog entry's; None: unknown): a design's dimension reaching beyond it faster than
            ``nic_gbps`` gets a caveat (:func:`hieropt.workloads.llm.links.bandwidth_caveats`).
        nic_gbps: the most scale-out bandwidth one NPU carries, GB/s per direction (the catalog
            entry's: its host link to the fastest NIC on it; None: unknown).
        fp8_transposes: under FP8 training (``number_format = "fp8"``), Transformer Engine writes
            a transposed FP8 copy of every tensor it casts for the backward GEMMs, because the
            part's FP8 GEMMs take only the TN layout (Hopper, Ada; TE's
            ``is_non_tn_fp8_gemm_supported``: compute capability 8.9 and 9.x); False on
            Blackwell (B200, GB200: compute capability 10.x), whose FP8 GEMMs take any layout
            (:func:`hieropt.workloads.llm.kernels.fp8_cast`). Default True; the catalog's entry
            gives it when it names the part.
        fp8_recipe: under FP8 training, how Transformer Engine scales each tensor it casts:
            ``"current"`` (default; per-tensor current scaling, ``Float8CurrentScaling``: amax,
            scale and cast launched one after the other) or ``"delayed"`` (``DelayedScaling``:
            the scale from earlier iterations' amax history, the amax taken inside the one cast
            kernel) (:func:`hieropt.workloads.llm.kernels.fp8_cast`). No effect outside FP8.
        matrix_efficiency, gemm_half_gflop, hbm_efficiency, kernel_overhead_us,
            attention_efficiency: the roofline's calibration
            (:data:`hieropt.workloads.llm.accelerators.CALIBRATION_FIELDS`), all needed without
            ``efficiency`` and none allowed with it.

    FlashAttention is a plan field (``plan.flash_attention``), read by the memory model and by the
    roofline's kernels alike.
    """

    name: str = Field(default="npu", min_length=1)
    accelerator: str | None = Field(default=None, min_length=1)
    calibrated: str | None = Field(default=None, min_length=1)
    number_format: Literal["bf16", "fp16", "fp8", "tf32"] = "bf16"
    peak_format: Literal["bf16", "fp16", "fp8", "tf32"] | None = None
    peak_tflops: float = Field(gt=0, allow_inf_nan=False)
    catalog_peak_tflops: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    efficiency: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)
    hbm_gib: float = Field(gt=0, allow_inf_nan=False)
    hbm_reserve_gib: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    hbm_gbps: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    scaleup_gbps: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    scaleup_npus: int | None = Field(default=None, ge=1)
    nic_gbps: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    fp8_transposes: StrictBool = True
    fp8_recipe: Literal["current", "delayed"] = "current"
    matrix_efficiency: float | None = calibration_field("matrix_efficiency")
    gemm_half_gflop: float | None = calibration_field("gemm_half_gflop")
    hbm_efficiency: float | None = calibration_field("hbm_efficiency")
    kernel_overhead_us: float | None = calibration_field("kernel_overhead_us")
    attention_efficiency: float | None = calibration_field("attention_efficiency")
    _catalog_file: str | None = PrivateAttr(default=None)
    _given_figures: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="after")
    def _reserve(self) -> NPU:
        if self.hbm_gib / 2**30 > MIB_HBM_GIB:  # (out of range read as bytes too: no reading)
            raise ValueError(
                f"hbm_gib: {self.hbm_gib:g} GiB of HBM per NPU is {self.hbm_gib / 2**20:,.0f} PiB, "
                f"and {self.hbm_gib / 2**30:.4g} GiB read as bytes, still above "
                f"{MIB_HBM_GIB / 2**10:g} TiB; fix: give GiB (2^30 bytes), e.g. 80 for an 80 GiB "
                "part"
            )
        if self.hbm_gib > MAX_HBM_GIB:  # (80e9 for an 80 GB part: bytes, not GiB)
            raise ValueError(
                f"hbm_gib: {self.hbm_gib:g} GiB of HBM per NPU is {self.hbm_gib / 2**20:,.0f} PiB, "
                "a capacity in bytes rather than GiB?; fix: give GiB (2^30 bytes), e.g. "
                f"{self.hbm_gib / 2**30:.4g} for {self.hbm_gib:g} bytes"
            )
        if self.hbm_gib > MIB_HBM_GIB:  # (81920 for an 80 GiB part: MiB, not GiB)
            raise ValueError(
                f"hbm_gib: {self.hbm_gib:g} GiB of HBM per NPU is {self.hbm_gib / 2**10:,.0f} TiB, "
                f"above {MIB_HBM_GIB / 2**10:g} TiB: a capacity in MiB rather than GiB?; fix: give "
                f"GiB (2^30 bytes), e.g. {self.hbm_gib / 2**10:.4g} for {self.hbm_gib:g} MiB"
            )
        for slip in (peak_slip(self.peak_tflops), unit_slip("hbm_gbps", self.hbm_gbps),
                     unit_slip("scaleup_gbps", self.scaleup_gbps),
                     unit_slip("nic_gbps", self.nic_gbps)):
            if slip is not None:  # (0.989 for an H100: PFLOP/s; 989e12: FLOP/s; 3.35e12: bytes/s)
                raise ValueError(slip)
        if self.hbm_reserve_gib >= self.hbm_gib:
            raise ValueError(
                f"hbm_reserve_gib: {self.hbm_reserve_gib:g} GiB leaves nothing of the "
                f"{self.hbm_gib:g} "
                f"GiB HBM; fix: use a reserve below {self.hbm_gib:g}"
            )
        _check_compute_model(self)
        return self

    @property
    def roofline(self) -> bool:
        """The roofline compute model (no flat ``efficiency``)."""
        return self.efficiency is None

    @property
    def peak_note(self) -> str | None:
        """The note on a ``peak_tflops`` stated for another number format (:attr:`peak_format`)
        or below half :attr:`catalog_peak_tflops` (MFU, days and $ are computed at it:
        :func:`hieropt.workloads.llm.accelerators.catalog_peak_note`); None without a catalog
        entry or within range. Part of the plan's caveats
        (:func:`hieropt.workloads.llm.flops.plan_caveats`), so every command gives it."""
        if self.peak_format is not None and self.peak_format != self.number_format:
            return (
                f"peak_tflops = {self.peak_tflops:g} is the model file's {self.peak_format} peak, "
                f"used for {self.number_format} training (an inline NPU's peak does not follow "
                "number_format): compute times, MFU, days and $ are computed at it; give the "
                f"{self.number_format} dense peak with --set peak_tflops=..., or name the "
                "accelerator from the catalog"
            )
        return catalog_peak_note(self.peak_tflops, self.catalog_peak_tflops,
                                 self.accelerator or self.name, self.number_format)

    @property
    def flops_per_ns(self) -> float:
        """Sustained FLOP per ns: peak x efficiency (roofline: peak x matrix_efficiency, the largest
        GEMMs' rate)."""
        eff = self.efficiency if self.efficiency is not None else self.matrix_efficiency
        return self.peak_tflops * 1e3 * eff

    @property
    def catalog_file(self) -> str | None:
        """The model file's own accelerator catalog (``npu_catalog``, its path as the reader
        found it) that ``accelerator`` was filled in from; None: the shipped
        ``catalogs/npus.toml``, or no catalog entry. Set by the reader
        (:func:`hieropt.io.npus.figure_sourced`), not a field of the file."""
        return self._catalog_file

    @property
    def given_figures(self) -> tuple[str, ...]:
        """Of :data:`SOURCED_FIGURES`, those the model file's ``[params.npu]`` (or ``--set``) gives
        in place of another figure of the catalog entry ``accelerator`` names (empty: every one
        is the catalog's, or no entry). Set by the reader
        (:func:`hieropt.io.npus.figure_sourced`), not a field of the file."""
        return self._given_figures

    def with_figure_sources(self, catalog_file: str | None,
                            given: tuple[str, ...]) -> NPU:
        """This NPU with where its :data:`SOURCED_FIGURES` come from (:attr:`catalog_file`,
        :attr:`given_figures`): what the words of the NIC cap and of the design caveats name."""
        out = self.model_copy()
        out._catalog_file, out._given_figures = catalog_file, tuple(given)
        return out

    @property
    def calibration(self) -> dict[str, float | None]:
        """The roofline's calibration values by name, in the order of ``CALIBRATION_FIELDS``."""
        return {n: getattr(self, n) for n in CALIBRATION_NAMES}

    def with_calibration(self, values: Mapping[str, float]) -> NPU:
        """This NPU with the calibration ``values`` (names of ``CALIBRATION_FIELDS``) replaced and
        the flat ``efficiency`` dropped: the roofline NPU a fit of measured runs tries.

        Raises:
            ValueError: an unknown name (pydantic's error), a value out of its bounds, or a roofline
                field still missing.
        """
        unknown = sorted(set(values) - set(CALIBRATION_NAMES))
        if unknown:
            raise ValueError(f"{unknown[0]}: not a calibration parameter; fix: use one of "
                             f"{', '.join(CALIBRATION_NAMES)}")
        out = NPU.model_validate({**self.model_dump(), "efficiency": None, **values})
        return out.with_figure_sources(self.catalog_file, self.given_figures)


def _check_compute_model(npu: NPU) -> None:
    given = [n for n in CALIBRATION_NAMES if getattr(npu, n) is not None]
    if npu.efficiency is not None:
        if given:
            raise ValueError(
                f"efficiency: given with the roofline's {given[0]} (two compute models); fix: drop "
                f"efficiency for the roofline model, or drop {', '.join(given)} for the flat one"
            )
        return
    missing = [n for n in CALIBRATION_NAMES if n not in given] + (
        ["hbm_gbps"] if npu.hbm_gbps is None else []
    )
    if missing:
        raise ValueError(
            f"{missing[0]}: missing (the roofline compute model needs {', '.join(missing)}); "
            "fix: name "
            'a catalog entry (accelerator = "A100-SXM-80GB"), give the missing fields, or give '
            "efficiency (one fraction of peak for all compute)"
        )


__all__ = ["NPU", "SOURCED_FIGURES"]
