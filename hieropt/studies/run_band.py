"""The error band of a run's figures: what ``hieropt validate`` measured on the published runs held
out of each shipped default calibration's fit (:data:`FITTED`), and a run's days and $ at the
worst of those errors (:func:`band_of`), as the run line prints them and every ``--json`` writes
them (:func:`run_dict`). Below the report stage, so that a study's own dict (a co-design result's)
carries the band its command writes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.run import RunFigures
from ..units import fmt_money

FITTED = {
    "validation/calibration/a100-one-node.csv": {
        "runs": 33, "mean_pct": 15.4, "worst_pct": 67.3, "too_fast": 31,
        "band": {"runs": 27, "worst_pct": 27.9, "too_fast": 25}},
    "validation/calibration/h100-one-node.csv": {
        "runs": 9, "mean_pct": 2.8, "worst_pct": 6.3, "too_fast": 6},
    "validation/calibration/gb200-fp8-one-node.csv": {
        "runs": 2, "mean_pct": 5.6, "worst_pct": 9.4, "too_fast": 0,
        "basis": "1 measured FP8 run (Llama 3 8B on one 8-GPU slice of a GB200 NVL72 rack)"},
    "validation/calibration/b200-fp8-one-node.csv": {
        "runs": 1, "mean_pct": 0.7, "worst_pct": 0.7, "too_fast": 1,
        "basis": "1 measured FP8 run (Llama 3 8B on one DGX B200 node, 8 GPUs)"},
    "validation/calibration/h100-fp8-one-node.csv": {
        "runs": 9, "mean_pct": 12.1, "worst_pct": 18.3, "too_fast": 8,
        "basis": "1 measured FP8 run (Llama 3 8B on one DGX H100 node, 8 GPUs)"},
}
"""Per runs file a catalog default was fitted on (its entry's ``runs_file``): what ``hieropt
validate validation/*.csv`` measures with that default on the runs of its accelerator outside the
calibration runs (docs/validation.md): the A100-SXM-80GB's on 33 runs (BLOOM, MT-NLG, Narayanan
et al. 2021 and Korthikanti et al. 2022's multi-node runs, ZeRO-3 the worst), the H100-SXM's on 9
(NVIDIA's Llama 3.1 70B on 64-2,048 GPUs and 405B on 576-2,304, Meta's Llama 3 405B on 8,192 and
16,384; 6 too fast, 3 too slow: no tendency stated); the FP8 defaults (each
entry's ``[calibration.fp8]``, fitted on one 8-GPU run of Llama 3 8B) on NVIDIA's Megatron-Bridge
FP8 runs of Llama 3 70B and 405B (validation/megatron-bridge-2025.csv): the GB200's on 2 runs (64
and 256 GPUs), the B200's on 1 (128), the H100-SXM's on 9 (64 and 1,024, and NVIDIA's 2024
delayed-scaling runs of Llama 3.1 70B and 405B on 64-2,304 GPUs, validation/dgxc-h100-2024.csv;
8 too fast): mean absolute error
mean_pct %, worst worst_pct %, and too_fast of the runs predicted faster than measured (a negative
error); basis (when given): the runs it was fitted on, in words (else "the measured runs");
band (when given): the same figures on the held-out runs without ZeRO stage 3 (whose plans have
a caveat of their own), for :func:`hieropt.report.run.run_band` (else the entry's own)."""
SYSTEMATIC = 0.8
"""At least this fraction of a :data:`FITTED` entry's runs erring one way: the note says which way
(``mostly too fast``: days and $ per run likely low), from :data:`SYSTEMATIC_RUNS` runs up."""
SYSTEMATIC_RUNS = 3
"""The fewest runs of a :data:`FITTED` entry whose errors' sign the note states as a tendency (one
or two runs show no pattern)."""

def fmt_days_range(low: float, high: float, days: float) -> str:
    """A range of wall times in the unit :func:`hieropt.report.run.fmt_days` gives ``days`` (the
    prediction the range is around): ``27.8 to 31.5 days``; ``41.5 to 47.1 minutes`` for a
    44.1-minute run (never ``0.0 to 0.0 days`` beside a headline in minutes)."""
    if days >= 1:
        return f"{low:,.1f} to {high:,.1f} days"
    if days * 24 >= 1:
        return f"{low * 24:.1f} to {high * 24:.1f} hours"
    if days * 1440 >= 1:
        return f"{low * 1440:.1f} to {high * 1440:.1f} minutes"
    return f"{low * 86400:.3g} to {high * 86400:.3g} seconds"


def default_runs_file(accelerator: str) -> str | None:
    """The runs file the shipped catalog's default calibration ``accelerator`` (a name, or a name
    and number format: :func:`hieropt.io.npus.default_entry`) was fitted on, else None
    (kernel-level figures, or no such accelerator)."""
    from ..io.npus import default_entry

    calibration = default_entry(accelerator)[2]
    return None if calibration is None else calibration.runs_file


def held_out_band(calibration: str | None) -> tuple[float, bool, str] | None:
    """(w, low, scope) of the shipped default calibration ``calibration`` (an accelerator's name, as
    :func:`hieropt.report.run.calibration_note` takes it): w the worst relative error (a fraction)
    on the published runs held out of its fit, without ZeRO stage 3 (:data:`FITTED`'s ``band``,
    else its own figures); low when they err one way, too fast (:data:`SYSTEMATIC` of at least
    :data:`SYSTEMATIC_RUNS` runs); scope: the runs w is over, in words (empty: all held out).
    None: no default fitted on measured runs, an extrapolated one
    (unverified) or a calibrated file (its fit's own errors are no held-out measure)."""
    from ..io.npus import EXTRAPOLATED

    if calibration is None or EXTRAPOLATED in calibration or Path(calibration).is_absolute():
        return None
    runs = default_runs_file(calibration)
    f = FITTED.get(runs) if runs is not None else None
    if f is None:
        return None
    b = f.get("band", f)
    low = b["runs"] >= SYSTEMATIC_RUNS and b["too_fast"] >= SYSTEMATIC * b["runs"]
    return b["worst_pct"] / 100.0, low, " on plans without ZeRO stage 3" if "band" in f else ""


@dataclass(frozen=True)
class RunBand:
    """A run's days and $ at its calibration's worst held-out error (:func:`band_of`).

    Attributes:
        days: (low, high) days to train.
        run_cost_usd: (low, high) $ per run, None when the run's $ are unknown.
        error: w, the worst relative error (a fraction) of the calibration on held-out runs.
        one_sided: the held-out runs were mostly predicted too fast: the band starts at the
            prediction.
        scope: the held-out runs w is over, in words (empty: all of them).
        predicted_days: the prediction the band is around (the run's days to train): its unit
            (:func:`fmt_days_range`: days, hours, minutes, seconds) is the band's; None: the
            band's high end's.
    """

    days: tuple[float, float]
    run_cost_usd: tuple[float, float] | None
    error: float
    one_sided: bool
    scope: str
    predicted_days: float | None = None

    def text(self) -> str:
        """The band as the run line shows it ("65.0 to 73.7 days, $34.5M to $39.2M per run at
        ..."), its times in the prediction's unit (:func:`fmt_days_range`)."""
        money = ("" if self.run_cost_usd is None else
                 f", {fmt_money(self.run_cost_usd[0])} to {fmt_money(self.run_cost_usd[1])} "
                 "per run")
        way = "mostly too fast, so from the prediction up" if self.one_sided else "either way"
        ref = self.days[1] if self.predicted_days is None else self.predicted_days
        return (f"{fmt_days_range(*self.days, ref)}{money} at the calibration's "
                f"worst held-out error{self.scope} ({self.error:.1%}, {way})")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (docs/reference/json.md, ``run.band``): the ranges as [low, high] lists,
        ``held_out_error`` w as a fraction, ``one_sided``, ``basis`` the text of :meth:`text`."""
        return {"time_to_train_days": list(self.days),
                "run_cost_usd": None if self.run_cost_usd is None else list(self.run_cost_usd),
                "held_out_error": self.error, "one_sided": self.one_sided, "basis": self.text()}


def band_of(fig: RunFigures, calibration: str | None) -> RunBand | None:
    """The run's days and $ at the calibration's worst held-out error w (:func:`held_out_band`):
    a measured time within w of the prediction (error = (predicted - measured) / measured) lies
    in [T / (1 + w), T / (1 - w)], from T itself when the held-out runs were mostly predicted too
    fast (the days are likely low); days, MWh and $ per run scale with it
    (:func:`hieropt.model.run.figures`: each is the iteration time times a rate). None without
    days or without such an error (w of 1 or more: no upper end), and for a ZeRO stage 3 plan
    when w is over plans without it (its caveat says how far such runs erred:
    :data:`hieropt.workloads.llm.flops.ZERO3_CAVEAT`)."""
    band = held_out_band(calibration)
    days = fig.time_to_train_days
    if band is None or days is None or band[0] >= 1:
        return None
    w, low, scope = band
    from ..workloads.llm.flops import ZERO3_CAVEAT

    if scope and ZERO3_CAVEAT in fig.caveats:  # (a ZeRO-3 plan: its own caveat gives the spread)
        return None
    lo, hi = (1.0 if low else 1 / (1 + w)), 1 / (1 - w)
    usd = fig.run_cost_usd
    return RunBand((days * lo, days * hi), None if usd is None else (usd * lo, usd * hi), w,
                   low, scope, days)


def no_band_reason(fig: RunFigures, calibration: str | None) -> str | None:
    """Why a run with days to train has no error band (:func:`band_of` is None), in words for the
    place the band would be: a calibration of the user's own (a calibrated accelerator file: its
    fit's errors are on the runs it was fitted to, no held-out measure; ``hieropt validate``
    measures one), an extrapolated one, a kernel-level default, a held-out error of 100 % or more,
    or a ZeRO stage 3 plan. None when there is a band, no days to train, or no calibration to
    name (``calibration`` None: fitted values given inline, which get no note either)."""
    from ..io.npus import EXTRAPOLATED

    if fig.time_to_train_days is None or band_of(fig, calibration) is not None:
        return None
    lead = "no error band: "
    if calibration is None:  # (values given inline, or the flat model: no calibration to name)
        return None
    if EXTRAPOLATED in calibration:
        return lead + ("the calibration is used away from the figures it was fitted at "
                       "(extrapolated), where no measured run gives its error")
    if Path(calibration).is_absolute():
        name = Path(calibration).name
        return lead + (f"a calibration of your own ({name}) has no held-out error here (its "
                       "fit's errors are on the runs it was fitted to); 'hieropt validate "
                       f"RUNS.csv --npu {name}' measures it on runs it was not fitted to")
    band = held_out_band(calibration)
    if band is None:
        return lead + ("the catalog's kernel-level default is not fitted on measured runs (its "
                       "note gives how far such figures err)")
    if band[0] >= 1:
        return lead + (f"the calibration's worst held-out error, {band[0]:.1%}, leaves no upper "
                       "end")
    return lead + "a ZeRO stage 3 plan: its caveat gives how far such runs erred"


def run_dict(fig: RunFigures | None, calibration: str | None) -> dict[str, Any] | None:
    """JSON-ready run figures: :meth:`hieropt.model.run.RunFigures.to_dict`, ``band``, the
    :func:`band_of` of ``calibration`` (the accelerator timed with its shipped default
    calibration, as :func:`hieropt.report.run.run_lines` takes it; null without one), and
    ``no_band``, why a run with days has none (:func:`no_band_reason`; null otherwise). None for
    None."""
    if fig is None:
        return None
    band = band_of(fig, calibration)
    return {**fig.to_dict(), "band": None if band is None else band.to_dict(),
            "no_band": no_band_reason(fig, calibration)}


__all__ = ["FITTED", "SYSTEMATIC", "SYSTEMATIC_RUNS", "default_runs_file", "held_out_band",
           "RunBand", "band_of", "run_dict", "no_band_reason", "fmt_days_range"]
