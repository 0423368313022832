"""Workload entries of instance and space files: a workload model file (TOML: a generator and its
``[params]``), an inline generator table, or an ASTRA-sim 1.0 text file ->
:class:`hieropt.spec.Workload`.

The generators, the spec models and the ASTRA-sim reader (numpy) are imported when a workload is
read, so an instance file whose earlier fields are bad is reported without loading them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .common import (
    read_toml,
    referenced_file,
    short_repr,
    unknown_key_error,
    validation_error,
)

if TYPE_CHECKING:
    from ..spec import Workload

GENERATOR_NAMES = ("transformer", "dlrm", "cnn", "llm")
"""The generators a model file can name (the keys of :data:`GENERATORS`)."""


def generators() -> dict[str, tuple[Any, Any]]:
    """Workload generators usable from a model file: name -> (parameter model, generate function),
    in the order of :data:`GENERATOR_NAMES` (imported on first use; also available as
    ``GENERATORS``)."""
    from ..workloads import cnn, dlrm, transformer
    from ..workloads.llm.lower import generate as llm_generate
    from ..workloads.llm.params import LLMParams

    return {"transformer": (transformer.TransformerParams, transformer.generate),
            "dlrm": (dlrm.DLRMParams, dlrm.generate),
            "cnn": (cnn.CNNParams, cnn.generate),
            "llm": (LLMParams, llm_generate)}


def __getattr__(name: str) -> Any:
    """``GENERATORS`` (see :func:`generators`), built on first use."""
    if name == "GENERATORS":
        value = globals()["GENERATORS"] = generators()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def read_model(path: str | Path) -> Workload:
    """Generate a workload from a model file (TOML: ``generator = "transformer"`` and a ``[params]``
    table).

    Raises:
        InputError: missing file, unknown generator, invalid parameters.
    """
    path = Path(path)
    data = read_toml(path, "workload model")
    return _generate(data, path)


def _generate(data: dict[str, Any], source: Path | str) -> Workload:
    gen = data.get("generator")
    if not isinstance(gen, str) or gen not in GENERATOR_NAMES:
        raise InputError(source, "generator", f"unknown or missing generator {short_repr(gen)}",
                         f"use one of {', '.join(GENERATOR_NAMES)}")
    known = {"generator", "params", "description"} | ({"npu_catalog"} if gen == "llm" else set())
    extra = set(data) - known
    if extra:
        key = sorted(extra)[0]
        raise unknown_key_error(source, key, key, known,
                                otherwise="use generator, description and [params]")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise InputError(source, "params", f"expected a table, got {short_repr(params)}",
                         "write [params] with the generator's parameters")
    catalog = None
    if gen == "llm":  # (an accelerator named from the catalog)
        from .llm import npu_catalog_of, with_accelerator

        params = with_accelerator(data, params, source)
        catalog = npu_catalog_of(data, source)
    params_cls, generate = generators()[gen]
    return run_generator(params_cls, generate, params, source, catalog)


def run_generator(
    params_cls: Any, generate: Any, params: dict[str, Any], source: Path | str,
    npu_catalog: Path | None = None,
) -> Workload:
    """Validate ``params`` with the generator's parameter model and generate the workload (an LLM
    plan's training facts with the notes of :func:`_with_calibration_source`, its NPU knowing
    where its scale-up domain and NIC limit come from: ``npu_catalog``, the model file's own
    accelerator catalog, None: the shipped one; :func:`hieropt.io.npus.figure_sourced`).
    Parameters that are each valid but together give a workload hieropt cannot represent (a compute
    time that overflows to inf, e.g. ``efficiency = 1e-310``) are an InputError naming ``source``
    and ``params``, like any other bad value."""
    from pydantic import ValidationError

    try:
        p = params_cls(**params)
    except ValidationError as e:
        raise validation_error(e, source, "params") from e
    if gen_is_llm(params_cls):  # (a plan that does not fit in HBM cannot run: refused, exit 3)
        from ..model.memory import require_fit
        from .npus import figure_sourced

        require_fit(p, str(source))
        p = figure_sourced(p, npu_catalog)
    try:
        return _with_calibration_source(generate(p), p)
    except (ValidationError, OverflowError, ValueError, ZeroDivisionError) as e:
        detail = (
            validation_error(e, source).one_line() if isinstance(e, ValidationError) else str(e)
        )
        raise InputError(
            source,
            "params",
            f"the parameters give a workload that cannot be evaluated "
            f"({detail.removeprefix(str(source) + ': ')[:200]})",
            "check the parameters for values far out of range (efficiency, peak, sizes)",
        ) from e


def _with_calibration_source(workload: Workload, params: Any) -> Workload:
    """``workload`` with its training's ``default_calibration`` set when the LLM plan's NPU uses the
    shipped catalog's default calibration or a calibrated accelerator file's
    (:func:`hieropt.io.npus.calibration_of`). (The note on a peak below half the catalog's is one
    of the plan's caveats already: :attr:`hieropt.workloads.llm.NPU.peak_note`.)"""
    from .npus import calibration_of

    tr = workload.training
    if tr is None or not hasattr(params, "npu"):
        return workload
    update: dict[str, Any] = {}
    if (name := calibration_of(params.npu)) is not None:
        update["default_calibration"] = name
    if not update:
        return workload
    return workload.model_copy(update={"training": tr.model_copy(update=update)})


def gen_is_llm(params_cls: Any) -> bool:
    """Whether ``params_cls`` is the LLM generator's (its plans have a memory per NPU)."""
    from ..workloads.llm.params import LLMParams

    return params_cls is LLMParams


def workload_entry(value: Any, base: Path, src: str) -> Workload:
    """A ``workload`` entry of file ``src``: a path (relative to ``base``), an inline generator
    table or a workload table. Raises InputError naming ``src`` and the field."""
    if isinstance(value, dict):
        if "generator" in value:
            return _generate(value, src)
        if set(value) == {"file"}:
            value = value["file"]
        elif set(value) == {"model"}:
            return read_model(
                referenced_file(base, value["model"], src, "workload.model", "workload model")
            )
        else:
            raise InputError(
                src,
                "workload",
                "expected a file name, {file = ...}, {model = ...} or an inline generator table",
                "see docs/reference/workloads.md",
            )
    if not isinstance(value, str):
        raise InputError(src, "workload", f"expected a file name, got {value!r}", "give a path")
    path = referenced_file(base, value, src, "workload", "workload")
    if path.suffix == ".toml":
        return read_model(path)
    from .astrasim1 import read_workload

    return read_workload(path)
