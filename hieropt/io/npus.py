"""The accelerator catalog (``catalogs/npus.toml``) ->
:class:`~hieropt.workloads.llm.accelerators.AcceleratorCatalog`, and a model file's ``[params.npu]
accelerator = "<name>"`` filled in from it.

Format: ``[[accelerator]]`` entries (name, aliases, vendor, ``hbm_gib``, ``hbm_gbps``, ``tdp_w``,
``scaleup_gbps``, ``price_usd``, ``fp8_transposes``), each with ``[accelerator.peak_tflops]``
(dense TFLOP/s per number format), ``[accelerator.sources]`` (every figure's source and date) and
``[accelerator.calibration]`` (the roofline's defaults in 16-bit training,
:data:`~hieropt.workloads.llm.accelerators.CALIBRATION_FIELDS`, ``fitted_on`` and, for a default
fitted on measured runs, ``runs_file``), optionally with a sub-table per other number format
(``[accelerator.calibration.fp8]``: the fields that differ in it, its own ``fitted_on`` and
``runs_file``; :meth:`~hieropt.workloads.llm.accelerators.Calibration.in_format`). A plan takes
the calibration of its NPU's ``number_format``.

A model file may instead name a calibrated accelerator file (``[params.npu] calibrated =
"FILE"``, relative to the model file, written by ``hieropt calibrate``): its whole ``[params.npu]``
is taken (:func:`fill_calibrated`) and the notes on days, MFU and $ state its fit
(:func:`calibration_of`, :func:`hieropt.report.run.calibration_note`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..cache import current
from ..errors import InputError
from ..workloads.llm.accelerators import (
    CALIBRATION_NAMES,
    AcceleratorCatalog,
    catalog_peak_problem,
    peak_slip,
)
from .common import read_toml, referenced_file, validation_error

DEFAULT_CATALOG = Path(__file__).resolve().parents[2] / "catalogs" / "npus.toml"
"""The catalog shipped with hieropt (``catalogs/npus.toml`` of the repository)."""


def read_npu_catalog(path: str | Path = DEFAULT_CATALOG) -> AcceleratorCatalog:
    """Read and validate an accelerator catalog (module docstring); read once per path in the active
    cache (a sweep's plans name the same catalog; a later call reads the file again).

    Raises:
        InputError: a missing file, bad TOML, or a bad entry (its field and the fix, e.g. a figure
            without its source, HBM given in bytes).
    """
    p = Path(path).resolve()
    return current().memo("npu catalog", p, lambda: _read(p), 8)


def _read(path: Path) -> AcceleratorCatalog:
    data = read_toml(path, "accelerator catalog")
    try:
        return AcceleratorCatalog(**data)
    except ValidationError as e:
        raise validation_error(e, path) from e
    except TypeError as e:  # (a top-level key that is not a table name)
        raise InputError(
            path, None, f"not an accelerator catalog ({e})", "write [[accelerator]] entries"
        ) from e


def fill_npu(npu: Any, source: str | Path, catalog: str | Path | None = None) -> Any:
    """The ``[params.npu]`` table ``npu`` with its ``accelerator`` filled in from the catalog
    (``catalog``, default :data:`DEFAULT_CATALOG`): name, the peak of its ``number_format`` (default
    bf16), HBM capacity and bandwidth, scale-up bandwidth, ``fp8_transposes`` when the entry gives
    it, and (unless ``efficiency`` is given: the flat model) the
    calibration in that number format (the entry's ``[calibration.<format>]`` over its base:
    :meth:`~hieropt.workloads.llm.accelerators.Calibration.in_format`). Fields the table gives win,
    but a ``peak_tflops`` above 1.5 x the entry's dense peak in the number format is refused
    (:func:`hieropt.workloads.llm.accelerators.catalog_peak_problem`: the sparse figure, another
    format's peak, GFLOP/s; one below half of it gets a note: ``catalog_peak_tflops``, the entry's
    dense peak, is filled in for :attr:`hieropt.workloads.llm.NPU.peak_note`). A
    ``catalog_peak_tflops`` the table gives wins too, as every field it gives: it is then the part's
    dense peak in the number format, the peak when ``peak_tflops`` is not given and the figure both
    checks compare ``peak_tflops`` with.
    A table without ``accelerator`` (or not a table) is returned as it is.

    Raises:
        InputError: no such accelerator (the names the catalog has), no peak for the number
            format, a ``peak_tflops`` above 1.5 x the catalog's (``params.npu.peak_tflops``), or
            an ``hbm_gib`` that is the entry's capacity in GB (1e9 bytes; within 0.5 %).
    """
    if not isinstance(npu, dict) or not isinstance(npu.get("accelerator"), str):
        return npu
    path = Path(catalog) if catalog is not None else DEFAULT_CATALOG
    cat = read_npu_catalog(path)
    try:
        a = cat.find(npu["accelerator"])
    except KeyError as e:
        names = ", ".join(x.name for x in cat.accelerator)
        raise InputError(
            source,
            "params.npu.accelerator",
            f"{npu['accelerator']!r} is not in {path}",
            f"use one of {names}, or add it to the catalog",
        ) from e
    filled: dict[str, Any] = {"name": a.name, "hbm_gib": a.hbm_gib, "hbm_gbps": a.hbm_gbps,
                              "scaleup_gbps": a.scaleup_gbps}
    if a.fp8_transposes is not None:
        filled["fp8_transposes"] = a.fp8_transposes
    filled.update({f: getattr(a, f) for f in ("scaleup_npus", "nic_gbps") if getattr(a, f)})
    fmt = npu.get("number_format", "bf16")
    if _is_number(given := npu.get("catalog_peak_tflops")) and given > 0:
        # (the user's dense peak of the part: the reference of the checks, not the catalog's)
        a = a.model_copy(update={"peak_tflops": {**a.peak_tflops, str(fmt): float(given)}})
    if "peak_tflops" not in npu:
        try:
            filled["peak_tflops"] = a.peak(str(fmt))
        except ValueError as e:
            problem, fix = str(e).split(": ", 1)[1].split("; fix: ")
            raise InputError(source, "params.npu.number_format", problem, fix) from e
    elif (_is_number(v := npu["peak_tflops"]) and peak_slip(float(v)) is None
          and (bad := catalog_peak_problem(float(v), a, str(fmt))) is not None):
        # (a peak in PFLOP/s or FLOP/s: the NPU's own rule gives the conversion)
        raise InputError(source, "params.npu.peak_tflops", *bad)
    if (_is_number(hbm := npu.get("hbm_gib")) and a.hbm_gib is not None
            and (slip := _hbm_slip(float(hbm), a.hbm_gib)) is not None):
        raise InputError(
            source, "params.npu.hbm_gib",
            f"{hbm:g} GiB is the {a.name}'s {a.hbm_gib:g} GiB in {slip}, not GiB (another "
            "capacity is taken as a what-if; this one is the part's own in the wrong unit)",
            f"give GiB (2^30 bytes): hbm_gib = {a.hbm_gib:g}, or leave it out (the catalog's)")
    if (_is_number(bw := npu.get("hbm_gbps")) and a.hbm_gbps
            and 0.95 <= float(bw) * 1e3 / a.hbm_gbps <= 1.05):  # (3.35 for an H100's 3,350)
        raise InputError(
            source, "params.npu.hbm_gbps",
            f"{bw:g} GB/s is the {a.name}'s {a.hbm_gbps:g} GB/s of HBM in TB/s, not GB/s",
            f"give GB/s (1e9 bytes/s): hbm_gbps = {a.hbm_gbps:g}, or leave it out (the "
            "catalog's)")
    if "efficiency" not in npu:
        calibration = a.calibration.in_format(str(fmt))
        filled.update({f: getattr(calibration, f) for f in CALIBRATION_NAMES})
    return {"catalog_peak_tflops": a.peak_tflops.get(str(fmt)), **filled, **npu,
            "accelerator": a.name}


def figure_sourced(params: Any, catalog: str | Path | None = None) -> Any:
    """``params`` (an :class:`~hieropt.workloads.llm.LLMParams`, validated) whose NPU knows where
    its scale-up domain and NIC limit come from
    (:meth:`hieropt.workloads.llm.npu.NPU.with_figure_sources`): ``catalog``, the model file's own
    accelerator catalog (its ``npu_catalog``; None: the shipped :data:`DEFAULT_CATALOG`), and of
    :data:`~hieropt.workloads.llm.npu.SOURCED_FIGURES` those the model file (or ``--set``) gives
    in place of another figure of that catalog's entry (compared within a relative 1e-9: a figure
    equal to the entry's is the catalog's, so a written instance that repeats the entry's figures
    names the catalog as well). ``params`` itself for an NPU not named from a catalog (given
    inline, or a calibrated accelerator file: the file is the figures' source)."""
    import math

    from ..workloads.llm.npu import SOURCED_FIGURES

    npu = params.npu
    if npu.accelerator is None or npu.calibrated is not None:
        return params
    try:
        entry = read_npu_catalog(catalog if catalog is not None else DEFAULT_CATALOG).find(
            npu.accelerator)
    except KeyError:  # (filled in from it: not reached)
        return params
    given = tuple(f for f in SOURCED_FIGURES if getattr(npu, f) is not None and (
        getattr(entry, f) is None
        or not math.isclose(float(getattr(npu, f)), float(getattr(entry, f)), rel_tol=1e-9)))
    where = None if catalog is None else str(catalog)
    return params.model_copy(update={"npu": npu.with_figure_sources(where, given)})


HBM_SLIPS = ((2**30 / 1e9, "GB (1e9 bytes)"), (2**30 / 1e6, "MB (1e6 bytes)"),
             (2.0**10, "MiB (2^20 bytes)"))
"""(GiB in the unit, the unit) of the capacities :func:`_hbm_slip` recognises as a part's own HBM
written in another unit."""


def _hbm_slip(hbm: float, part_gib: float) -> str | None:
    """The unit of :data:`HBM_SLIPS` in which ``hbm`` (the ``hbm_gib`` given, GiB) is the catalog
    part's ``part_gib`` (within 0.5 %), else None. The one rule for a figure given for a catalog
    part: its own capacity in GB, MB or MiB typed as GiB (85.9 or 81920 for an 80 GiB H100) is a
    unit slip; any other figure (96, 60) is a what-if of another capacity, which the plan's memory
    line states (``96 GiB HBM less 4 GiB reserve``)."""
    if hbm == part_gib:
        return None
    return next((unit for factor, unit in HBM_SLIPS
                 if abs(hbm - part_gib * factor) <= 0.005 * hbm), None)


def _is_number(v: Any) -> bool:
    """A TOML number (not a bool): the type the NPU's own validation leaves to pydantic else."""
    return isinstance(v, int | float) and not isinstance(v, bool)


PINNED = ("number_format", "peak_tflops")
"""The fields besides the fitted ones a model file naming a calibrated accelerator file may not
change: the fitted efficiencies are fractions of that peak in that number format."""


def read_calibrated_npu(
    path: str | Path,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, float]]:
    """A calibrated accelerator file named by a model file (:mod:`hieropt.io.calibration`), read
    once per path in the active cache: its ``[params.npu]`` (every field as written), its
    ``[calibration]`` (runs files as written, neither looked for nor hashed: planning needs only
    the fitted values; :func:`hieropt.io.calibration.runs_file_changes` says what became of them)
    and its fitted values (field -> value).

    Raises:
        InputError: a missing or bad file, or a file of another kind (named for what it is:
            :func:`hieropt.io.kinds.check_kind`), as :func:`hieropt.io.calibration.read_calibration`
            refuses it.
    """
    from .calibration import read_calibration, read_npu_table

    p = Path(path).resolve()

    def read() -> tuple[dict[str, Any], dict[str, Any], dict[str, float]]:
        _, values, meta = read_calibration(p, runs_files=False, what="calibrated npu")
        return read_npu_table(p, "calibrated npu"), meta, values

    return current().memo("calibrated npu", p, read, 8)


