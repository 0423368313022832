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
    """

    days: tuple[float, float]
    run_cost_usd: tuple[float, float] | None
    error: float
    one_sided: bool
    scope: str

    def text(self) -> str:
        """The band as the run line shows it ("65.0 to 73.7 days, $34.5M to $39.2M per run at
        ...")."""
        money = ("" if self.run_cost_usd is None else
                 f", {fmt_money(self.run_cost_usd[0])} to {fmt_money(self.run_cost_usd[1])} "
                 "per run")
        way = "mostly too fast, so from the prediction up" if self.one_sided else "either way"
        return (f"{self.days[0]:,.1f} to {self.days[1]:,.1f} days{money} at the calibration's "
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
                   low, scope)


def run_dict(fig: RunFigures | None, calibration: str | None) -> dict[str, Any] | None:
    """JSON-ready run figures: :meth:`hieropt.model.run.RunFigures.to_dict` and ``band``, the
    :func:`band_of` of ``calibration`` (the accelerator timed with its shipped default
    calibration, as :func:`hieropt.report.run.run_lines` takes it; null without one). None for
    None."""
    if fig is None:
        return None
    band = band_of(fig, calibration)
    return {**fig.to_dict(), "band": None if band is None else band.to_dict()}


__all__ = ["FITTED", "SYSTEMATIC", "SYSTEMATIC_RUNS", "default_runs_file", "held_out_band",
           "RunBand", "band_of", "run_dict"]
