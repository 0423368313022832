"""The accelerator catalog (``catalogs/npus.toml``) ->
:class:`~hieropt.workloads.llm.accelerators.AcceleratorCatalog`, and a model file's ``[params.npu]
accelerator = "<name>"`` filled in from it.

Format: ``[[accelerator]]`` entries (name, aliases, vendor, ``hbm_gib``, ``hbm_gbps``, ``tdp_w``,
``scaleup_gbps``, ``price_usd``), each with ``[accelerator.peak_tflops]`` (dense TFLOP/s per number
format), ``[accelerator.sources]`` (every figure's source and date) and
``[accelerator.calibration]`` (the roofline's defaults,
:data:`~hieropt.workloads.llm.accelerators.CALIBRATION_FIELDS`, ``fitted_on`` and, for a default
fitted on measured runs, ``runs_file``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..cache import current
from ..errors import InputError
from ..workloads.llm.accelerators import CALIBRATION_NAMES, AcceleratorCatalog
from .common import read_toml, validation_error

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
    bf16), HBM capacity and bandwidth, and (unless ``efficiency`` is given: the flat model) the
    calibration. Fields the table gives win. A table without ``accelerator`` (or not a table) is
    returned as it is.

    Raises:
        InputError: no such accelerator (the names the catalog has), or no peak for the number
            format.
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
    if "peak_tflops" not in npu:
        fmt = npu.get("number_format", "bf16")
        try:
            filled["peak_tflops"] = a.peak(str(fmt))
        except ValueError as e:
            problem, fix = str(e).split(": ", 1)[1].split("; fix: ")
            raise InputError(source, "params.npu.number_format", problem, fix) from e
    if "efficiency" not in npu:
        filled.update({f: getattr(a.calibration, f) for f in CALIBRATION_NAMES})
    return {**filled, **npu, "accelerator": a.name}


def default_calibration_of(npu: Any) -> str | None:
    """The accelerator's name when ``npu`` (:class:`hieropt.workloads.llm.NPU`) is timed by the
    roofline with exactly the shipped catalog's (:data:`DEFAULT_CATALOG`) default calibration of its
    ``accelerator``: kernel-level figures (the maximum achievable matmul rate, per-layer times), or
    where the entry names a ``runs_file`` the values fitted on those measured runs (what
    :func:`hieropt.report.run.calibration_note` says of it differs). None for an NPU given
    inline, the flat ``efficiency`` model, an accelerator the shipped catalog lacks, or any
    calibration value that differs (given in the model file, or fitted by ``hieropt
    calibrate``)."""
    name = getattr(npu, "accelerator", None)
    if name is None or getattr(npu, "efficiency", None) is not None:
        return None
    try:
        entry = read_npu_catalog().find(name)
    except KeyError:
        return None
    same = all(getattr(npu, f) == getattr(entry.calibration, f) for f in CALIBRATION_NAMES)
    return entry.name if same else None


def default_runs_file(npu: Any) -> Path | None:
    """The runs file (a path) that the shipped catalog's default calibration of ``npu``'s
    accelerator was fitted on, when ``npu`` is timed with exactly that default
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
    runs = read_npu_catalog().find(name).calibration.runs_file
    if runs is None:
        return None
    path = DEFAULT_CATALOG.parents[1] / runs
    if not path.is_file():
        raise InputError(
            DEFAULT_CATALOG,
            f"{name}: calibration.runs_file",
            f"{runs} is missing (the runs this default was fitted on)",
            "restore the file, or remove runs_file if the default is not fitted on runs",
        )
    return path


__all__ = [
    "read_npu_catalog",
    "fill_npu",
    "default_calibration_of",
    "default_runs_file",
    "DEFAULT_CATALOG",
]
