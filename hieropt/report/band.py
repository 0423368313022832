"""A run's error band: its days and $ per run at the worst error its compute calibration made on
published runs held out of its fit (:func:`band_of`), in the unit of the prediction it is around
(:func:`fmt_days_range`), and why a run with days has none (:func:`no_band_reason`). Values and
strings; never prints."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.run import RunFigures
from .run import FITTED, SYSTEMATIC, SYSTEMATIC_RUNS, _default_runs_file, fmt_money


def fmt_days_range(low: float, high: float, days: float) -> str:
    """A range of wall times in the unit :func:`fmt_days` gives ``days`` (the prediction the range
    is around): ``27.8 to 31.5 days``; ``41.5 to 47.1 minutes`` for a 44.1-minute run (never
    ``0.0 to 0.0 days`` beside a headline in minutes)."""
    if days >= 1:
        return f"{low:,.1f} to {high:,.1f} days"
    if days * 24 >= 1:
        return f"{low * 24:.1f} to {high * 24:.1f} hours"
    if days * 1440 >= 1:
        return f"{low * 1440:.1f} to {high * 1440:.1f} minutes"
    return f"{low * 86400:.3g} to {high * 86400:.3g} seconds"


def held_out_band(calibration: str | None) -> tuple[float, bool, str] | None:
    """(w, low, scope) of the shipped default calibration ``calibration`` (an accelerator's name, as
    :func:`calibration_note` takes it): w the worst relative error (a fraction) on the published
    runs held out of its fit, without ZeRO stage 3 (:data:`FITTED`'s ``band``, else its own
    figures); low when they err one way, too fast (:data:`SYSTEMATIC` of at least
    :data:`SYSTEMATIC_RUNS` runs); scope: the runs w is over, in words (empty: all held out).
    None: no default fitted on measured runs, an extrapolated one
    (unverified) or a calibrated file (its fit's own errors are no held-out measure)."""
    from ..io.npus import EXTRAPOLATED

    if calibration is None or EXTRAPOLATED in calibration or Path(calibration).is_absolute():
        return None
    runs = _default_runs_file(calibration)
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
            (:func:`fmt_days`: days, hours, minutes, seconds) is the band's; None: the band's
            high end's.
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


def run_band(fig: RunFigures, calibration: str | None) -> str | None:
    """The text of :func:`band_of` (None where it is None): what the run line adds."""
    band = band_of(fig, calibration)
    return None if band is None else band.text()



__all__ = ["RunBand", "band_of", "fmt_days_range", "held_out_band", "no_band_reason",
           "run_band"]