def fill_calibrated(npu: Any, source: str | Path, own: Any = None) -> Any:
    """The ``[params.npu]`` table ``npu`` (overrides applied) with its ``calibrated`` (a calibrated
    accelerator file, relative to the folder of ``source``, the model file) filled in: the file's
    whole ``[params.npu]`` (fitted values and figures), then ``npu``'s own fields field by field,
    and ``calibrated`` as the file's absolute path (:attr:`hieropt.workloads.llm.NPU.calibrated`),
    ``catalog_peak_tflops`` the shipped catalog's for the accelerator the file names, unless the
    file or ``npu`` gives one (a figure given wins).
    A table without ``calibrated`` is returned as it is.

    ``own`` (the model file's ``[params.npu]`` as written, before ``--set`` and a runs row's cells)
    may not give a fitted field or a :data:`PINNED` one another value than the file's: the file
    would name a calibration and plan with another, and the note on days and $ would state a fit
    not used. An override (``--set``, a runs row's cell, a fit's trial value) applies, as over a
    catalog entry; the note is then left out (:func:`calibration_of`).

    Raises:
        InputError: ``accelerator`` given too (two sources of the accelerator's figures; the file
            names its own), a missing file, a file of another kind or a bad one
            (:func:`read_calibrated_npu`), or ``own`` changing a fitted or pinned field.
    """
    if not isinstance(npu, dict) or "calibrated" not in npu:
        return npu
    given = npu["calibrated"]
    path = referenced_file(Path(source).parent, given, str(source), "params.npu.calibrated",
                           "calibrated accelerator")
    table, meta, values = read_calibrated_npu(path)
    if "accelerator" in npu:
        raise InputError(
            source, "params.npu.accelerator",
            f"given with calibrated: {given} gives the whole accelerator "
            f"({table.get('accelerator') or table.get('name')}), fitted on measured runs",
            "remove accelerator to plan with the calibrated file, or remove calibrated to plan "
            "with the catalog's default",
        )
    own = own if isinstance(own, dict) else {}
    for key in (*values, *PINNED):
        if key in own and key in table and own[key] != table[key]:
            why = "fitted on its runs" if key in values else (
                "its fitted efficiencies are fractions of that peak")
            raise InputError(
                source, f"params.npu.{key}",
                f"{own[key]!r} where the calibrated file {given} gives {table[key]!r} ({why})",
                f"remove {key} to plan with the calibration, or calibrate again with it "
                "(hieropt calibrate)",
            )
    rest = {k: v for k, v in npu.items() if k != "calibrated"}
    out = {**table, **rest, "calibrated": str(path.resolve())}
    return {"catalog_peak_tflops": catalog_peak_of(out), **out}


