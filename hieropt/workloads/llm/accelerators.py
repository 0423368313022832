"""The accelerator catalog's schema (``catalogs/npus.toml``) and the compute model's calibration
parameters.

An :class:`Accelerator` states an NPU's public figures, each with its source and date (``sources``),
and the default :class:`Calibration` of the roofline compute model
(:mod:`hieropt.workloads.llm.roofline`). Units are in the field names: TFLOP/s = 1e12 FLOP/s (dense,
without structured sparsity), GiB = 2^30 bytes (HBM capacity as vendors count it: an "80 GB" A100
holds 80 GiB), GB/s = 1e9 bytes/s, W, US dollars. Scale-up bandwidth is per NPU and per direction
(NVLink 4's "900 GB/s" is 450 GB/s per direction).

:data:`CALIBRATION_FIELDS` is the one list of the calibration parameters (name, bounds, unit,
generic default, meaning): the NPU's model fields, the catalog's ``[calibration]`` table and any
fitting of measured runs read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, model_validator

from ...spec.base import check_number_fields
from ...units import gbit_rating_slip

NUMBER_FORMATS = ("bf16", "fp16", "fp8", "tf32")
"""Number formats the catalog gives dense peaks for (``NPU.number_format`` picks one)."""


@dataclass(frozen=True)
class CalibrationField:
    """One calibration parameter of the roofline compute model.

    Attributes:
        name: the field's name (in ``[params.npu]`` and in a catalog's ``[calibration]`` table).
        lower: smallest value allowed; ``lower_open``: the bound itself excluded (``> lower``).
        upper: largest value allowed (inclusive).
        default: a generic starting value (the A100's fitted value; each catalog entry has its own).
        unit: the unit of the value.
        meaning: what it sets, one line.
        from_runs: fitted on measured end-to-end runs by default (``hieropt calibrate``); False: a
            kernel-level figure (a GEMM size ramp, a launch overhead, one fused kernel's rate, the
            streaming kernels' HBM efficiency) that iteration times do not separate from the
            GEMMs' efficiency, kept at the catalog's value unless ``--fit`` names it. Fitting the
            HBM efficiency with the GEMMs' on two one-node runs drove it to its bound (1.0) and
            the 1T model 18 % too slow; kept at its kernel-level fit, the one fitted parameter
            predicts the same paper's multi-node runs within 6.3 % (docs/validation.md).
    """

    name: str
    lower: float
    lower_open: bool
    upper: float
    default: float
    unit: str
    meaning: str
    from_runs: bool = True


CALIBRATION_FIELDS: tuple[CalibrationField, ...] = (
    CalibrationField(
        "matrix_efficiency",
        0.01,
        False,
        1.0,
        0.7706,
        "fraction of peak",
        "the largest GEMMs' sustained fraction of the peak FLOP/s "
        "(the efficiency curve's asymptote)",
    ),
    CalibrationField(
        "gemm_half_gflop",
        0.0,
        False,
        1e4,
        1.0,
        "GFLOP",
        "GEMM size (FLOPs of one launch) at which the matrix efficiency is half its asymptote, "
        "for a 16-bit GEMM (an FP8 GEMM's is twice it: the same ramp time at twice the rate)",
        False,
    ),
    CalibrationField(
        "hbm_efficiency",
        0.01,
        False,
        1.0,
        0.65,
        "fraction of HBM bandwidth",
        "fraction of the HBM bandwidth a streaming (element-wise or memory-bound) kernel sustains",
        False,
    ),
    CalibrationField(
        "kernel_overhead_us",
        0.0,
        False,
        1e3,
        4.0,
        "us",
        "fixed time of every kernel launched (launch, synchronisation, tail), microseconds",
        False,
    ),
    CalibrationField(
        "attention_efficiency",
        0.01,
        False,
        1.0,
        0.6,
        "fraction of peak",
        "fraction of the peak FLOP/s a fused FlashAttention kernel sustains",
        False,
    ),
)
"""The calibration parameters of the roofline compute model, in a fixed order
(:class:`CalibrationField`)."""

CALIBRATION_NAMES = tuple(f.name for f in CALIBRATION_FIELDS)
"""The names of :data:`CALIBRATION_FIELDS`, in order."""


def calibration_field(name: str, default: Any = None) -> Any:
    """A pydantic ``Field`` for calibration parameter ``name`` with its bounds (default ``default``:
    None).

    Raises:
        KeyError: ``name`` is not in :data:`CALIBRATION_FIELDS`.
    """
    f = {c.name: c for c in CALIBRATION_FIELDS}[name]
    bound = {"gt": f.lower} if f.lower_open else {"ge": f.lower}
    return Field(
        default=default,
        le=f.upper,
        allow_inf_nan=False,
        description=f"{f.meaning} ({f.unit})",
        **bound,
    )


class StrictModel(BaseModel):
    """Frozen, unknown keys rejected, numbers never given as text or bools (the catalog's and the
    NPU's base)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _numbers_are_numbers(cls, data: Any) -> Any:
        return check_number_fields(cls, data)


BASE_FORMATS = ("bf16", "fp16")
"""The number formats an accelerator's base calibration (``[accelerator.calibration]``) holds in:
16-bit training, the format its values were measured or fitted in. Another format (or fp16) may
have its own (:class:`FormatCalibration`); without one the base is used there, extrapolated."""
FORMAT_CALIBRATIONS = ("fp16", "fp8", "tf32")
"""The number formats (of :data:`NUMBER_FORMATS`) a catalog entry may give a calibration of its
own for (``[accelerator.calibration.fp8]``): every one but bf16, the base's."""


class FormatCalibration(StrictModel):
    """The calibration fields of one accelerator that differ in one number format
    (``[accelerator.calibration.<format>]``, e.g. ``fp8``: the GEMMs' efficiency as a fraction of
    the FP8 peak), and what they were fitted on; a field left out (None) is the base
    calibration's.

    Attributes:
        fitted_on: what the values rest on, one line.
        runs_file: the runs file (relative to the repository's root) its fields were fitted on by
            ``hieropt calibrate``, in that format; None: not fitted on measured runs.
    """

    matrix_efficiency: float | None = calibration_field("matrix_efficiency")
    gemm_half_gflop: float | None = calibration_field("gemm_half_gflop")
    hbm_efficiency: float | None = calibration_field("hbm_efficiency")
    kernel_overhead_us: float | None = calibration_field("kernel_overhead_us")
    attention_efficiency: float | None = calibration_field("attention_efficiency")
    fitted_on: str = Field(min_length=1)
    runs_file: str | None = Field(default=None, min_length=1)


class Calibration(StrictModel):
    """Default calibration of one accelerator (:data:`CALIBRATION_FIELDS`) and what it was fitted
    on, in 16-bit training (:data:`BASE_FORMATS`), with an optional calibration per other number
    format (:data:`FORMAT_CALIBRATIONS`: ``fp16``, ``fp8``, ``tf32``, each a
    :class:`FormatCalibration`; :meth:`in_format` picks one).

    Attributes:
        fitted_on: what the values rest on (kernel-level measurements, or the measured runs and
            their source), one line.
        runs_file: the runs file its ``from_runs`` fields were fitted on by ``hieropt
            calibrate`` (path relative to the repository's root, e.g.
            ``validation/calibration/h100-one-node.csv``); None (default): kernel-level figures,
            not fitted on any measured run.

    Raises:
        ValueError: ``"bf16: ...; fix: ..."``: a ``[calibration.bf16]`` sub-table (the base
        calibration is bf16's).
    """

    matrix_efficiency: float = calibration_field("matrix_efficiency", ...)
    gemm_half_gflop: float = calibration_field("gemm_half_gflop", ...)
    hbm_efficiency: float = calibration_field("hbm_efficiency", ...)
    kernel_overhead_us: float = calibration_field("kernel_overhead_us", ...)
    attention_efficiency: float = calibration_field("attention_efficiency", ...)
    fitted_on: str = Field(min_length=1)
    runs_file: str | None = Field(default=None, min_length=1)
    fp16: FormatCalibration | None = None
    fp8: FormatCalibration | None = None
    tf32: FormatCalibration | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_bf16_table(cls, data: Any) -> Any:
        if isinstance(data, dict) and "bf16" in data:
            raise ValueError(
                "bf16: the base calibration is bf16's; fix: give its fields in "
                "[accelerator.calibration] itself (a sub-table is for fp16, fp8 or tf32)"
            )
        return data

    def fitted_format(self, number_format: str) -> str:
        """The number format the calibration :meth:`in_format` gives for ``number_format`` was
        fitted (or measured) in: ``number_format`` when it has its own sub-table or is 16-bit
        (:data:`BASE_FORMATS`: fp16 is timed as bf16), else bf16 (the base, extrapolated)."""
        if number_format in BASE_FORMATS or self.format_table(number_format) is not None:
            return number_format
        return "bf16"

    def format_table(self, number_format: str) -> FormatCalibration | None:
        """The sub-table ``[calibration.<number_format>]`` (None: none, or no such format)."""
        if number_format not in FORMAT_CALIBRATIONS:
            return None
        table: FormatCalibration | None = getattr(self, number_format)
        return table

    def in_format(self, number_format: str) -> Calibration:
        """The calibration for training in ``number_format``: the sub-table's fields over the
        base's, with the sub-table's ``fitted_on`` and ``runs_file`` (and no sub-tables); the
        base itself (``self``) when the format has no sub-table (or is no format hieropt
        times)."""
        table = self.format_table(number_format)
        if table is None:
            return self
        values = {f: getattr(self, f) if getattr(table, f) is None else getattr(table, f)
                  for f in CALIBRATION_NAMES}
        return Calibration(**values, fitted_on=table.fitted_on, runs_file=table.runs_file)


_FIGURES = ("peak_tflops", "hbm_gib", "hbm_gbps", "tdp_w", "scaleup_gbps", "scaleup_npus",
            "nic_gbps", "fp8_transposes")
# (field, largest plausible value, the unit it was likely given in, divisor to the field's unit,
# that unit)
_UNIT_HINTS = (
    ("hbm_gib", 1e5, "bytes", 2**30, "GiB"),
    ("hbm_gbps", 1e6, "bytes/s", 1e9, "GB/s"),
    ("tdp_w", 1e5, "mW", 1e3, "W"),
    ("scaleup_gbps", 1e6, "bytes/s", 1e9, "GB/s per direction"),
    ("nic_gbps", 1e6, "bytes/s", 1e9, "GB/s per direction"),
)


class Accelerator(StrictModel):
    """One accelerator of the catalog.

    Attributes:
        name: the catalog name a model file gives as ``[params.npu] accelerator``; ``aliases``:
            other names for it.
        vendor: its maker.
        peak_tflops: dense peak per number format (``bf16``, ``fp16``, ``fp8``, ``tf32``), TFLOP/s.
        hbm_gib: HBM capacity, GiB; ``hbm_gbps``: HBM bandwidth, GB/s.
        tdp_w: thermal design power (maximum board power), W.
        scaleup_gbps: scale-up (NVLink, Infinity Fabric) bandwidth per NPU and direction, GB/s.
        scaleup_npus: NPUs of the largest scale-up domain of its baseboard or rack (8 on an HGX
            baseboard, 72 in a GB200 NVL72 rack; optional).
        nic_gbps: the most scale-out bandwidth one NPU carries, GB/s per direction: its host link
            (PCIe x16) to the fastest NIC on it (optional); a dimension of a measured run beyond
            ``scaleup_npus`` runs through it (:func:`hieropt.io.run_units.check_nic_bandwidth`).
        price_usd: a price estimate per NPU, US dollars (optional; not a list price).
        fp8_transposes: whether Transformer Engine writes transposed FP8 copies for the backward
            GEMMs on this part (``NPU.fp8_transposes``: its FP8 GEMMs take only the TN layout);
            None (not given): the NPU's default, True.
        sources: for every figure given (the names above), its public source and date.
        calibration: the roofline's default calibration (:class:`Calibration`), per number format
            (:meth:`Calibration.in_format`).

    Raises:
        ValueError: ``"<field>: <problem>; fix: <fix>"``: a figure without its source, a value given
        in the wrong unit (HBM in bytes, bandwidth in bytes/s, a peak in FLOP/s), no bf16 peak.
    """

    name: str = Field(min_length=1)
    aliases: tuple[str, ...] = ()
    vendor: str = Field(min_length=1)
    peak_tflops: dict[Literal["bf16", "fp16", "fp8", "tf32"], StrictFloat]
    hbm_gib: float = Field(gt=0, allow_inf_nan=False)
    hbm_gbps: float = Field(gt=0, allow_inf_nan=False)
    tdp_w: float = Field(gt=0, allow_inf_nan=False)
    scaleup_gbps: float = Field(gt=0, allow_inf_nan=False)
    scaleup_npus: int | None = Field(default=None, ge=1)
    nic_gbps: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    price_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    fp8_transposes: StrictBool | None = None
    sources: dict[str, str]
    calibration: Calibration

    @model_validator(mode="after")
    def _checked(self) -> Accelerator:
        _check_peaks(self.peak_tflops)
        _check_units(self)
        _check_part_floors(self)
        _check_sources(self)
        return self

    def peak(self, number_format: str) -> float:
        """Dense peak in ``number_format``, TFLOP/s.

        Raises:
            ValueError: the catalog gives no peak in that format (names the formats it has).
        """
        has = ", ".join(sorted(self.peak_tflops))
        if number_format not in NUMBER_FORMATS:  # (no peak_tflops makes it one: NPU refuses it)
            low = number_format.lower()
            hint = (f' (write "{low}": lower case)' if low in NUMBER_FORMATS else
                    " (FP32 training on Tensor Cores is tf32, a matmul mode on FP32 tensors)"
                    if low in ("fp32", "float32", "f32") else "")
            raise ValueError(
                f"number_format: {number_format!r} is not a training number format hieropt "
                f"times ({', '.join(NUMBER_FORMATS)}); fix: use one of {has} for the "
                f"{self.name}{hint}"
            )
        if number_format not in self.peak_tflops:
            raise ValueError(
                f"number_format: {self.name} has no {number_format} peak in the catalog; "
                f"fix: use one of {has}, or give peak_tflops"
            )
        return self.peak_tflops[number_format]


PFLOPS_SLIP = (0.1, 1.0)
"""A peak above 0.1 and below 1 TFLOP/s is refused as PFLOP/s (:func:`peak_slip`): every dense peak
of the shipped catalog (``catalogs/npus.toml``), from the A100's 156 TFLOP/s in TF32 to 4,500 in
FP8, is above 100 TFLOP/s, so a figure below 1 is that peak in PFLOP/s (0.989 for the H100's 989
TFLOP/s BF16, 0.312 for the A100's 312) and would make every step 1,000 x too slow. A peak of 0.1
TFLOP/s and below is a toy NPU on purpose (the tests use 1e-4 to make compute dominate), and one
of 1 TFLOP/s and up a real or a toy one: both are accepted."""
MAX_PEAK_TFLOPS = 1e6
"""A peak above this many TFLOP/s (1 EFLOP/s per NPU, over 200 x the fastest dense FP8 peak) is
refused as FLOP/s (989e12 for 989 TFLOP/s: an MFU of 0.0 %) or GFLOP/s (:func:`peak_slip`)."""


def peak_slip(v: float, field: str = "peak_tflops") -> str | None:
    """``"field: problem; fix: fix"`` for a dense peak ``v`` (TFLOP/s) given in the wrong unit:
    PFLOP/s (inside :data:`PFLOPS_SLIP`: x 1000), FLOP/s (from 1e9 up: / 1e12) or GFLOP/s (above
    :data:`MAX_PEAK_TFLOPS` and below 1e9: / 1000); None for a plausible peak. One rule for the
    catalog's peaks and a model file's ``[params.npu] peak_tflops`` (and its ``--set``)."""
    lo, hi = PFLOPS_SLIP
    if lo < v < hi:
        return (
            f"{field}: {v:g} TFLOP/s is below any accelerator's dense peak (the catalog's are "
            f"156 to 4,500 TFLOP/s): looks like PFLOP/s; fix: give TFLOP/s (1e12 FLOP/s): "
            f"{v:g} PFLOP/s = {v * 1000:g} TFLOP/s (a toy NPU slower than 1 TFLOP/s on purpose: "
            f"{lo:g} or less)"
        )
    if v > MAX_PEAK_TFLOPS:
        unit, div = ("FLOP/s", 1e12) if v >= 1e9 else ("GFLOP/s", 1e3)
        if v / div > MAX_PEAK_TFLOPS:  # (out of range in either unit: no reading to offer)
            return (f"{field}: {v:g} TFLOP/s is above {MAX_PEAK_TFLOPS:g} TFLOP/s per NPU, and "
                    f"still above it read as {unit} ({v / div:g} TFLOP/s); fix: give the dense "
                    "peak in TFLOP/s (1e12 FLOP/s)")
        return (
            f"{field}: {v:g} TFLOP/s is above {MAX_PEAK_TFLOPS:g} TFLOP/s per NPU (over 200 x "
            f"the fastest dense peak): looks like {unit}; fix: give TFLOP/s (1e12 FLOP/s): {v:g} "
            f"{unit} = {v / div:g} TFLOP/s"
        )
    return None


CATALOG_PEAK_RANGE = (0.5, 1.5)
"""A model file's ``peak_tflops`` for an accelerator named from the catalog, as a multiple of the
catalog's dense peak in its number format: above 1.5 x is refused (the sparse figure, 2 x dense;
another format's peak; GFLOP/s), below 0.5 x gets a note (a derated part is possible, a slip
likely) (:func:`catalog_peak_problem`, :func:`catalog_peak_note`)."""


def catalog_peak_problem(v: float, accelerator: Accelerator,
                         number_format: str) -> tuple[str, str] | None:
    """(problem, fix) when a model file's ``peak_tflops`` ``v`` (TFLOP/s) for the catalog's
    ``accelerator`` is above :data:`CATALOG_PEAK_RANGE`'s 1.5 x its dense peak in
    ``number_format``: the sparse figure (2 x dense: the fix halves it), another number format's
    peak (the fix names that format), or GFLOP/s (about 1000 x: the fix divides by 1000). None
    when the value is within range, or the catalog has no peak in that format."""
    dense = accelerator.peak_tflops.get(number_format)
    if dense is None or v <= CATALOG_PEAK_RANGE[1] * dense:
        return None
    ratio = v / dense
    other = next((f for f, p in accelerator.peak_tflops.items()
                  if f != number_format and abs(v - p) <= 0.01 * p), None)
    keep = f"or leave peak_tflops out: the catalog's {dense:g}"
    if 1.8 <= ratio <= 2.2:
        hint = "looks like the sparse figure (structured sparsity: 2 x the dense peak)"
        fix = f"give the dense peak: {v:g} / 2 = {v / 2:g} TFLOP/s ({keep})"
    elif 800 <= ratio <= 1250:
        hint = "looks like GFLOP/s"
        fix = f"give TFLOP/s: {v:g} GFLOP/s = {v / 1000:g} TFLOP/s ({keep})"
    else:
        hint = "no such part: a sparse figure, another number format's peak or another unit?"
        fix = (f"give the dense {number_format} peak in TFLOP/s ({keep}), or name another "
               "accelerator")
    if other is not None:
        hint += f", or the {other} peak ({accelerator.peak_tflops[other]:g} TFLOP/s)"
        fix += f'; for {other} training set number_format = "{other}" instead'
    return (
        f"{v:g} TFLOP/s is {ratio:,.4g} x the {accelerator.name}'s dense {number_format} peak of "
        f"{dense:g} TFLOP/s (catalog), more than {CATALOG_PEAK_RANGE[1]:g} x: {hint}",
        fix,
    )


def catalog_peak_note(v: float, dense: float | None, accelerator: str,
                      number_format: str) -> str | None:
    """The note on a model file's ``peak_tflops`` ``v`` (TFLOP/s) below
    :data:`CATALOG_PEAK_RANGE`'s 0.5 x ``dense``, the catalog ``accelerator``'s (its name) dense
    peak in ``number_format`` (TFLOP/s; MFU, days and $ are computed at ``v``; a derated part is
    possible), else None (and when ``dense`` is None: the catalog has no peak in that format, or
    no accelerator is named). The one note on a low peak: :attr:`hieropt.workloads.llm.NPU.
    peak_note` gives it for an NPU, and every command's notes take it from there."""
    if dense is None or v >= CATALOG_PEAK_RANGE[0] * dense:
        return None
    return (
        f"peak_tflops = {v:g} is {v / dense:.2g} x the {accelerator}'s dense {number_format} "
        f"peak of {dense:g} TFLOP/s (catalog), below {CATALOG_PEAK_RANGE[0]:g} x: compute times, "
        "MFU, days and $ are computed at this peak; if the part is not derated, give its dense "
        "peak in TFLOP/s or leave peak_tflops out (the catalog's)"
    )


def unit_slip(name: str, v: float | None) -> str | None:
    """``"name: problem; fix: fix"`` for an NPU figure ``name`` (``hbm_gib``, ``hbm_gbps``,
    ``tdp_w``, ``scaleup_gbps``, ``nic_gbps``) of value ``v`` above its largest plausible value:
    HBM in bytes, a bandwidth in bytes/s, a power in mW; or a ``nic_gbps`` equal to a NIC's rating
    in Gb/s (400, 800, 1600, 3200: :func:`hieropt.units.gbit_rating_slip`, the parts catalog's
    and the spaces' rule); None otherwise (and for a name without such a rule, or no value). One
    rule for the catalog's entries and a model file's ``[params.npu]``."""
    if name == "nic_gbps" and v is not None and (
        slip := gbit_rating_slip(v, "nic_gbps", None)
    ):
        return f"{name}: {slip[0]}; fix: {slip[1]}"
    for field, most, unit, div, want in _UNIT_HINTS:
        if field == name and v is not None and v > most and v / div > most:
            # (out of range in either unit: no reading to offer)
            return f"{name}: {v:g} is above {most:g} {want}, and still above it read as {unit} " \
                   f"({v / div:g} {want}); fix: give {want}, at most {most:g}"
        if field == name and v is not None and v > most:
            return f"{name}: {v:g} looks like {unit}; fix: give {want} ({v:g} {unit} = " \
                   f"{v / div:g} {want})"
    return None


def _check_peaks(peaks: dict[str, float]) -> None:
    if "bf16" not in peaks:
        raise ValueError("peak_tflops.bf16: missing; fix: give the dense BF16 peak in TFLOP/s")
    for fmt, v in peaks.items():
        if not 0 < v:
            raise ValueError(
                f"peak_tflops.{fmt}: {v:g} is not a peak in TFLOP/s; fix: give a positive number "
                "of TFLOP/s (1e12 FLOP/s), dense"
            )
        slip = peak_slip(v, f"peak_tflops.{fmt}")
        if slip is not None:
            raise ValueError(slip)


def _check_units(a: Accelerator) -> None:
    for name, *_ in _UNIT_HINTS:
        slip = unit_slip(name, getattr(a, name))
        if slip is not None:
            raise ValueError(slip)


CATALOG_FLOORS = (("peak_tflops", 10.0, "TFLOP/s", "PFLOP/s"), ("hbm_gbps", 100.0, "GB/s", "TB/s"))
"""A catalog entry's dense peaks below 10 TFLOP/s and HBM bandwidth below 100 GB/s are refused as
PFLOP/s and TB/s (2.25 for a B200's 2,250 TFLOP/s BF16, 8.0 for its 8,000 GB/s): every accelerator
of a training cluster is above both many times over (the A100's 156 TFLOP/s in TF32, 1,555 GB/s).
A model file's own ``[params.npu]`` may give a toy NPU below them."""


def _check_part_floors(a: Accelerator) -> None:
    """Refuse a figure of ``a`` below its :data:`CATALOG_FLOORS` entry (the larger unit)."""
    figures = [(f"peak_tflops.{f}", v) for f, v in a.peak_tflops.items()]
    figures.append(("hbm_gbps", a.hbm_gbps))
    for field, v in figures:
        _, least, unit, big = next(c for c in CATALOG_FLOORS if field.startswith(c[0]))
        if 0 < v < least:
            raise ValueError(
                f"{field}: {v:g} {unit} is below {least:g} {unit}, less than any accelerator's: "
                f"looks like {big}; fix: give {unit}: {v:g} {big} = {v * 1000:g} {unit}")


def _check_sources(a: Accelerator) -> None:
    given = [f for f in _FIGURES if getattr(a, f) is not None] + (
        ["price_usd"] if a.price_usd else []
    )
    for f in given:
        if not a.sources.get(f, "").strip():
            raise ValueError(
                f"sources.{f}: missing; fix: give the public source and date of {f} "
                f'(e.g. {f} = "NVIDIA A100 datasheet, 2021")'
            )
    extra = sorted(set(a.sources) - set(_FIGURES) - {"price_usd"})
    if extra:
        raise ValueError(
            f"sources.{extra[0]}: no such figure; fix: use one of {', '.join(_FIGURES)}, price_usd"
        )


class AcceleratorCatalog(StrictModel):
    """The catalog file: ``[[accelerator]]`` entries with distinct names and aliases.

    Raises:
        ValueError: two entries share a name or alias.
    """

    accelerator: tuple[Accelerator, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _distinct(self) -> AcceleratorCatalog:
        seen: set[str] = set()
        for i, a in enumerate(self.accelerator):
            for n in (a.name, *a.aliases):
                if n.lower() in seen:
                    raise ValueError(
                        f"accelerator[{i}].name: {n!r} names two entries; "
                        "fix: give each a distinct "
                        "name and aliases"
                    )
                seen.add(n.lower())
        return self

    def find(self, name: str) -> Accelerator:
        """The entry named (or aliased) ``name``, case-insensitive.

        Raises:
            KeyError: no such entry (the message lists the names).
        """
        for a in self.accelerator:
            if name.lower() in (n.lower() for n in (a.name, *a.aliases)):
                return a
        raise KeyError(
            f"no accelerator {name!r}; the catalog has "
            f"{', '.join(a.name for a in self.accelerator)}"
        )


__all__ = [
    "Accelerator",
    "AcceleratorCatalog",
    "BASE_FORMATS",
    "Calibration",
    "CalibrationField",
    "FORMAT_CALIBRATIONS",
    "FormatCalibration",
    "CALIBRATION_FIELDS",
    "CALIBRATION_NAMES",
    "CATALOG_PEAK_RANGE",
    "MAX_PEAK_TFLOPS",
    "NUMBER_FORMATS",
    "PFLOPS_SLIP",
    "StrictModel",
    "calibration_field",
    "catalog_peak_note",
    "catalog_peak_problem",
    "peak_slip",
    "unit_slip",
]
