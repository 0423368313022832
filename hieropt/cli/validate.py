"""``hieropt validate RUNS.csv ...`` and ``hieropt calibrate CAL.csv --out NPU.toml`` (registered in
:mod:`hieropt.cli`): measured training runs in (:mod:`hieropt.io.runs`), predictions, errors and
fitted accelerator calibrations out (:mod:`hieropt.studies.validate`). Exit codes: 0 done; 2 bad
input (one line ``error: ...`` naming the file, the line, the column and the fix), including a
runs file in the wrong unit and a fit that cannot be right
(:mod:`hieropt.studies.validate.checks`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import console, error_console, fail

RunsArg = Annotated[
    list[Path],
    typer.Argument(
        help="Runs files (CSV, one measured run per row: model, network, bw_gbps, plan fields as "
        "--set keys, measured_ms, optional group and source); see validation/*.csv.",
        show_default=False,
    ),
]
LossOpt = Annotated[
    str,
    typer.Option(
        "--loss",
        help="What the fit minimises: mape (mean |predicted - measured| / "
        "measured) or log (mean |ln(predicted / measured)|).",
    ),
]
FitOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fit",
        help="Calibration parameter to fit (repeatable or comma-separated): efficiency (flat "
        "compute model); matrix_efficiency (the default), hbm_efficiency, gemm_half_gflop, "
        "kernel_overhead_us, attention_efficiency (roofline). Fit more than one only on runs "
        "that separate them (several micro-batch sizes, models and recompute strategies).",
        show_default=False,
    ),
]
JsonOpt = Annotated[
    Path | None,
    typer.Option(
        "--json",
        metavar="FILE",
        help="Also write the result as JSON ('-': stdout, tables on stderr).",
    ),
]


def fit_names(fit: list[str] | None) -> tuple[str, ...] | None:
    """The calibration field names of ``--fit`` (repeatable, comma-separated), or None (the
    compute model's default fields)."""
    if not fit:
        return None
    return tuple(n.strip() for item in fit for n in item.split(",") if n.strip())


def check_fit_options(fit: list[str] | None, loss: str) -> tuple[str, ...] | None:
    """``--fit`` as names (:func:`fit_names`), refused before any input is read when a name is no
    calibration field of either compute model or ``--loss`` is unknown (which fields a run's
    accelerator takes is checked once the runs are read).

    Raises:
        InputError: naming ``--fit`` or ``--loss``, with the names allowed.
    """
    from ..errors import InputError
    from ..studies.validate.calibrate import CALIBRATION_FIELDS, LOSSES
    from ..workloads.llm.accelerators import CALIBRATION_FIELDS as ROOFLINE_FIELDS

    if loss not in LOSSES:
        raise InputError(
            "--loss", None, f"unknown loss {loss!r}", f"use one of {', '.join(LOSSES)}"
        )
    names = fit_names(fit)
    flat, roofline = ([f.name for f in fs] for fs in (CALIBRATION_FIELDS, ROOFLINE_FIELDS))
    unknown = [n for n in names or () if n not in flat + roofline]
    if unknown:
        raise InputError(
            "--fit", None, f"unknown calibration field {', '.join(unknown)}",
            f"name one or more of {', '.join(roofline)} (the roofline compute model of the "
            f"catalog's accelerators), or {', '.join(flat)} (the flat compute model)",
        )
    return names


def validate_command(
    runs: RunsArg,
    calibrate_on: Annotated[
        list[Path] | None,
        typer.Option(
            "--calibrate-on",
            help="Runs file to fit each accelerator's calibration parameters on first (out of "
            "sample for RUNS: a run of a plan in it, at any measured time, is marked and left out "
            "of the summary); repeatable.",
        ),
    ] = None,
    npu: Annotated[
        list[Path] | None,
        typer.Option(
            "--npu",
            help="Calibrated accelerator file written by hieropt calibrate: its [params.npu] "
            "(the fitted values and every other figure of the accelerator) replaces the model "
            "files' for the runs of that accelerator (a figure edited there is used, with a note "
            "on stderr), and the runs it was "
            "fitted on (its [calibration] files, relative to it; refused when gone or changed "
            "since the fit) are marked (fit), as with --calibrate-on; a row's own cells apply "
            "over the file's (with a note), but a row giving a fitted field, or a number_format "
            "or peak_tflops other than the file's, is refused; repeatable, one file per "
            "accelerator, each of an accelerator some run uses.",
        ),
    ] = None,
    loss: Annotated[
        str | None,
        typer.Option(
            "--loss",
            help="What the fit of --calibrate-on minimises: mape (mean |predicted - measured| / "
            "measured, the default) or log (mean |ln(predicted / measured)|).",
            show_default=False,
        ),
    ] = None,
    fit: FitOpt = None,
    json_out: JsonOpt = None,
) -> None:
    """Predict measured training runs and compare: every run's predicted and measured iteration time
    and error, the mean absolute error and the worst, per runs file, and per group of runs compared
    with each other the Spearman rank correlation and the measured rank of the predicted-fastest
    plan. Each run is an LLM plan on its network at its bandwidths, timed as hieropt evaluate times
    it (training loop step, every pipeline stage).

    A run whose plan is a calibration run's (whatever its measured time: a fit takes rows of one
    plan as one run) is marked (fit), or (fit, repeat measurement) at a time none of the calibration
    rows has, and left out of the summary. Without --calibrate-on or --npu, the calibration runs are
    those its accelerator's catalog default was fitted on (the catalog entry's runs_file).

    Each row shows its NPU count as it resolves (tp x cp x pp x dp; the JSON rows give the plan);
    notes say what rows resolve to: a model file's dp under a row's tp and pp, a plan the memory
    model does not fit (GB needed and available), one plan measured several times, an interleaved
    layout the standard flags cannot state. Runs predicted equally fast are a tie, not a rank."""
    from ..errors import HieroptError, InputError
    from .common import check_output_file, to_stdout, write_json

    err = error_console()
    out = err if to_stdout(json_out) else console(160)
    try:
        check_output_file(json_out, "--json")
        if calibrate_on and npu:
            raise InputError(
                "--npu",
                None,
                "given with --calibrate-on",
                "fit on runs (--calibrate-on) or apply a fitted accelerator file (--npu), not both",
            )
        for name, given in (("--fit", fit), ("--loss", loss)):
            if given and not calibrate_on:
                raise InputError(
                    name, None, "given without --calibrate-on", "give the runs to fit on"
                )
        from ..studies.validate import read_calibrated, validate

        fits = tuple(read_calibrated(str(p)) for p in npu or [])
        result = validate(
            runs, calibrate_on or [], fit_names(fit), loss=loss or "mape", calibrations=fits
        )
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    from ..report.validate import (
        files_table,
        fit_notes,
        groups_table,
        rows_table,
        summary_lines,
        validation_dict,
    )

    if (
        json_out is not None
    ):  # the file first: a stdout its reader closes (| head) cannot keep it from being written
        write_json(json_out, validation_dict(result))
    out.print(rows_table(result))
    if len(result.by_file) > 1:
        out.print(files_table(result))
    groups = groups_table(result)
    if groups is not None:
        out.print(groups)
    for line in summary_lines(result):
        out.print(line, highlight=False, soft_wrap=True)
    for c in result.calibrations:
        for line in fit_notes(c):
            err.print(line, highlight=False, soft_wrap=True)
    for line in result.notes:
        err.print(line, highlight=False, soft_wrap=True)


def calibrate_command(
    runs: RunsArg,
    out_file: Annotated[
        Path,
        typer.Option(
            "--out",
            metavar="FILE",
            help="The calibrated accelerator file to write (TOML: "
            "[params.npu] with the fitted values, [calibration] with the fit's "
            "quality and the number of runs it rests on).",
            show_default=False,
        ),
    ],
    loss: LossOpt = "mape",
    fit: FitOpt = None,
    json_out: JsonOpt = None,
) -> None:
    """Fit the accelerator's calibration parameters (flat model: [params.npu] efficiency; roofline:
    matrix_efficiency, or the fields --fit names) to measured runs of one accelerator, within their
    bounds, minimising the mean absolute percentage error (or the log error), and write the
    accelerator with its fitted values, the fit's mean and worst error, the number of runs it
    rests on and each runs file's SHA-256 (validate --npu refuses a runs file changed since).
    Each distinct run counts once (a row repeating a run, or a file given twice, does not add one;
    rows of one plan measured at several times weigh each but are one run). Refused (exit 2): more
    fitted fields than distinct runs, a run whose plan does not fit in memory, a
    row giving a fitted field, rows that differ in an accelerator setting the file holds once
    (number_format, hbm_reserve_gib, ...), a best fit more than 50 % off (with the unit it
    points at), a
    fitted field no run depends on or fields the runs do not separate, an
    --out or --json file that is one of the inputs; a fitted value at a bound
    of its range is a note on stderr and in the file, and two runs of the same plan measured more
    than 10 % apart a note on stderr and in the JSON.

    Plan with the file: name it in a model file, [params.npu] calibrated = "FILE" (relative to
    the model file, in place of accelerator = "NAME"); solve, evaluate, codesign, pareto,
    provision, report, workload plan and validate then time the accelerator with its fitted
    values, and the note on days, MFU and $ states the fit (its runs, mean and worst error, a
    value at its bound). docs/how-to/calibrate.md: calibrate on the cluster you own, plan the one
    you will buy."""
    from ..errors import HieroptError, InputError
    from .common import check_not_input, check_output_file, to_stdout, write_json
    from .outputs import answer_outputs, inputs_read, same_file

    err = error_console()
    out = err if to_stdout(json_out) else console(160)
    try:
        check_output_file(json_out, "--json")
        check_output_file(out_file, "--out")
        if str(out_file) == "-":
            raise InputError(
                "--out -", None, "the accelerator file cannot go to stdout", "give a file path"
            )
        if json_out is not None and same_file(out_file, str(json_out)):
            raise InputError(
                f"--out {out_file}", None, "is also the --json file (one would overwrite the "
                "other)", "give --json another path, e.g. calibration.json"
            )
        names = check_fit_options(fit, loss)  # (a bad option removes no earlier --out file)
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    answer_outputs(out_file)  # (a run without its fit leaves no earlier one there)
    try:
        from ..io.calibration import write_calibration
        from ..io.runs import read_runs
        from ..report.validate import calibration_file_parts
        from ..studies.validate import fit_npu

        measured = [r for p in runs for r in read_runs(p)]
        check_not_input(out_file, "--out")  # (a model or network file the runs name, too)
        inputs_read()
        fit = fit_npu(measured, names, loss=loss)
        write_calibration(out_file, *calibration_file_parts(fit))
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    from ..report.validate import calibration_dict, calibration_line, fit_notes

    if json_out is not None:
        write_json(json_out, calibration_dict(fit))
    out.print(calibration_line(fit), highlight=False, soft_wrap=True)
    for line in fit_notes(fit):
        err.print(line, highlight=False, soft_wrap=True)
    out.print(f"wrote {out_file}", highlight=False)