def catalog_peak_of(npu: dict[str, Any]) -> float | None:
    """The shipped catalog's dense peak of the ``accelerator`` a calibrated file names, in the
    NPU's number format (None: no such entry or peak): the reference of the note on a peak below
    half of it (:attr:`hieropt.workloads.llm.NPU.peak_note`), as for a catalog entry; also what
    the reader fills in for an NPU table that names an accelerator and gives no
    ``catalog_peak_tflops`` (a written instance leaves that figure out when it is this one)."""
    name = npu.get("accelerator")
    if not isinstance(name, str):
        return None
    try:
        entry = read_npu_catalog(DEFAULT_CATALOG).find(name)
    except KeyError:
        return None
    return entry.peak_tflops.get(str(npu.get("number_format", "bf16")))


def calibration_of(npu: Any) -> str | None:
    """What the note on days, MFU and $ computed with ``npu`` states
    (:func:`hieropt.report.run.calibration_note`): the absolute path of the calibrated accelerator
    file it was filled from (:attr:`~hieropt.workloads.llm.NPU.calibrated`) when its fitted values
    are the file's; else the accelerator's name when it is timed with the shipped catalog's
    default calibration values (:func:`default_calibration_of`), followed by :data:`IN_FORMAT` and
    the number format when they are the entry's calibration of that format (``H100-SXM in fp8``:
    :func:`default_entry`); else None (a fitted value changed
    by the model file or ``--set``: a calibration given inline; the flat model).

    When the fitted values are used at another number format, peak or HBM bandwidth than the fit's
    (``--set number_format=fp8``, ``peak_tflops = 1200``, another runs row's cell), the name or
    path is followed by :data:`EXTRAPOLATED` and the words saying so (:func:`extrapolation`): the
    note then says the calibration is extrapolated and days and $ are unverified, never nothing.
    """
    path = getattr(npu, "calibrated", None)
    if path is None:
        name = default_calibration_of(npu, figures=False)
        if name is None:
            return None
        entry = read_npu_catalog().find(name)
        # (the defaults are of 16-bit runs, or of the format of their sub-table, at the entry's
        # peak in that format and its HBM bandwidth)
        now = str(getattr(npu, "number_format", "bf16"))
        fmt = entry.calibration.fitted_format(now)
        fitted = {"number_format": fmt, "peak_tflops": entry.peak_tflops.get(fmt),
                  "hbm_gbps": entry.hbm_gbps}
        verb = "fitted in" if entry.calibration.in_format(now).runs_file else "set for"
        if entry.calibration.format_table(now) is not None:
            name += IN_FORMAT + now
        moved = extrapolation(fitted, npu, verb)
        return name + EXTRAPOLATED + moved if moved else name
    table, _, values = read_calibrated_npu(path)
    # (the fitted values must be the file's; the fit holds at its peak, HBM bandwidth and number
    # format only: another is extrapolated; capacity, power and links do not time the compute)
    if not all(getattr(npu, k, None) == v for k, v in values.items()) or getattr(
            npu, "efficiency", None) != table.get("efficiency"):
        return None
    fitted = {k: table[k] for k in ("number_format", "peak_tflops", "hbm_gbps") if k in table}
    fitted.setdefault("number_format", "bf16")
    return path + EXTRAPOLATED + moved if (moved := extrapolation(fitted, npu)) else path


