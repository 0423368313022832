"""The buyer's figures of one design as text lines (:class:`hieropt.model.run.RunFigures`):
tokens/s, MFU, days, MW, MWh and $ per run, one unit per quantity. Returns values; never prints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..model.run import PUE_LEFT_OUT, RunFigures
from ..studies.run_band import (
    FITTED,
    SYSTEMATIC,
    SYSTEMATIC_RUNS,
    RunBand,
    band_of,
    default_runs_file,
    fmt_days_range,
    held_out_band,
    no_band_reason,
    run_dict,
)
from ..units import fmt_money


def fmt_days(days: float) -> str:
    """A run's wall time from days: ``5.3 days`` from 1 day up, ``7.5 hours`` below a day,
    ``12.0 minutes`` below an hour, ``40 seconds`` below a minute (a short run is not ``0.0
    days``)."""
    if days >= 1:
        return f"{days:,.1f} days"
    hours = days * 24
    if hours >= 1:
        return f"{hours:.1f} hours"
    if hours * 60 >= 1:
        return f"{hours * 60:.1f} minutes"
    return f"{hours * 3600:.3g} seconds"



def fmt_tokens(n: float) -> str:
    """A token count with a suffix: ``15T``, ``300B``, ``3.1M``."""
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:,.4g}{suffix}"
    return f"{n:,.0f}"


UNCALIBRATED = {"runs": 35, "least_pct": 6.0, "worst_pct": 69.3, "mean_pct": 21.5}
"""What ``hieropt validate validation/*.csv`` measures on the A100 runs with the A100's
kernel-level figures (``matrix_efficiency`` = 0.869, the maximum achievable matmul rate, in place
of its fitted default; docs/validation.md, "Kernel-level figures"): every iteration time is
predicted below the measured one, by least_pct % to worst_pct % (mean absolute error mean_pct %).
What the note on an accelerator whose default is still kernel-level says of such figures."""

UNRELIABLE_WORST = 0.10
"""A calibrated file whose fit's worst error on its own runs is above this fraction: the note
says its predictions are unreliable (the compute model does not match those runs)."""


def calibration_note(accelerator: str | None) -> str | None:
    """The caveat on days, MFU and $ per run computed with a calibration
    (:attr:`hieropt.spec.Training.default_calibration`, :func:`hieropt.io.npus.calibration_of`;
    None: no caveat): an accelerator's name for its shipped default, or the absolute path of a
    calibrated accelerator file a model file names (:func:`calibrated_note`).

    A default fitted on measured runs (a ``runs_file`` in its catalog entry): that file, and what
    the validation measured on other runs with it (:data:`FITTED`: the error's size and, where
    most runs err one way, its direction). A kernel-level default (no ``runs_file``, or a name
    the shipped catalog lacks): what the validation measured with the A100's kernel-level figures
    (:data:`UNCALIBRATED`): the maximum achievable matmul rate is above the 0.60-0.77 fitted on
    measured runs (docs/validation.md).

    A calibration used away from the number format, peak or HBM bandwidth it was fitted at (the
    words after :data:`hieropt.io.npus.EXTRAPOLATED`) is said to be extrapolated first, with days
    and $ per run unverified, then its note as fitted: ``"the H100-SXM compute calibration is
    fitted in bf16 at 989.4 TFLOP/s and extrapolated to fp8 at 1,978.9 TFLOP/s: days and $ per run
    are unverified (no measured run at these figures); the H100-SXM compute calibration is the
    catalog's default, ..."``."""
    from ..io.npus import EXTRAPOLATED, default_name

    if accelerator is None:
        return None
    if EXTRAPOLATED in accelerator:
        source, moved = accelerator.split(EXTRAPOLATED, 1)
        base = calibration_note(source) or ""
        name = _named(source)
        return (f"the {name} compute calibration is {moved}: days and $ per run are unverified "
                f"(no measured run at these figures); {base}")
    if Path(accelerator).is_absolute():
        return calibrated_note(accelerator)
    runs = default_runs_file(accelerator)
    name = default_name(accelerator)
    if runs is not None:
        f = FITTED.get(runs)
        measured = _measured(f) if f else ""
        basis = f.get("basis", "the measured runs") if f else "the measured runs"
        return (
            f"the {name} compute calibration is the catalog's default, fitted on {basis} in "
            f"{runs}{measured}; fit it with 'hieropt calibrate' on runs of your own cluster "
            "(docs/validation.md)"
        )
    u = UNCALIBRATED
    return (
        f"the {name} compute calibration is the catalog's kernel-level default, not fitted "
        f"on measured runs: on the {u['runs']} published A100 runs of docs/validation.md such "
        f"figures predict iteration times {u['least_pct']:g} % to {u['worst_pct']:.0f} % below "
        f"the measured ones (mean {u['mean_pct']:g} %), how far depending on the software stack, "
        "so days and $ per run are likely low and MFU high; fit it with 'hieropt calibrate' on "
        "measured runs"
    )


def _measured(f: dict[str, Any]) -> str:
    """``: on 33 published runs of other models and cluster sizes it predicts iteration times
    within 67.3 % (mean 15.4 %), mostly too fast (31 of 33 runs): ...`` for a :data:`FITTED` entry
    (one run: ``on 1 published run of another model and cluster size it predicts the iteration
    time within 4.9 %``)."""
    if f["runs"] == 1:
        return (": on 1 published run of another model and cluster size it predicts the "
                f"iteration time within {f['worst_pct']:g} %")
    return (f": on {f['runs']} published runs of other models and cluster sizes it predicts "
            f"iteration times within {f['worst_pct']:g} % (mean {f['mean_pct']:g} %)"
            + _direction(f))


def _named(source: str) -> str:
    """The accelerator a calibration (a catalog name, with its format when it is the entry's
    calibration of that format, or a calibrated file's path) is of."""
    from ..io.npus import default_name

    if not Path(source).is_absolute():
        return default_name(source)
    from ..io.npus import read_calibrated_npu

    table = read_calibrated_npu(source)[0]
    return str(table.get("accelerator") or table.get("name"))


def _direction(f: dict[str, Any]) -> str:
    """``, mostly too fast (31 of 33 runs): days and $ per run are likely low`` (``too fast on all
    6 runs`` when every one is) when at least :data:`SYSTEMATIC` of the runs of a :data:`FITTED`
    entry err one way (too slow: likely high), else '' (and for fewer than
    :data:`SYSTEMATIC_RUNS` runs)."""
    runs = f["runs"]
    if runs < SYSTEMATIC_RUNS:
        return ""
    for n, way, then in ((f["too_fast"], "too fast", "low"),
                         (runs - f["too_fast"], "too slow", "high")):
        if n >= SYSTEMATIC * runs:
            how = f"{way} on all {runs} runs" if n == runs else f"mostly {way} ({n} of {runs} runs)"
            return f", {how}: days and $ per run are likely {then}"
    return ""


def calibrated_note(path: str | Path) -> str:
    """The caveat on days, MFU and $ per run computed with the calibrated accelerator file at
    ``path`` (:func:`hieropt.io.npus.read_calibrated_npu`): the runs it was fitted on and the fit's
    mean and worst error (``"the H100-SXM compute calibration is fitted on 2 runs of h100.csv (fit
    MAPE 1.7 %, worst 4.2 %; calibrated file h100-mine.toml)"``); then, when a fitted value sits
    at a bound of its range or the worst error is above :data:`UNRELIABLE_WORST`, that its
    predictions are unreliable; a ``[params.npu]`` edited since the fit
    (:func:`hieropt.io.calibration.npu_edited`); and a runs file gone or changed since the fit
    (:func:`hieropt.io.calibration.runs_file_changes`).

    Raises:
        InputError: a missing or bad file (read before, when the model file was).
    """
    from ..io.calibration import BOUNDS, fit_quality, npu_edited, runs_file_changes
    from ..io.npus import read_calibrated_npu

    table, meta, values = read_calibrated_npu(path)
    name = table.get("accelerator") or table.get("name")
    files = ", ".join(Path(str(f)).name for f in meta.get("files", [])) or "runs not recorded"
    runs = meta.get("runs")
    count = f"{runs} run{'' if runs == 1 else 's'}" if isinstance(runs, int) else "the runs"
    mape, worst = meta.get("mape"), meta.get("worst")
    quality = fit_quality(runs, len(values), mape, worst)
    quality += "; " if quality else ""
    note = (
        f"the {name} compute calibration is fitted on {count} of {files} ({quality}calibrated "
        f"file {Path(path).name})"
    )
    warnings = []
    for field in meta.get("at_bound", []):
        v = values.get(field)
        lo, _, hi = BOUNDS.get(field, (v, False, v))
        edge = lo if v is not None and abs(v - lo) < abs(hi - v) else hi
        warnings.append(
            f"{field} at its bound {float(edge)!r}: the runs ask for more than the model allows"
        )
    if isinstance(worst, int | float) and worst > UNRELIABLE_WORST:
        warnings.append(
            f"its worst error on its own runs, {worst * 100:.1f} %, is above "
            f"{UNRELIABLE_WORST * 100:g} %: the model does not match those runs"
        )
    if warnings:
        note += "; " + "; ".join(warnings) + "; predictions are unreliable"
    if npu_edited(table, meta):
        note += (
            "; its [params.npu] was edited since the fit (it differs from what calibrate wrote): "
            "the fit's errors are of the values calibrate wrote, not of these"
        )
    changes = runs_file_changes(path, meta)
    if changes:
        note += (
            "; its runs file " + ", ".join(changes) + ": the fit is of the runs as they were "
            "(calibrate again to fit the file as it is)"
        )
    return note


def instance_calibration(instance: Any) -> str | None:
    """The accelerator whose default calibration timed ``instance``'s one LLM workload
    (:attr:`hieropt.spec.Training.default_calibration`), else None (several workloads: no run
    figures)."""
    if len(instance.jobs) != 1 or instance.workload.training is None:
        return None
    return instance.workload.training.default_calibration


def deadline_words(deadline_ns: float, target_ns: float, fastest_ns: float) -> str:
    """A missed deadline in the buyer's units: "90 d needs <= 8,362.8 ms per iteration; the fastest
    design takes 9,453.6 ms: 101.7 d".

    Args:
        deadline_ns: the run's wall-time deadline, ns.
        target_ns: the iteration-time target it sets (deadline / iterations per run), ns.
        fastest_ns: the fastest design's iteration time, ns.
    """
    days = deadline_ns / 86400e9
    return (
        f"{days:,.6g} d needs \u2264 {target_ns / 1e6:,.1f} ms per iteration; the fastest design "
        f"takes {fastest_ns / 1e6:,.1f} ms: {days * fastest_ns / target_ns:,.1f} d"
    )


def run_lines(fig: RunFigures | None, calibration: str | None = None) -> list[str]:
    """Lines of the buyer's figures: throughput and MFU, the run (days, MW, MWh, $), the cluster's
    cost, what is unknown, and (``calibration``: the accelerator timed with its shipped default
    calibration) the :func:`calibration_note` when MFU or days are shown. Empty for None."""
    if fig is None:
        return []
    lines = []
    if fig.mfu is not None:
        hfu = f"; HFU {fig.hfu:.1%} with recompute" if fig.hfu is not None else ""
        lines.append(
            f"training: {fig.tokens_per_iteration:,.0f} tokens per iteration, "
            f"{fig.tokens_per_s:,.0f} "
            f"tokens/s; MFU {fig.mfu:.1%} ({fig.model_flops_per_iteration:.4g} model FLOPs per "
            f"iteration){hfu}"
        )
    run = []
    if fig.time_to_train_days is not None:
        run.append(fmt_days(fig.time_to_train_days))
    if fig.energy_mwh is not None:
        run.append(f"{fig.energy_mwh:,.0f} MWh")
    if fig.run_cost_usd is not None:
        run.append(f"{fmt_money(fig.run_cost_usd)} per run")
    if run:
        band = run_band(fig, calibration) or no_band_reason(fig, calibration)
        lines.append(f"run of {fmt_tokens(fig.tokens)} tokens: " + ", ".join(run)
                     + (f"; {band}" if band else ""))
    cluster = []
    if fig.power_mw is not None:
        pue = "IT power, no PUE" if PUE_LEFT_OUT in fig.left_out else "with PUE"
        cluster.append(f"{fig.power_mw:,.2f} MW ({pue})")
    if fig.capex_usd is not None:
        cluster.append(
            f"capex {fmt_money(fig.capex_usd)} (network {fmt_money(fig.network_capex_usd)})"
        )
    if fig.cost_per_hour_usd is not None:
        cluster.append(f"{fmt_money(fig.cost_per_hour_usd)} per hour")
    if cluster:
        lines.append("cluster: " + ", ".join(cluster))
    if fig.left_out:
        lines.append("left out: " + "; ".join(fig.left_out))
    lines += [f"unknown {u}" for u in fig.unknown]
    lines += [f"note: {n}" for n in run_notes(fig, calibration)]
    return lines


def run_band(fig: RunFigures, calibration: str | None) -> str | None:
    """The text of :func:`band_of` (None where it is None): what the run line adds."""
    band = band_of(fig, calibration)
    return None if band is None else band.text()


def run_notes(fig: RunFigures | None, calibration: str | None) -> list[str]:
    """The plan's caveats (:attr:`~hieropt.model.run.RunFigures.caveats`: features the validation
    does not cover or predicts worst) and the :func:`calibration_note` of ``calibration`` (the
    accelerator timed with its shipped default calibration, or None) when ``fig`` shows MFU or
    days to train. For a JSON's ``notes``."""
    if fig is None:
        return []
    note = calibration_note(calibration)
    shown = fig.mfu is not None or fig.time_to_train_days is not None
    return list(fig.caveats) + ([note] if note is not None and shown else [])


def front_notes(instance: Any, front: Any) -> list[str]:
    """The :func:`run_notes` of a Pareto front's points (each point's run figures, as the front's
    table shows them), each note once in order: the plan's caveats (ZeRO-3, experts), the caveats
    on the bandwidths its NPU cannot have at the front's largest bandwidth per dimension (each
    point's own are in its JSON ``run.caveats``; one note for the front, not one per point), and,
    when the table shows days (a token budget; it shows no MFU), the default-calibration note.
    For ``pareto``'s printed notes and its JSON's ``notes``."""
    from ..model.run import run_figures

    runs = [run_figures(instance, p.iteration_time_ns, p.network_cost_usd)
            for p in front.points]
    days = any(r.time_to_train_days is not None for r in runs)
    calibration = instance_calibration(instance) if days else None
    notes = list(dict.fromkeys(n for r in runs for n in run_notes(r, None)))
    if front.points:
        p = front.points[0]
        top = [max(float(q.bw[d]) for q in front.points) for d in range(len(p.bw))]
        plan = set(runs[0].caveats)
        notes += [
            f"the front's designs reach {c}" for c in run_figures(
                instance, p.iteration_time_ns, p.network_cost_usd, bw_gbps=top).caveats
            if c not in plan
        ]
    # (the calibration's note once: it reads the accelerator catalog)
    note = calibration_note(calibration) if any(
        r.mfu is not None or r.time_to_train_days is not None for r in runs) else None
    shown = [n for r in runs for n in r.caveats] + ([note] if note is not None else [])
    return list(dict.fromkeys([*notes, *(n for n in shown if n not in notes)]))


def codesign_run(result: Any, tokens: float | None = None) -> RunFigures | None:
    """The buyer's figures of a co-design search's best candidate
    (:meth:`hieropt.studies.codesign.search.Codesign.run`: its plan's tokens and FLOPs, its
    iteration time and network cost, ``tokens`` (the run's token budget; None: the space's), the
    space's ``cluster`` if it has one). None without a best candidate."""
    return result.run(tokens)


def codesign_calibration(result: Any) -> str | None:
    """The accelerator whose shipped default calibration timed a co-design search's best candidate
    or the calibrated accelerator file (:func:`hieropt.io.npus.calibration_of` of its plan's NPU),
    else None (no best, or another calibration)."""
    return None if result.best is None else row_calibration(result.space, result.best.to_dict())


def row_calibration(space: Any, row: dict[str, Any]) -> str | None:
    """The accelerator whose shipped default calibration timed a co-design ``row`` of ``space``,
    or its calibrated accelerator file, else None
    (:func:`hieropt.studies.codesign.figures.row_calibration`, loaded on first use)."""
    from ..studies.codesign.figures import row_calibration as of_row

    return of_row(space, row)


__all__ = ["run_lines", "run_dict", "band_of", "RunBand", "run_band", "held_out_band",
           "no_band_reason", "fmt_days_range",
           "calibration_note", "calibrated_note", "UNRELIABLE_WORST", "SYSTEMATIC", "fmt_days",
           "run_notes", "front_notes", "instance_calibration", "codesign_calibration",
           "row_calibration", "fmt_money", "fmt_tokens", "codesign_run"]