IN_FORMAT = " in "
"""The separator in :func:`calibration_of`'s answer between an accelerator's name and the number
format whose own catalog calibration (``[calibration.fp8]``) timed it: ``H100-SXM in fp8``
(:func:`default_entry` reads it back)."""


def default_entry(label: str) -> tuple[str, str | None, Any]:
    """(accelerator, number format or None, its catalog calibration) of a :func:`calibration_of`
    answer naming a shipped default (``H100-SXM``, ``H100-SXM in fp8``; the words after
    :data:`EXTRAPOLATED` left out): the format is given when the entry has its own calibration of
    it (:meth:`~hieropt.workloads.llm.accelerators.Calibration.in_format`); the calibration is
    None for a name the shipped catalog lacks."""
    label = label.split(EXTRAPOLATED, 1)[0]
    name, sep, fmt = label.rpartition(IN_FORMAT)
    if not sep:
        name, fmt = label, ""
    try:
        entry = read_npu_catalog().find(name)
    except KeyError:
        return name, fmt or None, None
    return name, fmt or None, entry.calibration.in_format(fmt or "bf16")


def default_name(label: str) -> str:
    """The words naming a :func:`calibration_of` answer's shipped default in a note:
    ``H100-SXM``, ``H100-SXM FP8`` (its calibration of that format)."""
    name, fmt, _ = default_entry(label)
    return name if fmt is None else f"{name} {fmt.upper()}"


EXTRAPOLATED = "\n"
"""The separator in :func:`calibration_of`'s answer between the calibration (a name or a path) and
the words of its extrapolation (:func:`extrapolation`)."""


def extrapolation(fitted: dict[str, Any], npu: Any, verb: str = "fitted in") -> str:
    """The words on a calibration used away from the figures it was fitted at, '' when ``npu``
    (:class:`hieropt.workloads.llm.NPU`) has them all: ``fitted`` gives ``number_format``,
    ``peak_tflops`` (TFLOP/s) and ``hbm_gbps`` (GB/s; either may be missing), e.g.
    ``"fitted in bf16 at 989.4 TFLOP/s and extrapolated to fp8 at 1,978.9 TFLOP/s"``, or
    ``"fitted in bf16 at 989.4 TFLOP/s with HBM at 3,350 GB/s and extrapolated to HBM at 4,000
    GB/s"`` (``verb``: ``set for`` for kernel-level figures)."""
    fmt, peak = fitted.get("number_format", "bf16"), fitted.get("peak_tflops")
    hbm = fitted.get("hbm_gbps")
    now_fmt, now_peak = getattr(npu, "number_format", "bf16"), getattr(npu, "peak_tflops", None)
    now_hbm = getattr(npu, "hbm_gbps", None)
    compute = now_fmt != fmt or (peak is not None and now_peak != peak)
    memory = hbm is not None and now_hbm is not None and now_hbm != hbm
    if not (compute or memory):
        return ""
    was = f"{verb} {fmt} at {_tflops(peak)}" + (f" with HBM at {hbm:,.6g} GB/s" * memory)
    now = [f"{now_fmt} at {_tflops(now_peak)}"] * compute + [f"HBM at {now_hbm:,.6g} GB/s"] * memory
    return f"{was} and extrapolated to {' with '.join(now)}"


def _tflops(v: Any) -> str:
    """``989.4 TFLOP/s`` ('an unknown peak' for None)."""
    return "an unknown peak" if v is None else f"{float(v):,.6g} TFLOP/s"


TIMED_FIGURES = ("peak_tflops", "number_format", "hbm_gbps", "efficiency", *CALIBRATION_NAMES)
"""The fields of an accelerator that time its compute: its fitted values, and the figures they
hold at (a calibration used at another is extrapolated: :func:`calibration_of`)."""


def default_calibration_of(npu: Any, figures: bool = True) -> str | None:
    """The accelerator's name when ``npu`` (:class:`hieropt.workloads.llm.NPU`) is timed by the
    roofline with exactly the shipped catalog's (:data:`DEFAULT_CATALOG`) default calibration of its
    ``accelerator``: kernel-level figures (the maximum achievable matmul rate, per-layer times), or
    where the entry names a ``runs_file`` the values fitted on those measured runs (what
    :func:`hieropt.report.run.calibration_note` says of it differs). None for an NPU given
    inline, the flat ``efficiency`` model, an accelerator the shipped catalog lacks, any
    calibration value that differs (given in the model file, or fitted by ``hieropt
    calibrate``, or taken from a calibrated file: :func:`calibration_of`), and (``figures``) a
    peak, HBM bandwidth or number format other than those of the runs the default was fitted on
    (16-bit runs for the base calibration, FP8 runs for its ``[calibration.fp8]``: the values of
    the NPU's number format are compared, :meth:`~hieropt.workloads.llm.accelerators.Calibration.
    in_format`; ``figures=False``: the values alone; :func:`calibration_of` says it is
    extrapolated)."""
    name = getattr(npu, "accelerator", None)
    if name is None or getattr(npu, "efficiency", None) is not None or getattr(
            npu, "calibrated", None) is not None:
        return None
    try:
        entry = read_npu_catalog().find(name)
    except KeyError:
        return None
    fmt = str(getattr(npu, "number_format", "bf16"))
    calibration = entry.calibration.in_format(fmt)
    same = all(getattr(npu, f) == getattr(calibration, f) for f in CALIBRATION_NAMES)
    # (the fit was made on runs in its format at the entry's peak and HBM bandwidth: another
    # format, peak or bandwidth is not the calibration validated)
    held = not figures or (
        entry.calibration.fitted_format(fmt) == fmt
        and npu.peak_tflops == entry.peak(fmt)
        and getattr(npu, "hbm_gbps", None) == entry.hbm_gbps)
    return entry.name if same and held else None


def default_runs_file(npu: Any) -> Path | None:
    """The runs file (a path) that the shipped catalog's default calibration of ``npu``'s
    accelerator in its number format was fitted on, when ``npu`` is timed with exactly that default
    (:func:`default_calibration_of`) and its entry names a ``runs_file`` (relative to the
    repository's root, the folder above ``catalogs/``); else None (kernel-level figures, another
    calibration, the flat model).

    Raises:
        InputError: the entry names a runs file that is missing (its in-sample runs could not be
            told).
    """
    name = default_calibration_of(npu)
    if name is None:
        return None
    fmt = str(getattr(npu, "number_format", "bf16"))
    base = read_npu_catalog().find(name).calibration
    runs = base.in_format(fmt).runs_file
    if runs is None:
        return None
    path = DEFAULT_CATALOG.parents[1] / runs
    if not path.is_file():
        table = f"calibration.{fmt}" if base.format_table(fmt) is not None else "calibration"
        raise InputError(
            DEFAULT_CATALOG,
            f"{name}: {table}.runs_file",
            f"{runs} is missing (the runs this default was fitted on)",
            "restore the file, or remove runs_file if the default is not fitted on runs",
        )
    return path


__all__ = [
    "TIMED_FIGURES",
    "EXTRAPOLATED",
    "IN_FORMAT",
    "default_entry",
    "default_name",
    "extrapolation",
    "read_npu_catalog",
    "fill_npu",
    "figure_sourced",
    "catalog_peak_of",
    "fill_calibrated",
    "read_calibrated_npu",
    "calibration_of",
    "PINNED",
    "default_calibration_of",
    "default_runs_file",
    "DEFAULT_CATALOG",
]
